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
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stackbench.errors import ExitCode

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
LOADER = "stackbench-load"
CAP = 0.40  # of one core
RUN_TIMEOUT_S = 300.0
POLL_S = 0.5  # the server warms up and is verified for seconds before it is measured

SUITE = """
name = "gate-real"
description = "go-nethttp hello, for the real gate test"
stacks = ["go-nethttp"]
workloads = ["hello"]

[load]
driver = "native"
mode = "closed"
keepalive = "on"
connections = [20]
duration_s = 6
warmup_s = 2
pause_s = 1
repeat = 2
"""


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


def _children(pid: int) -> list[int]:
    """A process's children, from its threads' `children` files: a few small reads, so that
    following the run costs the machine nothing its monitor would count (a scan of all of
    /proc every 50 ms took 5% of a core and got the capped run flagged disturbed)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _descendants(root: int) -> list[int]:
    out, todo = [], [root]
    while todo:
        for child in _children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _server_pids(run: int) -> list[int]:
    """The run's go-nethttp server processes: its descendants that are neither the loader
    nor a Python helper of stackbench's own."""
    return [
        p for p in _descendants(run) if _comm(p) not in (LOADER, "") and "python" not in _comm(p)
    ]


def _follow(run: "subprocess.Popen[str]", act: Callable[[list[int]], None]) -> None:
    """Call `act` with the server's processes once each has lived across two looks (the
    run's short-lived probes, `go version` and the like, never do), until the run ends."""
    seen: set[int] = set()
    before: set[int] = set()
    while run.poll() is None:
        now = set(_server_pids(run.pid))
        steady = sorted((now & before) - seen)
        if steady:
            act(steady)
            seen.update(steady)
        before = now
        time.sleep(POLL_S)


def _run(suite: Path, out: Path, act: Callable[[list[int]], None] | None = None) -> str:
    env = {**os.environ, "COLUMNS": "160"}
    command = [sys.executable, "-m", "stackbench", "run", str(suite), "--out", str(out)]
    run = subprocess.Popen(
        [*command, "--no-calibrate"],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    watcher = threading.Thread(target=_follow, args=(run, act), daemon=True) if act else None
    if watcher:
        watcher.start()
    output, _ = run.communicate(timeout=RUN_TIMEOUT_S)
    if watcher:
        watcher.join(timeout=5)
    assert run.returncode == ExitCode.OK, output
    return output


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
    suite = tmp_path / "gate-real.toml"
    suite.write_text(SUITE)
    out = tmp_path / "out"
    _run(suite, out)  # run 1: A

    capped: list[int] = []

    def cap(pids: list[int]) -> None:
        for pid in pids:
            try:
                (capped_group / "cgroup.procs").write_text(str(pid))
            except OSError:  # it ended between the look and the move
                continue
            capped.append(pid)

    _run(suite, out, cap)  # run 2: B, the server capped at 40% of a core
    assert capped, "no server process of run 2 was moved into the capped group"
    core = min(os.sched_getaffinity(0))  # the default placement's server core: the lowest
    burner = subprocess.Popen(
        [sys.executable, str(BURNER), "--cpu", str(core), "--on-ms", "30", "--seconds", "240"]
    )
    try:
        _run(suite, out)  # run 3: C, a burner on the server's core throughout
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
