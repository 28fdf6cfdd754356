"""Decidable by design (issue 31): every claim of every full article suite, fed through the
decision code as synthetic data with the evidence its suite's plan will produce (repetitions,
level lengths, driver, the assumed run-to-run spread), is confirmed by data at the article's
own figures (each point at the figure the article printed for it) and refuted by data at the
opposite.

Every claim is checked as testable: the server given the cores the claims need, every stack
available. Whether this machine can test a claim is readiness, not design.

A few claims are decidable only with the rounds `run --until-decided` adds within what the
suite's load budget leaves after its plan (priced at the plan's own estimates on a 2-core
machine): named here, and checked "decidable with this plan and N until-decided round(s)".
A few are decidable only once the machine is calibrated (their bands are narrower than
the assumed spread allows with the suite's repetitions): they are named here with that reason,
and checked decidable under a calibrated 2% spread. A few are decidable by no plan of their
suite as it stands: named with what they would need. The last two lists must shrink, never
grow: a claim that becomes decidable fails the test until it is taken off."""

import dataclasses
import math
import statistics
from pathlib import Path

import pytest

from stackbench.analysis.claims import Facts, Readiness, StackFacts, evaluate
from stackbench.analysis.claims.design import (
    DECIDABLE,
    NOT_DECIDABLE,
    WITH_ROUNDS,
    Key,
    Noise,
    Scenario,
    _factors,
    _own_patterns,
    _turns,
    claim_spread,
    design_lines,
    designs,
    expected_rounds,
    pairing,
    readiness_by_design,
    scenarios,
    synthetic_run,
)
from stackbench.analysis.claims.design import counts as design_counts
from stackbench.analysis.claims.results import ClaimStatus
from stackbench.analysis.pastspread import PastSpreads
from stackbench.analysis.verdicts import RunSpread, assumed_spread
from stackbench.config.claims import Claim, claims_from_data, parse_claims
from stackbench.config.estimate import plan_timeline
from stackbench.config.plan import LevelKey, build_plan
from stackbench.config.suite import Suite, parse_suite
from stackbench.config.todecide import RoundsRoom, rounds_room
from stackbench.lab.inventory import load_inventory

ROOT = Path(__file__).resolve().parents[2]
CLAIMS_DIR = ROOT / "suites" / "claims"
CALIBRATED = RunSpread(0.02, False, "calibrated 2%", within=0.0001, level_s=15.0)
# Decidable once calibrated: the band is narrower than the assumed 5% (10% for a whole run)
# lets the suite's repetitions resolve.
# Decidable with until-decided rounds within the suite's 20 min of load.
NEEDS_ROUNDS = {
    # concurrency-sweep runs each level once; its until-decided rounds repeat the levels a
    # ratio of two levels reads (a level against its own stack's peak is at most 1: fed the
    # middle of the band below 1, sqrt(0.9) against >= 0.9, or sqrt(0.8) against <= 0.8)
    "apache-near-peak-at-2000": "0.95 of the peak at 2,000 against >= 0.90",
    "apache-drops-at-high-concurrency": "0.89 of the peak at 10,000 against <= 0.80",
    "monarch-throughput-stable": "0.92 of the peak at 10,000 against >= 0.85",
    # db-html-report's 8 repetitions read in pairs with none of the assumed 5% shared (no
    # earlier runs): t(7) against t(14) asks a ninth of php @1 and node @1
    "single-client-response-time": "1.06 at c=1 against 1.00-1.33",
}
NEEDS_CALIBRATION = {
    # pool-and-cluster repeats 4; with the assumed spread these need 5 to 14, and the rounds
    # that would add them read node-cluster, which the 2-core plan leaves out
    "pool-no-gain-redis": "0.96 at 3,000 clients against a ±10% band around 1.00",
    "hello-node-declines": "0.88 against a ±8% band",
    # 8,000 against 7,677 req/s: 14 repetitions with the assumed spread; calibrated at 2%,
    # the 4 pairs with the run's other levels' degrees of freedom (analysis.moderated)
    "hello-more-at-1000": "1.04 against a bound at 1",
    # pool-and-cluster's 4 repetitions read in pairs with none of the assumed 5% shared:
    # t(3); the rounds that would add more read node-cluster, which the 2-core plan leaves out
    "p80-grows-node": "2.22 on memcached against a bound at 2",
}
# Decidable by no plan of the suite as it is (not even calibrated): what each would need.
# None: 003's "Monarch is still at least twice as fast" states a bound and no figure, so the
# design places its ratio 1.5x beyond the bound (an `article = 2.0` on the bound once made it
# undecidable by any data, which said nothing about the suite).
NOT_DECIDABLE_YET: dict[str, str] = {}


def _facts(suite: Suite, claims: tuple[Claim, ...]) -> Facts:
    """The plan's facts as the dry run has them, every stack available, with the cores and
    parameters the claims require in force (readiness is not what is tested here)."""
    cores = max((c.requires.server_cores for c in claims), default=1)
    params: dict[str, dict[str, str]] = {}
    for claim in claims:
        for stack, wanted in claim.requires.params.items():
            params.setdefault(stack, {}).update(wanted)
    load = suite.load
    return Facts(
        cores,
        tuple(StackFacts(name, True, params=params.get(name, {})) for name in suite.stacks),
        {spec.label: suite.levels_for(spec.label) for spec in suite.workloads},
        load.keepalive.value,
        load.driver.value,
        load.warmup_s,
        load.jit_warmup,
        load.requests,
        load.requests_per_connection,
        suite.level_kind,
        suite.script_iterations,
        load.duration_s,
        dict(suite.workload_durations),
        load.repeat,
        suite.script_timings,
    )


