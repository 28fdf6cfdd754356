"""Synthetic per-second throughput series with known answers, for the steady-state tests and
for tune_steady_penalty.py. Every generator takes a seed: the same call gives the same series.

Noise is Gaussian with the given coefficient of variation, optionally AR(1) with coefficient
`phi` (real per-second throughput is autocorrelated) scaled to keep the same marginal CV.
"""

import numpy as np

LEVEL = 10_000.0


def noise(seconds: int, cv: float, seed: int, phi: float = 0.0) -> np.ndarray:
    """Zero-mean noise in units of the level's mean (multiply by the level)."""
    rng = np.random.default_rng(seed)
    shocks = rng.normal(0.0, cv * np.sqrt(1.0 - phi * phi), seconds)
    out = np.empty(seconds)
    previous = rng.normal(0.0, cv)  # start in the stationary distribution
    for i in range(seconds):
        previous = phi * previous + shocks[i]
        out[i] = previous
    return out


def flat(seconds: int, cv: float, seed: int, phi: float = 0.0, level: float = LEVEL) -> np.ndarray:
    return level * (1.0 + noise(seconds, cv, seed, phi))


def ramp_then_plateau(
    seconds: int,
    ramp_s: int,
    cv: float,
    seed: int,
    start: float = 0.05,
    phi: float = 0.0,
    level: float = LEVEL,
) -> np.ndarray:
    """Linear rise from start*level at second 0 to level at second ramp_s, then flat: the
    true warm-up length is ramp_s (the first second at the plateau)."""
    shape = np.ones(seconds)
    shape[:ramp_s] = start + (1.0 - start) * np.arange(ramp_s) / ramp_s
    return level * shape * (1.0 + noise(seconds, cv, seed, phi))


def exponential_warmup(
    seconds: int, tau_s: float, cv: float, seed: int, start: float = 0.04, level: float = LEVEL
) -> np.ndarray:
    """Rise like a JIT warming up: level * (1 - (1 - start) * exp(-t / tau))."""
    t = np.arange(seconds)
    shape = 1.0 - (1.0 - start) * np.exp(-t / tau_s)
    return level * shape * (1.0 + noise(seconds, cv, seed))


def with_stall(series: np.ndarray, at: int, length: int, depth: float) -> np.ndarray:
    """The series with seconds [at, at+length) cut to `depth` of their value (0: stopped)."""
    out = series.copy()
    out[at : at + length] *= depth
    return out


def step(
    seconds: int,
    at: int,
    before: float,
    after: float,
    cv: float,
    seed: int,
    phi: float = 0.0,
    level: float = LEVEL,
) -> np.ndarray:
    """A change of level at second `at` (before/after as fractions of level)."""
    shape = np.where(np.arange(seconds) < at, before, after)
    return level * shape * (1.0 + noise(seconds, cv, seed, phi))


def decline(
    seconds: int, total_drop: float, cv: float, seed: int, level: float = LEVEL
) -> np.ndarray:
    """A slow, steady decline by `total_drop` (fraction) over the whole level."""
    shape = 1.0 - total_drop * np.arange(seconds) / (seconds - 1)
    return level * shape * (1.0 + noise(seconds, cv, seed))
