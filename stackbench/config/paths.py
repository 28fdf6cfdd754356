"""Where things live. The repository layout is fixed by DESIGN.md; nothing else reads paths."""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# STACKBENCH_STACKS_DIR points at another stacks folder (tests use a fake stack).
STACKS_DIR = Path(os.environ.get("STACKBENCH_STACKS_DIR", REPO_ROOT / "stacks"))
SUITES_DIR = REPO_ROOT / "suites"
# The claims of each article suite (docs: suites/claims/README.md).
CLAIMS_DIR = SUITES_DIR / "claims"
FIXTURES_DIR = REPO_ROOT / "workloads" / "fixtures"
DEFAULT_SUITE = SUITES_DIR / "quick.toml"
# `stackbench calibrate`'s suite, which an article suite on an uncalibrated machine runs first
CALIBRATION_SUITE = SUITES_DIR / "calibrate.toml"
DEFAULT_RESULTS_DIR = REPO_ROOT / "results"


def build_cache_dir() -> Path:
    """Build outputs live outside git; STACKBENCH_BUILD_DIR moves them (e.g. to a tmpfs)."""
    return Path(os.environ.get("STACKBENCH_BUILD_DIR", REPO_ROOT / ".build"))


def loadgen_binary() -> Path:
    override = os.environ.get("STACKBENCH_LOAD")
    if override:
        return Path(override)
    return REPO_ROOT / "loadgen" / "target" / "release" / "stackbench-load"
