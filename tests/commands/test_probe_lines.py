"""The rate probes as `run` tells them (commands/preflight.py): the announcement before they
run, which also makes a stop signal stop the probe's stack as it does mid-run; each probe's
rate or failure; and, not probed, the estimate's guess said before the plan."""

import io
import signal
from pathlib import Path

import pytest
from rich.console import Console

from stackbench.commands.preflight import print_preflight, probe_lines
from stackbench.config.plan import Level, build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine import preflight as preflight_module
from stackbench.engine.pastruns import PastRuns
from stackbench.engine.preflight import Asked, preflight
from stackbench.engine.progress import Phase, ProgressEvent
from stackbench.store.records import LevelRow
from tests.engine.test_preflight_probes import GUESS_NOTE, SUITE
from tests.store.test_store import level


def _console() -> Console:
    return Console(record=True, width=200, file=io.StringIO(), color_system=None)


def _row(requests_per_s: float, status: str) -> LevelRow:
    record = level(1, 0, requests_per_s=requests_per_s, status=status)
    return LevelRow(**{**{f: getattr(record, f) for f in record.__struct_fields__}, "id": 1})


def test_the_announcement_arms_the_stop_signals_and_each_probe_prints_its_rate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed: dict[int, object] = {}
    monkeypatch.setattr(signal, "signal", lambda num, handler: installed.__setitem__(num, handler))
    console = _console()
    tell = probe_lines(console)
    tell(ProgressEvent(Phase.BEGIN))
    tell(ProgressEvent(Phase.START, "starting", "refserver"))
    assert installed == {}  # only the probes' announcement arms them
    tell(ProgressEvent(Phase.PROBE, "probing 2 rate(s) this machine never measured"))
    assert set(installed) == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    tell(ProgressEvent(Phase.LEVEL, "", "refserver", "hello", Level(0, 4, 0), _row(1234.4, "ok")))
    slow = _row(0.0, "failed")
    tell(ProgressEvent(Phase.LEVEL, "", "refserver", "hello", Level(1, 32, 0), slow))
    tell(ProgressEvent(Phase.FAILED, "FAILED: did not start", "refjit"))
    assert console.export_text().splitlines() == [
        "probing 2 rate(s) this machine never measured",
        "  probe refserver hello @4: 1,234 req/s",
        "  probe refserver hello @32: no rate (failed); the estimate keeps its guess",
        "  probe refjit: FAILED: did not start",
    ]


def test_not_probed_the_estimates_guess_is_said_before_the_plan(
    tmp_path: Path, fake_inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preflight_module, "busy_machine", lambda suite, read_steal: [])
    path = tmp_path / "s.toml"
    path.write_text(SUITE)
    plan = build_plan(parse_suite(path), fake_inventory, None, None)
    checks = preflight(
        plan, fake_inventory, None, lambda p, params, timeline: None, PastRuns(), Asked()
    )
    console = _console()
    print_preflight(console, checks)
    lines = console.export_text().splitlines()
    plan_starts = next(i for i, line in enumerate(lines) if line.startswith("suite t ("))
    assert " ".join(" ".join(lines[:plan_starts]).split()) == f"estimate: {GUESS_NOTE}"
