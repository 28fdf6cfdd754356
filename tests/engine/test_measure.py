"""measure(): the order of the warm-up pass, the monitor and the measured pass."""

from typing import Any

import pytest

from stackbench.config.loadspec import DriverKind, LoadRequest, LoadSettings
from stackbench.engine import measure as measure_module
from stackbench.engine.measure import Target, measure
from stackbench.errors import DriverError


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
    monkeypatch.setattr(measure_module, "Monitor", lambda roles: _Monitor(events))

    def start_load(driver: object, req: object, warm_up_first: bool = True) -> None:
        events.append(f"measured pass (warm-up again: {warm_up_first})")
        raise DriverError("stop here")

    monkeypatch.setattr(measure_module, "start_load", start_load)
    req = LoadRequest("http://127.0.0.1:1/hello", LoadSettings(driver=DriverKind.WRK,
                                                               warmup_s=2), 2, None,
                      frozenset({0}))
    target = Target("http://127.0.0.1:1", {"server": 1}, {}, 1, frozenset({0}))
    with pytest.raises(DriverError, match="stop here"):
        measure(target, req, lambda: [])
    assert events == ["warm-up pass", "monitor started",
                      "measured pass (warm-up again: False)", "monitor stopped"]
