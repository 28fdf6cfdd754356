"""build_plan refuses a closed-loop level whose request count is below its connection count."""

from pathlib import Path

import pytest

from stackbench.config.plan import build_plan
from stackbench.config.status import StackEntry
from stackbench.config.suite import Suite, parse_suite
from stackbench.errors import InputError

Inventory = dict[str, StackEntry]

COUNTED = """
name = "t"
stacks = ["refserver"]
workloads = ["hello", "sha256?n=10"]

[load]
driver = "native"
mode = "closed"
connections = [300]
{count}

[levels]
"sha256?n=10" = [300, 5000]
"""


def suite_with(tmp_path: Path, count: str) -> Suite:
    path = tmp_path / "counted.toml"
    path.write_text(COUNTED.format(count=count))
    return parse_suite(path)


def test_too_few_requests_for_a_level_names_file_workload_and_level(
    tmp_path: Path, fake_inventory: Inventory
) -> None:
    suite = suite_with(tmp_path, "requests = 2000")
    with pytest.raises(InputError) as err:
        build_plan(suite, fake_inventory, None, None)
    message = str(err.value)
    assert str(suite.path) in message
    assert "workload 'sha256?n=10'" in message
    assert "level 5000 connections" in message
    assert "requests = 2000" in message


def test_enough_requests_for_every_level_plans(tmp_path: Path, fake_inventory: Inventory) -> None:
    plan = build_plan(suite_with(tmp_path, "requests = 5000"), fake_inventory, None, None)
    assert [lv.value for lv in plan.stacks[0].cases[1].levels] == [300, 5000]


def test_requests_per_connection_always_covers_the_level(
    tmp_path: Path, fake_inventory: Inventory
) -> None:
    plan = build_plan(
        suite_with(tmp_path, "requests_per_connection = 1"), fake_inventory, None, None
    )
    assert plan.level_count() == 3


def test_the_check_covers_workloads_filtered_out_of_the_run(
    tmp_path: Path, fake_inventory: Inventory
) -> None:
    suite = suite_with(tmp_path, "requests = 2000")
    with pytest.raises(InputError, match="sha256"):
        build_plan(suite, fake_inventory, None, ["hello"])
