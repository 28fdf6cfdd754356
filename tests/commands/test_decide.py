"""What run --until-decided's rounds for an article's claims may spend, and what the plan
says of them."""

from pathlib import Path

from stackbench.commands.decide import claims_allowance
from stackbench.commands.preflight import claims_rounds_note
from stackbench.config.estimate import Timeline
from stackbench.config.suite import parse_suite
from stackbench.engine.claim_rounds import Allowance


def suite(tmp_path: Path, head: str = "") -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        f'{head}name = "s"\nstacks = ["node"]\nworkloads = ["hello"]\n[load]\n'
        "connections = [50]\nduration_s = 3\n"
    )
    return path


def test_budget_leaves_wall_time_else_the_suites_load_budget(tmp_path: Path) -> None:
    with_load = parse_suite(suite(tmp_path, "load_budget_min = 20\n"))
    # --budget 10m, 4 min of the run gone: 6 min of wall time
    assert claims_allowance(with_load, 1200.0, 600.0, 240.0) == Allowance(360.0)
    assert claims_allowance(with_load, 1200.0, 100.0, 240.0) == Allowance(0.0)
    # no --budget: the suite's 20 min of load (the run's measured load counts against it)
    assert claims_allowance(with_load, 1200.0, None, 240.0) == Allowance(1200.0, load_only=True)
    plain = parse_suite(suite(tmp_path))
    assert claims_allowance(plain, 300.0, None, 240.0) == Allowance(300.0)


def test_the_plan_says_what_the_rounds_may_spend() -> None:
    note = claims_rounds_note(90.0, None, Timeline(()))
    assert note.startswith("until decided: will spend up to 1.5 min on claims: ")
    note = claims_rounds_note(0.0, 1200.0, Timeline(()))
    assert note.startswith(
        "until decided: will spend up to 20.0 min of load (the suite's 20 min less the "
        "plan's 0.0; --budget gives them the time it leaves instead) on claims: "
    )
