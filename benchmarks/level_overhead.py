"""How much wall time does stackbench add per load level, beyond load, warm-up and pauses?

Runs a 12-level sweep (1 s per level, no warm-up, no pause) against the fake reference stack
with the native loader, then compares each level's start with the previous level's start plus
its configured load time. Prints the per-level overhead (median and max) side by side with the
load time. Goal (issue 6): under 1 s per level. Usage: .venv/bin/python benchmarks/level_overhead.py
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stackbench.config.plan import build_plan  # noqa: E402
from stackbench.config.suite import parse_suite  # noqa: E402
from stackbench.engine.runner import Runner, RunSetup  # noqa: E402
from stackbench.lab.inventory import load_inventory  # noqa: E402
from stackbench.store.store import Store  # noqa: E402

LEVELS = 12
SUITE = f"""
name = "overhead"
stacks = ["refserver"]
workloads = ["hello"]
[load]
driver = "native"
connections = [{", ".join(str(c) for c in range(1, LEVELS + 1))}]
duration_s = 1
warmup_s = 0
pause_s = 0
[placement]
server_cpus = "0"
loader_cpus = "{1 if len(os.sched_getaffinity(0)) > 1 else 0}"
"""


def main() -> None:
    inventory = load_inventory(stacks_dir=REPO / "tests" / "fakes" / "stacks")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "suite.toml"
        path.write_text(SUITE)
        store = Store(Path(tmp) / "s.sqlite")
        started = time.monotonic()
        run_id = Runner(
            build_plan(parse_suite(path), inventory, None, None),
            RunSetup(inventory, store, Path(tmp)),
        ).execute()
        wall = time.monotonic() - started
        starts = [
            r["started_at"] for r in store.db.execute("SELECT started_at FROM levels ORDER BY id")
        ]
    gaps = [b - a - 1.0 for a, b in zip(starts, starts[1:], strict=False)]
    print(
        f"run {run_id}: {LEVELS} levels of 1.0 s load, wall {wall:.1f} s (incl. stack start, "
        "build check and verification)"
    )
    print(f"{'load per level':>24} {'overhead median':>16} {'overhead max':>13}")
    print(f"{'1.000 s':>24} {statistics.median(gaps):>14.3f} s {max(gaps):>11.3f} s")


if __name__ == "__main__":
    main()
