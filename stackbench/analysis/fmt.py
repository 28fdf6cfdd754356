"""Number formatting shared by every report view. A missing figure is always shown as '–'."""

import math
import re
from collections.abc import Callable
from typing import Protocol

MISSING = "–"


class Interval(Protocol):
    """A figure with its interval (stats.Estimate): formatting needs no more, and so imports
    no statistics (the level figures of figures.py, which stats aggregates, format with it)."""

    @property
    def value(self) -> float: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...


def is_finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def rate(value: float | None) -> str:
    """Requests per second: thousands separators, decimals only for small rates."""
    if not is_finite(value):
        return MISSING
    assert value is not None
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def latency(us: float | None) -> str:
    """Microseconds in the unit a reader expects (µs, ms, s)."""
    if not is_finite(us):
        return MISSING
    assert us is not None
    if us < 1000:
        return f"{us:.0f} µs"
    if us < 1_000_000:
        return f"{us / 1000:.3g} ms" if us < 100_000 else f"{us / 1000:.0f} ms"
    return f"{us / 1_000_000:.3g} s"


def milliseconds(ms: float | None) -> str:
    """A time given in ms, kept in ms as ab prints its time per request (0.248 ms, 174 ms)."""
    if not is_finite(ms):
        return MISSING
    assert ms is not None
    return f"{ms:.3g} ms" if abs(ms) < 100 else f"{ms:,.0f} ms"


def mib_per_s(value: float | None) -> str:
    """A transfer rate in MiB/s, three significant digits (21.0, 0.205)."""
    if not is_finite(value):
        return MISSING
    assert value is not None
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def percent(value: float | None, digits: int = 1) -> str:
    """Percent given as 0..100 (CPU: 100 = one core)."""
    return MISSING if not is_finite(value) else f"{value:.{digits}f}%"


def fraction(value: float | None) -> str:
    """A 0..1 fraction as percent, keeping small error rates visible."""
    if not is_finite(value):
        return MISSING
    assert value is not None
    if value == 0:
        return "0%"
    return f"{value:.2%}" if value >= 0.0001 else f"{value:.1e}"


def level(value: float) -> str:
    return f"{value:g}"


def level_name(level_kind: str, value: float) -> str:
    """A level with its unit: '50 connections', '5,000 req/s offered' (level_kind "rate")."""
    if level_kind == "rate":
        return f"{rate(value)} req/s offered"
    return f"{level(value)} connection{'' if value == 1 else 's'}"


def estimate(est: Interval | None, fmt: Callable[[float], str] = rate) -> str:
    """'45,123 [44,900–45,400]' or just the median when there is no interval."""
    if est is None:
        return MISSING
    low, high = est.low, est.high
    if low is None or high is None or low == high == est.value:
        return fmt(est.value)
    return f"{fmt(est.value)} [{fmt(low)}–{fmt(high)}]"


def ratio(value: float | None) -> str:
    return MISSING if not is_finite(value) else f"{value:.2f}×"


def slug(text: str) -> str:
    """A file- and id-safe name: sha256?n=1000 -> sha256-n-1000."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"
