"""run --settle: a JIT stack's warm-up lengthened when its first level is not shown steady.

The engine does not judge steadiness itself (that is analysis' work, and the engine sits below
it): the command gives it an `Advise`, which reads a level's per-second throughput and says
whether its steadiness is shown and, if not, how much longer a warm-up it needed. The engine
then runs one more warm-up pass of that length, within what config.plan.settle_bound_s leaves
after the declared pass, and measures the level again once.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stackbench.config.measured import Second
from stackbench.config.plan import settle_bound_s


@dataclass(frozen=True)
class SettleAdvice:
    """What a level's per-second series says about its warm-up."""

    shown: bool  # its steadiness is shown: nothing to lengthen
    more_s: float | None  # the extra warm-up it asks for; 0: none would help; None: unknown, more
    # than the level lasted
    why: str  # the analysis' sentence


Advise = Callable[[Sequence[float]], SettleAdvice]


@dataclass(frozen=True)
class SettleStep:
    """One more warm-up pass of `seconds`, then the level again."""

    seconds: float
    total_s: float  # the case's JIT warm-up in all, the declared pass included
    bound_s: float
    why: str

    def note(self, where: str, declared_s: float) -> str:
        capped = " (the bound)" if self.total_s >= self.bound_s else ""
        return (
            f"{where}: not shown steady after the {declared_s:g}-s JIT warm-up ({self.why}); "
            f"run --settle warmed it up {self.seconds:g} s more ({self.total_s:g} s in all, at "
            f"most {self.bound_s:g}{capped}) and measured the level again"
        )


def full_rates(series: Sequence[Second] | None) -> list[float]:
    """The per-second throughput of the whole seconds of a level (the cut last one dropped)."""
    return [s.rate for s in series or () if s.full]


def settle_step(advice: SettleAdvice, declared_s: float) -> SettleStep | None:
    """The warm-up pass to add after a first level, or None: its steadiness is shown, no
    warm-up would help (a noisy level, not a warming one), or the bound leaves nothing."""
    if advice.shown or advice.more_s == 0 or declared_s <= 0:
        return None
    bound = settle_bound_s(declared_s)
    room = bound - declared_s
    if room <= 0:
        return None
    # unknown (it never settled within the level): all the bound leaves
    seconds = room if advice.more_s is None else min(float(advice.more_s), room)
    return SettleStep(seconds, declared_s + seconds, bound, advice.why)
