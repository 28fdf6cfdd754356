"""When `run` probes the rates its plan would guess (commands/probe.py)."""

from pathlib import Path

from stackbench.commands.probe import probe_wanted
from stackbench.config.suite import parse_suite

SUITE = """
name = "t"
stacks = ["refserver"]
workloads = ["hello"]
{budget}
[load]
connections = [1]
requests = 100
"""


def test_asked_or_a_real_run_that_a_budget_judges(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(SUITE.format(budget=""))
    plain = parse_suite(path)
    path.write_text(SUITE.format(budget="load_budget_min = 5"))
    budgeted = parse_suite(path)
    # --probe: always, dry run or not
    assert probe_wanted(True, True, None, plain) and probe_wanted(True, False, None, plain)
    # a real run probes when a budget will judge its plan: --budget or load_budget_min
    assert probe_wanted(False, False, 600.0, plain)
    assert probe_wanted(False, False, None, budgeted)
    # ... and otherwise not: the ETA corrects a guess as levels finish
    assert not probe_wanted(False, False, None, plain)
    # a dry run only when asked, budget or not
    assert not probe_wanted(False, True, 600.0, budgeted)
