"""The pairs' priors (analysis.paired): how levels pair, the prior's cap by hand, and the
intervals' error rates by simulation on a host that drifts, as this one does (pool-and-cluster
2026-11-27 10:57: every figure fell by about 20% over the 35 minutes of the run, at the same
server CPU)."""

import math
from collections.abc import Mapping

import numpy as np
import pytest
from scipy import special, stats

from stackbench.analysis.moderated import Prior, fit_prior
from stackbench.analysis.paired import (
    LEVELS_SCALE,
    FigureKey,
    PairKind,
    fit_pairs_prior,
    moderated_pairs,
    pair_groups,
    pair_kind,
    paired_log_ratio,
    pairs_priors,
)
from tests.analysis.test_moderated import _busy_repetition


def test_pair_kind_is_the_one_part_of_the_keys_that_differs() -> None:
    assert pair_kind(("node", "redis", 3000.0), ("php", "redis", 3000.0)) is PairKind.STACKS
    assert pair_kind(("php", "redis", 3000.0), ("php", "redis", 7000.0)) is PairKind.LEVELS
    assert pair_kind(("php", "redis", 3000.0), ("php", "mysql", 3000.0)) is PairKind.WORKLOADS
    assert pair_kind(("node", "redis", 3000.0), ("php", "mysql", 3000.0)) is None
    assert pair_kind(("node", "redis", None), ("php", "redis", None)) is None


def test_pair_groups_gather_the_levels_alike_in_the_other_two_parts() -> None:
    a, b, c, d = ({0: float(i)} for i in range(1, 5))
    figures: dict[FigureKey, Mapping[int, float]] = {
        ("node", "redis", 3000.0): a,
        ("php", "redis", 3000.0): b,
        ("node", "redis", 7000.0): c,
        ("php", "mysql", 3000.0): d,
    }
    assert pair_groups(figures, PairKind.STACKS) == [[a, b]]
    assert pair_groups(figures, PairKind.LEVELS) == [[a, c]]
    assert pair_groups(figures, PairKind.WORKLOADS) == [[b, d]]


def _orthogonal_three(s: float) -> list[dict[int, float]]:
    """Three figures over 4 repetitions whose logs are s times mutually orthogonal zero-mean
    vectors of squared norm 2: (1, -1, 0, 0), (0, 0, 1, -1), (1, 1, -1, -1) / sqrt 2. Every
    two differ by a vector of squared norm 4, so each pair's log ratios vary by 4 s^2 / 3."""
    vectors = [
        (1.0, -1.0, 0.0, 0.0),
        (0.0, 0.0, 1.0, -1.0),
        tuple(x / math.sqrt(2) for x in (1, 1, -1, -1)),
    ]
    return [{i: math.exp(s * x) for i, x in enumerate(v)} for v in vectors]


def test_three_figures_a_group_count_two_independent_contrasts() -> None:
    # 6 groups of 3 figures: 18 pairs of 3 df (54 in all), all with variance 4 (0.1)^2 / 3.
    # Equal variances scatter less than sampling explains, so d0 is the cap: not 54 but the
    # 2 independent contrasts of each group, 6 x 2 x 3 = 36; s0^2 = s^2 exp(ln 1.5 -
    # digamma(1.5) + digamma(18) - ln 18).
    groups = [_orthogonal_three(0.1) for _ in range(6)]
    s2 = 4 * 0.01 / 3
    prior = fit_pairs_prior(groups)
    assert prior is not None
    assert prior.df == pytest.approx(36.0)
    expected = s2 * math.exp(
        math.log(1.5) - special.digamma(1.5) + special.digamma(18.0) - math.log(18.0)
    )
    assert prior.variance == pytest.approx(expected)
    assert prior.levels == 18
    uncapped = fit_prior([(s2, 3.0)] * 18)
    assert uncapped is not None and uncapped.df == pytest.approx(54.0)


def test_too_few_pairs_give_no_prior() -> None:
    assert fit_pairs_prior([_orthogonal_three(0.1)]) is None  # 3 pairs, below MIN_LEVELS


# --- a drifting host -------------------------------------------------------------------------
STACKS, WORKLOADS, LEVELS, REPS = 3, 4, 2, 5
BURST_MAX = 0.13  # the background process that made a false winner of one stack's two copies


