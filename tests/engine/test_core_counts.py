"""A suite on several server core counts, end to end on the fake reference stack: each count
is its own planned stack on its own cores, and the capacity shows the measured scaling. The
machine is shared, so this checks the structure and that every figure is there, never a
value or a time."""

import json
import os

import pytest
from conftest import native_loader_built

from stackbench.analysis.capacity import CapacityAsk
from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine.runner import Runner, RunSetup
from stackbench.report import write_all
from stackbench.store.store import Store

pytestmark = pytest.mark.integration

SUITE = """
name = "cores"
stacks = ["refserver"]
workloads = ["hello"]

[load]
driver = "native"
mode = "open"
duration_s = 1
warmup_s = 0
pause_s = 0
timeout_s = 2

[placement]
server_cores = [1, 2]

[slo]
percentile = 99
latency_ms = 500
gate = false

[search]
lo = 20
hi = 100000
probes = 3
"""


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_two_core_counts_give_the_measured_scaling(tmp_path, fake_inventory):
    path = tmp_path / "cores.toml"
    path.write_text(SUITE)
    plan = build_plan(parse_suite(path), fake_inventory, None, None)
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(plan, RunSetup(fake_inventory, store, tmp_path)).execute()
    data = store.load_run(run_id)
    assert sorted(c.stack for c in data.cases) == ["refserver.1c", "refserver.2c"]
    assert set(data.run.settings.core_counts) == {"refserver.1c", "refserver.2c"}
    ask = CapacityAsk(target_rps=100_000, price_per_core_hour=0.04)
    out = write_all(data, tmp_path / "report", formats=("json", "md"), ask=ask)
    doc = json.loads((out / "results.json").read_text())
    caps = {c["stack"]: c["capacity"] for c in doc["workloads"][0]["cases"]}
    one, two = caps["refserver.1c"], caps["refserver.2c"]
    assert (one["bracket"]["server_cores"], two["bracket"]["server_cores"]) == (1, 2)
    assert one["bracket"]["stack"] == two["bracket"]["stack"] == "refserver"
    assert one["scaling_ratio"] is None  # the base count
    assert two["scaling_base_cores"] == 1 and two["scaling_ratio"] is not None
    assert two["per_core_efficiency"] is not None
    assert one["cores_needed_from"] == two["cores_needed_from"] == 2
    # on 2 cores the loader shares the 2-core server's cores, and the report says so
    assert two["loader_shared"] is (len(os.sched_getaffinity(0)) == 2)
    md = (out / "summary.md").read_text()
    assert "### Scaling over server cores" in md and "| hello | refserver | 2 |" in md
