"""How a verdict is said: one wording for every output (terminal, summary.md, report.html,
findings, compare, claims), so the same comparison never reads two ways.

The words follow the outcome exactly: "faster"/"slower" only for a difference shown beyond the
noise threshold; "equivalent" (and the symbol ≈) only for an interval inside it; "not enough
evidence" always with the smallest ratio the design resolves and what would decide it.
"""

from stackbench.analysis import fmt, verdicts
from stackbench.analysis.verdicts import Outcome, Verdict
from stackbench.config import noise

SYMBOL = {
    Outcome.FASTER: ">",
    Outcome.SLOWER: "<",
    Outcome.EQUIVALENT: "≈",
    Outcome.WITHIN_THRESHOLD: "≳",
    Outcome.UNDECIDED: "?",
}
SHORT = {
    Outcome.FASTER: "faster",
    Outcome.SLOWER: "slower",
    Outcome.EQUIVALENT: "equivalent",
    Outcome.WITHIN_THRESHOLD: "within threshold",
    Outcome.UNDECIDED: "undecided",
}


def rule() -> str:
    """The verdict rule in words, its figures those verdicts.py decides with (the noise
    thresholds of config/noise.py, the confidence of verdicts.py)."""
    return (
        f"Verdicts: 'faster'/'slower' when the {verdicts.CONFIDENCE:.0%} interval of the "
        "ratio lies wholly beyond the noise threshold "
        f"(±{noise.THROUGHPUT_THRESHOLD:.0%} req/s, "
        f"±{noise.PERCENTILE_THRESHOLD:.0%} latency percentiles) and Holm's adjustment "
        "over the comparisons shown agrees; 'equivalent' when it lies wholly inside; "
        f"'{Outcome.WITHIN_THRESHOLD.value}' when inside but excluding 1; otherwise 'not "
        "enough evidence', with what would decide it."
    )


RULE = rule()


FIGURES_NOTE = (
    "Each figure is the steady window's (one repetition) or the geometric mean of "
    "the repetitions' (several), with its 95% interval in brackets (– means not "
    "measured)."
)


def interval(v: Verdict) -> str:
    """'8.02× (95% 7.41–8.68×)', or the bare ratio when there is no interval."""
    if v.ratio is None:
        return "no ratio"
    if v.low is None or v.high is None:
        return f"{_ratio(v.ratio)} (no interval)"
    return f"{_ratio(v.ratio)} ({v.confidence:.0%} {_ratio(v.low, False)}–{_ratio(v.high)})"


def cell(v: Verdict | None) -> str:
    """A table cell: 'faster 8.02× [7.41–8.68]'."""
    if v is None:
        return fmt.MISSING
    if v.ratio is None:
        return SHORT[v.outcome]
    bounds = (
        ""
        if v.low is None or v.high is None
        else f" [{_ratio(v.low, False)}–{_ratio(v.high, False)}]"
    )
    return f"{SHORT[v.outcome]} {_ratio(v.ratio)}{bounds}"


def sentence(v: Verdict, a: str, b: str, what: str, say_assumed: bool = True) -> str:
    """The verdict of a against b on `what` ('req/s', 'p99') as one sentence. The ratio is
    always of the figures, a / b. `say_assumed` False: the caller says once, for a block of
    verdicts, that the run-to-run spread was assumed."""
    band = f"±{v.threshold:.0%}"
    shown = f"{a}'s {what} is {interval(v)} {b}'s"
    if v.outcome in (Outcome.FASTER, Outcome.SLOWER):
        text = f"{a} is {v.outcome.value} than {b}: {shown}"
    elif v.outcome is Outcome.EQUIVALENT:
        text = f"{a} and {b} are equivalent within {band}: {shown}"
    elif v.outcome is Outcome.WITHIN_THRESHOLD:
        side = "faster" if v.a_better else "slower"
        text = f"{a} is {side} than {b}, but by less than the {band} threshold: {shown}"
    else:
        text = f"not enough evidence between {a} and {b}: {shown}"
        if v.resolvable is not None:
            text += f"; this design resolves ratios beyond {_ratio(v.resolvable)}"
        if v.decide:
            text += f"; {v.decide}"
    return text + (assumed(v) if say_assumed else "")


def assumed(v: Verdict) -> str:
    """'; run-to-run spread assumed 5%' when the verdict leaned on the uncalibrated default."""
    if v.spread is None or not v.spread.assumed:
        return ""
    return f" (run-to-run spread assumed {v.spread.sigma:.0%}: not calibrated)"


def _ratio(value: float, suffix: bool = True) -> str:
    digits = 2 if value >= 0.1 else 3
    text = f"{value:.{digits}f}"
    return text + ("×" if suffix else "")


def ratio_and_bounds(v: Verdict) -> tuple[str, str]:
    """A table's two cells: the ratio ('1.07×') and its interval ('0.91–1.26×'); '–' for what
    is missing."""
    ratio = fmt.MISSING if v.ratio is None else _ratio(v.ratio)
    if v.low is None or v.high is None:
        return ratio, fmt.MISSING
    return ratio, f"{_ratio(v.low, False)}–{_ratio(v.high)}"
