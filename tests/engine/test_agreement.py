"""The plan says which of the suite's own endpoints have their answers compared before any
load, and on which stacks."""

from pathlib import Path

from rich.console import Console

from stackbench.commands.new_stack import new_stack
from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine.agreement import compared_note
from stackbench.lab.inventory import load_inventory

QUIET = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - lives as long as the tests


def plan_of(folder: Path, expect: str):
    for name, workloads in (("a", '["items", "hello"]'), ("b", '["hello"]')):
        manifest = new_stack(QUIET, folder / name, "node")
        manifest.write_text(
            manifest.read_text().replace('workloads = ["hello"]', f"workloads = {workloads}")
        )
    path = folder / "s.toml"
    path.write_text(
        'stacks = ["./a", "./b"]\nworkloads = ["items", "hello"]\n'
        f'[endpoints.items]\npath = "/items"\nexpect = {expect}\n'
    )
    parsed = parse_suite(path)
    return build_plan(parsed, load_inventory(own=parsed.own_stacks), None, None)


def test_the_plan_names_the_compared_endpoints_and_their_stacks(tmp_path) -> None:
    note = compared_note(plan_of(tmp_path, "{ same_across_stacks = true }"))
    assert note is not None and note.startswith("same answer: items (a): each stack is started")


def test_nothing_is_said_when_nothing_is_compared(tmp_path) -> None:
    assert compared_note(plan_of(tmp_path, "{ status = 200 }")) is None
