"""A level whose server lost CPU while its load held, with nothing on the machine seen taking
it (issue 32): a pure judgement of the level's per-second core accounting and its loader's
per-second series.

A CPU-bound server whose share of its cores falls for some seconds, while the loader keeps
its clients and the throughput falls with it, went idle with work waiting: something held it
back. When another process or counted steal explains the fall, the disturbed rule
(engine/judge.py) judges it and the level is measured again; this rule judges what no
account names, and only says so (the flag `held back`): the level still counts.

Why it is not measured again like a disturbed level: on this machine's quiet full runs (880
levels, 2026-11-26) it found 17 falls, all at thousands of clients without keep-alive, where
the stacks wait (PHP and plain Node at 7,000 on connections to their data store or on
clients whose SYNs were dropped; Apache and the C++ server at 4,400-8,000), and they recur in
some repetitions and not in others. Measuring such a level
again until it does not fall would keep a stack's good seconds and drop its stalls: a bias.
What no account names cannot be told apart from the stack's own waiting, so the reader is
told, with the figures, and a fall that recurs across the repetitions reads as the stack's.
The typical second is the median one, so the rule sees falls in a minority of the seconds: a
server held back in most of them (a stall touching two of every three seconds) has a held second
as its typical one, reads as a server that waits, and is not flagged.
Time the hypervisor takes without counting it as steal, or a slower clock, leaves the share
as it was and lowers the work done per CPU second instead: not judged here.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from stackbench.config.measured import CoreAccount, CoreSetUse, Second
from stackbench.config.noise import THROUGHPUT_THRESHOLD

# The server's cores are "busy" when their typical second is at least this share of them:
# below it the server already waits (on a data store, the network), and a second with less
# CPU is no sign of anything taken from it.
CPU_BOUND_SHARE = 0.80
# A second "fell" when its share is this many points of the cores below the typical second,
# and its throughput is below the typical second's by half as much: one second's own noise
# (of the monitor's tick sampling, of the loader's clock) is a few points.
FALL = 0.10


@dataclass(frozen=True)
class CoreFall:
    """The seconds one set of a level's server cores lost."""

    seconds: int  # the monitor's seconds whose share fell, not explained by others or steal
    of: int  # the seconds judged (the level's, less its first and last)
    typical: float  # the typical second's share of the cores (its median)
    low: float  # the mean share of the seconds that fell
    cpu_lost: float  # the share of the level's server CPU those seconds lost


@dataclass(frozen=True)
class CpuDrop:
    """The seconds a level's server cores lost, and what the level lost with them."""

    cores: tuple[int, ...]
    roles: tuple[str, ...]
    fall: CoreFall
    requests_lost: float  # the share of the level's responses its slow seconds lost

    def sentence(self) -> str:
        cores = ("core " if len(self.cores) == 1 else "cores ") + ",".join(map(str, self.cores))
        fall = self.fall
        return (
            f"the server's share of {cores} ({', '.join(self.roles)}) fell from "
            f"{fall.typical:.0%} to {fall.low:.0%} in {fall.seconds} of {fall.of} seconds while "
            f"the load held, and the level lost {self.requests_lost:.1%} of its responses with "
            "it, with no other process seen there and no steal counted (the server waited: on "
            "its clients' connections, a data store, a quota; or something unseen held it back)"
        )


def cpu_drop(
    account: CoreAccount | None,
    server_roles: Sequence[str],
    timeseries: Sequence[Second] | None,
    band: float = THROUGHPUT_THRESHOLD,
) -> CpuDrop | None:
    """The first set of the server's cores whose CPU-bound share fell by more than the noise
    band while the level's throughput fell by more than it too; None when none did, or when
    the level has no per-second account or series to judge."""
    if account is None or not timeseries:
        return None
    requests_lost = _requests_lost(timeseries)
    if requests_lost <= band:
        return None
    for cores in account.sets:
        if not set(cores.roles) & set(server_roles):
            continue
        found = _fell(cores)
        if found is not None and found.cpu_lost > band:
            return CpuDrop(cores.cores, cores.roles, found, requests_lost)
    return None


def _fell(cores: CoreSetUse) -> CoreFall | None:
    """The seconds the set's roles' share fell more than FALL below its typical second, with
    the other processes and the steal of that second too small to explain it."""
    n = len(cores.cores)
    # the first and last intervals hold the level's start and end: judged by no one
    share = [r / n for r in cores.roles_per_s[1:-1]]
    seen = [
        (o + s) / n for o, s in zip(cores.other_per_s[1:-1], cores.steal_per_s[1:-1], strict=True)
    ]
    if len(share) < 3:
        return None
    typical = median(share)
    if typical < CPU_BOUND_SHARE:
        return None
    gaps = [
        typical - s
        for s, o in zip(share, seen, strict=True)
        if typical - s > FALL and o < (typical - s) / 2
    ]
    if not gaps:
        return None
    low = typical - sum(gaps) / len(gaps)
    return CoreFall(len(gaps), len(share), typical, low, sum(gaps) / (typical * len(share)))


def _requests_lost(timeseries: Sequence[Second]) -> float:
    """The share of the level's responses its slow seconds lost against its typical second:
    seconds more than FALL / 2 below the median rate, their shortfall over the whole level."""
    rates = [s.rate for s in timeseries if s.full][1:]
    if len(rates) < 3:
        return 0.0
    typical = median(rates)
    if typical <= 0:
        return 0.0
    short = sum(typical - r for r in rates if typical - r > typical * FALL / 2)
    return short / (typical * len(rates))
