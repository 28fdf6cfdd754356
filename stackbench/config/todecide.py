"""What would decide an article's undecided claim, as a record both sides read: the claims
reading (analysis.claims) says which levels each undecided point reads and how many
repetitions they need in all; `run --until-decided` (engine.claim_rounds) repeats them.
It lives here, below both, because the engine does not import the analysis."""

from dataclasses import dataclass

from stackbench.config.plan import LevelKey


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
