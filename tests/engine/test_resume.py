"""The resume plan without servers: which levels remain, the replay of stored ones, and the
refusals (a changed suite, another selection, a run that is not resumable)."""

from pathlib import Path

import pytest

from stackbench.config.plan import Level
from stackbench.config.suite import parse_suite
from stackbench.engine.resume import (
    Replay,
    Selection,
    check_resumable,
    check_same_request,
    levels_to_run,
    resume_suite,
    suite_changes,
)
from stackbench.errors import InputError
from stackbench.store.records import RunRow, Superseded
from stackbench.store.store import Store
from tests.store.test_store import case, level, run_record

SUITE = """name = "resume"
stacks = ["node"]
workloads = ["hello"]

[load]
connections = [2, 4, 8]
duration_s = 1
"""
PLANNED = tuple(Level(i, v, rep) for i, v in enumerate((2.0, 4.0, 8.0)) for rep in range(2))


def test_the_levels_left_start_at_the_first_one_not_stored():
    assert levels_to_run(PLANNED, set()) == PLANNED
    assert levels_to_run(PLANNED, {(0, 0), (0, 1), (1, 0)}) == PLANNED[3:]
    assert levels_to_run(PLANNED, {(i, r) for i in range(3) for r in range(2)}) == ()
    # A hole (never in a sweep, but cheap to get right): everything from the hole on.
    assert levels_to_run(PLANNED, {(0, 0), (1, 0)}) == PLANNED[1:]


def stored_levels(*values: tuple[int, float]) -> list:
    store = Store(":memory:")
    cid = store.add_case(case(store.start_run(run_record())))
    for index, value in values:
        store.add_level(level(cid, index, level_value=value))
    return store.load_run(1).levels


def test_replay_hands_back_stored_levels_measured_at_the_same_value():
    replay = Replay(stored_levels((0, 2.0), (1, 40.0)))
    assert len(replay) == 2 and replay.done() == {(0, 0), (1, 0)}
    kept = replay.get(Level(0, 2.0, 0))
    assert kept is not None and kept.level_value == 2.0 and kept.id == 1
    assert replay.get(Level(1, 4.0, 0)) is None  # a search that would probe another rate
    assert replay.get(Level(2, 8.0, 0)) is None


def test_a_superseded_measurement_changes_nothing_a_resume_replays_or_runs():
    """A level's disturbed first measurement, kept superseded, is not a level done: the one
    that replaced it is replayed, and a level whose run stopped before measuring it again
    is measured (as if the superseded record were absent)."""
    store = Store(":memory:")
    cid = store.add_case(case(store.start_run(run_record())))
    disturbed = Superseded(why="other processes used 13.0% of core 0 (server)")
    store.add_level(level(cid, 0, level_value=2.0, requests_per_s=50.0, superseded=disturbed))
    again = store.add_level(level(cid, 0, level_value=2.0))
    store.add_level(level(cid, 1, level_value=4.0, superseded=disturbed))  # then it stopped
    data = store.load_run(1)
    replay = Replay(data.levels_of(cid))
    assert replay.done() == {(0, 0)}
    kept = replay.get(Level(0, 2.0, 0))
    assert kept is not None and kept.id == again and kept.requests_per_s == 200.0
    assert replay.get(Level(1, 4.0, 0)) is None
    planned = (Level(0, 2.0, 0), Level(1, 4.0, 0), Level(2, 8.0, 0))
    assert levels_to_run(planned, replay.done()) == planned[1:]


def test_an_unchanged_suite_has_no_diff_and_a_changed_one_shows_what_changed():
    assert suite_changes(SUITE, SUITE, "s.toml") is None
    diff = suite_changes(SUITE, SUITE.replace("duration_s = 1", "duration_s = 5"), "s.toml")
    assert diff is not None
    assert diff.splitlines() == [
        "--- s.toml (when the run started)",
        "+++ s.toml (now)",
        "@@ -7 +7 @@",
        "-duration_s = 1",
        "+duration_s = 5",
    ]
    long = suite_changes(SUITE, "\n".join(f"x{i} = {i}" for i in range(40)), "s.toml", 6)
    assert long is not None and long.splitlines()[-1].startswith("... (")
    assert len(long.splitlines()) == 7


def stored_run(tmp_path: Path, text: str = SUITE, **extra: object) -> RunRow:
    path = tmp_path / "resume.toml"
    path.write_text(text)
    store = Store(":memory:")
    values: dict[str, object] = dict(suite_path=str(path), suite_text=SUITE, status="interrupted")
    values.update(extra)
    return store.run(store.start_run(run_record(**values)))


def test_the_same_suite_is_parsed_again(tmp_path):
    suite = resume_suite(stored_run(tmp_path), parse_suite)
    assert suite.name == "resume" and suite.levels == (2.0, 4.0, 8.0)


def test_a_changed_suite_is_refused_with_the_diff(tmp_path):
    run = stored_run(tmp_path, SUITE.replace("[2, 4, 8]", "[2, 4, 16]"))
    with pytest.raises(InputError) as refused:
        resume_suite(run, parse_suite)
    message = str(refused.value)
    assert message.startswith(f"--resume 1: {run.suite_path} changed since run 1 started")
    assert "-connections = [2, 4, 8]\n+connections = [2, 4, 16]" in message
    assert message.splitlines()[-1].startswith("restore the file as it was")


def test_a_suite_file_that_is_gone_is_parsed_from_the_stored_text(tmp_path):
    run = stored_run(tmp_path)
    Path(run.suite_path).unlink()
    suite = resume_suite(run, parse_suite)
    assert suite.name == "resume" and suite.raw_text == SUITE


def test_only_interrupted_or_failed_runs_resume(tmp_path):
    for status in ("interrupted", "failed"):
        check_resumable(stored_run(tmp_path, status=status))
    with pytest.raises(InputError, match="run 1 is complete: nothing to resume"):
        check_resumable(stored_run(tmp_path, status="complete"))
    with pytest.raises(InputError, match=r"run 1 is still running \(process 77 on b1\)"):
        check_resumable(stored_run(tmp_path, status="running", owner_pid=77, owner_host="b1"))


def test_resume_keeps_the_run_own_suite_and_selection(tmp_path):
    run = stored_run(tmp_path, only_stacks=("node",))
    check_same_request(run, None, Selection())
    check_same_request(run, Path(run.suite_path), Selection())
    with pytest.raises(InputError, match="ran .*resume.toml, not .*other.toml; give no SUITE"):
        check_same_request(run, tmp_path / "other.toml", Selection())
    with pytest.raises(InputError, match="own selection \\(--stacks node, --workloads all\\)"):
        check_same_request(run, None, Selection(stacks=("go-nethttp",)))
