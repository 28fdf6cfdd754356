"""Error types. Every message names its cause (file, key, flag) and what to do."""


class StackbenchError(Exception):
    """Something went wrong that the user can act on; printed without a traceback."""

    exit_code = 1


class InputError(StackbenchError):
    """Bad input: a suite file, a flag, a manifest. Exit code 2, like a bad command line."""

    exit_code = 2


class StackError(StackbenchError):
    """A stack could not be built, started or stopped."""


class BuildError(StackError):
    """A stack's build command failed."""
