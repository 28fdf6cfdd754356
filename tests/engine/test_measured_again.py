"""The runner's disturbed level, without servers (fakes for the stack and its measurements, a
real store): its first measurement is stored superseded, with the judge's sentence, before the
level is measured again once after waiting for quiet; the second stands and is linked as its
replacement; only the standing one is reported as the level's record."""

import dataclasses
from contextlib import ExitStack
from types import SimpleNamespace
from typing import Any

import pytest

from stackbench.config.loadspec import LoadSettings
from stackbench.config.plan import Level
from stackbench.engine import runner as runner_module
from stackbench.engine.judge import Measurement
from stackbench.engine.measure import Target
from stackbench.engine.progress import Phase, ProgressEvent
from stackbench.engine.resume import Replay
from stackbench.engine.runner import _CaseState, _Live, _StackRun
from stackbench.store.records import LevelFlag, Superseded, has_flag
from stackbench.store.store import Store
from tests.engine.test_judge import accounted, cores, measured, result
from tests.store.test_store import case, run_record

LEVEL = Level(0, 25.0, 0)
CASE: Any = SimpleNamespace(
    spec=SimpleNamespace(
        name="hello", label="hello", path="/hello", workload=SimpleNamespace(endpoint=None)
    )
)
SAID = "other processes used 13.0% of core 0 (server), more than the 2% noise band allows"


def measurement(completed: int, other_s: float) -> Measurement:
    """A 5-s level of `completed` answers; `other_s` of the server core's 10 s used by others."""
    account = accounted(cores(("server",), other_s), cores(("loader",), 0.0))
    return dataclasses.replace(measured(result(completed)), account=account)


class Fixture:
    """A stack run of one stack whose levels measure the given measurements in turn."""

    def __init__(
        self, measurements: list[Measurement], quiet: bool, room: float | None = None
    ) -> None:
        self.store = Store(":memory:")
        self.case_id = self.store.add_case(case(self.store.start_run(run_record())))
        self.events: list[ProgressEvent] = []
        self.waits: list[tuple[frozenset[int], float]] = []
        self.pending = iter(measurements)
        self.quiet = quiet
        run = _StackRun.__new__(_StackRun)
        run.runner = SimpleNamespace(
            store=self.store,
            suite=SimpleNamespace(
                load_for=lambda label: LoadSettings(duration_s=2.0, pause_s=0.0),
                max_error_rate=0.01,
                level_kind="connections",
            ),
            emit=self.events.append,
            setup=SimpleNamespace(settle=None, remeasure_s=room),
            measured_again_s=0.0,
        )
        run.planned = SimpleNamespace(name="go")
        run.notes = []
        run._live = _Live(
            started=ExitStack(),
            target=Target(
                "http://127.0.0.1:9", {"server": 1}, {}, 1, frozenset({1}), frozenset({0})
            ),
            exits=lambda: [],
            verify=lambda workload: pytest.fail("not verified here"),
            measure=lambda req: next(self.pending),
            jit_warmup=None,
            access=None,
        )
        self.run = run

    def wait(self, cpus: frozenset[int], limit_s: float, share: float) -> bool:
        self.waits.append((frozenset(cpus), limit_s))
        return self.quiet

    def level(self, monkeypatch: pytest.MonkeyPatch, level: Level = LEVEL) -> Any:
        monkeypatch.setattr(runner_module, "wait_for_quiet", self.wait)
        state = _CaseState(self.case_id, "pending", Replay(()), 0)
        return self.run._level(CASE, state, None, level)


def test_a_disturbed_first_measurement_is_kept_superseded_by_the_one_measured_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    f = Fixture([measurement(500, 1.3), measurement(1000, 0.0)], quiet=True)
    returned = f.level(monkeypatch)
    data = f.store.load_run(1)
    (standing,) = data.levels
    (first,) = data.superseded
    assert returned.requests_per_s == standing.requests_per_s == 200.0
    assert first.requests_per_s == 100.0 and first.started_at <= standing.started_at
    assert has_flag(first.flags, LevelFlag.DISTURBED)
    assert not has_flag(standing.flags, LevelFlag.DISTURBED)
    # the judge's sentence without its advice to repeat the level, which is being followed
    assert first.superseded == Superseded(why=SAID, by=standing.id)
    assert f.waits == [(frozenset({0, 1}), 2.0)]  # the level's 2 s, under the 10-s bound
    assert [e.row for e in f.events if e.phase is Phase.LEVEL] == [standing]
    (note,) = [e.text for e in f.events if e.phase is Phase.NOTE]
    assert note.startswith(f"hello at 25: disturbed ({SAID}") and "(100 req/s) is kept" in note
    assert f.run.notes == []  # a machine found quiet: nothing for the case's note


def test_a_level_still_disturbed_is_measured_again_only_once_and_stands_flagged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    f = Fixture([measurement(500, 1.3), measurement(600, 1.3), measurement(1000, 0.0)], False)
    f.level(monkeypatch)
    data = f.store.load_run(1)
    (standing,) = data.levels
    (first,) = data.superseded
    assert standing.requests_per_s == 120.0 and has_flag(standing.flags, LevelFlag.DISTURBED)
    assert first.superseded is not None and first.superseded.by == standing.id
    assert next(f.pending).result is not None  # the third was never measured
    assert f.run.notes == [
        "hello at 25: measured again although the machine was not quiet after 2 s"
    ]


def test_a_clean_level_is_measured_once_and_supersedes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    f = Fixture([measurement(1000, 0.0)], quiet=True)
    f.level(monkeypatch)
    data = f.store.load_run(1)
    assert len(data.levels) == 1 and data.superseded == [] and f.waits == []


def test_a_disturbed_level_is_measured_again_only_within_the_budgets_room_beyond_the_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With 7 s of load left beyond the plan, the first disturbed 5-s level is measured again
    (5 s spent), the second is not (10 s would pass 7): it stands, flagged, and the case says
    why."""
    disturbed = [measurement(500, 1.3), measurement(1000, 0.0), measurement(600, 1.3)]
    f = Fixture([*disturbed, measurement(1000, 0.0)], quiet=True, room=7.0)
    f.level(monkeypatch)
    second = f.level(monkeypatch, Level(1, 50.0, 0))
    data = f.store.load_run(1)
    assert len(data.superseded) == 1 and f.run.runner.measured_again_s == 5.0
    assert second.requests_per_s == 120.0 and has_flag(second.flags, LevelFlag.DISTURBED)
    assert next(f.pending).result is not None  # the fourth was never measured
    assert f.run.notes == [
        "hello at 50: disturbed, and not measured again: the 7 s of load the suite's "
        "budget leaves beyond its plan went to levels measured again before (5 s)"
    ]


def test_without_a_load_budget_every_disturbed_level_is_measured_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    f = Fixture([measurement(500, 1.3), measurement(1000, 0.0)] * 2, quiet=True, room=None)
    f.level(monkeypatch)
    f.level(monkeypatch, Level(1, 50.0, 0))
    assert len(f.store.load_run(1).superseded) == 2 and f.run.notes == []
