"""`run --until-decided`: which levels' comparisons are undecided, and which of them more
measurement can decide. Pure functions; engine/until_decided.py schedules the repetitions.

A ranking's undecided verdict (best against a stack, or a stack against the one ranked above
it) names two levels; repeating both moves the comparison from one repetition a side (where the
run-to-run spread dominates) to repetitions, the unit that decides. A comparison is decidable:
- when the verdict procedure names the repetitions a side that would decide it;
- when a side has no evidence yet (one repetition whose series is too short or too unsteady
  for a steady window): another repetition gives it evidence (repetitions make an interval),
  whatever the ratio.
Comparisons that no practical amount of measurement can decide (a ratio sitting at the
threshold, more repetitions than the verdict procedure advises, a level set aside as
disturbed) are left out, and counted.

The repeated looks spend alpha: a run with --until-decided records the most looks it may take
(`decision_looks`) and every verdict of the run uses alpha / looks (analysis.decision_confidence,
Bonferroni over looks), so the chance of any false winner over all the looks stays at alpha.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from stackbench.analysis.analysis import Analysis
from stackbench.analysis.stats import Estimate
from stackbench.analysis.verdicts import Outcome, Verdict
from stackbench.config.plan import LevelKey

Sides = tuple[tuple[str, Estimate], ...]  # (stack, its throughput): this stack, the other


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
    for label, level_value, sides, verdict in _verdicts(a):
        if verdict.outcome is not Outcome.UNDECIDED:
            continue
        if verdict.repetitions_needed is None and not _lacks_evidence(verdict, sides):
            hopeless += 1
            continue
        for stack, _ in sides:
            key = LevelKey(stack, label, level_value)
            decidable[key] = decidable.get(key, 0) + 1
    return Undecided(decidable, hopeless)


def _lacks_evidence(verdict: Verdict, sides: Sides) -> bool:
    """No interval because a side has no evidence yet (not because a level was disturbed):
    a repetition is what gives it some."""
    if verdict.se is not None:
        return False
    figures = [estimate for _, estimate in sides]
    return any(e.evidence is None for e in figures) and all(e.caveat is None for e in figures)


def _verdicts(a: Analysis) -> Iterator[tuple[str, float, Sides, Verdict]]:
    for w in a.workloads:
        for r in w.rankings:
            for i, e in enumerate(r.entries):
                this = (e.stack, e.throughput)
                if e.vs_best is not None:
                    best = r.entries[0]
                    yield w.label, r.level_value, (this, (best.stack, best.throughput)), e.vs_best
                if e.vs_above is not None:
                    above = r.entries[i - 1]
                    yield (
                        w.label,
                        r.level_value,
                        (this, (above.stack, above.throughput)),
                        e.vs_above,
                    )
