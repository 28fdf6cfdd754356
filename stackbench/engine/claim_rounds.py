"""`run --until-decided` on an article suite: after the plan, rounds of repetitions of the
levels the still undecided testable claims read, until every claim is decided, the budget
cannot pay for the next round, more measurement cannot decide what is left, or the looks
allowed are used up (MAX_LOOKS - 1 rounds).

Each look asks the claims reading (passed in as `read`: the engine does not import the
analysis) which claims read "not enough evidence" and what would decide each undecided point
(config.todecide: its levels and the repetitions they need in all). `claims_round`, pure
(config.todecide, where the dry run's design check prices the same rounds), picks the next
round: the claims more repetitions can decide, cheapest first, each with every level it
still needs, as many as the budget left pays for. A round gives each chosen level its share
of the repetitions still asked for, each repetition a pass of every stack it repeats on a
fresh start and in shuffled order (until_decided.extension_plan), as the plan's own
repetitions are; the next look reads the run again.

The looks spend alpha: the run's verdicts, claims' intervals included, use alpha / MAX_LOOKS
(analysis.decision_confidence), which holds because the rounds stop at MAX_LOOKS - 1.
The budget is `--budget` less the run's time so far, or without it the suite's
`load_budget_min` less the load the run has measured (then a level costs its load alone).
"""

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stackbench.config.estimate import PastLevel, level_time, rate_for, setup_key
from stackbench.config.plan import LevelKey, Plan
from stackbench.config.todecide import MAX_CLAIM_ROUNDS, Stop, UndecidedClaim, claims_round
from stackbench.engine.progress import Phase, ProgressEvent
from stackbench.engine.runner import RunSetup
from stackbench.engine.until_decided import repeat_once, repetitions_of, rounds_left
from stackbench.store.store import RunData


@dataclass(frozen=True)
class Allowance:
    """What the added rounds may spend: wall seconds (what --budget leaves after the plan),
    or, `load_only`, the suite's load budget, of which the load the run has measured
    (the plan's levels included) is already spent."""

    seconds: float
    load_only: bool = False

    def text(self) -> str:
        return f"{self.seconds / 60:.1f} min" + (" of load" if self.load_only else "")


def load_measured(data: RunData) -> float:
    """Seconds of load the stored run has measured: a superseded measurement (a level
    measured again) counts too, since the allowance paid for it."""
    return sum(row.duration_s for row in (*data.levels, *data.superseded))


@dataclass(frozen=True)
class UntilClaimsDecided:
    allowance: Allowance
    read: Callable[[RunData], Sequence[UndecidedClaim]]  # the run's undecided claims
    machine: str  # this machine as the store names it: its measured rates price the levels


def until_claims_decided(
    plan: Plan,
    setup: RunSetup,
    run_id: int,
    how: UntilClaimsDecided,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Rounds of repetitions for the undecided claims until none is, the allowance cannot
    pay for the next round, or more measurement cannot decide them; each step is told
    through the run's progress events."""
    started = clock()

    def say(text: str) -> None:
        setup.progress(ProgressEvent(Phase.LOOK, f"until decided (claims): {text}"))

    allowed = rounds_left(setup.store.load_run(run_id), MAX_CLAIM_ROUNDS)
    for number in range(1, allowed.rounds + 1):
        data = setup.store.load_run(run_id)
        spent = load_measured(data) if how.allowance.load_only else clock() - started
        history = setup.store.past_levels(how.machine)
        cost = functools.partial(_level_cost, plan, history, how.allowance.load_only)
        left = max(0.0, how.allowance.seconds - spent)
        step = claims_round(
            how.read(data), repetitions_of(data), cost, left, allowed.rounds + 1 - number
        )
        if isinstance(step, Stop):
            say(f"{step.why} (after {number - 1} added round(s))")
            return
        added = step.added()
        say(
            f"round {number}: {sum(added.values())} more repetition(s) of {len(added)} "
            f"level(s) for {', '.join(step.claims)} (about {step.seconds:.0f} s"
            f"{' of load' if how.allowance.load_only else ''})"
        )
        for nth in range(max(added.values())):  # each pass numbers its repetitions anew
            levels = [k for k, n in added.items() if n > nth]
            repeat_once(plan, setup, setup.store.load_run(run_id), levels)
    say(
        f"stopped after {allowed.rounds} added rounds: the looks allowed are used up"
        if allowed.rounds
        else f"no round: {allowed.why}"
    )


def _level_cost(plan: Plan, history: Sequence[PastLevel], load_only: bool, key: LevelKey) -> float:
    """One added repetition's estimated seconds (of load alone, or of wall time), from the
    rates this machine measured."""
    load = plan.suite.load_for(key.label)
    rate = rate_for(history, key.stack, key.label, setup_key(load), key.level_value)
    estimate = level_time(load, key.level_value, rate)
    return estimate.load_s if load_only else estimate.seconds
