"""What a claim's test concludes: its status, our figures, and why."""

import enum
from dataclasses import dataclass

from stackbench.config.claims import Claim, Figure
from stackbench.config.todecide import ToDecide


class ClaimStatus(enum.Enum):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNDECIDED = "not enough evidence"
    UNTESTABLE = "untestable"


@dataclass(frozen=True)
class Measured:
    """One of our figures: a median (or a ratio of medians), with its interval when there is
    one; value None when there is nothing to show (e.g. no breakpoint in the sweep)."""

    label: str
    value: float | None
    unit: str
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    status: ClaimStatus
    expectation: str  # what the test checks, e.g. "≥ 1.00× at every level"
    ours: tuple[Measured, ...]
    why: str
    # Not enough evidence: what would decide each undecided point (run --until-decided)
    to_decide: tuple[ToDecide, ...] = ()
    # What stood in for what (config.claims.StandIn), also said first in `why` ("": nothing)
    stand_in: str = ""

    @property
    def article(self) -> tuple[Figure, ...]:
        return self.claim.figures
