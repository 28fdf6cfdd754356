"""measure(): the order of the warm-up pass, the monitor and the measured pass."""

import dataclasses
from typing import Any

import pytest

from stackbench.config.loadspec import DriverKind, LoadRequest, LoadResult, LoadSettings, Mode
from stackbench.config.manifest import Warmup
from stackbench.config.plan import Level
from stackbench.engine import measure as measure_module
from stackbench.engine.judge import LevelFailure, Measurement
from stackbench.engine.measure import Target, jit_warmup_record, jit_warmup_request, measure
from stackbench.errors import DriverError
from tests.measured import second


class _Monitor:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def start(self) -> "_Monitor":
        self.events.append("monitor started")
        return self

    def add_role(self, role: str, pid: int) -> None:
        self.events.append(f"monitor watches {role}")

    def stop(self) -> dict[str, Any]:
        self.events.append("monitor stopped")
        return {}


def test_the_warm_up_pass_runs_before_the_monitor_starts(monkeypatch):
    """wrk/ab warm up in a pass of their own: its server CPU must not count in the level."""
    events: list[str] = []
    monkeypatch.setattr(measure_module, "warm_up", lambda d, r: events.append("warm-up pass"))
    monkeypatch.setattr(measure_module, "Monitor", lambda roles, cpus=frozenset(): _Monitor(events))

    def start_load(
        driver: object, req: object, warm_up_first: bool = True, group: object = None
    ) -> None:
        events.append(f"measured pass (warm-up again: {warm_up_first})")
        raise DriverError("stop here")

    monkeypatch.setattr(measure_module, "start_load", start_load)
    req = LoadRequest(
        "http://127.0.0.1:1/hello",
        LoadSettings(driver=DriverKind.WRK, warmup_s=2),
        2,
        None,
        frozenset({0}),
    )
    target = Target("http://127.0.0.1:1", {"server": 1}, {}, 1, frozenset({0}))
    with pytest.raises(DriverError, match="stop here"):
        measure(target, req, lambda: [])
    assert events == [
        "warm-up pass",
        "monitor started",
        "measured pass (warm-up again: False)",
        "monitor stopped",
    ]


def _measurement(result, failure=None):
    return Measurement(
        result=result,
        usage={},
        mode=Mode.CLOSED,
        connections=50,
        duration_s=15.0,
        server_roles=("server",),
        server_cores=1,
        loader_cores=1,
        failure=failure,
    )


def test_jit_warmup_pass_is_the_first_load_by_duration_and_its_cold_figures():
    warmup = Warmup(seconds=15.0, why="C2")
    settings = LoadSettings(requests_per_connection=100, warmup_s=5.0, duration_s=None)
    target = Target("http://127.0.0.1:1", {"server": 1}, {}, 1, frozenset({0}))
    req = jit_warmup_request(target, "/hello", settings, Level(0, 50, 0), warmup, None)
    assert (req.connections, req.settings.duration_s, req.settings.warmup_s) == (50, 15.0, 0.0)
    assert req.request_count is None and req.url == "http://127.0.0.1:1/hello"

    seconds = (
        second(1, 2400),
        second(2, 30000),
        second(3, 62000),
        second(4, 100, duration_s=0.25, partial=True),
    )  # cut: never used
    result = LoadResult(
        driver=DriverKind.NATIVE,
        command=("x",),
        duration_s=3.25,
        completed=94500,
        ok=94490,
        errors={"status": 10},
        requests_per_s=94500 / 3.25,
        latency_us={},
        timeseries=seconds,
    )
    r = jit_warmup_record(warmup, 50, _measurement(result))
    assert (r.first_second_rps, r.last_second_rps) == (2400.0, 62000.0)
    assert (r.completed, r.errors, r.requests_per_s) == (94500, 10, 94500 / 3.25)
    assert (r.seconds, r.why, r.level_value, r.failure) == (15.0, "C2", 50, "")
    # wrk and ab give no per-second series: no first/last second, the mean only
    wrk_like = dataclasses.replace(result, timeseries=None)
    no_series = jit_warmup_record(warmup, 50, _measurement(wrk_like))
    assert no_series.first_second_rps is None and no_series.last_second_rps is None
    failed = jit_warmup_record(
        warmup,
        50,
        _measurement(None, LevelFailure("server-exited", "server exited with code 1", "")),
    )
    assert failed.completed == 0 and failed.failure == "server exited with code 1"
