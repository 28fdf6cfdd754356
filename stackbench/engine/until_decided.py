"""`run --until-decided`: after the plan, repeat the levels of undecided comparisons until none
is left, the budget is spent or the looks are used up.

Each look asks the analysis (passed in as `judge`: the engine does not import it) which levels
take part in comparisons that more measurement can decide, schedules as many as the budget left
allows (most decisions per second of load first, `next_round`), and runs one more repetition of
each (`extension_plan`: one round, every stack on a fresh start) into the same stored run, as a
resume does. The looks spend alpha: the run records how many it may take (`MAX_LOOKS`, see
analysis/undecided.py) and its verdicts use alpha / looks.
"""

import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from stackbench.config.estimate import PastLevel, level_time, rate_for, setup_key
from stackbench.config.plan import Level, LevelKey, Plan, Round
from stackbench.config.todecide import MAX_LOOKS
from stackbench.engine.progress import Phase, ProgressEvent
from stackbench.engine.runner import Runner, RunSetup
from stackbench.store.store import RunData


class Standing(Protocol):
    """What the analysis says of a run's comparisons (analysis.undecided.Undecided)."""

    @property
    def decidable(self) -> Mapping[LevelKey, int]:
        """Each level in undecided comparisons more measurement can decide: how many."""
        ...

    @property
    def hopeless(self) -> int:
        """Undecided comparisons more measurement will not decide."""
        ...


@dataclass(frozen=True)
class UntilDecided:
    budget_s: float  # the most the added rounds may take (what run --budget leaves)
    judge: Callable[[RunData], Standing]  # the stored run's undecided comparisons
    machine: str  # this machine as the store names it: its measured rates price the levels
    looks: int = MAX_LOOKS


