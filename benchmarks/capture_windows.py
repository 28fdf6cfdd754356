"""Store the steady windows of a stored run as the real-series fixture of the verdict
simulation (tests/analysis/data/steady_windows.json).

    .venv/bin/python benchmarks/capture_windows.py RUN_ID [--out results] [--to FILE]

Each level with a steady window of at least 8 s gives its per-second req/s; the fixture keeps
where it came from (suite, stack, workload, level, machine), so a reader can tell what kind of
noise the simulation's "real windows" rows resampled.
"""

import argparse
import json
from pathlib import Path

from stackbench.analysis.levelsteady import level_steady
from stackbench.store.store import Store

FIXTURE = Path(__file__).resolve().parents[1] / "tests/analysis/data/steady_windows.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=int)
    parser.add_argument("--out", default="results", help="the results directory")
    parser.add_argument("--to", default=str(FIXTURE), help="the fixture file to write")
    args = parser.parse_args()
    store = Store(Path(args.out) / "stackbench.sqlite")
    data = store.load_run(args.run)
    cases = {c.id: c for c in data.cases}
    windows = []
    for row in data.levels:
        steady = level_steady(row)
        if len(steady.window_throughput) >= 8:
            case = cases[row.case_id]
            windows.append(
                {
                    "stack": case.stack,
                    "workload": case.label,
                    "level": row.level_value,
                    "repetition": row.repetition,
                    "per_second": [round(v, 1) for v in steady.window_throughput],
                }
            )
    env = data.run.environment
    doc = {
        "source": f"run {args.run} of suite {data.run.suite_name}",
        "machine": f"{env.cpu_model}, {env.cores} cores, kernel {env.kernel}",
        "windows": windows,
    }
    Path(args.to).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(windows)} windows written to {args.to}")


if __name__ == "__main__":
    main()
