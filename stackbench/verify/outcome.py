"""The result of verifying one workload on one stack, shared by every verifier."""

from dataclasses import dataclass


@dataclass(frozen=True)
class VerifyOutcome:
    workload: str
    ok: bool
    failures: tuple[str, ...]
    checked: int