def until_decided(
    plan: Plan,
    setup: RunSetup,
    run_id: int,
    how: UntilDecided,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Add rounds of the levels whose comparisons are undecided until none is, the budget is
    spent or the looks are used up; every step is told through the run's progress events."""
    started = clock()

    def say(text: str) -> None:
        setup.progress(ProgressEvent(Phase.LOOK, f"until decided: {text}"))

    allowed = rounds_left(setup.store.load_run(run_id), how.looks - 1)
    first = how.looks - allowed.rounds + 1
    for look in range(first, how.looks + 1):
        data = setup.store.load_run(run_id)
        found = how.judge(data)
        if not found.decidable:
            say("every comparison that measurement can decide is decided" + _hopeless(found))
            return
        remaining = how.budget_s - (clock() - started)
        cost = functools.partial(level_seconds, plan, setup.store.past_levels(how.machine))
        chosen = next_round(found, cost, remaining)
        if not chosen:
            say(
                f"the budget ({round(how.budget_s / 60, 1):g} min) is spent; "
                f"{len(found.decidable)} level(s) still in undecided comparisons" + _hopeless(found)
            )
            return
        seconds = sum(map(cost, chosen))
        say(
            f"look {look} of {how.looks}: repeating {len(chosen)} level(s) of undecided "
            f"comparisons (about {seconds:.0f} s of load)"
        )
        repeat_once(plan, setup, data, chosen)
    say(allowed.why if not allowed.rounds else f"the {how.looks} looks are used up")


def repeat_once(plan: Plan, setup: RunSetup, data: RunData, levels: Sequence[LevelKey]) -> None:
    """One more repetition of each of `levels` into the stored run `data` (as loaded just
    before): their cases pending again, then one round on fresh starts (extension_plan)."""
    for case in data.cases:
        if any(k.stack == case.stack and k.label == case.label for k in levels):
            setup.store.set_case_status(case.id, "pending", case.reason)
    Runner(extension_plan(plan, data, levels), setup, resume=data.run.id).execute()


def repetitions_of(data: RunData) -> dict[LevelKey, int]:
    """How many repetitions each level of the stored run has."""
    cases = {c.id: (c.stack, c.label) for c in data.cases}
    seen: dict[LevelKey, set[int]] = {}
    for row in data.levels:
        stack, label = cases[row.case_id]
        seen.setdefault(LevelKey(stack, label, row.level_value), set()).add(row.repetition)
    return {k: len(v) for k, v in seen.items()}


@dataclass(frozen=True)
class RoundsLeft:
    """The rounds a stored run may still add, and why no more."""

    rounds: int
    why: str


def rounds_left(data: RunData, most: int) -> RoundsLeft:
    """The run's verdicts spend alpha over the `decision_looks` it recorded when it started
    (the first reading and one after each round), so it adds at most decision_looks - 1
    rounds in all, and at most `most`. A resumed run may have added some before it stopped:
    every repetition past the plan's `repeat` counts as a round (each round adds at least
    one), a bound that errs towards fewer rounds, never more looks than the verdicts pay for."""
    looks = data.run.settings.decision_looks
    repeat = data.run.settings.repeat
    taken = sum(max(0, n - repeat) for n in repetitions_of(data).values())
    left = max(0, min(most, looks - 1 - taken))
    if looks <= 1:
        why = (
            f"run {data.run.id} was started without --until-decided: its verdicts spend alpha "
            "on one look, so a round would add a look they do not pay for; start the run "
            "with --until-decided"
        )
    elif taken:
        why = (
            f"the run's verdicts pay for {looks} looks and it may have taken {1 + taken} "
            f"({taken} repetition(s) past its plan's {repeat}, each counted as a round)"
        )
    else:
        why = f"the {looks} looks the run's verdicts pay for are used up"
    return RoundsLeft(left, why)


def _hopeless(found: Standing) -> str:
    return (
        f"; {found.hopeless} comparison(s) that more measurement will not decide (a ratio "
        "at the threshold, more repetitions than advised, a disturbed or a loader-bound level)"
        if found.hopeless
        else ""
    )


def level_seconds(plan: Plan, history: Sequence[PastLevel], key: LevelKey) -> float:
    """One added level's estimated wall time, from the rates measured so far."""
    load = plan.suite.load_for(key.label)
    rate = rate_for(history, key.stack, key.label, setup_key(load), key.level_value)
    return level_time(load, key.level_value, rate).seconds


def next_round(
    found: Standing, seconds: Callable[[LevelKey], float], budget_s: float
) -> list[LevelKey]:
    """The levels to repeat next, most decisions per second first, as many as fit."""
    pending = found.decidable
    ranked = sorted(pending, key=lambda k: (-pending[k] / seconds(k), k))
    chosen: list[LevelKey] = []
    used = 0.0
    for key in ranked:
        if used + seconds(key) <= budget_s:
            chosen.append(key)
            used += seconds(key)
    return chosen


def extension_plan(plan: Plan, data: RunData, chosen: Sequence[LevelKey]) -> Plan:
    """One more repetition of each chosen level, in one round on fresh starts."""
    cases = {(c.stack, c.label): c.id for c in data.cases}
    stacks = []
    for st in plan.stacks:
        picked = []
        for case in st.cases:
            case_id = cases.get((st.name, case.spec.label))
            levels = tuple(
                Level(lv.index, lv.value, 1 + _last_repetition(data, case_id, lv.index))
                for lv in dict((lv.index, lv) for lv in case.levels).values()
                if LevelKey(st.name, case.spec.label, lv.value) in chosen
            )
            if levels:
                picked.append(replace(case, levels=levels))
        if picked:
            stacks.append(replace(st, cases=tuple(picked)))
    order = list(stacks)
    random.Random(f"{plan.suite.name}:{data.run.id}:{len(data.levels)}").shuffle(order)
    return Plan(plan.suite, tuple(stacks), (Round(None, tuple(order)),))


def _last_repetition(data: RunData, case_id: int | None, index: int) -> int:
    """The highest repetition stored of a case's level (-1: none)."""
    return max(
        (r.repetition for r in data.levels if r.case_id == case_id and r.level_index == index),
        default=-1,
    )
