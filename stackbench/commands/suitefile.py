"""A SUITE argument that names no file: 'did you mean suites/quick.toml?'.

Suites are files (`stackbench run suites/quick.toml`); a newcomer types `stackbench run quick`.
That is not guessed into a path (a run measures for minutes: it must run what was asked),
but refused at once with the closest suite file named, exit 2 (errors.InputError).
"""

import difflib
import os
from pathlib import Path

from stackbench.config.paths import SUITES_DIR
from stackbench.errors import InputError


def suite_files(folder: Path = SUITES_DIR) -> list[Path]:
    """The suites shipped with stackbench (suites/*.toml; claims/ holds no suite)."""
    return sorted(folder.glob("*.toml"))


def shown(path: Path) -> str:
    """A path as the user would type it from here: relative when below the current folder."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def closest_suite(name: str, folder: Path = SUITES_DIR) -> Path | None:
    """The suite file `name` most likely meant: same stem, else the nearest spelling."""
    stem = Path(name).name.removesuffix(".toml")
    files = {p.stem: p for p in suite_files(folder)}
    if stem in files:
        return files[stem]
    match = difflib.get_close_matches(stem, list(files), n=1, cutoff=0.6)
    return files[match[0]] if match else None


def existing_suite(path: Path | None, folder: Path = SUITES_DIR) -> Path | None:
    """`path` if it names a file (or None: the command's default suite); else bad input
    naming the closest suite file."""
    if path is None or path.exists():
        return path
    guess = closest_suite(str(path), folder)
    hint = (
        f"did you mean {shown(guess)}?"
        if guess is not None
        else f"the suites shipped are in {shown(folder)}/: "
        + ", ".join(p.name for p in suite_files(folder))
    )
    raise InputError(
        f"{path}: cannot read the suite file: no such file; {hint} (SUITE is "
        "the path of a suite file)"
    )
