"""Whether a run calibrates the machine before it starts: pure.

An article suite (one with a claims file) decides claims, and a claim decided from one
repetition rests on the machine's run-to-run spread: measured by `stackbench calibrate`, or
else a conservative assumed one that widens every interval. So on a machine not calibrated yet
such a run calibrates first (suites/calibrate.toml, about 2 minutes), unless told not to."""

from dataclasses import dataclass


@dataclass(frozen=True)
class CalibrationChoice:
    run_first: bool
    why: str  # one sentence for the plan ("" when there is nothing to say)


def calibrate_first(
    article_suite: bool,
    calibrated_on: str | None,
    no_calibrate: bool,
    resumed: bool,
    multi_host: bool,
) -> CalibrationChoice:
    """`calibrated_on`: when this machine's latest calibration was made (None: never);
    `resumed`: the run continues a stored one; `multi_host`: the server runs on another host,
    which `calibrate` (this machine's spread) does not measure."""
    if not article_suite:
        return CalibrationChoice(False, "")
    if calibrated_on is not None:
        return CalibrationChoice(
            False, f"calibrated: this machine's spread, measured {calibrated_on}"
        )
    if multi_host:
        return CalibrationChoice(
            False,
            "not calibrated: the server runs on another host, which 'stackbench calibrate' "
            "does not measure; verdicts assume the default spread",
        )
    if resumed:
        return CalibrationChoice(
            False,
            "not calibrated: a resumed run keeps its plan; verdicts assume the default spread "
            "(run 'stackbench calibrate', then 'stackbench report N')",
        )
    if no_calibrate:
        return CalibrationChoice(
            False,
            "not calibrated (--no-calibrate): verdicts assume the default run-to-run spread, "
            "which widens every interval; 'stackbench calibrate' measures it",
        )
    return CalibrationChoice(
        True,
        "this machine is not calibrated: 'stackbench calibrate' runs first and measures its "
        "run-to-run spread, which the claims' verdicts rest on (--no-calibrate skips it)",
    )
