"""The plan's time: this machine's earlier levels read from the store, the estimate printed.

The estimate itself is pure (config/estimate.py); this module only gathers what it reads
(the store under --out, the machine's identity, which stacks are not built yet) and words it.
"""

from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from stackbench.config.estimate import Timeline
from stackbench.errors import ExitCode
from stackbench.report.termtable import print_wrapped


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def time_lines(
    timeline: Timeline, not_built: list[str], load_budget_s: float | None = None
) -> list[str]:
    """The plan's time in words: the total, what it is made of (with the suite's load budget
    beside the load, when it states one), where each request-counted level's rate comes from,
    and what is not counted."""
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
    if timeline.guessed_timings:
        parts.append(
            f"{timeline.guessed_timings} standalone timings at a GUESS of "
            f"{timeline.overheads.script_iteration_s * 1000:g} ms an iteration (never timed here)"
        )
    if not_built:
        parts.append(
            "not built yet (their first build comes on top, from seconds to minutes): "
            + ", ".join(not_built)
        )
    return parts


def print_time(
    console: Console, timeline: Timeline, not_built: list[str], load_budget_s: float | None = None
) -> None:
    first, *rest = time_lines(timeline, not_built, load_budget_s)
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
