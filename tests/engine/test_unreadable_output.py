"""A load tool (wrk, ab) that runs but prints output its parser does not recognise fails that
level, not the run: the level is recorded as `loader-failed` with the tool's output tail as
its log, the other levels are measured, the report is written and the run exits 3.

The tools are fakes on PATH that print a real recorded output (tests/drivers/data), except at
3 connections, where they print something else; the server is the fake refserver stack."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FAKE_STACKS

from stackbench.errors import ExitCode
from stackbench.store.store import Store
from tests.engine.test_faults import suite_text, write_suite

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "drivers" / "data"

FAKE_TOOL = """#!/bin/sh
# A {tool} that prints its recorded output, and nonsense at 3 connections.
for arg in "$@"; do
  if [ "$prev" = "-c" ] && [ "$arg" = "3" ]; then
    echo "{tool}: some new version's banner"
    echo "nothing a parser could read, at 3 connections"
    exit 0
  fi
  prev="$arg"
done
cat "{recorded}"
"""


def fake_tool(bin_dir: Path, tool: str, recorded: Path) -> None:
    script = bin_dir / tool
    script.write_text(FAKE_TOOL.format(tool=tool, recorded=recorded))
    script.chmod(0o755)


@pytest.mark.parametrize(
    ("tool", "recorded"), [("wrk", "wrk-keepalive.txt"), ("ab", "ab-close.txt")]
)
def test_unreadable_tool_output_fails_its_level_and_the_run_goes_on_to_its_report(
    tmp_path, tool, recorded
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_tool(bin_dir, tool, DATA / recorded)
    # The faults tests' suite (refserver, hello, 1-s levels), driven by the fake tool.
    text = suite_text(["refserver"], [2, 3, 4]).replace("[load]\n", f'[load]\ndriver = "{tool}"\n')
    suite = write_suite(tmp_path, text)
    out = tmp_path / "out"
    env = {
        **os.environ,
        "COLUMNS": "160",
        "STACKBENCH_STACKS_DIR": str(FAKE_STACKS),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "run", str(suite), "--out", str(out)],
        env=env,
        text=True,
        capture_output=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.ENVIRONMENT, output
    assert "Traceback" not in output and "internal error" not in output
    data = Store(out / "stackbench.sqlite").load_run(1)
    assert data.run.status == "complete"
    two, three, four = data.levels
    assert two.status == "ok" and four.status == "ok" and four.completed > 0
    assert three.status == "failed" and three.error_class == "loader-failed"
    assert f"{tool} printed output stackbench cannot read" in three.error
    assert "nothing a parser could read, at 3 connections" in three.log_tail
    assert (out / "run-1" / "report.html").stat().st_size > 1000
    exported = json.loads((out / "run-1" / "results.json").read_text())
    assert len(exported["levels"]) == 3
    assert "report: " in output and "the load tool failed" in output
