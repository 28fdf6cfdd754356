"""The parameters the plan prints are the ones the stacks start with: resolved from the manifest
defaults, the suite's values and the server cores the placement gives (real manifests, nothing
started)."""

from pathlib import Path

import pytest

from stackbench.config.manifest import parse_manifest
from stackbench.config.paths import STACKS_DIR
from stackbench.config.plan import Plan, build_plan
from stackbench.config.status import Availability, StackEntry, StackStatus
from stackbench.config.suite import parse_suite
from stackbench.lab.stack import StackConfig, params_for_cores, planned_params, variables_for

STACKS = ("php-fpm-nginx", "php-apache", "node-cluster", "java-servlet", "node")


def entry(name: str, stacks_dir: Path = STACKS_DIR) -> StackEntry:
    m = parse_manifest(stacks_dir / name / "stack.toml")
    commands = {r.name: f"/usr/bin/{r.name}" for r in m.requires}
    return StackEntry(m, StackStatus(name, Availability.AVAILABLE, commands=commands))


@pytest.fixture(scope="module")
def inventory() -> dict[str, StackEntry]:
    return {name: entry(name) for name in STACKS}


SUITE = """
name = "cores"
stacks = ["php-fpm-nginx", "php-apache", "node-cluster", "node-cluster-pool", "java-servlet"]
workloads = ["hello"]

[params.php-apache]
max_request_workers = 150

[variants.node-cluster-pool]
stack = "node-cluster"
params = {{ db_strategy = "pool", pool_size = 5 }}

[placement]
server_cpus = "{cpus}"
loader_cpus = "0"
"""


def plan_on(tmp_path: Path, inventory: dict[str, StackEntry], cpus: str) -> Plan:
    path = tmp_path / "cores.toml"
    path.write_text(SUITE.format(cpus=cpus))
    return build_plan(parse_suite(path), inventory, None, None)


def test_stacks_derive_their_workers_from_the_server_cores(tmp_path, inventory):
    by_name = {p.stack: p for p in planned_params(plan_on(tmp_path, inventory, "0"), inventory)}
    fpm = by_name["php-fpm-nginx"]
    assert fpm.values["workers"] == "1" and fpm.values["children_per_worker"] == "4"
    assert fpm.derived == ("workers",) and not fpm.problem
    apache = by_name["php-apache"]  # the suite's 150 wins; workers still from the cores
    assert apache.values["max_request_workers"] == "150" and apache.values["workers"] == "1"
    assert by_name["node-cluster"].values["db_strategy"] == "pool"  # the manifest default
    pool = by_name["node-cluster-pool"]  # a variant: its own values, the same derivation
    assert pool.values["db_strategy"] == "pool" and pool.values["pool_size"] == "5"
    assert pool.values["workers"] == "1" and pool.derived == ("workers",)
    assert by_name["java-servlet"].values["threads"] == "200"  # not from the cores


def test_two_server_cores_double_the_derived_sizes(tmp_path, inventory):
    two = {
        p.stack: p.values for p in planned_params(plan_on(tmp_path, inventory, "0-1"), inventory)
    }
    assert two["php-fpm-nginx"]["workers"] == "2" and two["node-cluster"]["workers"] == "2"
    assert two["java-servlet"]["workers"] == "2" and two["java-servlet"]["threads"] == "200"


@pytest.mark.parametrize("name", STACKS)
def test_the_plan_resolves_what_the_start_resolves(name, inventory):
    e = inventory[name]
    overrides = {"workers": "3"} if name == "php-fpm-nginx" else {}
    cpus = frozenset({0, 1})
    cfg = StackConfig(e.manifest, e.status, Path("/tmp/run-1") / name, cpus, overrides, {})
    at_start = variables_for(cfg, 8080)
    planned = params_for_cores(e.manifest, overrides, cpus)
    assert planned == {p.name: at_start[p.name] for p in e.manifest.params}


def test_a_default_known_only_at_start_is_reported_not_guessed(tmp_path):
    folder = tmp_path / "stacks" / "late"
    folder.mkdir(parents=True)
    (folder / "stack.toml").write_text(
        'name = "late"\ndescription = "d"\nlanguage = "x"\nio_model = "event-loop"\n'
        'workloads = ["hello"]\n'
        '[params]\nlisten = { type = "string", pattern = "[0-9]+", default = "{{port}}" }\n'
        '[[process]]\nrole = "server"\ncommand = ["/bin/true"]\n'
    )
    inventory = {"late": entry("late", tmp_path / "stacks")}
    path = tmp_path / "late.toml"
    path.write_text('name = "late"\nstacks = ["late"]\nworkloads = ["hello"]\n')
    (late,) = planned_params(build_plan(parse_suite(path), inventory, None, None), inventory)
    assert late.values == {} and "unknown template variable {{port}}" in late.problem
