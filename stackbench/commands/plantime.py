"""The plan's time: this machine's earlier levels read from the store, the estimate printed.

The estimate itself is pure (config/estimate.py); this module only gathers what it reads
(the store under --out, the machine's identity, which stacks are not built yet) and words it.
"""

import datetime
import os
import platform
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

from stackbench.commands.resultsdir import STORE_NAME, results_dir
from stackbench.config.estimate import PastLevel, Timeline, plan_timeline
from stackbench.config.paths import CALIBRATION_SUITE
from stackbench.config.plan import build_plan
from stackbench.config.status import StackEntry
from stackbench.config.suite import parse_suite
from stackbench.errors import ExitCode
from stackbench.lab.environment import cpu_model
from stackbench.report.termtable import print_wrapped
from stackbench.store.records import CalibrationRow, Environment, machine_key
from stackbench.store.store import Store


def this_machine() -> str:
    """This machine as the store names it (records.machine_key of a run's environment)."""
    return machine_key(
        Environment(hostname=platform.uname().node, cpu_model=cpu_model(), cores=os.cpu_count())
    )


def stored_history(
    out: Path | None,
) -> tuple[list[PastLevel], dict[tuple[str, str], float], CalibrationRow | None]:
    """This machine's earlier levels, standalone timings and calibration in the store under
    --out; nothing when there is no store yet (nothing is created)."""
    path = results_dir(out) / STORE_NAME
    if not path.is_file():
        return [], {}, None
    store = Store(path, create=False)
    try:
        machine = this_machine()
        return (
            store.past_levels(machine),
            store.script_iteration_s(machine),
            store.calibration(machine),
        )
    finally:
        store.close()


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def time_lines(timeline: Timeline, not_built: list[str]) -> list[str]:
    """The plan's time in words: the total, what it is made of, where each request-counted
    level's rate comes from, and what is not counted."""
    levels = timeline.levels()
    sources = timeline.sources()
    parts = [
        f"{len(levels)} load levels, about {_minutes(timeline.total_s)} in all: "
        f"{_minutes(timeline.load_s)} of load, "
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
    if not_built:
        parts.append(
            "not built yet (their first build comes on top, from seconds to minutes): "
            + ", ".join(not_built)
        )
    return parts


def print_time(console: Console, timeline: Timeline, not_built: list[str]) -> None:
    first, *rest = time_lines(timeline, not_built)
    print_wrapped(console, first, indent=2)
    for line in rest:
        print_wrapped(console, line, "  ", indent=4)


def calibration_date(calibration: CalibrationRow | None) -> str | None:
    if calibration is None:
        return None
    return datetime.datetime.fromtimestamp(calibration.at, datetime.UTC).strftime("%Y-%m-%d")


def calibration_seconds(inventory: dict[str, StackEntry], history: Sequence[PastLevel]) -> float:
    """How long `stackbench calibrate` takes here: its suite's own estimate."""
    plan = build_plan(parse_suite(CALIBRATION_SUITE), inventory, None, None)
    return plan_timeline(plan, history).total_s


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
