"""What `run` shows while it runs: each progress event as a line, each finished level as its
figures, and under them the live line (where the run is, its elapsed time and ETA), redrawn
twice a second; and the stop signals, handled like Ctrl-C.

The events are the engine's (engine/progress.py): this module only renders them and feeds them
to the ETA tracker."""

import signal
from collections.abc import Mapping, Sequence
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from stackbench.config.estimate import PastLevel, Timeline, plan_timeline, setup_key
from stackbench.config.plan import Plan
from stackbench.engine.progress import EtaTracker, Phase, ProgressEvent, plan_slots
from stackbench.report.terminal import level_lines
from stackbench.store.records import LevelRow


class LiveView:
    """The progress sink of a run on the terminal (a context manager: the live line shows
    while it is entered; transient, and silent when not a terminal). Each runner's BEGIN
    gives the tracker its plan's estimate (config/estimate.py, from the levels this machine
    measured before); each level measured here estimates the rest again."""

    def __init__(
        self,
        console: Console,
        level_kind: str,
        tracker: EtaTracker | None = None,
        history: Sequence[PastLevel] = (),
        scripts: Mapping[tuple[str, str], float] | None = None,
    ) -> None:
        self.console = console
        self.tracker = tracker or EtaTracker()
        self.history = list(history)  # this machine's earlier levels, then this run's
        self.scripts = dict(scripts or {})
        self.plan: Plan | None = None
        self.live = Live(
            console=console,
            refresh_per_second=2,
            transient=True,
            get_renderable=lambda: eta_line(self.tracker, level_kind, console.width),
        )
        self.shown_case: tuple[str, str] | None = None  # the case of the last level printed

    def __enter__(self) -> "LiveView":
        self.live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.live.stop()

    def __call__(self, event: ProgressEvent) -> None:
        raise_if_stop_requested()
        self.tracker.seen(event)
        if event.phase is Phase.BEGIN and event.plan is not None:
            self.plan = event.plan
            timeline = self._timeline()
            self.tracker.restart(plan_slots(timeline), timeline.seconds_of("report"))
        elif event.phase is Phase.LEVEL and event.row is not None and event.stack and event.case:
            self._measured(event.stack, event.case, event.row)
            self._print_level(event.stack, event.case, event.row)
        elif event.text:
            self.shown_case = None  # the next level names its case again, under this line
            style = "bold" if event.phase is Phase.LOOK else "dim"
            self.live.console.print(Text(event.describe(), style=style))

    def _timeline(self) -> Timeline:
        assert self.plan is not None
        return plan_timeline(self.plan, self.history, script_iteration_s=self.scripts)

    def _measured(self, stack: str, label: str, row: LevelRow) -> None:
        """A level measured here: the rest estimated again from its rate."""
        if self.plan is None or row.status != "ok" or row.requests_per_s <= 0:
            return
        setup = setup_key(self.plan.suite.load_for(label))
        self.history.append(
            PastLevel(stack, label, setup, row.level_value, row.requests_per_s, row.started_at)
        )
        self.tracker.replan(plan_slots(self._timeline()))

    def _print_level(self, stack: str, label: str, row: LevelRow) -> None:
        out = self.live.console
        case = (stack, label)
        for line in level_lines(stack, label, row, out.width, self.shown_case != case):
            out.print(Text(line), no_wrap=True, overflow="fold")
        self.shown_case = case


def eta_line(tracker: EtaTracker, level_kind: str, width: int | None = None) -> Text:
    """The live line; within `width` (if given) it drops the elapsed time, then cuts what
    runs with an ellipsis: it never wraps."""
    current = tracker.current()
    total = len(tracker.slots)
    head = f"▶ {min(tracker.position + 1, total)}/{total} "
    if current is None:
        what = tracker.phase or "finishing"
    elif tracker.phase:
        what = tracker.phase
    else:
        where = (
            "probe"
            if current.value is None
            else f"rate {current.value:g}/s"
            if level_kind == "rate"
            else f"c={current.value:g}"
        )
        what = (
            f"{current.stack} {current.label} {where} "
            f"rep {current.repetition + 1}/{current.repeat} "
            f"{clock_text(min(tracker.into_s(), current.seconds))}/"
            f"{clock_text(current.seconds)}"
        )
    elapsed = f" · elapsed {clock_text(tracker.elapsed_s())}"
    eta = f" · ETA ~{clock_text(tracker.remaining_s())}"
    if width is not None and len(head + what + elapsed + eta) > width:
        elapsed = ""
        room = width - len(head + eta)
        if len(what) > room:
            what = what[: max(0, room - 1)] + "…"
    line = Text(head, style="bold", no_wrap=True, overflow="ellipsis")
    line.append(what)
    line.append(elapsed + eta, style="cyan")
    return line


def clock_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


# --- stop signals -------------------------------------------------------------------------------
class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled like Ctrl-C: stop everything, keep and report what was
    measured, exit 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# The stop signal received, if any. The handler raises at once, but Python swallows an
# exception raised where it cannot propagate (e.g. inside logging's at-fork hook while a
# server is spawned): the progress sink raises it again from the runner's own frames.
_stop_requested: list[int] = []


def raise_if_stop_requested() -> None:
    if _stop_requested:
        raise Interrupted(_stop_requested.pop())


def stop_signals_as_interrupt() -> None:
    def handler(signum: int, _frame: object) -> None:
        # One orderly stop: a second SIGTERM/SIGHUP must not cut the clean-up short.
        for other in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(other, signal.SIG_IGN)
        _stop_requested.append(signum)
        raise Interrupted(signum)

    # SIGINT too: Python's own KeyboardInterrupt is lost the same way when it lands in the
    # at-fork hook (a load tool being spawned), and the run went on after a Ctrl-C.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


def signal_number(exc: KeyboardInterrupt) -> int:
    _stop_requested.clear()  # it reached the run: nothing left to raise again
    return exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)
