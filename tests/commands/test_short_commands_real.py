"""Short commands started beside a real level are counted (issue 32): a real run of go-nethttp
(hello, 50 connections, one 12-s level, the native loader) with a burner beside it that forks
a new process for each burst of 5 ms in every 100 ms, placed wherever the scheduler puts it.

No sample ever sees such a process alive, and on the loader's core the busy time /proc/stat
counts by the tick falls short of what the loader alone used, which hid them: 3-7% of a core
was measured at 0.0-0.8%. The level's account must now count at least the burner's real CPU
time (its reaped children's rusage, over its life) less two points of a core, name the
process whose short commands they were, and say so in the level's disturbed flag.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackbench.store.store import Store
from tests.commands.real_run import go_hello_suite, run_suite

pytestmark = pytest.mark.integration
BURNER = Path(__file__).resolve().parents[2] / "scripts" / "burner.py"
TOLERANCE = 0.02  # two points of one core
ON_MS = 5.0


def test_short_commands_beside_a_real_level_are_counted(tmp_path: Path) -> None:
    suite = go_hello_suite(tmp_path, "short-commands-real")
    out = tmp_path / "out"
    command = [sys.executable, str(BURNER), "--on-ms", f"{ON_MS:g}", "--seconds", "240"]
    burner = subprocess.Popen([*command, "--fork"])
    started = time.monotonic()
    try:
        run_suite(suite, out)
    finally:
        burner.terminate()
        _, _, rusage = os.wait4(burner.pid, 0)
    lived = time.monotonic() - started
    truth = (rusage.ru_utime + rusage.ru_stime) / lived  # share of one core, on average
    store = Store(out / "stackbench.sqlite", create=False)
    try:
        data = store.load_run(1)
    finally:
        store.close()
    (level,) = data.levels
    said = [f.text for f in level.flags] + [
        lv.superseded.why for lv in data.superseded if lv.superseded is not None
    ]
    account = level.cores
    assert account is not None, "the level has no core account"
    other = sum(s.other_s for s in account.sets) / account.elapsed_s
    print(f"burner {truth:.1%} of a core; the level's account: other {other:.1%}")
    for s in account.sets:
        print(f"  cores {s.cores} {s.roles}: {s}")
    assert other >= truth - TOLERANCE, f"short commands of {truth:.1%} measured at {other:.1%}"
    names = [u.name for u in account.top]
    assert any(n.startswith("short commands of python") for n in names), names
    # more than the 2% band on the loader's core: the level is judged disturbed, by name
    print("said:", said)
    assert any("short commands of python" in text for text in said), said
