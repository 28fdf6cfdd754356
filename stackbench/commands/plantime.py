"""The plan's time: this machine's earlier levels read from the store, the estimate printed,
with what until-decided rounds are expected to add to it.

The estimate itself is pure (config/estimate.py); this module only gathers what it reads
(the store under --out, the machine's identity, which stacks are not built yet) and words it.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from stackbench.analysis.claims import Readiness
from stackbench.analysis.claims.design import expected_rounds
from stackbench.config.estimate import Timeline
from stackbench.config.todecide import rounds_room, rounds_time
from stackbench.errors import ExitCode
from stackbench.report.termtable import print_wrapped


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


@dataclass(frozen=True)
class RoundsAhead:
    """What `run --until-decided` is expected to add to an article suite's plan: the rounds
    the design check expects its claims to need (design.expected_rounds), and at most what
    the suite's load budget leaves after the plan."""

    rounds: int
    load_s: float  # the expected rounds' load
    seconds: float  # ... and their wall time
    left_s: float  # the load the budget leaves after the plan: the most rounds may spend
    most_s: float  # ... and its wall time: the expected rounds', the rest at the plan's rate


def rounds_ahead(
    timeline: Timeline, readiness: Sequence[Readiness], load_budget_s: float | None
) -> RoundsAhead | None:
    """The until-decided rounds a plan's claims are expected to need, priced as the plan's
    own levels (todecide.rounds_time); None when the suite states no load budget (the rounds
    then spend what the run is given)."""
    room = rounds_room(timeline, load_budget_s)
    if room is None:
        return None
    extra, count = expected_rounds(readiness)
    load = sum(room.cost(key) * n for key, n in extra.items())
    seconds = rounds_time(timeline, extra)
    # the rest of the room at the plan's own wall time per second of load
    per_load = timeline.seconds_of("level") / timeline.load_s if timeline.load_s else 1.0
    most = seconds + max(room.left_s - load, 0.0) * per_load
    return RoundsAhead(count, load, seconds, room.left_s, most)


def time_lines(
    timeline: Timeline,
    not_built: list[str],
    load_budget_s: float | None = None,
    ahead: RoundsAhead | None = None,
) -> list[str]:
    """The plan's time in words: the total, what it is made of (with the suite's load budget
    beside the load, when it states one), what until-decided rounds are expected to add
    (`ahead`: a run with --until-decided), where each request-counted level's rate comes
    from, and what is not counted."""
    levels = timeline.levels()
    sources = timeline.sources()
    budget = (
        ""
        if load_budget_s is None
        else f" (the suite is designed for at most {_minutes(load_budget_s)})"
    )
    parts = [
        f"{len(levels)} load levels, about {_minutes(timeline.total_s)} in all: "
        f"{_minutes(timeline.load_s)} of load{budget}, "
        f"{_minutes(timeline.seconds_of('level') - timeline.load_s)} of warm-ups, pauses "
        f"and the loader's starts, {_minutes(timeline.seconds_of('stack start', 'case start'))} "
        "of stack starts, verification, standalone timings and JIT warm-ups, "
        f"{_minutes(timeline.seconds_of('run start', 'report'))} to start and to write the "
        "report"
        + (
            f", {_minutes(timeline.seconds_of('calibration'))} of calibration first"
            if timeline.seconds_of("calibration")
            else ""
        )
    ]
    if ahead is not None:
        parts.append(until_decided_line(timeline, ahead))
    counted = {k: v for k, v in sources.items() if k != "duration"}
    if counted:
        said = {
            "measured": "from the rate measured here at the same level",
            "nearby": "from the rate measured here at another level of the same case",
            "timeout bound": "at the bound their requests' timeouts set",
            "other stack": "from another stack's rate (a rough guess)",
            "guess": "at a GUESS (never measured here; the ETA corrects it as levels finish)",
        }
        parts.append(
            "levels counted in requests: " + "; ".join(f"{n} {said[k]}" for k, n in counted.items())
        )
    if timeline.borrowed_timings:
        parts.append(
            f"{timeline.borrowed_timings} standalone timings at another stack's timing of the "
            f"same workload here, the slowest (a rough guess): "
            f"{_minutes(timeline.borrowed_timing_s)} of the plan"
        )
    if timeline.guessed_timings:
        parts.append(
            f"{timeline.guessed_timings} standalone timings at a GUESS of "
            f"{timeline.overheads.script_iteration_s * 1000:g} ms an iteration (never timed "
            f"here): {_minutes(timeline.guessed_timing_s)} of the plan, which a workload's "
            "real timing can make several times shorter or longer"
        )
    if not_built:
        parts.append(
            "not built yet (their first build comes on top, from seconds to minutes): "
            + ", ".join(not_built)
        )
    return parts


def until_decided_line(timeline: Timeline, ahead: RoundsAhead) -> str:
    """The plan's total with the until-decided rounds: expected, and at most."""
    total = timeline.total_s - timeline.seconds_of("calibration")
    expected = (
        f"up to {_minutes(total + ahead.seconds)} with the {ahead.rounds} until-decided "
        f"round{'s' if ahead.rounds != 1 else ''} its claims are expected to need "
        f"({_minutes(ahead.load_s)} of load, within the budget)"
        if ahead.rounds
        else "its claims are expected to need no until-decided round"
    )
    return (
        f"with --until-decided: {_minutes(total)} (calibration aside), {expected}; at most "
        f"about {_minutes(total + ahead.most_s)} if the rounds spend all the "
        f"{_minutes(ahead.left_s)} of load the suite's budget leaves after the plan"
    )


def print_time(
    console: Console,
    timeline: Timeline,
    not_built: list[str],
    load_budget_s: float | None = None,
    ahead: RoundsAhead | None = None,
) -> None:
    first, *rest = time_lines(timeline, not_built, load_budget_s, ahead)
    print_wrapped(console, first, indent=2)
    for line in rest:
        print_wrapped(console, line, "  ", indent=4)


def calibrate_before(console: Console, calibrate: Callable[[], int]) -> None:
    """The calibration before an article suite's run; one that fails leaves the verdicts on
    the assumed spread, and the run goes on."""
    console.print(Text("calibration first: stackbench calibrate", style="bold"))
    code = calibrate()
    if code != ExitCode.OK:
        console.print(
            Text.assemble(
                ("calibration failed", "yellow"),
                f" (exit {code}): the run goes on, its verdicts on the assumed spread",
            )
        )
