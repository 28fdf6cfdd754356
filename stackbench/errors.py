"""The one error hierarchy. Every error stackbench raises derives from `StackbenchError`.

Each class carries the exit code the command line returns for it (the table in the README,
"Exit codes"). Every message names its cause (file, key, flag) and what to do; the command
line prints it in one line without a traceback (`--debug` shows the traceback).
"""

from typing import ClassVar


class ExitCode:
    """Documented exit codes of every command."""

    OK = 0
    RULE_BROKEN = 1  # a rule the user set was broken (reserved for SLO / compare gates)
    BAD_INPUT = 2  # a suite, manifest, flag or argument is wrong
    ENVIRONMENT = 3  # this machine lacks a tool, a permission or a resource
    STACK_FAILED = 4  # a stack or service under test failed (build, start, verify, crash)
    # `compare`: the two runs have no (stack, workload, level) case in common with a valid
    # figure on both sides, so there is nothing to judge (not "no regression").
    NOT_COMPARABLE = 5
    # `compare` with a gate: some gated case is neither shown to regress beyond the limit nor
    # shown not to (not enough evidence either way); the output says what would decide it.
    UNDECIDED = 6
    INTERNAL = 70  # a bug in stackbench (EX_SOFTWARE); --debug shows the traceback
    INTERRUPTED = 130  # Ctrl-C (SIGINT); SIGTERM/SIGHUP give 128 + signal number


class StackbenchError(Exception):
    """Something went wrong that the user can act on; printed without a traceback."""

    exit_code: ClassVar[int] = ExitCode.RULE_BROKEN


class InputError(StackbenchError):
    """Bad input: a suite file, a flag, a manifest, a stored run that does not exist."""

    exit_code = ExitCode.BAD_INPUT


class EnvironmentProblem(StackbenchError):
    """The machine lacks something: a tool, a permission, disk space, a free port."""

    exit_code = ExitCode.ENVIRONMENT


class DriverError(EnvironmentProblem):
    """The load tool could not run at all (not: the server had errors — those are data)."""


class StackError(StackbenchError):
    """A stack under test could not be built, started, verified or stopped."""

    exit_code = ExitCode.STACK_FAILED


class BuildError(StackError):
    """A stack's build command failed."""


class ServiceError(StackError):
    """A data service (MariaDB, Redis, memcached) could not be started, reached or stopped."""


class VerifyAbort(StackError):
    """A verifier cannot go on (the stack answered nonsense); the verification fails."""


class HostLost(StackbenchError):
    """The channel to a remote host's agent died (end of file, broken pipe, no answer in
    time): what ran there is lost. Exits like a failed stack or level (a multi-host level
    whose host drops fails with class `host-lost`)."""

    exit_code = ExitCode.STACK_FAILED

    def __init__(self, host: str, what: str) -> None:
        super().__init__(f"host {host} lost: {what}")
        self.host = host
        self.what = what
