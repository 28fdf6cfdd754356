"""What a run is doing, as a stream of typed events, and how far through its plan it is.

The runner (and `until_decided` between its looks) emits one `ProgressEvent` per step: a stack
starting, a workload verified, a level finished... Each carries its stack, case and level as
fields, so whoever follows the run (the terminal's live view, `EtaTracker`) reads them instead
of parsing the text shown to people.
"""

import enum
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stackbench.config.estimate import Timeline
from stackbench.config.plan import Level, Plan
from stackbench.store.records import LevelRow


class Phase(enum.Enum):
    BEGIN = "begin"  # a runner starts on `plan` (a run, or one more look of --until-decided)
    HOSTS = "hosts"  # the other hosts connected, their agents started
    ROUND = "round"  # a stack's start for the next round of repetitions
    UNAVAILABLE = "unavailable"  # a planned stack that cannot run here
    SERVICES = "services"  # its data services started or reset
    START = "start"  # building, starting, restarting the stack
    VERIFY = "verify"
    SCRIPT = "script"  # the standalone timing of a workload
    WARMUP = "warmup"  # a JIT stack's discarded pass
    NOTE = "note"  # what a case notes: resuming, a sweep stopped early
    FAILED = "failed"  # the stack failed: its unfinished cases fail
    LEVEL = "level"  # a level finished (or was kept from before a resume): `row`
    LOOK = "look"  # run --until-decided: another look at the data, what it repeats
    PROBE = "probe"  # the rate probes start, before the plan is estimated (engine/probe.py)


@dataclass(frozen=True)
class ProgressEvent:
    phase: Phase
    text: str = ""  # what people are told, without the stack's name
    stack: str | None = None  # as the plan names it (None: the run as a whole)
    case: str | None = None  # the workload's label
    level: Level | None = None  # index, value, repetition
    row: LevelRow | None = None  # LEVEL: the stored level
    plan: Plan | None = None  # BEGIN: what this runner executes

    @property
    def repetition(self) -> int | None:
        return None if self.level is None else self.level.repetition

    def describe(self) -> str:
        """The event as one line for people: the stack's name first when it has one."""
        return f"{self.stack}: {self.text}" if self.stack else self.text


ProgressSink = Callable[[ProgressEvent], None]


def ignore_progress(_event: ProgressEvent) -> None:
    return None


@dataclass(frozen=True)
class Slot:
    """One planned load level, in the order the runner executes them."""

    stack: str
    label: str
    index: int | None  # None: a probe of a rate search (its rate is chosen during the run)
    value: float | None
    repetition: int
    repeat: int
    seconds: float  # estimated: warm-up, load, the loader's start and pause
    lead_s: float = 0.0  # estimated: what comes before it (a stack's start, a case's start)


def plan_slots(timeline: Timeline) -> list[Slot]:
    """The timeline's levels, each with the starts that precede it."""
    out = []
    lead = 0.0
    for step in timeline.steps:
        if step.kind in ("calibration", "report"):
            continue  # the calibration has its own live line; the report is the tracker's tail
        if step.kind != "level":
            lead += step.seconds
            continue
        out.append(
            Slot(
                step.stack,
                step.label,
                step.index,
                step.value,
                step.repetition,
                step.repeat,
                step.seconds,
                lead,
            )
        )
        lead = 0.0
    return out


class EtaTracker:
    """Where the run is and how long the estimate says is left, from the runner's events.

    A level is assumed to start at the last event before it. Levels the runner skips (a stack
    that failed, a sweep stopped early) drop out as soon as a later stack or level reports.
    The ETA covers every estimated step (config/estimate.py): starts, levels and the report
    (`tail_s`); `replan` takes the estimates made again from the levels measured so far, and
    `restart` another plan's (each look of --until-decided)."""

    def __init__(
        self,
        slots: Sequence[Slot] = (),
        clock: Callable[[], float] = time.monotonic,
        tail_s: float = 0.0,
    ) -> None:
        self.slots = list(slots)
        self.clock = clock
        self.tail_s = tail_s
        self.position = 0  # index of the next slot to run
        self.started = clock()
        self.since = self.started  # last event: when the current level (probably) began
        self.slot_started = self.started  # the previous level's end: the current lead began
        self.phase = ""  # the last event's line, until a level finishes

    def seen(self, event: ProgressEvent) -> None:
        self.since = self.clock()
        if event.phase is Phase.BEGIN:
            return  # the view restarts the tracker with the plan's estimate
        if event.phase is Phase.LEVEL and event.stack and event.case and event.level:
            self._level_done(event.stack, event.case, event.level)
        else:
            self._step(event)

    def restart(self, slots: Sequence[Slot], tail_s: float) -> None:
        """Another plan's levels (the elapsed time goes on)."""
        self.slots, self.tail_s, self.position, self.phase = list(slots), tail_s, 0, ""
        self.slot_started = self.since = self.clock()

    def replan(self, slots: Sequence[Slot]) -> None:
        """The same levels estimated again (the timeline rebuilt with the measured rates)."""
        if len(slots) == len(self.slots):
            self.slots = list(slots)

    def _find(self, match: Callable[[Slot], bool]) -> int | None:
        return next(
            (i for i in range(self.position, len(self.slots)) if match(self.slots[i])), None
        )

    def _step(self, event: ProgressEvent) -> None:
        self.phase = event.describe()
        current, stack = self.current(), event.stack
        if stack is not None and current is not None and current.stack != stack:
            found = self._find(lambda s: s.stack == stack)
            if found is not None:  # a later stack began: the earlier levels will not run
                self.position = found
                self.slot_started = self.since

    def _level_done(self, stack: str, label: str, level: Level) -> None:
        found = self._find(
            lambda s: (
                s.stack == stack
                and s.label == label
                and (
                    s.index is None or (s.index == level.index and s.repetition == level.repetition)
                )
            )
        )
        if found is not None:
            self.position = found + 1
        self.phase = ""
        self.slot_started = self.since

    def current(self) -> Slot | None:
        return self.slots[self.position] if self.position < len(self.slots) else None

    def into_s(self) -> float:
        """Seconds since the last event: how far into the current level (probably)."""
        return self.clock() - self.since

    def elapsed_s(self) -> float:
        return self.clock() - self.started

    def remaining_s(self) -> float:
        current = self.current()
        into = self.clock() - self.slot_started
        if current is None:  # the levels are done: the report is left
            return max(0.0, self.tail_s - into)
        later = sum(s.lead_s + s.seconds for s in self.slots[self.position + 1 :])
        return max(0.0, current.lead_s + current.seconds - into) + later + self.tail_s