def _room(suite: Suite) -> RoundsRoom | None:
    """What the suite's plan leaves of its load budget for until-decided rounds on the 2-core
    machine its budget is for: every stack it runs there ([min_server_cores] ones left out,
    so rounds of their levels are never affordable), levels counted in requests at the
    plan's guessed rate."""
    plan = build_plan(suite, load_inventory(), None, None)
    every = [
        dataclasses.replace(s, available=suite.min_server_cores.get(s.name, 0) <= 1)
        for s in plan.stacks
    ]
    timeline = plan_timeline(dataclasses.replace(plan, stacks=tuple(every)))
    return rounds_room(timeline, suite.load_budget_s)


@pytest.mark.parametrize("path", sorted(CLAIMS_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_testable_claim_of_the_full_suite_is_decidable(path: Path) -> None:
    claims = parse_claims(path).claims
    suite = parse_suite(ROOT / "suites" / f"{path.stem}.toml")
    facts = _facts(suite, claims)
    found = designs(claims, facts, assumed_spread(), _room(suite))
    assert all(d.testable for d in found), [d.why for d in found if not d.testable]
    undecided = {d.claim.id: d.why for d in found if not d.decidable}
    ids = {c.id for c in claims}
    with_rounds = {d.claim.id: d.text for d in found if d.decidable and d.rounds}
    assert set(with_rounds) == ids & NEEDS_ROUNDS.keys(), (with_rounds, undecided)
    named = ids & NEEDS_CALIBRATION.keys()
    stuck = ids & NOT_DECIDABLE_YET.keys()
    assert set(undecided) == named | stuck, undecided
    again = designs([c for c in claims if c.id in named | stuck], facts, CALIBRATED)
    assert {d.claim.id for d in again if d.decidable} == named, [d.why for d in again]


def _claim(test: dict, figures: list | None = None) -> Claim:
    entry = {"id": "c", "says": "a claim", "test": test, "figures": figures or []}
    data = {"article": "000_test.txt", "title": "t", "suites": ["s"], "claim": [entry]}
    return claims_from_data(Path("t.toml"), data).claims[0]


def _plan(driver: str, repeat: int, seconds: float = 20.0) -> Facts:
    return Facts(
        1,
        (StackFacts("a", True), StackFacts("b", True)),
        {"w": (25.0,)},
        driver=driver,
        duration_s=seconds,
        repeat=repeat,
    )


NEAR_8 = {
    "kind": "ratio",
    "metric": "requests_per_s",
    "numerator": {"stack": "a"},
    "denominator": {"stack": "b"},
    "expect": "near",
    "article": 0.88,
    "tolerance": 0.08,
    "workloads": ["w"],
    "levels": [25],
}


def test_a_narrow_band_is_decidable_only_with_enough_evidence() -> None:
    """±8% around 0.88 (hello-node-declines' band): one wrk level a side (10% assumed a
    side) cannot confirm it, and says what would. Native repetitions are read in pairs, as
    a run reads them; with no earlier runs nothing of the assumed 5% is taken as shared
    drift, so the pairs' log ratio varies by 2 x 0.05^2: five repetitions give a half-width
    of t(4) sqrt(0.005 / 5) = 0.088, past ln 1.08 = 0.077; six give t(5) sqrt(0.005 / 6) =
    0.074, inside it."""
    claim = _claim(NEAR_8)
    (wrk,) = designs([claim], _plan("wrk", 1), assumed_spread())
    assert wrk.testable and not wrk.decidable
    assert wrk.text.startswith(f"{NOT_DECIDABLE}: data at the article's figures give not enough")
    (five,) = designs([claim], _plan("native", 5), assumed_spread())
    assert not five.decidable and "6 repetitions a side (repeat = 6) would" in five.why
    (native,) = designs([claim], _plan("native", 6), assumed_spread())
    assert native.decidable, native.why
    assert design_counts([wrk, native]) == (1, 0, 1, 0)


def test_own_noise_patterns_by_hand() -> None:
    """Four repetitions: the drift's pattern is the linear one; the two own patterns are
    the quadratic and cubic contrasts (1, -1, -1, 1) and (1, -3, 3, -1), each scaled to a
    sample SD of 1 (sqrt(3 / 4) and sqrt(3 / 20))."""
    q2, q3 = _own_patterns(4)
    assert q2 == pytest.approx([math.sqrt(3.0) / 2.0 * x for x in (1, -1, -1, 1)])
    assert q3 == pytest.approx([math.sqrt(3.0 / 20.0) * x for x in (1, -3, 3, -1)])
    for n in (4, 5, 8, 40):  # mean 0, sample SD 1, orthogonal to the drift and each other
        drift = [i - (n - 1) / 2.0 for i in range(n)]
        patterns = _own_patterns(n)
        assert len(patterns) == n - 2
        for i, u in enumerate(patterns):
            assert sum(u) == pytest.approx(0.0, abs=1e-9)
            assert statistics.variance(u) == pytest.approx(1.0)
            assert sum(x * y for x, y in zip(u, drift, strict=True)) == pytest.approx(0.0, abs=1e-9)
            for v in patterns[i + 1 :]:
                assert sum(x * y for x, y in zip(u, v, strict=True)) == pytest.approx(0.0, abs=1e-9)


def _logs(factors: list[float]) -> list[float]:
    return [math.log(f) for f in factors]


def test_a_pair_varies_by_its_own_noise_and_each_side_by_its_spread() -> None:
    """10% a side, 6% of it the level's own: 8% shared drift on the linear pattern
    (z = (-1.5, -0.5, 0.5, 1.5) / sqrt(5 / 3)). Each side's logs have sample SD 0.1; two
    points' log ratio has variance 0.06^2 + 0.06^2 = 0.0072 (their own patterns are
    orthogonal); all of the spread each side's own, 0.1^2 + 0.1^2 = 0.02; the pattern
    negated (turn 2 of 2 patterns) against its own, (0.1 + 0.1)^2 = 0.04: more, never
    less. With no drift shared the drift's pattern is a third own pattern (turn 0), and
    turn 3 its negation. Fewer than 4 repetitions, which are never read paired: all on the
    drift."""
    a = _logs(_factors(4, 0.1, Noise(0.06, 0)))
    b = _logs(_factors(4, 0.1, Noise(0.06, 1)))
    # the first: 0.08 (-1.5 / sqrt(5 / 3)) + 0.06 sqrt(3) / 2
    assert a[0] == pytest.approx(0.08 * -1.5 / math.sqrt(5.0 / 3.0) + 0.06 * math.sqrt(0.75))
    assert statistics.stdev(a) == pytest.approx(0.1)
    assert statistics.stdev(b) == pytest.approx(0.1)
    assert statistics.variance([x - y for x, y in zip(a, b, strict=True)]) == pytest.approx(0.0072)
    c, d = _logs(_factors(4, 0.1, Noise(None, 0))), _logs(_factors(4, 0.1, Noise(None, 1)))
    assert statistics.variance([x - y for x, y in zip(c, d, strict=True)]) == pytest.approx(0.02)
    e = _logs(_factors(4, 0.1, Noise(None, 2)))
    assert statistics.variance([x - y for x, y in zip(c, e, strict=True)]) == pytest.approx(0.04)
    free = [_logs(_factors(4, 0.1, Noise(None, t, True))) for t in range(4)]
    assert free[0] == pytest.approx(
        [0.1 * x / math.sqrt(5.0 / 3.0) for x in (-1.5, -0.5, 0.5, 1.5)]
    )
    assert free[1] == pytest.approx(c)
    for x, y in ((0, 1), (0, 2), (1, 2)):
        assert statistics.variance(
            [u - v for u, v in zip(free[x], free[y], strict=True)]
        ) == pytest.approx(0.02)
    assert free[3] == pytest.approx([-v for v in free[0]])
    assert _logs(_factors(3, 0.1, Noise(0.0, 1))) == pytest.approx([-0.1, 0.0, 0.1])


def test_two_stacks_at_a_level_and_two_levels_of_a_stack_get_different_patterns() -> None:
    """The Latin square: a stack's index plus its level's index among its workload's."""
    points = [("a", "w", 1.0), ("a", "w", 2.0), ("b", "w", 1.0), ("b", "w", 2.0), ("b", "v", None)]
    assert _turns(points) == {
        ("a", "w", 1.0): 0,
        ("a", "w", 2.0): 1,
        ("b", "w", 1.0): 1,
        ("b", "w", 2.0): 2,
        ("b", "v", None): 1,
    }


def _paired_past(pairs_sd: float) -> PastSpreads:
    """One earlier run of five starts of a and b at w @25: both drift by 10% together
    (log figures 0.1 (i - 2)), b by +-pairs_sd more in turns (0 at the middle start): the
    pairs' log ratios have sample SD pairs_sd."""
    drift = [0.1 * (i - 2) for i in range(5)]
    turns = [1.0, -1.0, 0.0, 1.0, -1.0]
    return PastSpreads(
        "s",
        {
            ("a", "w"): {25.0: {(1, i): 1000.0 * math.exp(x) for i, x in enumerate(drift)}},
            ("b", "w"): {
                25.0: {
                    (1, i): 1000.0 * math.exp(x + pairs_sd * t)
                    for i, (x, t) in enumerate(zip(drift, turns, strict=True))
                }
            },
        },
    )


def test_the_pairs_the_earlier_runs_showed_decide_what_a_side_alone_does_not() -> None:
    """±8% around 0.88 with five native repetitions: each side of the earlier run varied
    by 16% between starts (0.1 sd(i - 2) = 0.158), which alone decides nothing; their pairs
    varied by 1% (80% upper bound sqrt(4 x 0.01^2 / chi2.ppf(0.2, 4)) = 1.6%), which the
    paired reading cancels the drift down to: decidable, and the dry run names the pairs'
    spread. Pairs that varied as much as the sides do not decide it."""
    claim = _claim(NEAR_8)
    facts = _plan("native", 5)
    (found,) = designs([claim], facts, MACHINE, None, _paired_past(0.01))
    assert found.decidable, found.why
    assert "paired: 1.6% between the pairs a w @25 / b w @25 of one start (run 1" in found.spread
    (wide,) = designs([claim], facts, MACHINE, None, _paired_past(0.15))
    assert not wide.decidable
    at, _ = scenarios(claim, facts)
    split = pairing(facts, at, _paired_past(0.01))
    assert split.own[("a", "w", 25.0)] == pytest.approx(
        math.sqrt(4 * 0.01**2 / 1.648777) / math.sqrt(2.0), rel=1e-5
    )
    assert pairing(facts, at, None).own == {}


def test_scenarios_place_the_article_figures_and_the_opposite() -> None:
    claim = _claim(NEAR_8)
    at, opposite = scenarios(claim, _plan("native", 1))
    ratio = (
        at.figures[("a", "w", 25.0, "requests_per_s")]
        / at.figures[("b", "w", 25.0, "requests_per_s")]
    )
    assert ratio == pytest.approx(0.88)
    far = (
        opposite.figures[("a", "w", 25.0, "requests_per_s")]
        / opposite.figures[("b", "w", 25.0, "requests_per_s")]
    )
    assert far == pytest.approx(0.88 * 1.08**3)
    order = _claim(
        {
            "kind": "order",
            "metric": "requests_per_s",
            "workloads": ["w"],
            "levels": [25],
            "stacks": ["a", "b"],
        },
        [{"label": "a", "value": 300.0, "unit": "req/s"}],
    )
    at, opposite = scenarios(order, _plan("native", 1))
    assert at.figures[("a", "w", 25.0, "requests_per_s")] == 300.0  # the article's figure
    assert at.figures[("b", "w", 25.0, "requests_per_s")] == 1000.0
    assert opposite.figures[("a", "w", 25.0, "requests_per_s")] == 1000.0  # reversed
    assert opposite.figures[("b", "w", 25.0, "requests_per_s")] == 1500.0


def test_an_untestable_claim_is_not_counted_as_undecidable() -> None:
    claim = _claim(NEAR_8)
    facts = dataclasses.replace(_plan("native", 5), stacks=(StackFacts("a", True),))
    (found,) = designs([claim], facts, assumed_spread())
    assert not found.testable and found.text == "untestable"
    assert design_counts([found]) == (0, 0, 0, 1)


# Article 000's six tables (req/s, wrk's mean latency in ms), in the order php-swoole, node,
# php-fpm-nginx, node-nginx.
MICRO_STACKS = ("php-swoole", "node", "php-fpm-nginx", "node-nginx")
MICRO_TABLE = {
    "hello": ((28553.42, 9986.45, 6752.42, 3130.38), (0.87, 2.52, 3.70, 8.07)),
    "concat?n=1000": ((11245.31, 9703.66, 5310.43, 3276.66), (2.22, 2.60, 4.71, 7.64)),
    "add?n=1000": ((13713.45, 12173.77, 6695.06, 3715.07), (1.82, 2.07, 3.73, 6.73)),
    "array?n=1000": ((11457.89, 10602.33, 5992.33, 3265.04), (2.18, 2.37, 4.17, 7.65)),
    "assoc?n=1000": ((5005.39, 1601.61, 3678.66, 1205.15), (4.99, 15.61, 6.80, 20.74)),
    "readfile?n=100": ((2789.98, 2254.60, 2018.54, 1417.80), (8.96, 11.10, 12.38, 17.63)),
}


def test_php_node_micro_confirms_the_article_own_table() -> None:
    """The article's whole table at once, orders included (node / php-fpm-nginx 1.12x on
    readfile, php-swoole / node 1.08x on array). Fed as printed, with the suite's plan and
    the assumed spread read in pairs with none of it shared (no earlier runs), every claim
    but the mean latencies' 1.09x on array is confirmed by the suite's five repetitions: the
    req/s pairs' 1.08x on array (array-order) too, once their variance borrows the degrees
    of freedom of the run's other levels (analysis.moderated), which the latency's does not;
    six confirm that one too (one native level a side resolves only about 1.15x)."""
    claims = parse_claims(CLAIMS_DIR / "php-node-micro.toml").claims
    facts = _facts(parse_suite(ROOT / "suites" / "php-node-micro.toml"), claims)
    figures: dict[Key, float] = {}
    for workload, (rates, latencies) in MICRO_TABLE.items():
        for stack, rate, latency in zip(MICRO_STACKS, rates, latencies, strict=True):
            figures[(stack, workload, 25.0, "requests_per_s")] = rate
            figures[(stack, workload, 25.0, "mean_latency")] = latency
    table = Scenario(figures, {})
    found = evaluate(
        list(claims), synthetic_run(facts, table, assumed_spread()), facts, pair_priors=False
    )
    short = {r.claim.id: r.why for r in found if r.status is not ClaimStatus.CONFIRMED}
    assert set(short) == {"latency-extremes"}, short
    assert all("6 repetitions a side" in why for why in short.values()), short
    six = dataclasses.replace(facts, repeat=6)
    found = evaluate(
        list(claims), synthetic_run(six, table, assumed_spread()), six, pair_priors=False
    )
    assert {r.claim.id: r.why for r in found if r.status is not ClaimStatus.CONFIRMED} == {}
    one = dataclasses.replace(facts, repeat=1)
    found = evaluate(
        list(claims), synthetic_run(one, table, assumed_spread()), one, pair_priors=False
    )
    undecided = {r.claim.id for r in found if r.status is not ClaimStatus.CONFIRMED}
    assert "node-beats-fpm-but-assoc" in undecided and "array-order" in undecided


GREATER = {
    "kind": "ratio",
    "metric": "requests_per_s",
    "numerator": {"stack": "a"},
    "denominator": {"stack": "b"},
    "expect": "greater",
    "workloads": ["w?n=1000", "v"],
    "levels": [25],
}


def _rate(scenario: Scenario, workload: str) -> float:
    return (
        scenario.figures[("a", workload, 25.0, "requests_per_s")]
        / scenario.figures[("b", workload, 25.0, "requests_per_s")]
    )


def test_a_direction_is_fed_the_article_figure_of_each_point_and_its_mirror() -> None:
    """'greater' at each point's own printed ratio (not 1.5x), the headline `article` where
    no figure names the point; the opposite mirrored across the threshold."""
    claim = _claim(
        {**GREATER, "threshold": 2.0, "article": 2.3},
        [{"label": "w", "value": 2.23, "unit": "×"}, {"label": "@25", "value": 9.0, "unit": "x"}],
    )
    facts = dataclasses.replace(
        _plan("native", 3), workload_levels={"w?n=1000": (25.0,), "v": (25.0,)}
    )
    at, opposite = scenarios(claim, facts)
    assert _rate(at, "w?n=1000") == pytest.approx(2.23)  # "w" names the workload w?n=1000
    assert _rate(at, "v") == pytest.approx(2.3)  # the unit is not ×: the headline instead
    assert _rate(opposite, "w?n=1000") == pytest.approx(4.0 / 2.23)
    less = _claim({**GREATER, "expect": "less"}, [{"label": "v @25", "value": 0.8, "unit": "×"}])
    at, opposite = scenarios(less, facts)
    assert _rate(at, "v") == pytest.approx(0.8)
    assert _rate(opposite, "v") == pytest.approx(1.25)
    assert _rate(at, "w?n=1000") == pytest.approx(1 / 1.5)  # no figure at all: 1.5x inside


def test_a_close_article_figure_is_decidable_only_with_the_suite_repetitions() -> None:
    """php-node-micro's node-beats-fpm-but-assoc: node / php-fpm-nginx 1.12x on readfile.
    The suite's five repetitions decide it at that figure; one repetition does not (the
    check would have passed at the 1.5x it used to feed)."""
    claims = parse_claims(CLAIMS_DIR / "php-node-micro.toml").claims
    claim = next(c for c in claims if c.id == "node-beats-fpm-but-assoc")
    facts = _facts(parse_suite(ROOT / "suites" / "php-node-micro.toml"), claims)
    assert facts.repeat == 5
    (found,) = designs([claim], facts, assumed_spread())
    assert found.decidable, found.why
    (weaker,) = designs([claim], dataclasses.replace(facts, repeat=1), assumed_spread())
    assert not weaker.decidable
    assert "readfile" in weaker.why and "1.12×" in weaker.why


def test_standalone_timings_a_repetition_are_counted_as_whole_runs() -> None:
    """script-native-matches-php-time's band (±10% around 1.02) on standalone timings, each a
    whole run at the assumed 10% whole-level spread: five repetitions of one timing cannot
    confirm it; three timings in each (fifteen a side) can, and the synthetic run has them."""
    claim = _claim(
        {
            "kind": "ratio",
            "metric": "script_wall",
            "numerator": {"stack": "a"},
            "denominator": {"stack": "b"},
            "expect": "near",
            "article": 1.02,
            "tolerance": 0.1,
            "workloads": ["w"],
        }
    )
    once = dataclasses.replace(_plan("native", 5), script_iterations=1000)
    (five,) = designs([claim], once, assumed_spread())
    assert five.testable and not five.decidable
    assert "repetitions a side" in five.why, five.why
    thrice = dataclasses.replace(once, script_timings=3)
    (fifteen,) = designs([claim], thrice, assumed_spread())
    assert fifteen.decidable, fifteen.why
    at, _ = scenarios(claim, thrice)
    scripts = synthetic_run(thrice, at, assumed_spread()).scripts
    assert len([s for s in scripts if s.stack == "a"]) == 15


def _room_of(left_s: float, stacks: str = "ab", cost: float = 20.0) -> RoundsRoom:
    """A plan of 100 s of load under a budget that leaves `left_s`, each level of `stacks`
    at workload w, 25 connections, costing `cost` s a repetition."""
    return RoundsRoom(100.0 + left_s, 100.0, {LevelKey(s, "w", 25.0): cost for s in stacks})


def test_a_claim_the_plan_decides_needs_no_round() -> None:
    (found,) = designs([_claim(NEAR_8)], _plan("native", 6), assumed_spread(), _room_of(100.0))
    assert found.decidable and found.rounds == 0 and found.text == DECIDABLE


def test_one_until_decided_round_that_fits_the_budget_decides_the_claim() -> None:
    """±8% around 0.88 with 5 native repetitions a side, read in pairs: not decidable by
    the plan (the design asks a sixth), decided by one round of one more repetition of both
    levels (40 s of load) where the budget leaves 40 s, not where it leaves 30 s."""
    claim, facts = _claim(NEAR_8), _plan("native", 5)
    (alone,) = designs([claim], facts, assumed_spread())
    assert not alone.decidable and "6 repetitions a side (repeat = 6) would" in alone.why
    (fits,) = designs([claim], facts, assumed_spread(), _room_of(40.0))
    assert fits.decidable and (fits.rounds, fits.rounds_load_s) == (1, 40.0), fits.why
    key_a, key_b = LevelKey("a", "w", 25.0), LevelKey("b", "w", 25.0)
    assert fits.rounds_levels == ((key_a, 1), (key_b, 1))
    assert fits.text == (
        f"{DECIDABLE} and 1 until-decided round (0.7 min of load within the budget)"
    )
    (short,) = designs([claim], facts, assumed_spread(), _room_of(30.0))
    assert not short.decidable and short.rounds == 0
    assert short.why.startswith(alone.why)  # what the plan's data said, then the rounds
    assert "until-decided rounds would not decide it: the budget left (30 s) cannot pay" in (
        short.why
    )
    assert design_counts([fits, short, alone]) == (0, 1, 2, 0)


def _claims_on(*pairs: tuple[str, str, str]) -> tuple[Claim, ...]:
    """NEAR_8's claim once per (id, numerator stack, denominator stack)."""
    data = {
        "article": "000_test.txt",
        "title": "t",
        "suites": ["s"],
        "claim": [
            {
                "id": name,
                "says": "a claim",
                "figures": [],
                "test": {**NEAR_8, "numerator": {"stack": a}, "denominator": {"stack": b}},
            }
            for name, a, b in pairs
        ],
    }
    return claims_from_data(Path("t.toml"), data).claims


def test_rounds_of_several_claims_share_the_budget_cheapest_first() -> None:
    """Two claims each decided by one round of their own two levels (40 s each): 60 s left
    pays for the first (by name, at equal cost), not for both; a level both claims read is
    paid for once, so two claims sharing one fit in 60 s."""
    facts = dataclasses.replace(
        _plan("native", 5), stacks=tuple(StackFacts(s, True) for s in "abcd")
    )
    room = _room_of(60.0, "abcd")
    x, y = designs(_claims_on(("x", "a", "b"), ("y", "c", "d")), facts, assumed_spread(), room)
    assert x.decidable and x.rounds == 1, x.why
    assert not y.decidable
    assert y.why.endswith(
        "1 until-decided round(s) would decide it (0.7 min of load), but the 1.0 min the "
        "suite's load budget leaves after the plan go to the cheaper claims' rounds (0.7 min)"
    )
    shared = designs(_claims_on(("x", "a", "b"), ("y", "a", "c")), facts, assumed_spread(), room)
    assert [(d.decidable, d.rounds) for d in shared] == [(True, 1), (True, 1)]


def test_the_dry_run_counts_rounds_apart() -> None:
    claim = _claim(NEAR_8)
    lines = design_lines(
        [
            Readiness(claim, (), True),
            Readiness(claim, (), True, "", 2, 90.0),
            Readiness(claim, (), False, "5 repetitions a side would decide it"),
        ]
    )
    assert lines == [
        f"1 of 3 testable claims {DECIDABLE} (run-to-run spread assumed)",
        f"1 of 3 {WITH_ROUNDS} within the suite's load budget (run --until-decided)",
        f"c: {DECIDABLE} and 2 until-decided rounds (1.5 min of load within the budget)",
        f"c: {NOT_DECIDABLE}: 5 repetitions a side would decide it",
    ]


def test_the_rounds_expected_repeat_each_level_once_for_every_claim() -> None:
    """The repetitions the rounds add to each level are the most any decidable claim needs
    of it (a level repeated once serves every claim reading it); claims the plan decides
    or none decides add nothing."""
    claim = _claim(NEAR_8)
    a, b, c = (LevelKey(s, "w", 25.0) for s in "abc")
    found = expected_rounds(
        [
            Readiness(claim, (), True, "", 2, 80.0, ((a, 2), (b, 2))),
            Readiness(claim, (), True, "", 1, 40.0, ((a, 1), (c, 1))),
            Readiness(claim, (), False, "6 repetitions a side would decide it"),
            Readiness(claim, (), True),
        ]
    )
    assert found == ({a: 2, b: 2, c: 1}, 2)
    assert expected_rounds([Readiness(claim, (), True)]) == ({}, 0)


OWN_PEAK = {
    "kind": "ratio",
    "metric": "requests_per_s",
    "numerator": {"stack": "a", "level": 20},
    "denominator": {"stack": "a", "level": "peak"},
    "workloads": ["w"],
}


def _sweep(repeat: int = 1) -> Facts:
    return Facts(
        1,
        (StackFacts("a", True), StackFacts("b", True)),
        {"w": (1.0, 10.0, 20.0, 30.0, 40.0)},
        duration_s=20.0,
        repeat=repeat,
    )


def _own(scenario: Scenario, peak_at: float) -> float:
    return (
        scenario.figures[("a", "w", 20.0, "requests_per_s")]
        / scenario.figures[("a", "w", peak_at, "requests_per_s")]
    )


def test_a_level_against_its_own_peak_is_fed_a_ratio_below_one() -> None:
    """>= 0.9 of its own peak: 1.5x the bound (1.35) would make the level the peak, read
    against itself (exactly 1, no evidence: 'confirmed' whatever the spread); the middle of
    the band below 1 instead, sqrt(0.9), and the opposite 0.9 / 1.5. <= 0.8: 0.8 / 1.5, and
    the opposite sqrt(0.8). The peak side is an arch topped at the level the stack peaked at
    before, else at the middle of the sweep on the peak's (log) axis: 10 among 1-40."""
    greater = _claim({**OWN_PEAK, "expect": "greater", "threshold": 0.9})
    at, opposite = scenarios(greater, _sweep())
    assert _own(at, 10.0) == pytest.approx(math.sqrt(0.9))
    assert _own(opposite, 10.0) == pytest.approx(0.6)
    less = _claim({**OWN_PEAK, "expect": "less", "threshold": 0.8})
    at, opposite = scenarios(less, _sweep())
    assert _own(at, 10.0) == pytest.approx(0.8 / 1.5)
    assert _own(opposite, 10.0) == pytest.approx(math.sqrt(0.8))
    at, _ = scenarios(greater, _sweep(), {("a", "w"): 30.0})
    assert _own(at, 30.0) == pytest.approx(math.sqrt(0.9))  # the top at the figure
    # the far end (1, ln 30 from the top at 30) 10% below it: 1 - 0.1 (ln 30 / ln 30)^2;
    # 40, ln(4/3) on the other side: 1 - 0.1 (ln(4/3) / ln 30)^2
    top = at.figures[("a", "w", 30.0, "requests_per_s")]
    assert at.figures[("a", "w", 1.0, "requests_per_s")] / top == pytest.approx(0.9)
    assert at.figures[("a", "w", 40.0, "requests_per_s")] / top == pytest.approx(
        1 - 0.1 * (math.log(4 / 3) / math.log(30)) ** 2
    )
    assert at.read == frozenset({("a", "w", 20.0), ("a", "w", "peak")})
    # read where the trend peaks, the arch's top: the figure fed, sqrt(0.9)
    at, _ = scenarios(greater, _sweep())
    (found,) = evaluate(
        [greater], synthetic_run(_sweep(), at, assumed_spread()), _sweep(), pair_priors=False
    )
    assert "@20 / peak @10 is 0.95×" in found.why, found.why


def _past(sigma_by_level: dict[float, float]) -> PastSpreads:
    """Earlier starts of stack a on w: three a level, their logs -s, 0, +s (a log SD of s,
    2 degrees of freedom)."""
    return PastSpreads(
        "sweep",
        {
            ("a", "w"): {
                level: {(run, 0): 1000.0 * math.exp(k * s) for run, k in ((1, -1), (2, 0), (3, 1))}
                for level, s in sigma_by_level.items()
            }
        },
    )


MACHINE = RunSpread(0.05, False, "run-to-run spread 5.0% (calibrated)", level_s=15.0)


def test_a_claim_uses_the_earlier_starts_spread_of_the_levels_it_reads() -> None:
    """The verdicts' spread for the claim is the largest earlier spread among the points it
    reads with at most 3 repetitions (its peak where the starts peaked); each level's
    repetitions vary by their own; no earlier starts: the machine's."""
    claim = _claim({**OWN_PEAK, "expect": "greater", "threshold": 0.9})
    past = _past({1.0: 0.01, 20.0: 0.02, 40.0: 0.04})  # peaks at 40: medians 1000 everywhere
    facts = _sweep()
    at, _ = scenarios(claim, facts)
    none = claim_spread(facts, at, MACHINE, None)
    assert none.run is MACHINE and none.levels == {} and none.text == MACHINE.source
    used = claim_spread(facts, at, MACHINE, past)
    upper = math.sqrt(2 * 0.04**2 / -2.0 / math.log(0.8))  # chi2.ppf(0.2, 2) = -2 ln 0.8
    assert past.peak("a", "w") == 1.0  # a flat trend peaks at its lowest level
    # read: @20 (0.02) and the peak @1 (0.01): the larger, 0.02's upper bound
    assert used.run.sigma == pytest.approx(math.sqrt(2 * 0.02**2 / (-2.0 * math.log(0.8))))
    assert used.past is not None and used.past.low == 20.0
    assert used.levels[LevelKey("a", "w", 40.0)] == pytest.approx(upper)
    assert LevelKey("a", "w", 10.0) not in used.levels  # no earlier starts there
    # with four repetitions a level is read by its own variance: only the peak's floor
    four = claim_spread(dataclasses.replace(facts, repeat=4), at, MACHINE, past)
    assert four.run.sigma == pytest.approx(math.sqrt(2 * 0.01**2 / (-2.0 * math.log(0.8))))
    # a read point without earlier starts and a larger machine spread: the machine's
    bare = _past({1.0: 0.001})
    assert claim_spread(facts, at, MACHINE, bare).run is MACHINE


def test_the_dry_run_names_the_earlier_spread_a_claim_used() -> None:
    claim = _claim({**OWN_PEAK, "expect": "greater", "threshold": 0.9})
    past = _past({1.0: 0.01, 20.0: 0.02, 40.0: 0.04})
    (ready,) = readiness_by_design([claim], _sweep(5), MACHINE, None, past)
    assert ready.spread_from_past and ready.spread.startswith("2.1% between fresh starts of a w")
    lines = design_lines([ready])
    assert "the spread between fresh starts in the suite's earlier runs here" in lines[0]
    assert lines[-1] == f"spread {ready.spread}: c"
    assert design_lines([ready, ready])[-1] == f"spread {ready.spread}: c, c"  # one a spread
    (plain,) = readiness_by_design([claim], _sweep(5), MACHINE)
    assert not plain.spread_from_past and plain.spread == MACHINE.source
    assert design_lines([plain])[0].endswith(f"({MACHINE.source})")


# What this machine measured in the sweep's three earlier full runs (2026-11-26, runs 2-4 of
# results/findings/concurrency-sweep, req/s of each level, the runs in order; run 2's levels
# from 8,500 on were invalid: the loader could not hold the connections).
SWEEP_STORE = {
    "php-apache": {
        1: (4732, 3668, 3839),
        100: (5694, 4345, 5004),
        500: (5361, 4647, 4673),
        1000: (5255, 4519, 4503),
        1500: (5169, 4824, 5015),
        2000: (5298, 4839, 5080),
        2500: (5121, 4844, 5030),
        3000: (5210, 4833, 4854),
        3500: (5270, 4792, 5129),
        4000: (5341, 4769, 5059),
        4400: (5167, 4521, 5233),
        4500: (5245, 4872, 4821),
        5000: (5218, 4734, 4470),
        5500: (5226, 4923, 4545),
        6000: (3979, 4915, 4249),
        6500: (2142, 4974, 4660),
        7000: (951, 4575, 4965),
        7500: (1090, 4541, 4522),
        8000: (1173, 4776, 4960),
        8500: (4862, 1839),
        9000: (3123, 4542),
        9500: (891, 4649),
        10000: (4720, 4194),
    },
    "cpp-beast": {
        1: (11001, 10073, 9565),
        100: (25500, 25961, 25061),
        500: (27184, 23833, 22999),
        1000: (26240, 22809, 25035),
        1500: (24117, 23105, 23288),
        2000: (25310, 22452, 24259),
        2500: (24295, 21450, 24120),
        3000: (26262, 22660, 23163),
        3500: (25348, 22443, 22460),
        4000: (25754, 20844, 24344),
        4400: (25738, 20784, 23893),
        4500: (25915, 22122, 23925),
        5000: (24829, 22294, 24320),
        5500: (24131, 22768, 24393),
        6000: (24406, 23032, 23374),
        6500: (24459, 23976, 23282),
        7000: (24925, 22207, 23820),
        7500: (25974, 22243, 23721),
        8000: (25748, 21255, 24576),
        8500: (25085, 22912, 24053),
        9000: (25502, 23604, 24043),
        9500: (25475, 23007, 24239),
        10000: (25024, 23356, 22932),
    },
}
# Decidable by no plan within the sweep's 20 min with the spread this machine showed:
SWEEP_NOT_DECIDABLE = {
    # php-apache from 8,000 connections on: 74% between fresh starts (a start collapsing to a
    # fifth), more than 50 repetitions a side for any ratio read there
    "gap-widens-past-peak": "php-apache at 10,000",
    "twice-as-fast-at-10000": "php-apache at 10,000",
    "apache-drops-at-high-concurrency": "php-apache at 10,000",
    "monarch-latency-below-apache": "php-apache at every level, 8,000-10,000 too",
}


def _sweep_store() -> PastSpreads:
    figures = {
        (stack, "data?n=128"): {
            float(level): {
                (run, 0): float(f) for run, f in zip((2, 3, 4)[-len(x) :], x, strict=True)
            }
            for level, x in levels.items()
        }
        for stack, levels in SWEEP_STORE.items()
    }
    return PastSpreads("concurrency-sweep", figures)


def test_the_sweep_decides_its_claims_with_the_spread_this_machine_showed() -> None:
    """Issue 31's test with the sweep's real evidence: its plan (one repetition of 29 levels
    of 10 s) and the until-decided rounds its 20-min budget leaves room for, the run-to-run
    spread between the fresh starts of its three earlier runs here, the calibration's 6.9%
    where they cover nothing. Every claim not named is confirmed by data at the article's
    figures and refuted by the opposite; the named ones say why not."""
    path = CLAIMS_DIR / "concurrency-sweep.toml"
    claims = parse_claims(path).claims
    suite = parse_suite(ROOT / "suites" / "concurrency-sweep.toml")
    machine = RunSpread(0.0694, False, "calibrated 6.9%", within=0.00035, level_s=15.0)
    found = designs(claims, _facts(suite, claims), machine, _room(suite), _sweep_store())
    undecided = {d.claim.id: d.why for d in found if not d.decidable}
    assert set(undecided) == set(SWEEP_NOT_DECIDABLE), undecided
    for name in (
        "gap-widens-past-peak",
        "twice-as-fast-at-10000",
        "apache-drops-at-high-concurrency",
    ):
        assert "more than 50 repetitions a side" in undecided[name], undecided[name]
    spreads = {d.claim.id: d.spread for d in found}
    assert "php-apache data?n=128 @8,000–10,000" in spreads["gap-widens-past-peak"]
    assert {d.claim.id for d in found if d.rounds} == {
        "peak-gap-about-40-percent",
        "apache-near-peak-at-2000",
        "monarch-latency-linear",
        # cpp-beast @10,000 against its peak among near-flat top levels: rounds of one
        # repetition a level moved the peak among them and did not settle it within the
        # budget; rounds of each level's share of what the claim asks for do, in 4
        "monarch-throughput-stable",
        "one-connection-is-slow-apache",
        "one-connection-is-slow-monarch",
    }
