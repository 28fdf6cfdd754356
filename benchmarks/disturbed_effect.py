"""Does a level the judge flags `disturbed` really lose throughput? From a stored run.

The judge flags a level when other processes and the hypervisor's steal took more than the 2%
noise band of the server's or the loader's cores (engine/judge.disturbed_flag), on the premise
that such a level could have moved by more than a verdict's threshold. Its cost: the level is
measured again, and the seconds count against an article's load budget. This checks the
premise on real levels: every measurement (superseded ones too) of a case at a level that also
has measurements the judge left unflagged is set against the median of those, as the log of
the ratio. Printed by where the disturbance was (the server's cores, or the loader's only: then
split by whether the loader itself kept its cores 80% busy or more, when what was taken of
them was time it needed, or left them idler, when it had time to spare) and beside a
baseline: each unflagged measurement against the median of its unflagged siblings (what two
undisturbed starts differ by). A mean near 0 with a narrow interval says the flag spends
budget for nothing; one clearly below 0 says it catches a real cost, and that a flagged
level's throughput is a floor (analysis/claims/decisions._judge_bounded reads it so).

    .venv/bin/python benchmarks/disturbed_effect.py results/stackbench.sqlite      # every run
    .venv/bin/python benchmarks/disturbed_effect.py STORE --run 2

Reads the store only (it may be written meanwhile); asserts nothing.
"""

import argparse
import math
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stackbench.config.noise import THROUGHPUT_THRESHOLD  # noqa: E402
from stackbench.store.records import LevelRow  # noqa: E402
from stackbench.store.store import Store  # noqa: E402

NORMAL_95 = 1.96
# A loader that used this share of its cores or more had little to spare for steal
BUSY_LOADER = 0.8


@dataclass(frozen=True)
class Taken:
    """What other processes and steal took of a level's cores, as shares of them."""

    loader: float
    server: float
    loader_busy: float  # the loader's own share of its cores

    @property
    def disturbed(self) -> bool:
        return max(self.loader, self.server) > THROUGHPUT_THRESHOLD

    @property
    def where(self) -> str:
        if self.server > THROUGHPUT_THRESHOLD:
            return "server"
        # a loader that left its cores idle had time to spare for what was taken of them
        return "loader busy" if self.loader_busy >= BUSY_LOADER else "loader idle"


def taken(row: LevelRow) -> Taken | None:
    """The shares the judge reads (CoreSetUse.taken_share, as engine/judge.disturbed_flag)."""
    account = row.cores
    if account is None or account.elapsed_s <= 0 or row.requests_per_s <= 0:
        return None
    loader = server = busy = 0.0
    for cores in account.sets:
        if not cores.roles:
            continue
        share = cores.taken_share(account.elapsed_s)
        if "loader" in cores.roles:
            loader = max(loader, share)
            busy = max(busy, cores.roles_s / cores.capacity_s(account.elapsed_s))
        else:
            server = max(server, share)
    return Taken(loader, server, busy)


@dataclass(frozen=True)
class Effect:
    log_ratio: float  # log(this measurement / the median of the unflagged ones)
    share: float  # the largest share taken of its cores


def effects(rows: Iterable[LevelRow]) -> dict[str, list[Effect]]:
    """One case's measurements at one level: each flagged one against the unflagged median,
    each unflagged one against the median of the other unflagged ones."""
    read = [(row, t) for row in rows if (t := taken(row)) is not None]
    clean = [row.requests_per_s for row, t in read if not t.disturbed]
    out: dict[str, list[Effect]] = {}
    for row, t in read:
        share = max(t.loader, t.server)
        if t.disturbed and clean:
            ratio = row.requests_per_s / statistics.median(clean)
            out.setdefault(t.where, []).append(Effect(math.log(ratio), share))
        elif not t.disturbed and len(clean) >= 2:
            others = list(clean)
            others.remove(row.requests_per_s)
            ratio = row.requests_per_s / statistics.median(others)
            out.setdefault("baseline", []).append(Effect(math.log(ratio), share))
    return out


def line(name: str, found: list[Effect]) -> str:
    if not found:
        return f"{name:<12} none"
    logs = [e.log_ratio for e in found]
    mean = statistics.fmean(logs)
    half = NORMAL_95 * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else math.inf
    shares = [e.share for e in found]
    return (
        f"{name:<12} {len(found):>4} measurements, taken {min(shares):.1%}-{max(shares):.1%}: "
        f"throughput {math.exp(mean):.3f}x the unflagged median "
        f"(95% {math.exp(mean - half):.3f}-{math.exp(mean + half):.3f}), "
        f"each one's spread {statistics.pstdev(logs):.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--run", type=int, default=None, help="one run (default: every run)")
    args = parser.parse_args()
    store = Store(args.store, create=False)
    run_ids = [args.run] if args.run is not None else [r.id for r in store.runs()]
    found: dict[str, list[Effect]] = {}
    for run_id in run_ids:
        data = store.load_run(run_id)
        groups: dict[tuple[int, float], list[LevelRow]] = {}
        for row in [*data.levels, *data.superseded]:
            groups.setdefault((row.case_id, row.level_value), []).append(row)
        for rows in groups.values():
            for where, more in effects(rows).items():
                found.setdefault(where, []).extend(more)
    print(f"runs {run_ids}: disturbed measurements against the same case and level's others")
    for where in ("baseline", "loader idle", "loader busy", "server"):
        print(line(where, found.get(where, [])))


if __name__ == "__main__":
    main()
