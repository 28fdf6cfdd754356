"""Every article's suite, short variant, end to end through the CLI on the stacks available here.

These are the slowest tests (a few minutes each): real stacks, real services, real load.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.config.paths import SUITES_DIR
from stackbench.store.store import Store

pytestmark = pytest.mark.integration
SHORT_SUITES = sorted(p.name for p in SUITES_DIR.glob("*-short.toml"))


def test_every_article_has_a_short_variant():
    not_articles = {"quick", "quick-multihost", "tfb", "all-stacks", "calibrate"}
    full = {p.stem for p in SUITES_DIR.glob("*.toml")} - not_articles
    for name in full:
        if not name.endswith("-short"):
            assert (SUITES_DIR / f"{name}-short.toml").exists(), name


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("suite", SHORT_SUITES)
def test_short_suite_runs_end_to_end(suite, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "stackbench", "run", str(SUITES_DIR / suite),
                           "--out", str(out)], capture_output=True, text=True, timeout=1500,
                          env={**os.environ, "COLUMNS": "120"}, check=False)
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
