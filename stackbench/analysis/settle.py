"""How long a warm-up would have settled a level, measured from its per-second throughput.

A level whose steadiness is not shown (steady.py, item 6) is usually a JIT still compiling: its
throughput climbs through the level. The question a reader then has is "how much longer should
it have been warmed up?", and the series answers it:

1. The level's steady window, when it exists and is shown steady, starts where the level
   settled (a flat level needs no warm-up: it is steady from the floor, which is always dropped).
2. Else the earliest second s after which the rest of the level, at least a steady window long
   (steady.min_window_seconds), is shown steady by the same equivalence test (its fitted change
   plus its 95% margin within STEADY_TOLERANCE), provided the seconds before s were a
   different level (median more than STEADY_TOLERANCE off the rest's): a warm-up s seconds
   longer would have given the level that steady state from its start. Without that proviso a
   flat noisy level would "settle" wherever a quiet stretch happens to begin.
3. Else, when the last window of the level changes by more than the tolerance, and not within
   its own noise, the level did not settle within its length: a warm-up longer than the level
   may be needed, and the series cannot tell how much longer. The noise here is the
   second-to-second one (the median absolute successive difference, which a trend barely
   moves), not the linear fit's residuals: a climb that bends into a plateau leaves residuals
   so autocorrelated that steady.py's widened margin would call a clear 16% rise noise. The
   change is within the noise when it is below the one-sided 95% margin a white-noise series
   of that noise would give the fitted change, t(0.95, w-2) sigma sqrt(12 (w-1) / (w (w+1))).
4. Else the level's end is too short or too noisy to bound its change. When it rose first (a
   steady window of class warm-up), it settled where that window starts, as far as the noise
   lets one see: a warm-up that much longer, or a longer level, would show it. Otherwise no
   warm-up is shown to be missing: when the end's change is within the tolerance none is, and
   when it is beyond it but within its noise (a disturbed machine's level) the series cannot
   tell; a quieter machine or a longer level would. Lengthening the warm-up is asked for in
   neither case.
"""

import enum
import math
from dataclasses import dataclass

import numpy as np

# scipy and ruptures are imported in the functions that use them: together 0.7 s of CPU at
# start-up, which every command that analyses nothing (stacks, doctor, --version) would pay.
from stackbench.analysis.intervals import FloatArray, Values, finite_array
from stackbench.analysis.steady import (
    STEADY_TOLERANCE,
    SteadyClass,
    SteadyState,
    detect_steady_state,
    min_window_seconds,
    steadiness,
)
from stackbench.analysis.verdicts import t_quantile


class SettleKind(enum.Enum):
    NONE_NEEDED = "none needed"  # steady from the floor: no warm-up would change it
    SETTLED = "settled"  # steady from `settled_at_s` on
    NOT_SETTLED = "not settled"  # still changing at the end of the level
    NOISY = "noisy"  # no drift beyond the tolerance, but none bounded either


