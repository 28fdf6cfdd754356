"""Decidable by design: whether a plan can ever decide a claim. Pure functions.

A plan is testable for a claim when its requirements are met (readiness.py); it is decidable
when the evidence the plan will really produce can confirm the claim and can refute it. To
check that, the decision code itself (`evaluate`) reads two synthetic runs made to the plan:

- the plan's stacks, workloads and levels, its repetitions and driver (the native loader's
  per-second series, or whole levels without one: wrk, ab), each level's length (its seconds,
  or its requests at the synthetic rate), the standalone timings (script_timings a repetition);
- repetitions spread by the run-to-run spread this machine showed: where the store's earlier
  runs of the suite cover a level, the spread between their fresh starts at that level's
  connection range (analysis/pastspread.py; the verdicts' own for a claim is the largest
  among the points it reads with at most 3 repetitions: claim_spread), else the calibrated
  one, else the assumed one (whole levels: the whole-level spread); around figures placed by
  the claim: at the article's own figures (a
  ratio at each point as the article printed it there, else its headline ratio; its order; a
  threshold's or shape's band middle), and at the opposite (the order reversed, a direction's
  ratio mirrored across its threshold, a "near" ratio well outside the band). A ratio the
  article printed nowhere is placed 1.5× inside its bound: the claim states no figure; a
  level against its own stack's peak, which is at most 1, in the middle of the band below 1.

"decidable with this plan" when the first gives confirmed and the second refuted. Where the
plan's data leave either at "not enough evidence", `run --until-decided` may repeat the
levels the claim reads within what the suite's load budget leaves after the plan
(config.todecide: `rounds_room`, priced at the plan's own estimate of each level's load): the
same rounds are played here on the synthetic runs (`claims_round` picks each from what the
decision code says would decide the claim; the added repetitions made exactly as the plan's,
the same spread and level lengths) until both read as they should, a round does not fit, or
more measurement cannot decide. A claim both scenarios decide so is "decidable with this plan
and N until-decided round(s)", if the rounds of all such claims, the cheapest first as the run
takes them, fit the room together (a round repeats a level once for every claim reading it).
Otherwise "testable but not decidable" with what the decision code said and why the rounds
do not mend it. A failed-request claim is judged on counts: it needs only the levels. A
breakpoint's crossing is placed in the middle of its range. Nothing here measures: the
figures are the claim's, the spread the verdicts'.

The synthetic runs are read as a real run is, by the same function (`evaluate`): a ratio of two
figures measured in the same repetitions from its pairs (analysis.paired). So each
repetition's factor is made of two parts, as a real run's are: a drift all the levels and
timings of that repetition share (the same pattern for every point), which pairs cancel, and
noise of the point's own, which they do not (`_factors`: patterns orthogonal to the drift's
and to each other, so that every side still varies by exactly its spread, and a pair by
exactly its own parts; two stacks at a level, or two levels of a stack, get different
patterns: `_turns`). How much of the spread is the point's own: where the store's earlier
runs of the suite measured every pair of the levels a claim reads in the same starts, the
spread of those pairs' log ratios (pastspread `paired`) split evenly over the two sides;
elsewhere all of it (the stated conservative assumption: no drift shared, so a paired reading
gains nothing and, with half the degrees of freedom, loses a little). A calibration measures
one stack's starts, not pairs: it does not split the spread. One reading differs: a run's pair
borrows from the run's other pairs of its kind (analysis.paired), but a synthetic run models
the noise of the points its claim reads, and its other points' patterns coincide or cancel at
random, so their pairs say nothing of a real run's: the design reads req/s pairs moderated by
twice the levels' prior, as if no drift were shared, and other figures' pairs by their own
variance (evaluate's `pair_priors`), which errs towards "not decidable".
"""

import dataclasses
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from stackbench.analysis.claims import evaluate, undecided_claims
from stackbench.analysis.claims.facts import Facts, _between
from stackbench.analysis.claims.kinds import _combos, _positions, _resolve
from stackbench.analysis.claims.readiness import Readiness, requirements_unmet
from stackbench.analysis.claims.results import ClaimResult, ClaimStatus
from stackbench.analysis.claims.standin import StandIns, stand_ins
from stackbench.analysis.paired import MIN_PAIRS
from stackbench.analysis.pastspread import LevelSpread, PairSpread, PastSpreads
from stackbench.analysis.stats import peak_axis
from stackbench.analysis.verdicts import FLOORED_REPETITIONS, RunSpread, whole_level_sigma
from stackbench.config.claims import (
    BreakpointTest,
    Claim,
    OrderTest,
    RatioChangeTest,
    RatioTest,
    ScatterTest,
    ShapeTest,
    ThresholdTest,
    order_groups,
)
from stackbench.config.measured import RoleUsage, Second
from stackbench.config.plan import LevelKey
from stackbench.config.todecide import MAX_CLAIM_ROUNDS, RoundsRoom, Stop, claims_round
from stackbench.store.records import (
    CalibrationRow,
    PlacementSettings,
    RunSettings,
)
from stackbench.store.store import CaseRow, LevelRow, RunData, RunRow, ScriptRow

BASE_RPS = 1000.0
# A synthetic series stops at 30 s: a longer window narrows only its own noise, which the
# run-to-run spread already dominates (and 100 levels of 100 s would take a minute to read).
MAX_SERIES_S = 30.0
PER_SECOND_CV = 0.03  # the synthetic per-second noise of a native level (real: 1-12%)
# A "peak" side made to peak where the stack peaked before: its levels on an arch, this much
# below the figure at the sweep's far end (the ratio reads the peak level's own figure; a
# local linear trend over a flat line with one dip would peak at the sweep's other end)
PEAK_ARCH = 0.1
DECIDABLE = "decidable with this plan"
WITH_ROUNDS = "decidable with this plan and until-decided rounds"
NOT_DECIDABLE = "testable but not decidable"
# A figure's key: (stack, workload, level or None for every level, metric)
Key = tuple[str, str, float | None, str]
# A point a claim reads: (stack, workload, level, "peak" or None for a standalone timing)
Read = tuple[str, str, float | str | None]
# A point of the plan: (stack, workload, level or None for its standalone timings)
Point = tuple[str, str, float | None]


@dataclass(frozen=True)
class Design:
    """Whether a plan decides a claim (`why` empty when it does)."""

    claim: Claim
    testable: bool
    decidable: bool  # by the plan, or with `rounds` until-decided rounds after it
    why: str
    reasons: tuple[str, ...] = ()  # untestable: every unmet requirement
    rounds: int = 0  # until-decided rounds it needs after the plan (0: the plan decides it)
    rounds_load_s: float = 0.0  # the load those rounds add
    # ... the repetitions they add to each level, beyond the plan's
    rounds_levels: tuple[tuple[LevelKey, int], ...] = ()
    spread: str = ""  # the run-to-run spread its synthetic runs used, for people
    stand_in: str = ""  # what stands in for what when it is read with stand-ins

    @property
    def text(self) -> str:
        if not self.testable:
            return "untestable"
        if not self.decidable:
            return f"{NOT_DECIDABLE}: {self.why}"
        return rounds_text(self.rounds, self.rounds_load_s)


