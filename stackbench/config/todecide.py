"""What would decide an article's undecided claim, as a record both sides read: the claims
reading (analysis.claims) says which levels each undecided point reads and how many
repetitions they need in all; `run --until-decided` (engine.claim_rounds) repeats them, and
the design check (analysis.claims.design) asks whether those rounds fit the suite's budget.
It lives here, below all three, because neither the engine nor the analysis imports the other.

`claims_round`, pure, picks the next round: the claims more repetitions can decide, cheapest
first, each with every level it still needs, as many as the budget left pays for. Each look
after a round spends alpha (the run's verdicts use alpha / MAX_LOOKS), so the rounds are at
most MAX_LOOKS - 1: a round gives each level its share of the repetitions its claims still
ask for, spread over the rounds left (all of them in the last), not one at a time.
`rounds_room` prices rounds for a plan not yet run: the suite's load budget less the plan's
estimated load, each added repetition at the plan's own estimate of its level's load;
`rounds_time`, the wall time such rounds add to the plan's.
"""

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from stackbench.config.estimate import Timeline
from stackbench.config.plan import LevelKey

# The first reading and at most five added rounds: every verdict of a run --until-decided
# uses alpha / 6 (Bonferroni over its looks), which holds only if it takes no more looks
MAX_LOOKS = 6
MAX_CLAIM_ROUNDS = MAX_LOOKS - 1


@dataclass(frozen=True)
class ToDecide:
    """One undecided point of a claim: the levels it reads and the repetitions each would
    need in all for its interval to clear the claim's bound, if the figure stayed the same.
    `repetitions` None: more repetitions of these levels will not decide it, and `why` says
    why (a figure at the bound, more than 50 repetitions, a standalone timing, a kind of test
    that more levels rather than repetitions decide)."""

    levels: tuple[LevelKey, ...]
    repetitions: int | None
    why: str

    @property
    def repeatable(self) -> bool:
        return self.repetitions is not None and bool(self.levels)


@dataclass(frozen=True)
class UndecidedClaim:
    """A testable claim that reads "not enough evidence", and what would decide each of its
    undecided points."""

    claim: str  # the claim's id
    wants: tuple[ToDecide, ...]


@dataclass(frozen=True)
class ClaimRound:
    """The next round: `levels`, each with the repetitions it adds, for these claims."""

    levels: tuple[tuple[LevelKey, int], ...]
    claims: tuple[str, ...]
    seconds: float

    def added(self) -> dict[LevelKey, int]:
        return dict(self.levels)


@dataclass(frozen=True)
class Stop:
    """Why no round follows."""

    why: str


def claims_round(
    undecided: Sequence[UndecidedClaim],
    have: Mapping[LevelKey, int],
    cost: Callable[[LevelKey], float],
    left_s: float,
    rounds_left: int,
) -> ClaimRound | Stop:
    """The next round of repetitions for the undecided claims, within `left_s` seconds.
    `have`: the repetitions each level has so far; `cost`: one repetition's seconds;
    `rounds_left`: this round and the ones the looks still allow after it.
    A claim is chased when every undecided point of it is one repetitions can decide (a
    claim with a point that none can decide stays undecided whatever the others show); the
    claims that need least are taken first, each with all the levels it still needs: each
    level its share (the repetitions still asked for, over the rounds left, at least one),
    or one repetition where the share does not fit the budget left."""
    if not undecided:
        return Stop("every testable claim is decided")
    needs: dict[str, dict[LevelKey, int]] = {}
    hopeless: list[str] = []
    for claim in undecided:
        blocked = next((w for w in claim.wants if not w.repeatable), None)
        if blocked is not None or not claim.wants:
            why = blocked.why if blocked is not None else "no point says what would decide it"
            hopeless.append(f"{claim.claim} ({why})")
            continue
        short = _shares(claim, have, max(rounds_left, 1))
        if short:
            needs[claim.claim] = short
        else:  # cannot happen from the reading (it asks one more): said, never looped on
            hopeless.append(f"{claim.claim} (its levels have the repetitions it asked for)")
    cannot = (
        f"more measurement cannot decide {len(hopeless)} claim(s): {'; '.join(hopeless)}"
        if hopeless
        else ""
    )
    if not needs:
        return Stop(cannot)
    chosen: dict[LevelKey, int] = {}
    claims: list[str] = []
    used = 0.0

    def price(wanted: Mapping[LevelKey, int]) -> float:
        """What `wanted` adds to the round so far: a level chosen already counts once."""
        return math.fsum(cost(k) * max(0, n - chosen.get(k, 0)) for k, n in wanted.items())

    for name in sorted(needs, key=lambda n: (price(needs[n]), n)):
        for wanted in (needs[name], dict.fromkeys(needs[name], 1)):
            extra = price(wanted)
            if used + extra <= left_s:
                for k, n in wanted.items():
                    chosen[k] = max(chosen.get(k, 0), n)
                claims.append(name)
                used += extra
                break
    if not claims:
        cheapest = min(needs, key=lambda n: (price(dict.fromkeys(needs[n], 1)), n))
        least = price(dict.fromkeys(needs[cheapest], 1))
        return Stop(
            f"the budget left ({left_s:.0f} s) cannot pay for the next round: the cheapest, "
            f"for {cheapest}, would cost about {least:.0f} s ({len(needs[cheapest])} level(s)); "
            f"{len(needs)} claim(s) still undecided" + (f"; {cannot}" if cannot else "")
        )
    return ClaimRound(tuple(chosen.items()), tuple(claims), used)


