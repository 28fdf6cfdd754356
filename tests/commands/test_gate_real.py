"""`compare --fail-if-slower` on real runs (issue 32, item 4): a true slowdown is "regressed",
a disturbed measurement never passes.

Three real runs of go-nethttp (hello, 20 connections, two 6-s repetitions each) into one
store: A as it is; B with the server's processes in a CPU-capped control group of this test's
own (40% of a core: a true slowdown that no other process causes); C with a burner pinned to
the server's core, busy 30% of every 100 ms for the whole run (so the level is still
disturbed when it is measured again). Then:
- compare A B --fail-if-slower 5%: regressed, exit 1;
- compare A C --fail-if-slower 5%: undecided (exit 6), the reason naming the disturbance.
The cap is set through cgroup v1's cpu controller (cpu.cfs_quota_us) or cgroup v2's cpu.max,
whichever this host has writable; without either the test is skipped with the reason.
"""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stackbench.errors import ExitCode
from tests.commands.real_run import go_hello_suite, run_suite

# Out of `make test` until it is robust there: in make test's serial phase its capped run was
# once judged disturbed by its own watcher (fixed) and once not capped at all (cause not yet
# found); alone on a quiet machine it passed twice. Run it with STACKBENCH_REAL_GATE=1.
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        os.environ.get("STACKBENCH_REAL_GATE") != "1",
        reason="the real gate test runs on a quiet machine only: STACKBENCH_REAL_GATE=1",
    ),
]
ROOT = Path(__file__).resolve().parents[2]
BURNER = ROOT / "scripts" / "burner.py"
CAP = 0.40  # of one core


def _cpu_cap_dir() -> tuple[Path, str] | None:
    """A writable place for a CPU-capped group: (parent, "v1" | "v2"), or None."""
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").exists() and os.access(v1, os.W_OK):
        return v1, "v1"
    v2 = Path("/sys/fs/cgroup")
    controllers = v2 / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split() and os.access(v2, os.W_OK):
        return v2, "v2"
    return None


def _capped_group(tmp_name: str) -> Iterator[Path]:
    found = _cpu_cap_dir()
    if found is None:
        pytest.skip("no writable cgroup cpu controller (v1 cpu or v2 cpu.max) on this host")
    parent, version = found
    group = parent / tmp_name
    group.mkdir()
    period = 100_000
    if version == "v1":
        (group / "cpu.cfs_period_us").write_text(str(period))
        (group / "cpu.cfs_quota_us").write_text(str(int(CAP * period)))
    else:
        (parent / "cgroup.subtree_control").write_text("+cpu")
        (group / "cpu.max").write_text(f"{int(CAP * period)} {period}")
    try:
        yield group
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            (parent / "cgroup.procs").write_text(pid)  # back to the root group
        group.rmdir()


@pytest.fixture
def capped_group(tmp_path: Path) -> Iterator[Path]:
    yield from _capped_group(f"stackbench-gate-test-{os.getpid()}")


def _compare(out: Path, a: int, b: int) -> tuple[int, str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "stackbench",
            "compare",
            str(a),
            str(b),
            "--out",
            str(out),
            "--fail-if-slower",
            "5%",
        ],
        env={**os.environ, "COLUMNS": "200"},
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_a_capped_server_is_regressed_and_a_disturbed_one_is_undecided(
    tmp_path: Path, capped_group: Path
) -> None:
    suite = go_hello_suite(tmp_path, "gate-real", connections=20, duration_s=6, repeat=2)
    out = tmp_path / "out"
    run_suite(suite, out)  # run 1: A

    capped: list[int] = []

    def cap(pids: list[int]) -> None:
        for pid in pids:
            try:
                (capped_group / "cgroup.procs").write_text(str(pid))
            except OSError:  # it ended between the look and the move
                continue
            capped.append(pid)

    run_suite(suite, out, cap)  # run 2: B, the server capped at 40% of a core
    assert capped, "no server process of run 2 was moved into the capped group"
    core = min(os.sched_getaffinity(0))  # the default placement's server core: the lowest
    burner = subprocess.Popen(
        [sys.executable, str(BURNER), "--cpu", str(core), "--on-ms", "30", "--seconds", "240"]
    )
    try:
        run_suite(suite, out)  # run 3: C, a burner on the server's core throughout
    finally:
        burner.terminate()
        burner.wait(timeout=10)

    code, text = _compare(out, 1, 2)
    print(text)
    assert code == ExitCode.RULE_BROKEN, text
    assert "regressed" in text
    code, text = _compare(out, 1, 3)
    print(text)
    assert code == ExitCode.UNDECIDED, text
    assert "disturbed" in text
