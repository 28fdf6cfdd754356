"""How to call stackbench again in a command the user copies: `stackbench` when that name on
PATH is this very program, else the path this process was started by (after `make setup` the
program is .venv/bin/stackbench, which is not on PATH)."""

import os
import shlex
import shutil
import sys
from pathlib import Path

NAME = "stackbench"


def program(argv0: str | None = None, on_path: str | None = None) -> str:
    """The shell word that runs this stackbench (quoted when it needs to be)."""
    started = argv0 if argv0 is not None else sys.argv[0]
    found = on_path if on_path is not None else shutil.which(NAME)
    if found and _same_file(found, started):
        return NAME
    if Path(started).name != NAME:  # e.g. `python -m stackbench`: no file to point at
        return NAME
    if os.sep not in started:  # a bare name resolved by PATH is that PATH entry
        return NAME
    return shlex.quote(started)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
