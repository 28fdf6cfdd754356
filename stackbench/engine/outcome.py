"""What a finished run's exit code is, and why: a pure function of the stored run.

    0  every planned case completed: each available stack started, verified and had every
       level measured (levels judged `invalid` — too many errors, unsteady — are measurements,
       not failures; stacks `unavailable` on this machine are reported, not failed)
    4  a stack or service under test failed: a case failed (did not start, did not verify,
       given up after [limits] max_restarts) or a level failed because a stack or service
       process exited (`server-exited`)
    3  no stack failed, but a level failed because the load tool failed (`loader-failed`)
       or the SSH link to one of the run's other hosts dropped (`host-lost`)

When both apply, 4 wins: it is about the stacks under test. An interrupted run exits 128 + the
signal number instead (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), decided by the command.
"""

from dataclasses import dataclass

from stackbench.errors import ExitCode
from stackbench.store.store import RunData


@dataclass(frozen=True)
class RunOutcome:
    exit_code: int
    problems: tuple[str, ...]  # one sentence per cause, empty when the exit code is 0


def run_outcome(data: RunData) -> RunOutcome:
    failed_cases = [c for c in data.cases if c.status == "failed"]
    never_ran = [c for c in data.cases if c.status == "pending"]
    crashed = [
        lv for lv in data.levels if lv.status == "failed" and lv.error_class == "server-exited"
    ]
    loader = [
        lv for lv in data.levels if lv.status == "failed" and lv.error_class == "loader-failed"
    ]
    lost = [lv for lv in data.levels if lv.status == "failed" and lv.error_class == "host-lost"]
    other = [
        lv
        for lv in data.levels
        if lv.status == "failed"
        and lv.error_class not in ("server-exited", "loader-failed", "host-lost")
    ]
    problems: list[str] = []
    if failed_cases:
        stacks = ", ".join(sorted({c.stack for c in failed_cases}))
        problems.append(f"{len(failed_cases)} case(s) failed ({stacks}): see the reasons above")
    if never_ran:
        problems.append(f"{len(never_ran)} case(s) never ran")
    if crashed:
        problems.append(
            f"{len(crashed)} level(s) failed: a stack or service process exited (server-exited)"
        )
    if other:
        problems.append(f"{len(other)} level(s) failed")
    if loader:
        problems.append(f"{len(loader)} level(s) failed: the load tool failed (loader-failed)")
    if lost:
        hosts = sorted({lv.error.split(":")[0] for lv in lost})
        problems.append(
            f"{len(lost)} level(s) failed: a host was lost mid-level (host-lost: "
            f"{'; '.join(hosts)})"
        )
    if failed_cases or never_ran or crashed or other:
        return RunOutcome(ExitCode.STACK_FAILED, tuple(problems))
    if loader or lost:
        return RunOutcome(ExitCode.ENVIRONMENT, tuple(problems))
    return RunOutcome(ExitCode.OK, ())
