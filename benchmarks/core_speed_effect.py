"""Does a server's throughput follow the core speed the reference loop reads? From a stored run.

The judge flags a level whose saturated cores the host ran off their prevailing speed
(stackbench/lab/corespeed.py) on the premise that a CPU-bound server on such a core does that
much less, or more. This checks the premise on real levels, second by second: for every
stored level (superseded measurements too) with a per-second series and a core account, the
seconds in which the server's roles saturated their cores (at least 90%) pair the server
core's speed with that second's throughput over the level's median second. Printed per stack
and workload, then for the run: how many seconds, how many off the prevailing speed by more
than the tolerance, the slope of log(throughput) on log(speed) (1: the server follows the
loop; 0: it does not) with its 95% interval, and the throughput of the off seconds against the
level's others. The loader's second and the monitor's are not started at the same instant:
the slope at lags of -1 and +1 seconds is printed as well.

    .venv/bin/python benchmarks/core_speed_effect.py results/stackbench.sqlite      # last run
    .venv/bin/python benchmarks/core_speed_effect.py STORE --run 2

Reads the store only (it may be written meanwhile); asserts nothing.
"""

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stackbench.config.measured import CoreSetUse  # noqa: E402
from stackbench.lab.corespeed import SATURATED_SHARE, TOLERANCE  # noqa: E402
from stackbench.store.records import LevelRow  # noqa: E402
from stackbench.store.store import Store  # noqa: E402

NORMAL_95 = 1.96


@dataclass(frozen=True)
class Pair:
    speed: float  # the server core's speed against its prevailing one
    rate: float  # the second's throughput over the level's median second


def server_set(row: LevelRow) -> CoreSetUse | None:
    """The set of cores the server's roles ran on (not the loader's), with speeds."""
    if row.cores is None:
        return None
    found = [s for s in row.cores.sets if s.roles and "loader" not in s.roles and s.speed_per_s]
    return found[0] if found else None


def pairs(row: LevelRow, lag: int) -> list[Pair]:
    """The level's saturated seconds: the probe's second i against the loader's i + lag (the
    first two left out: connections still opening)."""
    cores = server_set(row)
    if cores is None or not row.timeseries:
        return []
    rates = [s.rate for s in row.timeseries if not s.partial]
    median = statistics.median(rates) if rates else 0.0
    if median <= 0:
        return []
    shares = [r / len(cores.cores) for r in cores.roles_per_s]
    out = []
    for i, speed in enumerate(cores.speed_per_s):
        j = i + lag
        saturated = i < len(shares) and shares[i] >= SATURATED_SHARE
        if i >= 2 and 1 <= j < len(rates) and saturated and rates[j] > 0 and speed > 0:
            out.append(Pair(speed, rates[j] / median))
    return out


def slope(found: list[Pair]) -> tuple[float, float] | None:
    """Least-squares slope of log(rate) on log(speed) and its standard error."""
    if len(found) < 5:
        return None
    xs = [math.log(p.speed) for p in found]
    ys = [math.log(p.rate) for p in found]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    resid = sum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys, strict=True))
    return b, math.sqrt(resid / (len(xs) - 2) / sxx)


def off(p: Pair) -> bool:
    return not 1 / (1 + TOLERANCE) <= p.speed <= 1 + TOLERANCE


def line(name: str, found: list[Pair]) -> str:
    fit = slope(found)
    fitted = "slope -" if fit is None else f"slope {fit[0]:+.2f} (±{NORMAL_95 * fit[1]:.2f})"
    slow = [p.rate for p in found if off(p) and p.speed < 1]
    fast = [p.rate for p in found if off(p) and p.speed > 1]
    rest = [p.rate for p in found if not off(p)]

    def mean(xs: list[float]) -> str:
        return f"{statistics.fmean(xs):.2f}" if xs else "-"

    return (
        f"{name:<44} {len(found):>5} s, {len(slow):>3} slower {len(fast):>3} faster; {fitted}; "
        f"throughput: slower {mean(slow)}, faster {mean(fast)}, at speed {mean(rest)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--run", type=int, default=None, help="the run (default: the last)")
    args = parser.parse_args()
    store = Store(args.store, create=False)
    run_id = args.run if args.run is not None else store.runs()[-1].id
    data = store.load_run(run_id)
    cases = {c.id: c for c in data.cases}
    rows = [*data.levels, *data.superseded]
    groups: dict[str, list[Pair]] = {}
    for row in rows:
        case = cases[row.case_id]
        groups.setdefault(f"{case.stack} {case.label}", []).extend(pairs(row, 0))
    print(f"run {run_id} ({data.run.suite_name}): the server core's speed against its throughput")
    for name, found in sorted(groups.items()):
        print(line(name, found))
    for lag in (0, -1, 1):
        every = [p for row in rows for p in pairs(row, lag)]
        print(line(f"all levels, lag {lag:+d} s", every))


if __name__ == "__main__":
    main()
