"""Following a real `stackbench run` from a test: its server's processes, as they start, for a
test that acts on them (caps them, stops them) while the run measures."""

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from stackbench.errors import ExitCode

LOADER = "stackbench-load"
RUN_TIMEOUT_S = 300.0
POLL_S = 0.5  # the server warms up and is verified for seconds before it is measured


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


GO_HELLO_SUITE = """
name = "{name}"
description = "go-nethttp hello, for the real test {name}"
stacks = ["go-nethttp"]
workloads = ["hello"]

[load]
driver = "native"
mode = "closed"
keepalive = "on"
connections = [{connections}]
duration_s = {duration_s}
warmup_s = 2
pause_s = 1
repeat = {repeat}
"""


def go_hello_suite(
    folder: Path, name: str, connections: int = 50, duration_s: int = 12, repeat: int = 1
) -> Path:
    """A suite of go-nethttp on hello, written to `folder`: the real tests' level."""
    suite = folder / f"{name}.toml"
    suite.write_text(
        GO_HELLO_SUITE.format(
            name=name, connections=connections, duration_s=duration_s, repeat=repeat
        )
    )
    return suite


def run_suite(suite: Path, out: Path, act: Callable[[list[int]], None] | None = None) -> str:
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