@dataclass(frozen=True)
class Settle:
    """When a level's throughput settled, from its per-second series (`seconds` long)."""

    kind: SettleKind
    # SETTLED (and NOISY after a rise): seconds from the start of the level; else None
    settled_at_s: int | None
    seconds: int
    end_change: float | None  # NOT_SETTLED/NOISY: fitted change over the level's last window
    end_window_s: int  # the window end_change is fitted over

    @property
    def warmup_more_s(self) -> int | None:
        """The extra warm-up the series asks for: 0 none, None more than the level (unknown)."""
        if self.kind is SettleKind.NOT_SETTLED:
            return None
        return self.settled_at_s or 0

    def sentence(self) -> str:
        """What a warm-up would have done for the level, in words."""
        if self.kind is SettleKind.NONE_NEEDED:
            return "steady from the start: a longer warm-up would not change it"
        if self.kind is SettleKind.SETTLED:
            return (
                f"settled {self.settled_at_s} s into the {self.seconds}-s level (steadiness "
                f"shown from there on): a warm-up about {self.settled_at_s} s longer would "
                "have settled it"
            )
        change = 0.0 if self.end_change is None else self.end_change
        if self.kind is SettleKind.NOT_SETTLED:
            return (
                f"did not settle within the {self.seconds}-s level (its last "
                f"{self.end_window_s} s still changed {change:+.1%}): a warm-up longer "
                f"than {self.seconds} s may be needed, and the series cannot tell how much longer"
            )
        within = abs(change) <= STEADY_TOLERANCE
        noisy = (
            f"changed only {change:+.1%} over its last {self.end_window_s} s, within "
            f"±{STEADY_TOLERANCE:.0%}, but too noisily to show it"
            if within
            else f"changed {change:+.1%} over its last {self.end_window_s} s, within their "
            "own noise"
        )
        if self.settled_at_s is None and within:
            return f"no warm-up is missing: the level {noisy}; a longer level would show it"
        if self.settled_at_s is None:
            return (
                f"the series cannot tell whether a warm-up is missing: the level {noisy}; a "
                "quieter machine or a longer level would tell"
            )
        return (
            f"rose until about {self.settled_at_s} s into the {self.seconds}-s level and "
            f"{noisy}: a warm-up about {self.settled_at_s} s longer, or a longer level, "
            "would show it"
        )


def settle_time(per_second: Values, state: SteadyState | None = None) -> Settle:
    """When the level settled (see the module's doc). `state`: the series' steady state when
    the caller has it already (detect_steady_state on the same series)."""
    values = finite_array(per_second, "settle time")
    n = len(values)
    needed = min_window_seconds(n)
    if state is None:
        state = detect_steady_state(values.tolist())
    if state.steady_shown and state.window_start is not None:
        if state.window_start <= state.floor_s:
            return Settle(SettleKind.NONE_NEEDED, None, n, None, 0)
        return Settle(SettleKind.SETTLED, state.window_start, n, None, 0)
    # the scan starts after the floor (start-up seconds no warm-up removes) or at the window
    first = state.floor_s if state.window_start is None else state.window_start
    for start in range(first, n - needed + 1):
        if steadiness(values[start:]).shown and _another_level(values, state.floor_s, start):
            return Settle(SettleKind.SETTLED, start, n, None, 0)
    window = min(needed, n)
    end = steadiness(values[n - window :])
    if abs(end.change) > end.tolerance and not _within_noise(values[n - window :], end.change):
        return Settle(SettleKind.NOT_SETTLED, None, n, end.change, window)
    rose = state.steady_class is SteadyClass.WARMUP
    return Settle(SettleKind.NOISY, state.window_start if rose else None, n, end.change, window)


def _another_level(values: FloatArray, floor: int, start: int) -> bool:
    """The seconds [floor, start) a warm-up would remove were a different level from the rest:
    their median more than STEADY_TOLERANCE off the rest's."""
    if start <= floor:
        return False
    before, after = float(np.median(values[floor:start])), float(np.median(values[start:]))
    return abs(before - after) > STEADY_TOLERANCE * abs(after)


def _within_noise(window: FloatArray, change: float) -> bool:
    """The fitted relative change is within the one-sided 95% margin of white noise as large
    as the window's second-to-second noise (see the module's doc, item 3)."""
    w = len(window)
    center = float(np.mean(window))
    if w < 4 or center == 0.0:
        return True  # too short to tell a change from noise
    # median |x[i+1] - x[i]| of white noise is 0.6745 * sqrt(2) sigma
    sigma = float(np.median(np.abs(np.diff(window)))) / (0.6745 * math.sqrt(2.0)) / abs(center)
    # sd of the OLS slope times (w - 1): sigma sqrt(12 / (w (w^2 - 1))) (w - 1)
    margin = sigma * math.sqrt(12.0 * (w - 1) / (w * (w + 1)))
    return abs(change) <= t_quantile(0.95, w - 2) * margin
