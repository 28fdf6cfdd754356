"""`stackbench ARGS` run in this process, through the entry point `python -m stackbench` calls
(stackbench.cli.main): its exit code, stdout and stderr, as a subprocess would give them.

A new interpreter spends a second or two importing stackbench before it reads its arguments;
on the 2-core machine that `make test` runs on, beside the builds, that was most of the time
of a test that runs the command line a dozen times. What only a process shows (the
`python -m` entry, a signal's exit code) is still tested with a subprocess."""

import io
import os
from collections.abc import Collection, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from stackbench import cli
from stackbench.report.termtable import make_console


@dataclass(frozen=True)
class Ran:
    """What a finished `stackbench` command left, named as subprocess.CompletedProcess names it."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(
    *args: str, env: Mapping[str, str] | None = None, unset: Collection[str] = ()
) -> Ran:
    """`args` as the command line, with `env` added to the environment and `unset` removed
    from it for the call only. The consoles are made again, inside the capture, as a new
    process makes them at import: from that environment (NO_COLOR, FORCE_COLOR, COLUMNS) and
    writing to a file that is not a terminal (a pipe, in a subprocess)."""
    saved_env = dict(os.environ)
    saved_consoles = (cli.console, cli.err_console)
    out, err = io.StringIO(), io.StringIO()
    try:
        for name in unset:
            os.environ.pop(name, None)
        os.environ.update(env or {})
        with redirect_stdout(out), redirect_stderr(err):
            cli.console, cli.err_console = make_console(), make_console(stderr=True)
            try:
                cli.main(list(args))
                code = 0
            except SystemExit as exc:
                code = _exit_status(exc.code, err)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        cli.console, cli.err_console = saved_consoles
    return Ran(code, out.getvalue(), err.getvalue())


def _exit_status(code: object, err: io.StringIO) -> int:
    """The status the interpreter would exit with for sys.exit(code): None is 0, a number is
    itself, anything else is printed to stderr and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code)
    print(code, file=err)
    return 1