def rounds_text(rounds: int, load_s: float) -> str:
    """A decidable claim's status: by the plan, or with until-decided rounds after it."""
    if not rounds:
        return DECIDABLE
    return (
        f"{DECIDABLE} and {rounds} until-decided round{'s' if rounds > 1 else ''} "
        f"({load_s / 60:.1f} min of load within the budget)"
    )


@dataclass(frozen=True)
class Scenario:
    """Synthetic figures: the claim's overrides over the defaults."""

    figures: dict[Key, float]
    errors: dict[tuple[str, str, float], int]  # failed requests of a level
    error_rates: dict[tuple[str, str, float], float] = dataclasses.field(default_factory=dict)
    # The (stack, workload, level or "peak") the claim reads, where its figures are not
    # exactly those (a peak side fills every level); None: every level it has figures at
    read: frozenset["Read"] | None = None

    def reads(self) -> frozenset["Read"]:
        if self.read is not None:
            return self.read
        return frozenset(
            {(s, w, level) for s, w, level, _ in self.figures if level is not None}
            | set(self.errors)
            | set(self.error_rates)
        )

    def value(self, stack: str, workload: str, level: float | None, metric: str) -> float | None:
        for key in ((stack, workload, level, metric), (stack, workload, None, metric)):
            if key in self.figures:
                return self.figures[key]
        return None


def designs(
    claims: Iterable[Claim],
    facts: Facts,
    spread: RunSpread,
    room: RoundsRoom | None = None,
    past: PastSpreads | None = None,
) -> tuple[Design, ...]:
    """Each claim's decidability under the plan's facts and the spread verdicts will use
    (`spread`: the machine's, calibrated or assumed; `past`: the spread between fresh starts
    the store's earlier runs of the suite showed, which replaces it where it covers the levels
    a claim reads: claim_spread); `room`: what until-decided rounds may spend after the plan
    (None: no rounds counted)."""
    out: list[Design] = []
    chased: list[tuple[int, _Rounds]] = []  # claims the rounds would decide: out's index
    for ready in requirements_unmet(claims, facts):
        claim = ready.claim
        words = ready.stand_in
        if not ready.testable:
            out.append(Design(claim, False, False, ready.reasons[0], ready.reasons, stand_in=words))
            continue
        pair = scenarios(claim, facts, peak_levels(facts, past))
        used = claim_spread(facts, pair[0], spread, past).text
        paired_by = pairing(facts, pair[0], past).text
        used += f"; paired: {paired_by}" if paired_by else ""
        results = _judged(claim, facts, spread, pair, past)
        problems = _problems(results)
        if not problems:
            out.append(Design(claim, True, True, "", spread=used, stand_in=words))
            continue
        why = "; ".join(problems)
        rounds = (
            None if room is None else _rounds(claim, facts, (spread, past), pair, results, room)
        )
        if isinstance(rounds, _Rounds):
            chased.append((len(out), rounds))
        elif rounds and room is not None:
            why += (
                f"; within the {room.left_s / 60:.1f} min of load the suite's budget leaves "
                f"after the plan, until-decided rounds would not decide it: {rounds}"
            )
        out.append(Design(claim, True, False, why, spread=used, stand_in=words))
    return tuple(_within_room(out, chased, room))


def peak_levels(facts: Facts, past: PastSpreads | None) -> dict[tuple[str, str], float]:
    """The plan's level nearest to where each stack's figures on each workload peaked in the
    suite's earlier runs here (none without them)."""
    out: dict[tuple[str, str], float] = {}
    for stack in facts.stacks:
        for workload, values in facts.workload_levels.items():
            before = None if past is None else past.peak(stack.name, workload)
            if before is not None and values:
                out[(stack.name, workload)] = min(values, key=lambda v: (abs(v - before), v))
    return out


def _judged(
    claim: Claim,
    facts: Facts,
    spread: RunSpread,
    pair: tuple[Scenario, Scenario],
    past: PastSpreads | None = None,
) -> tuple[ClaimResult, ClaimResult]:
    """The claim read on the plan's synthetic runs at the article's figures and at the
    opposite."""
    confirm, refute = (
        evaluate([claim], synthetic_run(facts, s, spread, past=past), facts, pair_priors=False)[0]
        for s in pair
    )
    return confirm, refute


def _problems(results: tuple[ClaimResult, ClaimResult]) -> list[str]:
    problems = []
    if results[0].status is not ClaimStatus.CONFIRMED:
        problems.append(f"data at the article's figures give {_reading(results[0])}")
    if results[1].status is not ClaimStatus.REFUTED:
        problems.append(f"data at the opposite give {_reading(results[1])}")
    return problems


def _reading(result: ClaimResult) -> str:
    """What the reading said, without the stand-in's words it begins with (the dry run
    says those once, with the claims read with a stand-in)."""
    return result.why.removeprefix(f"{result.stand_in}; ") if result.stand_in else result.why


@dataclass(frozen=True)
class _Rounds:
    """The until-decided rounds that decide a claim both ways: the repetitions each level
    gets beyond the plan's, how many rounds, and their load."""

    extra: Mapping[LevelKey, int]
    count: int
    load_s: float


def _rounds(
    claim: Claim,
    facts: Facts,
    spread: tuple[RunSpread, PastSpreads | None],
    pair: tuple[Scenario, Scenario],
    results: tuple[ClaimResult, ClaimResult],
    room: RoundsRoom,
) -> _Rounds | str:
    """The rounds that decide the claim on both scenarios within the room, or why none do
    ("" when the plan's data give a verdict the wrong way, which no repetition mends).
    `results`: the plan's own reading of each scenario."""
    wanted = (ClaimStatus.CONFIRMED, ClaimStatus.REFUTED)
    extra: dict[LevelKey, int] = {}
    count = 0
    for scenario, first, status in zip(pair, results, wanted, strict=True):
        played = _play(claim, facts, spread, (scenario, first), status, room)
        if isinstance(played, str):
            return played
        levels, rounds = played
        for key, n in levels.items():
            extra[key] = max(extra.get(key, 0), n)
        count = max(count, rounds)
    return _Rounds(extra, count, _load(extra, room))


