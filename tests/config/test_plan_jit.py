"""The plan knows each stack's JIT warm-up (stack.toml [warmup]) and counts it in its time."""

from pathlib import Path

from stackbench.config.estimate import Overheads, plan_timeline
from stackbench.config.plan import build_plan, settle_note
from stackbench.config.suite import parse_suite

SUITE = """
name = "t"
stacks = ["refjit", "refserver", "jit-off"]
workloads = ["hello", "sha256?n=1"]

[load]
connections = [2, 4]
duration_s = 3
warmup_s = 0
pause_s = 0

[variants.jit-off]
stack = "refjit"
params = { fault = "status500" }
"""


# Nothing but the levels and the warm-ups: the totals below are theirs alone.
NO_OVERHEADS = Overheads(0, 0, 0, 0, 0, 0, 0)


def _seconds(plan) -> float:
    return plan_timeline(plan, overheads=NO_OVERHEADS).total_s


def _plan(tmp_path: Path, text: str, inventory):
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return build_plan(parse_suite(path), inventory, None, None)


def test_warmup_per_stack_and_in_the_estimate(tmp_path, fake_inventory):
    plan = _plan(tmp_path, SUITE, fake_inventory)
    assert [(s.name, s.jit_warmup_s) for s in plan.stacks] == [
        ("refjit", 1.0),
        ("refserver", 0.0),
        ("jit-off", 0.0),
    ]  # `unless` matched: no pass
    # 3 stacks x 2 workloads x 2 levels x 3 s, plus 1 s before each of refjit's 2 cases
    assert _seconds(plan) == 3 * 2 * 2 * 3 + 2 * 1


def test_a_suite_can_measure_jit_stacks_cold(tmp_path, fake_inventory):
    plan = _plan(
        tmp_path, SUITE.replace("pause_s = 0", "pause_s = 0\njit_warmup = false"), fake_inventory
    )
    assert not plan.suite.load.jit_warmup
    assert _seconds(plan) == 3 * 2 * 2 * 3


def test_the_settle_note_states_each_jit_stacks_bound(tmp_path, fake_inventory):
    plan = _plan(tmp_path, SUITE, fake_inventory)
    assert settle_note(plan) == (
        "--settle: when a case's first level is not shown steady, one more JIT warm-up pass "
        "as long as its per-second series says it needed runs, and that level is measured "
        "again once; the warm-up in all stays within 4x the declared and 120 s "
        "(refjit 1 s, at most 4 s: up to 3 s and one level more per case, not in the time "
        "above)."
    )
    no_jit = _plan(tmp_path, SUITE.replace('"refjit", ', ""), fake_inventory)
    assert "no stack of the plan has a JIT warm-up" in settle_note(no_jit)
