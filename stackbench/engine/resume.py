"""`stackbench run --resume N`: continue run N with the plan it was started with.

The plan is the suite text stored with the run plus the run's selection (--stacks,
--workloads). Resuming re-parses the suite file and refuses when its text is no longer the
stored one, showing what changed (the stored text is then the only record of the plan the
levels were measured with). A suite file that is gone is parsed from the stored text.

Cases that finished (ok, failed, unavailable) are kept as they are; each unfinished case runs
again from its first level that is not stored: the strategy replays the stored levels (so an
early stop or a rate search decides exactly as before) and measures the rest.
"""

import difflib
import tempfile
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from stackbench.config.plan import Level
from stackbench.config.suite import Suite
from stackbench.errors import InputError
from stackbench.store.records import LevelRow, RunRow

RESUMABLE = ("interrupted", "failed")
DIFF_LINES_SHOWN = 12


@dataclass(frozen=True)
class Selection:
    """The part of a suite a run covers (empty: all of it)."""

    stacks: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()


def check_resumable(run: RunRow) -> None:
    if run.status == "running":
        raise InputError(
            f"run {run.id} is still running (process {run.owner_pid} on "
            f"{run.owner_host or 'this host'}); wait for it to end or stop it, "
            "then resume it"
        )
    if run.status not in RESUMABLE:
        raise InputError(
            f"run {run.id} is {run.status}: nothing to resume (see 'stackbench results {run.id}')"
        )


def check_same_request(run: RunRow, suite_path: Path | None, selection: Selection) -> None:
    """--resume takes the plan from the run: another suite or selection is refused."""
    if suite_path is not None and suite_path.resolve() != Path(run.suite_path).resolve():
        raise InputError(
            f"--resume {run.id}: run {run.id} ran {run.suite_path}, not "
            f"{suite_path}; give no SUITE (the run's own is used)"
        )
    if selection.stacks or selection.workloads:
        raise InputError(
            f"--resume {run.id}: the run keeps its own selection (--stacks "
            f"{','.join(run.only_stacks) or 'all'}, --workloads "
            f"{','.join(run.only_workloads) or 'all'}); drop --stacks/--workloads"
        )


def suite_changes(
    stored: str, current: str, path: str, max_lines: int = DIFF_LINES_SHOWN
) -> str | None:
    """None when the texts are equal; else a short unified diff (stored -> current)."""
    if stored == current:
        return None
    diff = [
        line
        for line in difflib.unified_diff(
            stored.splitlines(),
            current.splitlines(),
            f"{path} (when the run started)",
            f"{path} (now)",
            lineterm="",
            n=0,
        )
    ]
    shown = diff[:max_lines]
    if len(diff) > max_lines:
        shown.append(f"... ({len(diff) - max_lines} more diff lines)")
    return "\n".join(shown)


def resume_suite(run: RunRow, parse: Callable[[Path], Suite]) -> Suite:
    """The run's suite, parsed again; InputError when the file changed since the run began."""
    path = Path(run.suite_path)
    try:
        current = path.read_text()
    except FileNotFoundError:
        return _parse_stored(run, parse)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--resume {run.id}: cannot read the run's suite {path}: {exc}") from exc
    change = suite_changes(run.suite_text, current, str(path))
    if change is not None:
        raise InputError(
            f"--resume {run.id}: {path} changed since run {run.id} started, so "
            "the remaining levels would not follow the same plan:\n"
            f"{change}\nrestore the file as it was (the lines marked '-') to "
            f"resume run {run.id}, or start a new run"
        )
    return parse(path)


def _parse_stored(run: RunRow, parse: Callable[[Path], Suite]) -> Suite:
    """The suite file is gone: parse the text stored with the run (same file name, so the
    suite keeps its name)."""
    with tempfile.TemporaryDirectory(prefix="stackbench-resume-") as tmp:
        copy = Path(tmp) / Path(run.suite_path).name
        copy.write_text(run.suite_text)
        return parse(copy)


def levels_to_run(
    planned: Sequence[Level], stored: Collection[tuple[int, int]]
) -> tuple[Level, ...]:
    """The planned levels from the first one not stored on ((index, repetition) pairs)."""
    for position, level in enumerate(planned):
        if (level.index, level.repetition) not in stored:
            return tuple(planned[position:])
    return ()


class Replay:
    """The stored levels of one case, handed back instead of measuring them again."""

    def __init__(self, stored: Iterable[LevelRow]) -> None:
        self._by_level = {(lv.level_index, lv.repetition): lv for lv in stored}

    def __len__(self) -> int:
        return len(self._by_level)

    def done(self) -> frozenset[tuple[int, int]]:
        return frozenset(self._by_level)

    def get(self, level: Level) -> LevelRow | None:
        """The stored record of this level, if it was measured at this very value (a rate
        search replays the same rates from the same history)."""
        stored = self._by_level.get((level.index, level.repetition))
        if stored is None or stored.level_value != level.value:
            return None
        return stored