def _run(
    rng: np.random.Generator,
    step: float,
    trend: float,
    tails: float = math.inf,
    burst_p: float = 0.0,
) -> tuple[dict[FigureKey, dict[int, float]], dict[FigureKey, float], dict[FigureKey, float]]:
    """One run as an article suite measures it: 5 rounds; in each the stacks in a shuffled
    order, each on a fresh start (its own start effect, spreads 2-10% a stack) running its 4
    workloads at 2 levels one after the other (each level's own noise, 1-6%). The host drifts
    through the run: a random walk of `step` a level plus a steady decline of `trend` over
    the whole run. With `burst_p`, a background process takes up to 13% of the server's core
    during a level in that share of them (test_moderated._busy_repetition: unseen below the
    2% band, else measured again, and left out if disturbed again). Returns the figures,
    their true logs and each level's own variance (the start's and the level's: what does
    not cancel in a pair)."""
    start_sd = np.exp(rng.uniform(math.log(0.02), math.log(0.10), STACKS))
    level_sd = np.exp(rng.uniform(math.log(0.01), math.log(0.06), (STACKS, WORKLOADS)))
    truth = rng.normal(8.0, 0.5, (STACKS, WORKLOADS, LEVELS))
    slots = REPS * STACKS * WORKLOADS * LEVELS
    drift = np.cumsum(rng.normal(0.0, step, slots)) + np.linspace(0.0, math.log(1.0 - trend), slots)
    figures: dict[FigureKey, dict[int, float]] = {}
    t = 0
    for rep in range(REPS):
        for s in rng.permutation(STACKS):
            start = _draw(rng, start_sd[s], tails)
            for w in range(WORKLOADS):
                for lv in range(LEVELS):
                    noise = _draw(rng, level_sd[s, w], tails)
                    key: FigureKey = (f"s{s}", f"w{w}", float(lv))
                    lost = _busy_repetition(rng, burst_p, BURST_MAX) if burst_p else 0.0
                    kept = figures.setdefault(key, {})
                    if not math.isnan(lost):
                        kept[rep] = math.exp(truth[s, w, lv] + drift[t] + start + noise + lost)
                    t += 1
    logs: dict[FigureKey, float] = {
        (f"s{s}", f"w{w}", float(lv)): float(truth[s, w, lv])
        for s in range(STACKS)
        for w in range(WORKLOADS)
        for lv in range(LEVELS)
    }
    own: dict[FigureKey, float] = {
        (f"s{s}", f"w{w}", float(lv)): float(start_sd[s] ** 2 + level_sd[s, w] ** 2)
        for s in range(STACKS)
        for w in range(WORKLOADS)
        for lv in range(LEVELS)
    }
    return figures, logs, own


def _draw(rng: np.random.Generator, sd: float, tails: float) -> float:
    """A normal draw of SD `sd`, or with `tails` finite a Student t of that many df scaled to
    the same SD (heavier tails: a start or a level now and then far off)."""
    if math.isinf(tails):
        return float(rng.normal(0.0, sd))
    return float(rng.standard_t(tails)) * sd / math.sqrt(tails / (tails - 2.0))


def _levels_prior(figures: Mapping[FigureKey, Mapping[int, float]]) -> Prior:
    """The run's levels' prior (reading.throughput_prior's)."""
    variances = [
        (float(np.var(np.log(list(f.values())), ddof=1)), len(f) - 1.0)
        for f in figures.values()
        if len(f) >= 2
    ]
    prior = fit_prior(variances)
    assert prior is not None
    return prior


