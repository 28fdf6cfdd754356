import os
import shutil
from pathlib import Path

import pytest

from stackbench.config.paths import loadgen_binary
from stackbench.lab.inventory import load_inventory

FAKE_STACKS = Path(__file__).parent / "fakes" / "stacks"


@pytest.fixture
def fake_inventory():
    return load_inventory(stacks_dir=FAKE_STACKS)


@pytest.fixture(autouse=True)
def _isolated_build_dir(tmp_path_factory, monkeypatch):
    # Build caches of the real stacks are shared across tests; only override when unset.
    if "STACKBENCH_BUILD_DIR" not in os.environ:
        monkeypatch.setenv(
            "STACKBENCH_BUILD_DIR", str(Path(__file__).resolve().parents[1] / ".build")
        )


def native_loader_built() -> bool:
    return loadgen_binary().exists()


def have(command: str) -> bool:
    return shutil.which(command) is not None
