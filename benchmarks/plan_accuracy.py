"""How close was the plan's time estimate to what a stored run really took?

For each run given: its plan (the suite text stored with it, the same selection), estimated
(config/estimate.py) from this machine's levels stored *before* that run, which is what a dry
run just before it would have printed; against what the run took, from the store:
- load: the estimate's measured passes against the sum of the levels' load phases;
- run: the estimate less its report step against the run's start to finish (the store does
  not time the report, written after the run is marked finished).
Prints each with the ratio real / estimated and where the request-counted levels' rates came
from. Usage: .venv/bin/python benchmarks/plan_accuracy.py [--out DIR] RUN...
"""

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stackbench.commands.resultsdir import STORE_NAME, results_dir  # noqa: E402
from stackbench.config.estimate import plan_timeline  # noqa: E402
from stackbench.config.plan import build_plan  # noqa: E402
from stackbench.config.suite import Suite, parse_suite  # noqa: E402
from stackbench.lab.inventory import load_inventory  # noqa: E402
from stackbench.store.records import RunRow, machine_key  # noqa: E402
from stackbench.store.store import Store  # noqa: E402


def stored_suite(run: RunRow) -> Suite:
    """The suite as the run had it (its stored text, under the file's own name)."""
    with tempfile.TemporaryDirectory(prefix="stackbench-plan-accuracy-") as tmp:
        copy = Path(tmp) / Path(run.suite_path).name
        copy.write_text(run.suite_text)
        return parse_suite(copy)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=int, metavar="RUN")
    parser.add_argument("--out", type=Path, default=None, help="the results directory")
    args = parser.parse_args(argv)
    store = Store(results_dir(args.out) / STORE_NAME, create=False)
    inventory = load_inventory()
    head = ("run", "suite", "load est", "real", "ratio", "run est", "real", "ratio", "rates")
    print("{:>4} {:24} {:>9} {:>7} {:>6}   {:>8} {:>7} {:>6}   {}".format(*head))
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
        timeline = plan_timeline(plan, before)
        load_real = sum(lv.duration_s for lv in data.levels)
        run_est = timeline.total_s - timeline.seconds_of("report", "calibration")
        run_real = run.finished_at - run.started_at
        sources = ", ".join(f"{n} {k}" for k, n in timeline.sources().items())
        print(
            f"{run_id:>4} {run.suite_name[:24]:24} {timeline.load_s:8.1f}s {load_real:6.1f}s "
            f"{load_real / timeline.load_s:6.2f}   {run_est:7.1f}s {run_real:6.1f}s "
            f"{run_real / run_est:6.2f}   {sources}"
        )
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
