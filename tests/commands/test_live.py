"""The live view of `run`: the line under the progress (where the run is, elapsed, ETA) never
wraps, and the events print as lines, a finished level as its figures under its case."""

import io

from rich.console import Console

from stackbench.commands.live import LiveView, eta_line
from stackbench.config.plan import Level
from stackbench.engine.progress import EtaTracker, Phase, ProgressEvent, Slot
from stackbench.store.records import LevelRow
from tests.engine.test_progress import Clock, done, slots, step
from tests.store.test_store import level


def test_the_live_line_says_where_the_run_is() -> None:
    clock = Clock()
    eta = EtaTracker(slots(), clock)
    eta.seen(step(Phase.START, "building", "go"))
    clock.now += 13
    eta.seen(done("go", 0))
    line = eta_line(eta, "connections").plain
    assert line.startswith("▶ 2/4 go hello c=100 rep 1/1 0:00/0:07")
    assert "elapsed 0:13" in line and "ETA ~0:21" in line
    eta.seen(step(Phase.START, "starting", "node"))
    assert "node: starting" in eta_line(eta, "connections").plain


def test_the_live_line_never_wraps() -> None:
    slot = Slot(
        "php-fpm-nginx-with-a-long-name", "db-html-report?rows=10&sleep_ms=5", 0, 300.0, 0, 3, 20.0
    )
    eta = EtaTracker([slot], Clock())
    wide = eta_line(eta, "connections").plain
    assert len(wide) > 80 and "elapsed" in wide
    narrow = eta_line(eta, "connections", 80).plain
    assert len(narrow) <= 80 and narrow.endswith("ETA ~0:20") and "…" in narrow
    assert eta_line(eta, "connections", 200).plain == wide


def test_events_print_as_lines_and_levels_under_their_case() -> None:
    console = Console(record=True, width=80, file=io.StringIO(), color_system=None)
    view = LiveView(console, "connections", EtaTracker(slots(), Clock()))
    record = level(1, 0)
    row = LevelRow(**{**{f: getattr(record, f) for f in record.__struct_fields__}, "id": 1})
    with view:
        view(step(Phase.START, "starting", "go"))
        for repetition in (0, 1):
            view(ProgressEvent(Phase.LEVEL, "", "go", "hello", Level(0, 25.0, repetition), row))
        view(step(Phase.LOOK, "until decided: the 6 looks are used up"))
    lines = console.export_text().splitlines()
    assert lines[0] == "go: starting"
    assert lines.count("go hello") == 1  # the case named once over its two levels
    assert lines[-1] == "until decided: the 6 looks are used up"
    assert view.tracker.position == 1
