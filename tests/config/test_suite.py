from pathlib import Path

import pytest

from stackbench.config.loadspec import DriverKind, KeepAlive, Mode
from stackbench.config.plan import build_plan
from stackbench.config.suite import expand_sweep, parse_suite
from stackbench.errors import InputError

SUITE = """
name = "t"
stacks = ["refserver"]
workloads = ["hello", "sha256?n=10"]

[load]
driver = "native"
connections = [1, {start = 100, step = 100, stop = 300}]
duration_s = 2
repeat = 2

[placement]
server_cpus = "0"
loader_cpus = "0"

[slo]
percentile = 99
latency_ms = 3000
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return path


def test_good_suite(tmp_path):
    s = parse_suite(write(tmp_path, SUITE))
    assert s.levels == (1, 100, 200, 300)
    assert s.load.driver is DriverKind.NATIVE and s.load.mode is Mode.CLOSED
    assert s.load.keepalive is KeepAlive.ON and s.load.repeat == 2
    assert [w.label for w in s.workloads] == ["hello", "sha256?n=10"]
    assert s.slo is not None and s.slo.latency_ms == 3000


def test_expand_sweep_by_hand():
    assert expand_sweep([1, {"start": 100, "step": 100, "stop": 1000}], "x") == \
        (1, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000)
    assert len(expand_sweep([{"start": 100, "step": 100, "stop": 10000}], "x")) == 100


@pytest.mark.parametrize("change, message", [
    (("[load]", "[load]\nconections = [1]"), r"\[load\] key 'conections': unknown key"),
    (('duration_s = 2', 'duration_s = "2"'), r"key 'duration_s': expected a number"),
    (('driver = "native"', 'driver = "siege"'), r"'siege' is not one of: native, wrk, ab"),
    (('repeat = 2', 'repeat = 0'), "must be at least 1"),
    (('duration_s = 2', 'duration_s = 2\nrequests = 10'), "either a request count or duration_s"),
    (('name = "t"', 'name = "t"\ncolour = "red"'), "key 'colour': unknown key"),
    (('connections = [1, {start = 100, step = 100, stop = 300}]', 'connections = [0]'),
     "every level must be positive"),
    (('connections = [1, {start = 100, step = 100, stop = 300}]',
      'connections = [{start = 1, stop = 9}]'), "start, step and stop"),
    (('driver = "native"', 'driver = "wrk"\nmode = "open"\nrates = [10]'), "no open-loop mode"),
    (('driver = "native"', 'mode = "open"'), "needs a list of request rates"),
    (('server_cpus = "0"', 'server_cpus = "zero"'), "is not a CPU list"),
    (('server_cpus = "0"', 'server_cpus = "4096"'), "not available here"),
    (('workloads = ["hello", "sha256?n=10"]', 'workloads = ["helo"]'), "unknown workload 'helo'"),
])
def test_bad_suites_name_file_and_key(tmp_path, change, message):
    path = write(tmp_path, SUITE.replace(*change))
    with pytest.raises(InputError, match=message) as err:
        parse_suite(path)
    assert str(path) in str(err.value)


def test_plan_expands_levels_and_repetitions(tmp_path, fake_inventory):
    plan = build_plan(parse_suite(write(tmp_path, SUITE)), fake_inventory, None, None)
    (stack,) = plan.stacks
    assert stack.available and len(stack.cases) == 2
    levels = stack.cases[0].levels
    assert [(lv.value, lv.repetition) for lv in levels[:3]] == [(1, 0), (1, 1), (100, 0)]
    assert plan.level_count() == 2 * 4 * 2


def test_plan_filters_and_rejects_unknowns(tmp_path, fake_inventory):
    suite = parse_suite(write(tmp_path, SUITE))
    plan = build_plan(suite, fake_inventory, ["refserver"], ["sha256"])
    assert [c.spec.label for c in plan.stacks[0].cases] == ["sha256?n=10"]
    with pytest.raises(InputError, match="--stacks: 'node' is not among"):
        build_plan(suite, fake_inventory, ["node"], None)
    with pytest.raises(InputError, match="--workloads: 'json' is not in the suite"):
        build_plan(suite, fake_inventory, None, ["json"])
    bad = parse_suite(write(tmp_path, SUITE.replace('["refserver"]', '["nginx-lua"]')))
    with pytest.raises(InputError, match="unknown stack 'nginx-lua'"):
        build_plan(bad, fake_inventory, None, None)


def test_unavailable_stack_is_planned_with_reason(tmp_path, fake_inventory):
    text = SUITE.replace('["refserver"]', '["refserver", "missing"]')
    text = text.replace('workloads = ["hello", "sha256?n=10"]', 'workloads = ["hello"]')
    plan = build_plan(parse_suite(write(tmp_path, text)), fake_inventory, None, None)
    missing = plan.stacks[1]
    assert not missing.available and "apt-get install nosuchruntime" in missing.reason


def test_shipped_suites_parse():
    from stackbench.config.paths import SUITES_DIR

    for path in SUITES_DIR.glob("*.toml"):
        parse_suite(path)


def test_per_workload_levels_durations_and_variants(tmp_path, fake_inventory):
    text = SUITE.replace('stacks = ["refserver"]', 'stacks = ["refserver", "ref-faulty"]')
    text += """
[levels]
"sha256?n=10" = [7]

[durations]
"sha256?n=10" = 9

[variants.ref-faulty]
stack = "refserver"
params = { fault = "constant" }
"""
    suite = parse_suite(write(tmp_path, text))
    assert suite.levels_for("sha256?n=10") == (7,) and suite.levels_for("hello")[0] == 1
    assert suite.load_for("sha256?n=10").duration_s == 9
    assert suite.load_for("hello").duration_s == 2
    plan = build_plan(suite, fake_inventory, None, None)
    variant = plan.stacks[1]
    assert variant.name == "ref-faulty" and variant.stack == "refserver"
    assert variant.params == {"fault": "constant"}
    bad = write(tmp_path, text.replace('"sha256?n=10" = 9', '"sha256?n=11" = 9'))
    with pytest.raises(InputError, match=r"\[durations\] key 'sha256\?n=11'"):
        parse_suite(bad)