def _simulate(
    step: float,
    trend: float,
    tails: float = math.inf,
    burst_p: float = 0.0,
    runs: int = 150,
    seed: int = 5,
) -> dict[str, float]:
    """Every pair of every kind in `runs` simulated runs: its 95% interval of the true log
    ratio moderated towards its kind's prior, and towards twice the levels' prior (the rule
    before the pairs' priors). A pair left with fewer than MIN_PAIRS repetitions (bursts)
    is read as independent sides, which test_moderated checks: skipped here."""
    rng = np.random.default_rng(seed)
    covered: dict[PairKind, list[bool]] = {kind: [] for kind in PairKind}
    noisiest: list[tuple[float, bool]] = []
    width = {"pairs": 0.0, "levels": 0.0}
    for _ in range(runs):
        figures, logs, own = _run(rng, step, trend, tails, burst_p)
        priors = pairs_priors(figures)
        levels = _levels_prior(figures)
        keys = sorted(figures)
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                kind = pair_kind(a, b)
                if kind is None:
                    continue
                ratio = paired_log_ratio(figures[a], figures[b])
                if ratio is None:
                    continue
                true = logs[a] - logs[b]
                prior = priors[kind]  # without one (bursts left too few pairs), as claims do
                own_kind = levels if prior is None else prior
                for name, read in {
                    "pairs": moderated_pairs(ratio, own_kind, 1.0 if prior else LEVELS_SCALE),
                    "levels": moderated_pairs(ratio, levels),
                }.items():
                    half = float(stats.t.ppf(0.975, read.df)) * read.se
                    width[name] += half
                    if name == "pairs":
                        hit = abs(read.d - true) <= half
                        covered[kind].append(hit)
                        noisiest.append((own[a] + own[b] if kind is PairKind.STACKS else 0.0, hit))
    stacks = sorted(x for x in noisiest if x[0] > 0.0)
    tenth = stacks[-len(stacks) // 10 :]
    out = {kind.value: sum(hits) / len(hits) for kind, hits in covered.items()}
    out["noisiest_tenth"] = sum(hit for _, hit in tenth) / len(tenth)
    out["width_ratio"] = width["pairs"] / width["levels"]
    return out


@pytest.mark.parametrize(
    ("step", "trend", "tails", "least"),
    [
        (0.0, 0.0, math.inf, 0.94),
        (0.01, 0.0, math.inf, 0.94),
        (0.01, 0.2, math.inf, 0.94),
        (0.02, 0.3, math.inf, 0.94),
        (0.01, 0.2, 3.0, 0.93),
        (0.02, 0.3, 4.0, 0.93),
    ],
)
def test_pairs_priors_cover_as_they_say_on_a_drifting_host(
    step: float, trend: float, tails: float, least: float
) -> None:
    # 150 runs of 72 pairs (24 of two stacks, 12 of two levels, 36 of two workloads): the
    # 95% intervals cover the true ratio in 94% or more of each kind, in 90% or more of the
    # tenth of two-stack pairs with the noisiest starts; from a quiet host (no drift) to one
    # whose walk moves 1-2% a level and whose figures fall 20-30% over the run (seeded:
    # 94.6-95.6%, the noisiest tenth 92.8-94.2%). With heavy-tailed starts and levels (t of
    # 3 or 4 df), 93% or more (seeded: 93.8-96.8%).
    r = _simulate(step, trend, tails)
    for kind in PairKind:
        assert r[kind.value] >= least, r
    assert r["noisiest_tenth"] >= 0.90, r


def test_pairs_priors_are_narrower_where_pairs_share_drift() -> None:
    # The levels' prior twice is what a pair has when it shares no drift: on a drift of 1%
    # a level and 20% over the run, the pairs' own priors give intervals half as wide
    # (seeded: 0.49); on a quiet host a quarter narrower, the levels and workloads of one
    # start sharing its start (0.77).
    assert _simulate(0.01, 0.2)["width_ratio"] <= 0.6
    assert _simulate(0.0, 0.0)["width_ratio"] <= 0.85


@pytest.mark.parametrize(("burst_p", "tenth"), [(0.3, 0.90), (0.6, 0.88)])
def test_pairs_priors_cover_on_a_busy_host(burst_p: float, tenth: float) -> None:
    # A background process taking up to 13% of the server's core during 30% or 60% of the
    # levels, on the drifting host (1% a level, 20% over the run): a burst above the 2% band
    # is measured again and left out if it recurs, so some pairs keep fewer repetitions and
    # some kinds too few pairs for a prior (then twice the levels', as the claims read them).
    # Each kind still covers 94% or more, a false "different" in at most 6% of A/A pairs
    # (seeded: 94.3-95.6% at 30%, 94.1-99.6% at 60%); the noisiest tenth of two-stack pairs
    # 90% at 30% (94.3%) and 88% at 60% (89.6%), where the starts' own spread and the bursts
    # add up.
    r = _simulate(0.01, 0.2, burst_p=burst_p)
    for kind in PairKind:
        assert r[kind.value] >= 0.94, r
    assert r["noisiest_tenth"] >= tenth, r
