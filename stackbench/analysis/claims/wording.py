"""The claims' words: what a test expects, bands, figures and ratios with their intervals,
what would decide an undecided point.
"""

import math
from collections.abc import Sequence

from stackbench.analysis.claims.bands import _Band, _ratio_band, _Verdict
from stackbench.analysis.verdicts import CONFIDENCE, LogRatio, repetitions_to_decide
from stackbench.config.claims import (
    OrderTest,
    RatioChangeTest,
    RatioTest,
    ScatterTest,
    ShapeTest,
    Test,
    ThresholdTest,
    metric_unit,
    order_groups,
)

NO_EVIDENCE = (
    "one repetition of a level that found no steady state has no interval "
    "(repeat = 2 or more would give one)"
)


def _to_decide(ratio: LogRatio, band: _Band, confidence: float = CONFIDENCE) -> str:
    """What would decide a ratio (or a figure) that straddles a bound of the claim's band:
    the repetitions a side whose interval would clear it, if the figure stayed the same."""
    return repetitions_for(ratio, band, confidence)[1]


def repetitions_for(
    ratio: LogRatio, band: _Band, confidence: float = CONFIDENCE
) -> tuple[int | None, str]:
    """The repetitions a side (in all) that would decide a figure straddling a bound of the
    band at `confidence` (the run's), if it stayed the same, and that in words; None when no
    practical amount of measurement would (at the bound, or more than 50 repetitions a side)."""
    edges = [math.log(e) for e in (band.low, band.high) if 0 < e < math.inf]
    if not edges:
        return None, "more repetitions would decide it"
    needed = min(abs(ratio.d - e) for e in edges)
    if needed < 0.005:
        return None, "it sits at the claim's bound: no practical amount of measurement decides it"
    reps = repetitions_to_decide(needed, ratio.per_run, confidence, ratio.paired, ratio.prior_df)
    if reps is None:
        return None, "more than 50 repetitions a side would be needed to decide it"
    return reps, f"{reps} repetitions a side (repeat = {reps}) would decide it"


def _band_text(band: _Band, verdict: _Verdict) -> str:
    target = (
        f"≥ {band.low:.2f}×"
        if math.isinf(band.high)
        else f"≤ {band.high:.2f}×"
        if band.low == 0
        else f"{band.low:.2f}–{band.high:.2f}×"
    )
    if verdict is _Verdict.HOLDS:
        return f"within {target}"
    if verdict is _Verdict.FAILS:
        return f"outside {target}"
    return f"straddling {target}"


def _value_band_text(band: _Band, unit: str, verdict: _Verdict) -> str:
    if math.isinf(band.low):
        target = f"≤ {_fmt(band.high, unit)}"
    elif math.isinf(band.high):
        target = f"≥ {_fmt(band.low, unit)}"
    else:
        target = f"{_fmt(band.low, unit)}–{_fmt(band.high, unit)}"
    word = {_Verdict.HOLDS: "within", _Verdict.FAILS: "outside", _Verdict.NOISE: "straddling"}[
        verdict
    ]
    return f"{word} {target}"


def _levels_text(levels: Sequence[float]) -> str:
    if not levels:
        return "none"
    shown = [f"{v:,.0f}" for v in levels]
    return ", ".join(shown) if len(shown) <= 6 else f"{shown[0]} … {shown[-1]} ({len(shown)})"


def _fmt(value: float, unit: str) -> str:
    if unit == "fraction":
        return f"{100.0 * value:.2g}%" if value < 0.1 else f"{100.0 * value:.1f}%"
    if unit == "% of a core":
        return f"{value:.0f}% of a core"
    if unit == "failed requests":
        return f"{value:,.0f} failed requests"
    if unit == "ms":
        return f"{value:,.3g} ms" if value < 100 else f"{value:,.0f} ms"
    if unit == "s":
        return f"{value:.3g} s"
    return f"{value:,.0f} {unit}" if abs(value) >= 100 else f"{value:.3g} {unit}"


def _value_text(value: float, unit: str, low: float | None, high: float | None) -> str:
    base = _fmt(value, unit)
    if low is None or high is None or low == high:
        return base
    return f"{base} ({_fmt(low, unit)}–{_fmt(high, unit)})"


def _ratio_text(value: float, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return f"{value:.2f}×"
    return f"{value:.2f}× ({low:.2f}–{high:.2f})"


def expectation(test: Test) -> str:
    """What the test checks, in a few words (the claim table's 'article' column when the
    article prints no figure)."""
    if isinstance(test, OrderTest):
        groups = [g[0] if len(g) == 1 else "{" + ", ".join(g) + "}" for g in order_groups(test)]
        return f"{test.metric}: " + " > ".join(groups)
    if isinstance(test, RatioTest | RatioChangeTest):
        band = _ratio_band(test.expect, test.threshold, test.article, test.tolerance, test.upper)
        if test.expect == "near":
            return (
                f"≈ {test.article:.2f}× ({band.low:.2f}–{band.high:.2f}×)"
                if test.article is not None
                else ""
            )
        return _band_text(band, _Verdict.HOLDS).removeprefix("within ")
    if isinstance(test, ThresholdTest):
        band = _Band(
            -math.inf if test.min is None else test.min, math.inf if test.max is None else test.max
        )
        text = _value_band_text(band, metric_unit(test.metric), _Verdict.HOLDS)
        text = f"{test.metric} " + text.removeprefix("within ")
        return text + (f" for at least {test.at_least}" if test.at_least else "")
    if isinstance(test, ShapeTest):
        what = "flat" if test.expect == "flat" else "proportional to the level"
        return (
            f"{test.metric} {what} within {test.tolerance:.0%} from "
            f"{test.from_level:,.0f} to {test.to_level:,.0f}"
        )
    if isinstance(test, ScatterTest):
        return f"{test.metric} jitter ratio ≥ {test.threshold:.2f}×"
    if test.expect == "within":
        assert test.range is not None
        return f"{test.stack} first fails at {test.range[0]:,.0f}–{test.range[1]:,.0f}"
    if test.expect == "none":
        assert test.up_to is not None
        return f"{test.stack} never fails up to {test.up_to:,.0f}"
    return f"{test.stack} fails before {test.other}"