def _shares(
    claim: UndecidedClaim, have: Mapping[LevelKey, int], rounds: int
) -> dict[LevelKey, int]:
    """Each level the claim still needs, with its share of this round: the repetitions its
    points ask for in all, less those it has, over the rounds left (rounded up)."""
    short: dict[LevelKey, int] = {}
    for want in claim.wants:
        for key in want.levels:
            missing = (want.repetitions or 0) - have.get(key, 0)
            if missing > 0:
                short[key] = max(short.get(key, 0), -(-missing // rounds))
    return short


@dataclass(frozen=True)
class RoundsRoom:
    """What until-decided rounds may spend after a plan, as the run will count it without
    --budget: seconds of load, the suite's load budget less the plan's; one more repetition
    of a level costs its load as the plan estimates it (a level the plan does not run: never
    affordable)."""

    budget_s: float  # the suite's load budget (load_budget_min)
    planned_s: float  # the plan's estimated load
    level_s: Mapping[LevelKey, float]  # one repetition's load, per level of the plan

    @property
    def left_s(self) -> float:
        return max(0.0, self.budget_s - self.planned_s)

    def cost(self, key: LevelKey) -> float:
        return self.level_s.get(key, math.inf)


def rounds_room(timeline: Timeline, load_budget_s: float | None) -> RoundsRoom | None:
    """The room a plan leaves for until-decided rounds; None when its suite states no load
    budget (the rounds then spend what --until-decided or --budget is given, unknown here)."""
    if load_budget_s is None:
        return None
    level_s: dict[LevelKey, float] = {}
    for step in timeline.levels():
        if step.time is None or step.value is None:
            continue  # a rate search's probe: no level of its own to repeat
        key = LevelKey(step.stack, step.label, step.value)
        level_s[key] = max(level_s.get(key, 0.0), step.time.load_s)
    return RoundsRoom(load_budget_s, timeline.load_s, level_s)


def remeasure_room(timeline: Timeline, load_budget_s: float | None) -> float | None:
    """The load disturbed levels may be measured again in (engine/runner.RunSetup): what the
    suite's load budget leaves beyond the plan, as the until-decided rounds count it (None:
    no load budget, no cap)."""
    room = rounds_room(timeline, load_budget_s)
    return None if room is None else room.left_s


def rounds_time(timeline: Timeline, extra: Mapping[LevelKey, int]) -> float:
    """The wall time of until-decided rounds that add `extra` repetitions to the plan's
    levels: each repetition as long as the plan's own level (warm-up, load, the loader's
    start and the pause), and each round a fresh start of every stack it repeats levels of,
    with the verification of each of its cases it repeats (as the plan's own starts cost;
    a round past `repeat` makes no standalone timing). A stack starts as many times as its
    most repeated level."""
    o = timeline.overheads
    wall: dict[LevelKey, float] = {}
    for step in timeline.levels():
        if step.time is not None and step.value is not None:
            key = LevelKey(step.stack, step.label, step.value)
            wall[key] = max(wall.get(key, 0.0), step.seconds)
    starts: dict[str, int] = {}
    cases: dict[str, set[str]] = {}
    for key, n in extra.items():
        starts[key.stack] = max(starts.get(key.stack, 0), n)
        cases.setdefault(key.stack, set()).add(key.label)
    levels = math.fsum(wall.get(key, 0.0) * n for key, n in extra.items())
    return levels + math.fsum(
        n * (o.stack_start_s + o.case_start_s * len(cases[stack])) for stack, n in starts.items()
    )