def _play(
    claim: Claim,
    facts: Facts,
    spread: tuple[RunSpread, PastSpreads | None],
    start: tuple[Scenario, ClaimResult],
    wanted: ClaimStatus,
    room: RoundsRoom,
) -> tuple[dict[LevelKey, int], int] | str:
    """until-decided's rounds on one scenario's synthetic run, from the plan's reading of it
    (`start`), each picked by claims_round as the run picks it: (the added repetitions of
    each level, the rounds) once the claim reads `wanted`, else why not."""
    scenario, result = start
    extra: dict[LevelKey, int] = {}
    for count in range(MAX_CLAIM_ROUNDS + 1):
        if result.status is wanted:
            return extra, count
        if result.status is not ClaimStatus.UNDECIDED:
            return ""  # a verdict the wrong way: the plan's reading already says it
        if count == MAX_CLAIM_ROUNDS:
            break
        undecided = undecided_claims([result])
        have = {
            k: facts.repeat + extra.get(k, 0) for u in undecided for w in u.wants for k in w.levels
        }
        left = room.left_s - _load(extra, room)
        step = claims_round(undecided, have, room.cost, left, MAX_CLAIM_ROUNDS - count)
        if isinstance(step, Stop):
            return step.why
        for key, n in step.added().items():
            extra[key] = extra.get(key, 0) + n
        machine, past = spread
        run = synthetic_run(facts, scenario, machine, extra, past)
        result = evaluate([claim], run, facts, pair_priors=False)[0]
    return f"still undecided after {MAX_CLAIM_ROUNDS} rounds"


def _load(extra: Mapping[LevelKey, int], room: RoundsRoom) -> float:
    return math.fsum(room.cost(key) * n for key, n in extra.items())


def _within_room(
    out: list[Design], chased: list[tuple[int, _Rounds]], room: RoundsRoom | None
) -> list[Design]:
    """The claims the rounds would decide, the cheapest first as the run takes them, while
    their rounds fit the room together (a level repeated once serves every claim reading it);
    a claim whose rounds do not fit beside the cheaper ones' stays not decidable, saying so."""
    if room is None or not chased:
        return out
    taken: dict[LevelKey, int] = {}
    for index, rounds in sorted(chased, key=lambda c: (c[1].load_s, out[c[0]].claim.id)):
        both = dict(taken)
        for key, n in rounds.extra.items():
            both[key] = max(both.get(key, 0), n)
        design = out[index]
        if _load(both, room) <= room.left_s:
            taken = both
            out[index] = dataclasses.replace(
                design,
                decidable=True,
                why="",
                rounds=rounds.count,
                rounds_load_s=rounds.load_s,
                rounds_levels=tuple(sorted(rounds.extra.items())),
            )
            continue
        out[index] = dataclasses.replace(
            design,
            why=f"{design.why}; {rounds.count} until-decided round(s) would decide it "
            f"({rounds.load_s / 60:.1f} min of load), but the {room.left_s / 60:.1f} min the "
            "suite's load budget leaves after the plan go to the cheaper claims' rounds "
            f"({_load(taken, room) / 60:.1f} min)",
        )
    return out


# --- the claim's figures ---------------------------------------------------------------------
def scenarios(
    claim: Claim, facts: Facts, peaks: Mapping[tuple[str, str], float] | None = None
) -> tuple[Scenario, Scenario]:
    """(at the article's figures, at the opposite) for the claim's test; `peaks`: the level
    where a stack's figures on a workload peaked before (peak_levels), where a "peak" side
    is made to peak too. On a server with fewer cores than the claim needs, the figures are
    those of the stacks that stand in for the ones it names."""
    pair = _scenarios(claim, facts, peaks)
    standing = stand_ins(claim, facts.server_cores)
    if standing is None:
        return pair
    return _stood_in(pair[0], standing), _stood_in(pair[1], standing)


def _scenarios(
    claim: Claim, facts: Facts, peaks: Mapping[tuple[str, str], float] | None
) -> tuple[Scenario, Scenario]:
    test = claim.test
    if isinstance(test, OrderTest):
        return _order(claim, test, facts, False), _order(claim, test, facts, True)
    if isinstance(test, RatioTest | RatioChangeTest):
        at = peaks or {}
        return _ratio(claim, test, facts, True, at), _ratio(claim, test, facts, False, at)
    if isinstance(test, ThresholdTest):
        return _threshold(test, facts, True), _threshold(test, facts, False)
    if isinstance(test, ShapeTest):
        return _shape(test, facts, True), _shape(test, facts, False)
    if isinstance(test, ScatterTest):
        return _scatter(test, facts, True), _scatter(test, facts, False)
    return _breakpoint(test, facts, True), _breakpoint(test, facts, False)


def _stood_in(scenario: Scenario, standing: StandIns) -> Scenario:
    """The scenario's figures on the stacks that stand in for those the claim names."""
    read = scenario.read
    return Scenario(
        {(standing.stack(s, w), w, lv, m): v for (s, w, lv, m), v in scenario.figures.items()},
        {(standing.stack(s, w), w, lv): n for (s, w, lv), n in scenario.errors.items()},
        {(standing.stack(s, w), w, lv): r for (s, w, lv), r in scenario.error_rates.items()},
        None if read is None else frozenset((standing.stack(s, w), w, lv) for s, w, lv in read),
    )


def _levels(facts: Facts, workload: str, levels: object) -> list[float]:
    if isinstance(levels, tuple):
        return [float(v) for v in levels]
    return list(facts.workload_levels.get(workload, ()))


def _order(claim: Claim, test: OrderTest, facts: Facts, reverse: bool) -> Scenario:
    """Each group a clear step (1.5×) above the next, or the article's figure of a stack
    where it prints one in the test's unit; reversed for the opposite."""
    groups = order_groups(test)
    printed = {f.label: f.value for f in claim.figures}
    figures: dict[Key, float] = {}
    for w in test.workloads or ():
        for level in _levels(facts, w, test.levels):
            for rank, group in enumerate(groups):
                step = rank if reverse else len(groups) - 1 - rank
                for stack in group:
                    base = printed.get(stack) if not reverse else None
                    figures[(stack, w, level, test.metric)] = base or _base(test.metric) * (
                        1.5**step
                    )
    return Scenario(figures, {})


def _base(metric: str) -> float:
    if metric in ("time_per_request", "time_per_request_all"):
        return 1.0  # ms: the base rate again (1,000 req/s per connection)
    return BASE_RPS if metric == "requests_per_s" else 100.0


def article_ratio(
    claim: Claim, test: RatioTest | RatioChangeTest, workload: str | None, level: float | None
) -> float | None:
    """The article's own ratio at one point of the test: the figure in × whose label names
    that point (its workload, as the suite writes it or by its name, and/or its level as
    "@3000"), else the claim's headline `article`, else None (the article printed none)."""
    for figure in claim.figures:
        if figure.unit == "×" and _names_point(figure.label, workload, level):
            return figure.value
    return test.article


