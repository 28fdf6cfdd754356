"""Tune steady.PENALTY_PER_LOG_N on synthetic series with known answers (not a test).

    PYTHONPATH=. /work/main/.venv/bin/python tests/analysis/tune_steady_penalty.py [factor ...]

For each penalty factor c (penalty c * ln n) it prints, per family of series, the share of
seeded series whose class (and warm-up length within +-2 s, where there is one) matches the
truth. docs/methods.md records the table of the chosen run and why the chosen value was chosen.
"""

import math
import sys
from collections.abc import Callable, Iterator

import numpy as np
import synthetic_series as syn

from stackbench.analysis.steady import (
    STEADY_TOLERANCE,
    SteadyClass,
    SteadyState,
    detect_steady_state,
    floor_seconds,
    min_window_seconds,
)

SEEDS = range(20)
FACTORS = (2.0, 3.0, 5.0, 8.0, 10.0, 12.0, 15.0, 20.0)
Check = Callable[[SteadyState], bool]


def is_class(expected: SteadyClass) -> Check:
    return lambda s: s.steady_class is expected


def warmup_near(truth: float) -> Check:
    return lambda s: (
        s.steady_class is SteadyClass.WARMUP
        and s.warmup_s is not None
        and abs(s.warmup_s - truth) <= 2
    )


def families() -> Iterator[tuple[str, Callable[[int], np.ndarray], Check]]:
    for n in (12, 20, 30, 60, 120):
        for cv in (0.01, 0.05, 0.10):
            for phi in (0.0, 0.5):
                yield (
                    f"flat cv{cv:.0%} phi{phi}",
                    lambda s, n=n, cv=cv, phi=phi: syn.flat(n, cv, s, phi),
                    is_class(SteadyClass.FLAT),
                )
    for n in (20, 30, 60):
        for ramp in (6, 10, 14):
            if ramp < floor_seconds(n) + 3 or ramp + min_window_seconds(n) > n:
                continue  # a ramp inside the floor is never seen; one too long leaves no window
            for cv in (0.01, 0.03):
                yield (
                    f"ramp cv{cv:.0%}",
                    lambda s, n=n, r=ramp, cv=cv: syn.ramp_then_plateau(n, r, cv, s),
                    warmup_near(ramp),
                )
    tau, start = 3.0, 0.04
    truth = tau * math.log((1 - start) / 0.02)  # within 2% of the plateau
    for n in (25, 30):
        yield (
            "exp warm-up",
            lambda s, n=n: syn.exponential_warmup(n, tau, 0.01, s, start),
            warmup_near(truth),
        )
    for n in (15, 20, 30, 60):
        for drop in (0.9, 0.7):
            yield (
                f"step down {1 - drop:.0%}",
                lambda s, n=n, d=drop: syn.step(n, n // 3, 1.0, d, 0.01, s, phi=0.3),
                is_class(SteadyClass.SLOWDOWN),
            )
        yield (
            "step up 10%",
            lambda s, n=n: syn.step(n, n // 3, 0.9, 1.0, 0.01, s, phi=0.3),
            warmup_near(n // 3),
        )
    for n in (20, 30, 60):
        for at in (n // 2, n - 3):
            yield (
                "stall 1 s to 0",
                lambda s, n=n, at=at: syn.with_stall(syn.flat(n, 0.01, s), at, 1, 0.0),
                is_class(SteadyClass.FLAT),
            )
        yield (
            "stall 3 s to 30% mid",
            lambda s, n=n: syn.with_stall(syn.flat(n, 0.01, s), n // 2, 3, 0.3),
            is_class(SteadyClass.FLAT),
        )
        # A level that ends in a stall was not steady at its end.
        yield (
            "stall 3 s to 30% at end",
            lambda s, n=n: syn.with_stall(syn.flat(n, 0.01, s), n - 4, 3, 0.3),
            is_class(SteadyClass.NO_STEADY_STATE),
        )
    for n in (20, 30, 60):
        yield (
            "decline 20%",
            lambda s, n=n: syn.decline(n, 0.2, 0.01, s),
            is_class(SteadyClass.NO_STEADY_STATE),
        )
    # Short levels: right when no window straddling the change is shown steady (a flat class
    # over both sides of a -10% step, or a window across which a 10% decline moves > 5%).
    for n in (12, 20):
        yield (
            "step down 10% mid-level",
            lambda s, n=n: syn.step(n, n // 2, 1.0, 0.9, 0.01, s, phi=0.3),
            not_steady_across(n // 2),
        )
        yield (
            "decline 10% (12-20 s)",
            lambda s, n=n: syn.decline(n, 0.1, 0.01, s),
            changes_at_most(0.1 / (n - 1), STEADY_TOLERANCE),
        )


def not_steady_across(at: int) -> Check:
    return lambda s: not (s.steady_shown and s.window_start is not None and s.window_start < at)


def changes_at_most(per_second: float, tolerance: float) -> Check:
    return lambda s: not s.steady_shown or per_second * (s.window_seconds - 1) <= tolerance


def score(factor: float) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for name, make, check in families():
        ok, total = out.get(name, (0, 0))
        for seed in SEEDS:
            ok += check(detect_steady_state(make(seed).tolist(), penalty_per_log_n=factor))
            total += 1
        out[name] = (ok, total)
    return out


def main(factors: tuple[float, ...]) -> None:
    results = {f: score(f) for f in factors}
    names = list(next(iter(results.values())))
    print("| family | " + " | ".join(f"{f:g}" for f in factors) + " |")
    print("|---|" + "---|" * len(factors))
    for name in names:
        cells = [f"{results[f][name][0] / results[f][name][1]:.0%}" for f in factors]
        print(f"| {name} | " + " | ".join(cells) + " |")
    totals = [
        sum(ok for ok, _ in results[f].values()) / sum(t for _, t in results[f].values())
        for f in factors
    ]
    print("| **all** | " + " | ".join(f"**{t:.1%}**" for t in totals) + " |")


if __name__ == "__main__":
    main(tuple(float(a) for a in sys.argv[1:]) or FACTORS)
