"""A server held back while its load holds, with no other process taking its core, is said
(issue 32): real runs of go-nethttp (hello, 50 connections, one 12-s level).

Run A as it is; run B with the server's processes stopped (SIGSTOP) for 1 s of every 5 s
from the moment they start: its core goes idle with requests waiting, and no other process
uses it, so no account names anything. A stop touches at most two of every five monitor
seconds, so the typical (median) second stays a free one: the rule judges falls in a minority
of seconds, and a server held back in most of them reads as one that waits (a CI run with
0.6 s of every 3 s had 8 of its 12 seconds touched, a median second of 76% of the core, and
no flag). B (run first) must carry the `held back` flag with its figures; A's level must not.
A disturbed level is judged by the disturbed rule instead, so a disturbed B or A runs again;
if one stays disturbed in every try, its side is not checked, and the test warns so.
"""

import os
import signal
import threading
import warnings
from pathlib import Path

import pytest

from stackbench.store.records import LevelFlag
from stackbench.store.store import Store
from tests.commands.real_run import go_hello_suite, run_suite

pytestmark = pytest.mark.integration

STOP_S, EVERY_S = 1.0, 5.0
QUIET_TRIES = 3


class Stopper:
    """Stops the processes it is given for STOP_S of every EVERY_S until it is told to end."""

    def __init__(self) -> None:
        self.pids: list[int] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def add(self, pids: list[int]) -> None:
        self.pids += pids
        if not self.thread.is_alive():
            self.thread.start()

    def _signal(self, sig: signal.Signals) -> None:
        for pid in self.pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                continue

    def _loop(self) -> None:
        while not self.done.wait(EVERY_S - STOP_S):
            self._signal(signal.SIGSTOP)
            self.done.wait(STOP_S)
            self._signal(signal.SIGCONT)  # always: never leave a server stopped

    def end(self) -> None:
        self.done.set()
        if self.thread.is_alive():
            self.thread.join(timeout=EVERY_S * 2)
        self._signal(signal.SIGCONT)


def _level_flags(out: Path, run: int) -> list[str]:
    store = Store(out / "stackbench.sqlite", create=False)
    try:
        return [f.text for lv in store.load_run(run).levels for f in lv.flags]
    finally:
        store.close()


def _server_shares(out: Path, run: int) -> list[list[float]]:
    """The server's share of its cores in each monitor second, to say why a flag is missing."""
    store = Store(out / "stackbench.sqlite", create=False)
    try:
        return [
            [round(r / len(s.cores), 2) for r in s.roles_per_s]
            for lv in store.load_run(run).levels
            if lv.cores is not None
            for s in lv.cores.sets
            if "server" in s.roles
        ]
    finally:
        store.close()


def _disturbed(flags: list[str]) -> bool:
    return any(f.startswith(LevelFlag.DISTURBED.value) for f in flags)


def test_a_server_stopped_with_its_load_holding_is_said_held_back(tmp_path: Path) -> None:
    suite = go_hello_suite(tmp_path, "held-back-real")
    out = tmp_path / "out"
    # B: a disturbed level is judged by the disturbed rule instead (the held-back rule is not
    # applied, a disturbance explains the fall), so on a host that slows the cores for seconds
    # at a time (make test, 2026-11-27: measured again and still disturbed) B runs again, up
    # to QUIET_TRIES times in all
    run = 0
    for run in range(1, 1 + QUIET_TRIES):
        stopper = Stopper()
        try:
            run_suite(suite, out, stopper.add)
        finally:
            stopper.end()
        assert stopper.pids, f"no server process of run {run} was found to stop"
        held = _level_flags(out, run)
        print("B:", held)
        if not _disturbed(held):
            parsed = [f for f in held if f.startswith(LevelFlag.HELD_BACK.value)]
            assert parsed, (
                f"run B's level was not said held back: {held} {_server_shares(out, run)}"
            )
            assert "fell from" in parsed[0] and "while the load held" in parsed[0]
            break
    else:
        warnings.warn(
            f"run B was disturbed in all {QUIET_TRIES} tries: its held-back flag was not checked",
            stacklevel=1,
        )
    # A, as it is: its lack of the flag says nothing where it is disturbed (above), so on a
    # host whose hypervisor steals (make test, 2026-11-27: 7.5% and 15.6% of the two cores,
    # measured again and still disturbed) A runs again, up to QUIET_TRIES times in all
    first_a = run + 1
    for run in range(first_a, first_a + QUIET_TRIES):
        run_suite(suite, out)
        quiet = _level_flags(out, run)
        print("A:", quiet)
        if not _disturbed(quiet):
            assert not any(f.startswith(LevelFlag.HELD_BACK.value) for f in quiet), quiet
            return
    warnings.warn(
        f"run A was disturbed in all {QUIET_TRIES} tries: its lack of a held-back flag was "
        "not checked",
        stacklevel=1,
    )