def _names_point(label: str, workload: str | None, level: float | None) -> bool:
    """Whether every word of a figure's label names the point: "@N" its level, any other
    word its workload ("mysql" names "mysql-row", "concat" names "concat?n=1000")."""
    words = label.split()
    if not words:
        return False
    for word in words:
        if word.startswith("@"):
            try:
                at = float(word[1:].replace(",", ""))
            except ValueError:
                return False
            if level is None or at != level:
                return False
        elif workload is None or not (
            workload == word or workload.startswith((word + "-", word + "?"))
        ):
            return False
    return True


def _confirming_ratio(test: RatioTest | RatioChangeTest, article: float | None) -> float:
    """The article's own ratio, wherever it lies (a figure on or outside the claim's band
    cannot confirm it, and the design says so). Without one, a ratio clearly inside the
    band: its middle with an upper end, else 1.5× beyond a 'greater' threshold, 1.5× below
    a 'less' one."""
    if article is not None:
        return article
    if test.expect == "greater" and test.upper is not None:
        return math.sqrt(test.threshold * test.upper)
    if test.expect == "greater":
        return test.threshold * 1.5
    return test.threshold / 1.5


def _refuting_ratio(test: RatioTest | RatioChangeTest, article: float | None) -> float:
    """The opposite: for "near", well outside the band (its far side by its own width
    again); for a direction, the article's ratio mirrored across the threshold (as far on
    the wrong side as the article is on the right one: 1.12× against 1 becomes 1/1.12×),
    else the threshold passed 1.5× the wrong way."""
    if test.expect == "near":
        assert test.article is not None
        return test.article * (1.0 + test.tolerance) ** 3
    if article is not None:
        return test.threshold**2 / article
    if test.expect == "greater":
        return test.threshold / 1.5
    return test.threshold * 1.5


def _ratio(
    claim: Claim,
    test: RatioTest | RatioChangeTest,
    facts: Facts,
    confirm: bool,
    peaks: Mapping[tuple[str, str], float] | None = None,
) -> Scenario:
    """At each point, the numerator's figure(s) at the ratio (the article's there, or its
    opposite) times the denominator's. A side at "peak" is every level of its stack (so the
    peak is that figure), or, where `peaks` names the level the stack peaked at before, on
    an arch (PEAK_ARCH) whose top is that level at the figure, so that the trend peaks there
    and its figure is read with that level's spread; a ratio of ratios puts the whole change
    on the `after` numerator."""
    figures: dict[Key, float] = {}
    read: set[Read] = set()
    for w, lv in _combos(test, facts):
        article = article_ratio(claim, test, w, lv)
        ratio = _confirming_ratio(test, article) if confirm else _refuting_ratio(test, article)
        resolved = [_resolve(p, test, w, lv) for p in _positions(test)]
        read.update((stack, workload, level) for stack, workload, level, _ in resolved)
        if _own_peak(resolved) and ratio >= 1.0 and test.threshold < 1.0:
            # a level against its own stack's peak is at most 1 (at 1 it is the peak, read
            # against itself: no evidence needed): the band's middle below 1 instead
            ratio = math.sqrt(test.threshold)
        for i, (stack, workload, level, metric) in enumerate(resolved):
            numerator_after = i == 0
            # the ratio split over both sides, so neither runs far from the base rate (a
            # level counted in requests would otherwise be over too soon for a window)
            value = _base(metric) * math.sqrt(ratio) ** (1 if numerator_after else -1)
            if level == "peak":  # every level at the figure: the peak is that figure
                every = facts.workload_levels.get(workload, ())
                peak_at = (peaks or {}).get((stack, workload), _middle(every))
                for each in every:
                    here = value * _arch(each, peak_at, every)
                    if numerator_after:
                        figures[(stack, workload, each, metric)] = here
                    else:
                        figures.setdefault((stack, workload, each, metric), here)
                continue
            at = None if level is None else float(level)
            if numerator_after or (stack, workload, at, metric) not in figures:
                figures[(stack, workload, at, metric)] = value
    return Scenario(figures, {}, read=frozenset(read))


def _arch(level: float, top: float | None, levels: Sequence[float]) -> float:
    """1 at `top` (and everywhere without one), falling quadratically to 1 - PEAK_ARCH at
    the farther end of `levels`, on the levels' logarithms as the peak's trend reads them
    (stats.fitted_peak)."""
    if top is None or len(levels) < 2:
        return 1.0
    axis = peak_axis([*levels, top])
    here, summit = axis(level), axis(top)
    reach = max(abs(axis(max(levels)) - summit), abs(summit - axis(min(levels)))) or 1.0
    return 1.0 - PEAK_ARCH * ((here - summit) / reach) ** 2


def _middle(levels: Sequence[float]) -> float | None:
    """Where a "peak" side peaks without earlier runs to say where: the level in the middle
    of the sweep on the peak's axis (on a flat line the trend's peak, and so the level read,
    would move with each repetition's noise; in the real run the rounds repeat whichever
    level the trend found)."""
    if len(levels) < 3:
        return None
    axis = peak_axis(levels)
    centre = (axis(min(levels)) + axis(max(levels))) / 2.0
    return min(levels, key=lambda v: (abs(axis(v) - centre), v))


def _own_peak(resolved: Sequence[tuple[str, str, float | str | None, str]]) -> bool:
    """A level of a stack against that stack's own peak (apache-near-peak-at-2000)."""
    if len(resolved) != 2:
        return False
    (s1, w1, l1, m1), (s2, w2, l2, m2) = resolved
    return (s1, w1, m1) == (s2, w2, m2) and l2 == "peak" and isinstance(l1, float | int)


def _threshold(test: ThresholdTest, facts: Facts, confirm: bool) -> Scenario:
    """A figure in the middle of [min, max] (or twice min, half max), outside it for the
    opposite; failed requests as counts."""
    figures: dict[Key, float] = {}
    errors: dict[tuple[str, str, float], int] = {}
    rates: dict[tuple[str, str, float], float] = {}
    low, high = test.min, test.max
    if confirm:
        value = (
            (low + high) / 2.0
            if low is not None and high is not None
            else (low * 2.0 if low is not None and low > 0 else 1.0)
            if low is not None
            else (high / 2.0 if high is not None and high > 0 else 0.0)
        )
    else:
        value = low / 2.0 if low is not None and low > 0 else (high or 0.0) * 2.0 + 10.0
        if low is not None and low <= 1.0 and test.metric == "errors":
            value = 0.0
    for stack in test.stacks:
        for w in test.workloads:
            for level in _levels(facts, w, test.levels):
                if test.metric == "errors":
                    errors[(stack, w, level)] = round(value)
                elif test.metric == "error_rate":
                    rates[(stack, w, level)] = min(value, 0.9)
                else:
                    figures[(stack, w, level, test.metric)] = value
    return Scenario(figures, errors, rates)


