"""The CPU time a stored run's report charts take (issue #30 item 8: writing the charts was the
largest CPU cost of the test run's reports, each CLI test writing one).

    .venv/bin/python benchmarks/report_charts.py --out RESULTS_DIR [RUN] [--rounds 3]

RUN is a run number or `last` (the default) of the store in RESULTS_DIR. The run is analysed
once; then each round draws every chart the report draws (the glance slides, then each
workload's charts, SVG and PNG as report.html and charts/ get them) and prints the process
CPU time each took, and the whole round's. No report file is written. Rounds after the first
show the cost without matplotlib's first-use work (font cache, imports). Prints figures,
asserts nothing; on a busy machine CPU time is steadier than wall time, not free of the
noise (shared caches, frequency).
"""

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from stackbench.analysis.analysis import analyse
from stackbench.commands.views import open_existing_store
from stackbench.report.charts import Chart, ChartItem, glance_charts, workload_charts
from stackbench.report.glance import glance

T = TypeVar("T")


def _cpu(work: Callable[[], T]) -> tuple[T, float]:
    """What `work` returns, and the process CPU time it took."""
    start = time.process_time()
    result = work()
    return result, time.process_time() - start


def _line(what: str, items: list[ChartItem], took: float) -> None:
    drawn = sum(isinstance(c, Chart) for c in items)
    print(f"  {what:<28} {drawn:>2} charts {took:6.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", nargs="?", default="last")
    parser.add_argument("--out", type=Path, required=True, help="the results directory")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    store = open_existing_store(args.out)
    a = analyse(store.load_run(store.resolve_run(args.run)))
    glances = glance(a)
    for n in range(1, args.rounds + 1):
        total = 0.0
        print(f"round {n}")
        slides, took = _cpu(lambda: glance_charts(a, glances))
        total += took
        _line("glance slides", slides, took)
        for w in a.workloads:
            items, took = _cpu(lambda w=w: workload_charts(a, w))
            total += took
            _line(w.label, items, took)
        print(f"  {'all charts':<38} {total:6.2f} s CPU")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
