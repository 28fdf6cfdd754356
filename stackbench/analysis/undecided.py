"""`run --until-decided`: which levels to repeat next, and in what order. Pure functions.

A ranking's undecided verdict (best against a stack, or a stack against the one ranked above
it) names two levels; repeating both moves the comparison from one repetition a side (where the
run-to-run spread dominates) to repetitions, the unit that decides. Each level gets a priority
of the undecided comparisons it takes part in per second of load it costs, and a round takes
the levels in that order while the budget lasts (engine/until_decided.py schedules them).
Comparisons that no practical amount of measurement can decide (a ratio sitting at the
threshold, or more repetitions than the verdict procedure advises) are left out, and said.

The repeated looks spend alpha: a run with --until-decided records the most looks it may take
(`decision_looks`) and every verdict of the run uses alpha / looks (analysis.decision_confidence,
Bonferroni over looks), so the chance of any false winner over all the looks stays at alpha.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from stackbench.analysis.analysis import Analysis
from stackbench.analysis.verdicts import Outcome, Verdict
from stackbench.config.plan import LevelKey


@dataclass(frozen=True)
class Undecided:
    """The undecided verdicts of a run's rankings."""

    decidable: dict[LevelKey, int]  # level -> how many decidable comparisons it is in
    hopeless: int  # undecided comparisons more measurement will not decide

    @property
    def done(self) -> bool:
        return not self.decidable


def undecided(a: Analysis) -> Undecided:
    decidable: dict[LevelKey, int] = {}
    hopeless = 0
    for label, level_value, this, other, verdict in _verdicts(a):
        if verdict.outcome is not Outcome.UNDECIDED:
            continue
        if verdict.repetitions_needed is None:
            hopeless += 1
            continue
        for stack in (this, other):
            key = LevelKey(stack, label, level_value)
            decidable[key] = decidable.get(key, 0) + 1
    return Undecided(decidable, hopeless)


def _verdicts(a: Analysis) -> Iterator[tuple[str, float, str, str, Verdict]]:
    for w in a.workloads:
        for r in w.rankings:
            for i, e in enumerate(r.entries):
                if e.vs_best is not None:
                    yield w.label, r.level_value, e.stack, r.entries[0].stack, e.vs_best
                if e.vs_above is not None:
                    yield w.label, r.level_value, e.stack, r.entries[i - 1].stack, e.vs_above