def _shape(test: ShapeTest, facts: Facts, confirm: bool) -> Scenario:
    """Flat: the same figure at every level (the opposite: the last level 3 bands higher);
    proportional: the figure grows with the level (the opposite: flat)."""
    figures: dict[Key, float] = {}
    for stack in test.stacks:
        for w in test.workloads:
            levels = _between(facts.workload_levels.get(w, ()), test.from_level, test.to_level)
            for level in levels:
                base = _base(test.metric)
                if test.expect == "flat":
                    grow = (1.0 + test.tolerance) ** 3 if not confirm and level == levels[-1] else 1
                    figures[(stack, w, level, test.metric)] = base * grow
                else:
                    figures[(stack, w, level, test.metric)] = base * (level if confirm else 1.0)
    return Scenario(figures, {})


def _scatter(test: ScatterTest, facts: Facts, confirm: bool) -> Scenario:
    """Alternating deviations from a flat line: the numerator span's jitter 3× the
    threshold times the denominator's (the opposite: the denominator's the larger)."""
    figures: dict[Key, float] = {}
    small, large = 0.01, 0.01 * test.threshold * 3.0
    levels = facts.workload_levels.get(test.workload, ())
    for stack in (test.numerator.stack, test.denominator.stack):  # the trend: flat
        for level in levels:
            figures[(stack, test.workload, level, test.metric)] = _base(test.metric)
    for span, jitter in ((test.denominator, small), (test.numerator, large)):
        amount = jitter if confirm else (small if jitter == large else large)
        for i, level in enumerate(levels):
            if span.from_level <= level <= span.to_level:
                sign = 1.0 if i % 2 else -1.0
                figures[(span.stack, test.workload, level, test.metric)] = _base(test.metric) * (
                    1.0 + sign * amount
                )
    return Scenario(figures, {})


