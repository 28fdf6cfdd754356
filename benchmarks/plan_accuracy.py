"""How close was the plan's time estimate to what a stored run really took?

For each run given: its plan (the suite text stored with it, the same selection), estimated
(config/estimate.py) from this machine's levels stored *before* that run, which is what a dry
run just before it would have printed; against what the run took, from the store:
- load: the estimate's measured passes against the sum of the levels' load phases;
- run: the estimate less its report step against the run's start to finish (the store does
  not time the report, written after the run is marked finished);
- for a run with --until-decided on an article suite: the estimate with the until-decided
  rounds its claims were expected to need (the dry run's "up to", commands/plantime.py
  `rounds_ahead`, from the design check with the store's earlier runs) against the same.
The standalone timings are estimated from the timings stored before the run, as the levels.
Prints each with the ratio real / estimated and where the request-counted levels' rates came
from. Usage: .venv/bin/python benchmarks/plan_accuracy.py [--out DIR] RUN...
"""

import argparse
import sys
import tempfile
from pathlib import Path

import msgspec

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stackbench.commands.claims import plan_readiness  # noqa: E402
from stackbench.commands.plantime import rounds_ahead  # noqa: E402
from stackbench.commands.resultsdir import STORE_NAME, results_dir  # noqa: E402
from stackbench.config.estimate import Timeline, plan_timeline  # noqa: E402
from stackbench.config.plan import Plan, build_plan  # noqa: E402
from stackbench.config.suite import Suite, parse_suite  # noqa: E402
from stackbench.engine.pastruns import PastRuns  # noqa: E402
from stackbench.lab.inventory import load_inventory  # noqa: E402
from stackbench.lab.stack import planned_params  # noqa: E402
from stackbench.store.records import Environment, RunRow, machine_key  # noqa: E402
from stackbench.store.store import Store  # noqa: E402


def stored_suite(run: RunRow) -> Suite:
    """The suite as the run had it (its stored text, under the file's own name)."""
    with tempfile.TemporaryDirectory(prefix="stackbench-plan-accuracy-") as tmp:
        copy = Path(tmp) / Path(run.suite_path).name
        copy.write_text(run.suite_text)
        return parse_suite(copy)


def timings_before(store: Store, machine: str, run_id: int) -> dict[tuple[str, str], float]:
    """(stack, label) -> seconds per standalone iteration, the latest timed on `machine` in
    a run before `run_id` (what store.script_iteration_s gave a dry run just before it)."""
    rows = store.db.execute(
        "SELECT r.environment, s.stack, s.label, s.wall_s, s.iterations FROM scripts s "
        "JOIN runs r ON s.run_id = r.id WHERE s.wall_s IS NOT NULL AND s.iterations > 0 "
        "AND r.id < ? ORDER BY r.id",
        (run_id,),
    ).fetchall()
    out = {}
    for row in rows:
        if machine_key(msgspec.json.decode(row["environment"], type=Environment)) == machine:
            out[(row["stack"], row["label"])] = row["wall_s"] / row["iterations"]
    return out


def with_rounds(plan: Plan, timeline: Timeline, past: PastRuns) -> float | None:
    """The plan's run time with the until-decided rounds its claims were expected to need,
    as the dry run says it (None: no article, or no load budget)."""
    inventory = load_inventory()
    readiness = plan_readiness(plan, inventory, planned_params(plan, inventory), timeline, past)
    ahead = rounds_ahead(timeline, readiness, plan.suite.load_budget_s)
    if ahead is None:
        return None
    return ahead.seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=int, metavar="RUN")
    parser.add_argument("--out", type=Path, default=None, help="the results directory")
    args = parser.parse_args(argv)
    store = Store(results_dir(args.out) / STORE_NAME, create=False)
    inventory = load_inventory()
    head = ("run", "suite", "load est", "real", "ratio", "run est", "+rounds", "real", "ratio")
    print("{:>4} {:24} {:>9} {:>7} {:>6}   {:>8} {:>8} {:>7} {:>6}   rates".format(*head))
    for run_id in args.runs:
        run = store.run(run_id)
        data = store.load_run(run_id)
        if run.finished_at is None:
            print(f"{run_id:>4} {run.suite_name:24} not finished")
            continue
        plan = build_plan(
            stored_suite(run),
            inventory,
            list(run.only_stacks) or None,
            list(run.only_workloads) or None,
        )
        machine = machine_key(run.environment)
        before = [p for p in store.past_levels(machine) if p.at < run.started_at]
        scripts = timings_before(store, machine, run_id)
        timeline = plan_timeline(plan, before, script_iteration_s=scripts)
        load_real = sum(lv.duration_s for lv in data.levels)
        run_est = timeline.total_s - timeline.seconds_of("report", "calibration")
        run_real = run.finished_at - run.started_at
        rounds = (
            with_rounds(plan, timeline, PastRuns(before, scripts, store.calibration(machine)))
            if run.settings.decision_looks > 1
            else None
        )
        upto = run_est + (rounds or 0.0)
        sources = ", ".join(f"{n} {k}" for k, n in timeline.sources().items())
        if timeline.guessed_timings:
            sources += f"; {timeline.guessed_timings} timings guessed"
        print(
            f"{run_id:>4} {run.suite_name[:24]:24} {timeline.load_s:8.1f}s {load_real:6.1f}s "
            f"{load_real / timeline.load_s:6.2f}   {run_est:7.1f}s "
            f"{(f'{upto:7.1f}s' if rounds is not None else '-'):>8} {run_real:6.1f}s "
            f"{run_real / upto:6.2f}   {sources}"
        )
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
