"""The band a claim's figure or ratio must lie in, and a point's verdict against it."""

import enum
import math
from dataclasses import dataclass


class _Verdict(enum.Enum):
    HOLDS = "holds"
    FAILS = "fails"
    NOISE = "within noise"


@dataclass(frozen=True)
class _Band:
    low: float
    high: float

    def judge(self, value: float, low: float | None, high: float | None) -> _Verdict:
        """Holds when the whole interval lies in the band, fails when it lies outside."""
        lo, hi = (value, value) if low is None or high is None else (low, high)
        if self.low <= lo and hi <= self.high:
            return _Verdict.HOLDS
        if hi < self.low or lo > self.high:
            return _Verdict.FAILS
        return _Verdict.NOISE


def _ratio_band(
    expect: str,
    threshold: float,
    article: float | None,
    tolerance: float,
    upper: float | None = None,
) -> _Band:
    if expect == "greater":
        return _Band(threshold, math.inf if upper is None else upper)
    if expect == "less":
        return _Band(0.0, threshold)
    assert article is not None  # the parser requires it for "near"
    return _Band(article / (1.0 + tolerance), article * (1.0 + tolerance))