def _breakpoint(test: BreakpointTest, facts: Facts, confirm: bool) -> Scenario:
    """The crossing: within the range's middle (the opposite: never up to the range's end),
    none (the opposite: from the middle of the sweep), before the other (the opposite: the
    other first)."""
    levels = list(facts.workload_levels.get(test.workload, ()))
    figures: dict[Key, float] = {}

    def breaks(stack: str, from_level: float | None) -> None:
        for level in levels:
            broken = from_level is not None and level >= from_level
            figures[(stack, test.workload, level, test.metric)] = test.above * (
                2.0 if broken else 0.5
            )

    middle = levels[len(levels) // 2] if levels else None
    if test.expect == "within":
        assert test.range is not None
        inside = _between(levels, test.range[0], test.range[1])
        breaks(test.stack, (inside[len(inside) // 2] if inside else None) if confirm else None)
    elif test.expect == "none":
        breaks(test.stack, None if confirm else middle)
    else:
        assert test.other is not None
        early = levels[len(levels) // 3] if levels else None
        late = levels[2 * len(levels) // 3] if levels else None
        breaks(test.stack, early if confirm else late)
        breaks(test.other, late if confirm else early)
    return Scenario(figures, {})


# --- a synthetic run made to the plan --------------------------------------------------------
@dataclass(frozen=True)
class ClaimSpread:
    """The run-to-run spread a claim's synthetic run is made and read with: `run`, what the
    verdicts add for a level of at most FLOORED_REPETITIONS repetitions (the run's
    calibration); `levels`, what each level's repetitions vary by where the store's earlier
    runs show it (elsewhere `run`); `past`, the earlier runs' spread `run` is, if it is one."""

    run: RunSpread
    levels: Mapping[LevelKey, float]
    past: LevelSpread | None = None

    @property
    def text(self) -> str:
        return self.past.text if self.past is not None else self.run.source


def claim_spread(
    facts: Facts,
    scenario: Scenario,
    machine: RunSpread,
    past: PastSpreads | None,
    extra: Mapping[LevelKey, int] | None = None,
) -> ClaimSpread:
    """The spread a claim's synthetic run uses: where the store's earlier runs of the suite
    cover a level the plan runs, its repetitions vary by the spread between those runs'
    fresh starts at that level's range (pastspread); the verdicts add for a point read with
    at most FLOORED_REPETITIONS repetitions the largest such spread among the points the claim
    reads (a "peak" at the level where the earlier runs peaked), and the machine's own
    (`machine`: calibrated, else assumed) where a read point has no earlier starts. More
    repetitions than that are read by their own variance, so their spread decides their
    interval through the repetitions alone."""
    if past is None:
        return ClaimSpread(machine, {})
    added = extra or {}
    levels: dict[LevelKey, float] = {}
    for stack in facts.stacks:
        for workload, values in facts.workload_levels.items():
            for value in values:
                found = past.at(stack.name, workload, value)
                if found is not None:
                    levels[LevelKey(stack.name, workload, value)] = found.sigma_used
    floored: list[LevelSpread] = []
    uncovered = False
    for stack_name, workload, level in sorted(scenario.reads(), key=str):
        at = past.peak(stack_name, workload) if level == "peak" else level
        if not isinstance(at, float | int):  # a standalone timing, or no earlier peak
            uncovered = True
            continue
        key = LevelKey(stack_name, workload, float(at))
        if level != "peak" and facts.repeat + added.get(key, 0) > FLOORED_REPETITIONS:
            continue
        found = past.at(stack_name, workload, float(at))
        if found is None:
            uncovered = True
        else:
            floored.append(found)
    if not floored:
        return ClaimSpread(machine, levels)
    worst = max(floored, key=lambda f: f.sigma_used)
    if uncovered and machine.sigma > worst.sigma_used:
        return ClaimSpread(machine, levels)
    run = RunSpread(
        worst.sigma_used, False, worst.text, within=machine.within, level_s=machine.level_s
    )
    return ClaimSpread(run, levels, worst)


@dataclass(frozen=True)
class Noise:
    """How a point's repetitions vary beside the spread (_factors)."""

    own: float | None = None  # the SD of its own noise (None: all of its spread)
    turn: int = 0  # which own pattern (_own_pattern)
    drift_free: bool = False  # no point shares drift: the drift's pattern is an own one too


@dataclass(frozen=True)
class Pairing:
    """How a claim's synthetic repetitions split their spread (see the module's docstring):
    `own`, the SD of a read level's own noise where the store's earlier runs measured its
    pairs (elsewhere all of the point's spread is its own); `turns`, which own-noise pattern
    each point of the plan gets (_turns); `pairs`, the earlier runs' spreads it used."""

    turns: Mapping[Point, int]
    own: Mapping[Point, float]
    pairs: tuple[PairSpread, ...] = ()

    @property
    def text(self) -> str:
        """The widest of the earlier pairs' spreads it used, for people ("": none)."""
        if not self.pairs:
            return ""
        return max(self.pairs, key=lambda p: p.sigma_used).text

    def noise(self, point: Point) -> Noise:
        """How the point's repetitions vary; no point with an own share: no drift shared,
        and the drift's pattern is free to be one more own pattern."""
        return Noise(self.own.get(point), self.turns.get(point, 0), not self.own)

    def service(self, point: Point) -> Noise:
        """A level's data service's CPU: none of the level's other figures' noise (a ratio
        of the two is read paired: node-outweighs-mysql), the next pattern."""
        return Noise(None, self.turns.get(point, 0) + 1, not self.own)


def pairing(facts: Facts, scenario: Scenario, past: PastSpreads | None) -> Pairing:
    """The split of a claim's synthetic repetitions: a level the claim reads gets as its own
    noise the widest spread of its pairs with the other levels the claim reads in the
    earlier runs, over sqrt(2) (a pair's log ratio varies by both sides' own noise), when
    those runs measured every such pair in the same starts; otherwise (a standalone timing,
    a level read alone, a pair never measured together) all of its spread is its own."""
    read = _read_points(facts, scenario, past)
    turns = _turns(_plan_points(facts))
    turns.update(_turns(read))  # the read points' own square, whatever the rest's
    levels = [(s, w, lv) for s, w, lv in read if lv is not None]
    own: dict[Point, float] = {}
    used: list[PairSpread] = []
    for a in levels:
        found = [past.paired(a, b) for b in levels if b != a] if past is not None else []
        spreads = [f for f in found if f is not None]
        if not found or len(spreads) < len(found):
            continue
        widest = max(spreads, key=lambda f: f.sigma_used)
        own[a] = widest.sigma_used / math.sqrt(2.0)
        used.append(widest)
    return Pairing(turns, own, tuple(used))


def _turns(points: Sequence[Point]) -> dict[Point, int]:
    """Each point's own-noise pattern: its stack's index among the points' stacks plus its
    level's index among the levels of its workload there (a standalone timing: 0). A Latin
    square: two stacks at one level, or two levels of one stack, the pairs a reading
    compares, never get the same pattern while there are patterns enough (_own_pattern)."""
    stacks = sorted({p[0] for p in points})
    levels: dict[str, list[float]] = {}
    for _, workload, level in points:
        if level is not None and level not in levels.setdefault(workload, []):
            levels[workload].append(level)
    return {
        (stack, workload, level): stacks.index(stack)
        + (0 if level is None else sorted(levels[workload]).index(level))
        for stack, workload, level in points
    }


def _read_points(facts: Facts, scenario: Scenario, past: PastSpreads | None) -> list[Point]:
    """The plan's points the claim reads, in a fixed order: a "peak" is the plan's level
    nearest to where the earlier runs peaked, else every level of its stack and workload
    (any may be the peak)."""
    out: set[Point] = set()
    for stack, workload, level in scenario.reads():
        if level != "peak":
            out.add((stack, workload, None if level is None else float(level)))
            continue
        values = facts.workload_levels.get(workload, ())
        before = None if past is None else past.peak(stack, workload)
        if before is not None and values:
            out.add((stack, workload, min(values, key=lambda v: (abs(v - before), v))))
        else:
            out.update((stack, workload, float(v)) for v in values)
    return sorted(out, key=lambda p: (p[0], p[1], -1.0 if p[2] is None else p[2]))


def _plan_points(facts: Facts) -> list[Point]:
    """Every level and standalone timing of the plan, in the plan's order."""
    out: list[Point] = []
    for stack in facts.stacks:
        for workload, values in facts.workload_levels.items():
            if stack.runs(workload):
                out += [(stack.name, workload, float(v)) for v in values]
                if facts.script_iterations > 0:
                    out.append((stack.name, workload, None))
    return out


def synthetic_run(
    facts: Facts,
    scenario: Scenario,
    spread: RunSpread,
    extra: Mapping[LevelKey, int] | None = None,
    past: PastSpreads | None = None,
) -> RunData:
    """Every stack, workload and level of the plan, its repetitions and driver, with the
    scenario's figures (defaults elsewhere) spread by the run-to-run spread (`spread`, the
    machine's, or where `past` covers the claim's levels the earlier runs': claim_spread);
    `extra`: the repetitions until-decided rounds add to a level, made as the plan's own
    are."""
    added = extra or {}
    used = claim_spread(facts, scenario, spread, past, added)
    split = pairing(facts, scenario, past)
    spread = used.run
    cases: list[CaseRow] = []
    levels: list[LevelRow] = []
    scripts: list[ScriptRow] = []
    for stack in facts.stacks:
        for workload, values in facts.workload_levels.items():
            if not stack.runs(workload):  # [stack_workloads]: not planned
                continue
            case_id = len(cases) + 1
            cases.append(
                CaseRow(
                    id=case_id,
                    run_id=1,
                    stack=stack.name,
                    workload=workload.split("?")[0],
                    label=workload,
                    path="/" + workload,
                    params=dict(stack.params),
                    status="ok",
                    reason="",
                    effective_params=dict(stack.params),
                )
            )
            for index, level in enumerate(values):
                repetitions = facts.repeat + added.get(LevelKey(stack.name, workload, level), 0)
                for rep in range(repetitions):
                    levels.append(
                        _level_row(
                            facts,
                            scenario,
                            spread,
                            stack.name,
                            workload,
                            case_id,
                            index,
                            level,
                            (rep, repetitions),
                            used.levels.get(LevelKey(stack.name, workload, level)),
                            (
                                split.noise((stack.name, workload, float(level))),
                                split.service((stack.name, workload, float(level))),
                            ),
                        )
                    )
            if facts.script_iterations > 0:
                noise = split.noise((stack.name, workload, None))
                scripts += _scripts(facts, scenario, spread, (stack.name, workload), noise)
    return RunData(_run_row(facts), cases, levels, [], scripts, _calibration(spread))


def _factors(repetitions: int, sigma: float, noise: Noise | None = None) -> list[float]:
    """Repetitions that vary by exactly the spread: e^(shared z_i + own u_i), z evenly
    spaced (the drift every point of a repetition shares), u the point's own pattern
    (_own_pattern, by its turn), both with mean 0 and sample SD 1 and orthogonal, own the
    point's own noise (at most sigma; None: sigma) and shared^2 = sigma^2 - own^2. With
    fewer than MIN_PAIRS repetitions nothing is read paired: all of it on z (one
    repetition: 1)."""
    if repetitions == 1:
        return [1.0]
    z = _drift(repetitions)
    if repetitions < MIN_PAIRS:
        return [math.exp(sigma * x) for x in z]
    noise = noise or Noise()
    own = sigma if noise.own is None else min(noise.own, sigma)
    shared = math.sqrt(max(sigma * sigma - own * own, 0.0))
    u = _own_pattern(repetitions, noise.turn, noise.drift_free)
    return [math.exp(shared * x + own * y) for x, y in zip(z, u, strict=True)]


def _drift(repetitions: int) -> tuple[float, ...]:
    """The drift's pattern: evenly spaced, mean 0, sample SD 1."""
    raw = [i - (repetitions - 1) / 2.0 for i in range(repetitions)]
    sd = math.sqrt(math.fsum(z * z for z in raw) / (repetitions - 1))
    return tuple(r / sd for r in raw)


def _own_pattern(repetitions: int, turn: int, drift_free: bool = False) -> tuple[float, ...]:
    """The own-noise pattern of turn `turn`: the n - 2 patterns of _own_patterns (n - 1,
    the drift's first, when no point shares drift) in turn, then the same negated (a pair
    of them varies by twice the noise: more, never less, than independent noise would),
    then again."""
    patterns = ((_drift(repetitions),) if drift_free else ()) + _own_patterns(repetitions)
    at = turn % (2 * len(patterns))
    sign = 1.0 if at < len(patterns) else -1.0
    return tuple(sign * x for x in patterns[at % len(patterns)])


@functools.cache
def _own_patterns(repetitions: int) -> tuple[tuple[float, ...], ...]:
    """n - 2 patterns over n repetitions with mean 0 and sample SD 1, orthogonal to the
    drift's evenly spaced one and to one another: Gram-Schmidt over the constant, the
    linear trend and the cosines cos(pi k (i + 1/2) / n), k = 2..n-1 (which with the first
    two span every pattern), keeping those after the first two."""
    n = repetitions
    start = [[1.0] * n, [float(i) for i in range(n)]]
    start += [[math.cos(math.pi * k * (i + 0.5) / n) for i in range(n)] for k in range(2, n)]
    basis: list[list[float]] = []
    for vector in start:
        v = list(vector)
        for b in basis:
            dot = math.fsum(x * y for x, y in zip(v, b, strict=True))
            v = [x - dot * y for x, y in zip(v, b, strict=True)]
        norm = math.sqrt(math.fsum(x * x for x in v))
        basis.append([x / norm for x in v])
    scale = math.sqrt(n - 1.0)  # unit length to sample SD 1
    return tuple(tuple(x * scale for x in b) for b in basis[2:])


def _level_row(
    facts: Facts,
    scenario: Scenario,
    spread: RunSpread,
    stack: str,
    workload: str,
    case_id: int,
    index: int,
    level: float,
    repetition: tuple[int, int],  # (this one, of how many)
    sigma_here: float | None = None,  # what its repetitions vary by (None: the spread's)
    # how much of it is the level's own (_factors), and its data service's CPU's
    noise: tuple[Noise, Noise] | None = None,  # None: all of it its own
) -> LevelRow:
    def figure(metric: str, default: float) -> float:
        value = scenario.value(stack, workload, level, metric)
        return default if value is None else value

    rps = figure("requests_per_s", BASE_RPS)
    # ab's times per request are the throughput seen another way: a claim's figure for one
    # sets the rate (connections / rate, or 1 / rate across all requests)
    per_request = scenario.value(stack, workload, level, "time_per_request")
    every = scenario.value(stack, workload, level, "time_per_request_all")
    if per_request:
        rps = 1000.0 * level / per_request
    elif every:
        rps = 1000.0 / every
    count = facts.request_count(level)
    seconds = facts.level_seconds(workload) or (count / rps if count else 10.0)
    native = facts.driver == "native"
    sigma = (
        sigma_here
        if sigma_here is not None
        else (spread.sigma if native else whole_level_sigma(spread, seconds))
    )
    rep, repetitions = repetition
    level_noise, service_noise = noise or (Noise(), Noise(turn=1))
    factor = _factors(repetitions, sigma, level_noise)[rep]
    service_factor = _factors(repetitions, sigma, service_noise)[rep]
    rps *= factor
    if count:  # a level counted in requests sends them all, faster or slower
        seconds = count / rps
    mean_ms = figure("mean_latency", 1000.0 * level / rps if rps > 0 else 1000.0) / factor
    latency = {
        "mean": mean_ms,
        "p50": figure("p50", mean_ms * 0.9),
        "p75": figure("p75", mean_ms * 1.1),
        "p80": figure("p80", mean_ms * 1.2) / factor,
        "p90": figure("p90", mean_ms * 1.5),
        "p99": figure("p99", mean_ms * 3.0) / factor,
        "p99_9": figure("p99_9", mean_ms * 4.0),
        "max": mean_ms * 5.0,
    }
    latency_us = {k: v * 1000.0 for k, v in latency.items()}
    completed = count or max(round(rps * seconds), 1)
    rate = scenario.error_rates.get((stack, workload, level), 0.0)
    failed = scenario.errors.get((stack, workload, level), round(completed * rate / (1 - rate)))
    cpu = figure("server_cpu", 90.0) * factor
    service = figure("service_cpu", 20.0) * service_factor
    transfer = figure("transfer", rps * 2048 / 2**20) * factor
    return LevelRow(
        id=case_id * 1_000_000 + index * 1000 + rep,
        case_id=case_id,
        level_index=index,
        level_value=level,
        repetition=rep,
        driver=facts.driver,
        mode="closed",
        keepalive=facts.keepalive,
        started_at=0.0,
        duration_s=seconds,
        completed=completed,
        ok=completed,
        errors={"timeout": failed} if failed else {},
        requests_per_s=rps,
        latency_us=latency_us,
        timeseries=_series(rps, min(seconds, MAX_SERIES_S), latency_us) if native else None,
        bytes_read=int(transfer * 2**20 * seconds),
        usage={"server": _usage(cpu, seconds), "mariadb": _usage(service, seconds)},
        status="ok",
        command="",
    )


def _usage(cpu_percent: float, seconds: float) -> RoleUsage:
    return RoleUsage(
        cpu_user_s=cpu_percent * seconds / 100.0,
        cpu_sys_s=0.0,
        cpu_percent=cpu_percent,
        rss_max_bytes=1,
        rss_mean_bytes=1,
        threads_max=1,
        processes_max=1,
        ctx_voluntary=0,
        ctx_involuntary=0,
    )


def _series(rps: float, seconds: float, latency_us: dict[str, float]) -> tuple[Second, ...]:
    """Whole seconds around `rps` with PER_SECOND_CV noise (an alternating pattern whose mean
    is 0 over every 4 s), each with the level's percentiles and an empty histogram."""
    pattern = (1.0, -1.0, 1.5, -1.5)
    out = []
    for t in range(int(seconds)):
        rate = rps * (1.0 + PER_SECOND_CV * pattern[t % 4] / 1.27)
        out.append(
            Second(
                t_s=t + 1,
                completed=max(round(rate), 0),
                errors=0,
                p50_us=round(latency_us["p50"]),
                p90_us=round(latency_us["p90"]),
                p99_us=round(latency_us["p99"]),
                max_us=round(latency_us["max"]),
                duration_s=1.0,
                partial=False,
                histogram=_histogram(round(latency_us["p50"]), round(latency_us["p99"])),
            )
        )
    return tuple(out)


@functools.cache
def _histogram(p50: int, p99: int) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    h.record_value(max(p50, 1), 98)
    h.record_value(max(p99, 1), 2)
    encoded = h.encode()
    return encoded.decode() if isinstance(encoded, bytes) else str(encoded)


def _scripts(
    facts: Facts, scenario: Scenario, spread: RunSpread, case: tuple[str, str], noise: Noise
) -> list[ScriptRow]:
    """A stack's standalone timings of a workload, the k-th of every stack in the same
    repetition (they pair, as the runner's turns make them)."""
    stack, workload = case
    iterations = facts.script_iterations
    per = {
        m: scenario.value(stack, workload, None, m) or 0.01
        for m in ("script_wall", "script_user", "script_cpu")
    }
    seconds = per["script_wall"] * iterations
    sigma = whole_level_sigma(spread, seconds)
    return [
        ScriptRow(
            run_id=1,
            stack=stack,
            label=workload,
            iterations=iterations,
            wall_s=per["script_wall"] * iterations * f,
            user_s=per["script_user"] * iterations * f,
            sys_s=(per["script_cpu"] - per["script_user"]) * iterations * f
            if per["script_cpu"] > per["script_user"]
            else 0.0,
            outcome="ok",
        )
        for f in _factors(facts.repeat * facts.script_timings, sigma, noise)
    ]


def _run_row(facts: Facts) -> RunRow:
    settings = RunSettings(
        mode="closed",
        level_kind=facts.level_kind,  # type: ignore[arg-type]
        keepalive=facts.keepalive,
        driver=facts.driver,
        duration_s=facts.duration_s,
        requests=facts.requests,
        requests_per_connection=facts.requests_per_connection,
        warmup_s=facts.warmup_s,
        timeout_s=10.0,
        pause_s=0.0,
        repeat=facts.repeat,
        threads=0,
        pipeline=1,
        jit_warmup=facts.jit_warmup,
        levels=(),
        max_error_rate=1.0,
        variant="full",
        description="",
        slo=None,
        search=None,
        script_iterations=facts.script_iterations,
        script_timings=facts.script_timings,
        variants={},
        workload_levels={k: tuple(v) for k, v in facts.workload_levels.items()},
        workload_durations=dict(facts.workload_durations),
        placement=PlacementSettings(
            server=tuple(range(facts.server_cores)), loader=(), services=()
        ),
    )
    return RunRow(
        id=1,
        suite_name="design",
        suite_path="",
        suite_text="",
        settings=settings,
        environment={},  # type: ignore[arg-type]
        started_at=0.0,
        finished_at=1.0,
        status="complete",
    )


def _calibration(spread: RunSpread) -> CalibrationRow | None:
    """The calibration the spread came from (None: assumed), as analysis reads it back."""
    if spread.assumed:
        return None
    return CalibrationRow(
        id=1,
        machine="design",
        at=0.0,
        run_id=1,
        stack="",
        workload="",
        level_value=0.0,
        figures=(1.0, 1.0, 1.0),
        within_variance=spread.within,
        sigma=spread.sigma,
        sigma_used=spread.sigma,
    )


def readiness_by_design(
    claims: Iterable[Claim],
    facts: Facts,
    spread: RunSpread,
    room: RoundsRoom | None = None,
    past: PastSpreads | None = None,
) -> tuple[Readiness, ...]:
    """What the dry run prints: each claim's readiness, and for a testable one whether the
    plan decides it by design, alone or with until-decided rounds within `room`, and with
    which run-to-run spread (`past` where it covers the claim's levels, else `spread`)."""
    return tuple(
        Readiness(
            d.claim,
            d.reasons,
            d.decidable if d.testable else None,
            d.why if d.testable else "",
            d.rounds,
            d.rounds_load_s,
            d.rounds_levels,
            d.spread if d.testable else "",
            d.testable and d.spread != spread.source,
            d.stand_in,
        )
        for d in designs(claims, facts, spread, room, past)
    )


def design_lines(readiness: Sequence[Readiness]) -> list[str]:
    """The dry run's lines on decidability: how many testable claims the plan decides and with
    which run-to-run spread (the machine's, calibrated or assumed; for each claim whose levels
    the suite's earlier runs here cover, the spread between their fresh starts, named), how
    many more until-decided rounds decide within the suite's load budget (each with its
    rounds), and why each other one is not decidable."""
    testable = [r for r in readiness if r.testable and r.decidable is not None]
    if not testable:
        return []
    by_plan = [r for r in testable if r.decidable and not r.rounds]
    with_rounds = [r for r in testable if r.decidable and r.rounds]
    undecidable = [r for r in testable if not r.decidable]
    earlier = [r for r in testable if r.spread_from_past]
    machine = next((r.spread for r in testable if not r.spread_from_past), "")
    if earlier:
        used = (
            f"for {len(earlier)} of them the spread between fresh starts in the suite's "
            "earlier runs here, named below with the claims that used it"
            + (f"; for the rest the {machine.removeprefix('run-to-run ')}" if machine else "")
        )
    else:
        used = machine or "run-to-run spread assumed"
    lines = [f"{len(by_plan)} of {len(testable)} testable claims {DECIDABLE} ({used})"]
    if with_rounds:
        lines.append(
            f"{len(with_rounds)} of {len(testable)} {WITH_ROUNDS} within the suite's load "
            "budget (run --until-decided)"
        )
        lines += [f"{r.claim.id}: {rounds_text(r.rounds, r.rounds_load_s)}" for r in with_rounds]
    lines += [f"{r.claim.id}: {NOT_DECIDABLE}: {r.undecidable}" for r in undecidable]
    by_spread: dict[str, list[str]] = {}
    for r in earlier:
        by_spread.setdefault(r.spread, []).append(r.claim.id)
    lines += [f"spread {spread}: {', '.join(ids)}" for spread, ids in by_spread.items()]
    return lines


def expected_rounds(readiness: Sequence[Readiness]) -> tuple[dict[LevelKey, int], int]:
    """The repetitions the until-decided rounds the claims are expected to need add to each
    level, beyond the plan's (a level repeated once serves every claim reading it, as the
    run takes them), and how many rounds that is: the claims decidable with rounds only."""
    extra: dict[LevelKey, int] = {}
    for r in readiness:
        if r.decidable and r.rounds:
            for key, n in r.rounds_levels:
                extra[key] = max(extra.get(key, 0), n)
    return extra, max((r.rounds for r in readiness if r.decidable), default=0)


def counts(items: Sequence[Design]) -> tuple[int, int, int, int]:
    """(decidable with the plan, decidable with until-decided rounds, testable but not
    decidable, untestable)."""
    by_plan = sum(d.decidable and not d.rounds for d in items)
    with_rounds = sum(d.decidable and bool(d.rounds) for d in items)
    testable = sum(d.testable for d in items)
    return by_plan, with_rounds, testable - by_plan - with_rounds, len(items) - testable
