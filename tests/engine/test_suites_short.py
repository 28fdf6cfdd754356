"""Every article's suite, short variant, end to end through the CLI on the stacks available here.

These are the slowest tests (a few minutes each): real stacks, real services, real load.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.config.paths import SUITES_DIR
from stackbench.config.suite import parse_suite
from stackbench.store.store import Store

pytestmark = pytest.mark.integration
SHORT_SUITES = sorted(p.name for p in SUITES_DIR.glob("*-short.toml"))


def test_every_article_has_a_short_variant():
    not_articles = {"quick", "quick-multihost", "tfb", "all-stacks", "calibrate", "capacity"}
    full = {p.stem for p in SUITES_DIR.glob("*.toml")} - not_articles
    for name in full:
        if not name.endswith("-short"):
            assert (SUITES_DIR / f"{name}-short.toml").exists(), name


# What this test shows (every stack x workload of the suite runs, is stored and reported)
# does not need the suites' own level lengths or all their levels: 2-s levels without a
# warm-up, a pause between them or the JIT stacks' warm-up pass before each case show it too,
# at the suite's highest level only (the one that needs the most connections and file
# descriptors), in far less time (pool-and-cluster-short 6.3 -> 1.7 min of plan with both
# levels, php-node-micro-short 2.7 -> 0.9 min; the warm-up pass alone is 3 s per Node case and
# 15 s per Java case). A sweep over several levels and the warm-up pass have tests of their own
# (tests/engine/test_runner.py). Request-bounded levels (requests, requests_per_connection)
# keep their request counts.
LEVEL_TIMES = {"duration_s": "2", "warmup_s": "0", "pause_s": "0"}


def _highest_level(match: re.Match[str]) -> str:
    levels = [float(v) for v in match[2].split(",")]
    return f"{match[1]}[{max(levels):g}]"


def with_short_levels(text: str) -> str:
    """The suite with one level, its highest, 2 s long, no warm-up, no pause and no JIT
    warm-up pass (its comments kept)."""
    timed = re.sub(
        r"^(duration_s|warmup_s|pause_s)(\s*=\s*)[0-9.]+",
        lambda m: m[1] + m[2] + LEVEL_TIMES[m[1]],
        text,
        flags=re.MULTILINE,
    )
    one_level = re.sub(
        r"^((?:connections|rates)\s*=\s*)\[([0-9., ]+)\]", _highest_level, timed, flags=re.MULTILINE
    )
    return re.sub(
        r"^\[load\]$", "[load]\njit_warmup = false", one_level, count=1, flags=re.MULTILINE
    )


def test_short_levels_change_only_the_level_times_and_keep_the_highest_level():
    text = (
        "[load]\nconnections = [300, 1000, 700]  # clients\nduration_s = 5\n"
        "warmup_s = 1     # no warm-up: 1\npause_s = 1.5\nrequests = 5000\n"
    )
    assert with_short_levels(text) == (
        "[load]\njit_warmup = false\nconnections = [1000]  # clients\nduration_s = 2\n"
        "warmup_s = 0     # no warm-up: 1\npause_s = 0\nrequests = 5000\n"
    )
    assert "rates = [2.5]\n" in with_short_levels("[load]\nrates = [0.5, 2.5]\n")


def test_every_short_suite_keeps_one_level():
    assert SHORT_SUITES, "no short suite found"
    for suite in SHORT_SUITES:
        text = with_short_levels((SUITES_DIR / suite).read_text())
        assert re.search(r"^(connections|rates)\s*=\s*\[[0-9.]+\]", text, re.MULTILINE), suite


@pytest.mark.parametrize("suite", SHORT_SUITES)
def test_the_short_levels_suite_parses(suite, tmp_path):
    path = tmp_path / suite
    path.write_text(with_short_levels((SUITES_DIR / suite).read_text()))
    assert parse_suite(path).load.jit_warmup is False


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("suite", SHORT_SUITES)
def test_short_suite_runs_end_to_end(suite, tmp_path):
    out = tmp_path / "out"
    path = tmp_path / suite  # the same name: claims and deviations are matched by it
    path.write_text(with_short_levels((SUITES_DIR / suite).read_text()))
    done = subprocess.run(
        # --no-calibrate: the test is that the suite runs, not its verdicts (a new store
        # would calibrate first, 2 min a suite)
        [sys.executable, "-m", "stackbench", "run", str(path), "--out", str(out), "--no-calibrate"],
        capture_output=True,
        text=True,
        timeout=1500,
        env={**os.environ, "COLUMNS": "120"},
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = Store(out / "stackbench.sqlite").load_run(1)
    assert data.run.status == "complete"
    ran = [c for c in data.cases if c.status != "unavailable"]
    assert ran, "no stack of the suite is available here"
    failed = [(c.stack, c.label, c.reason) for c in ran if c.status != "ok"]
    assert not failed, failed
    assert all(data.levels_of(c.id) for c in ran)
    assert Path(out / "run-1" / "report.html").stat().st_size > 10_000
    assert "report:" in done.stdout
