"""Runner._timings_in_turns: a round's standalone timings taken in turns over the stacks, the
order reversed each turn, so the k-th timings of two stacks are seconds apart (their ratio's
pairs share the machine's drift: analysis.paired)."""

from types import SimpleNamespace
from typing import Any

from stackbench.engine.resume import Replay
from stackbench.engine.runner import Runner, _CaseState
from stackbench.session.stacks import NO_SERVICES


def planned(name: str, *labels: str) -> Any:
    return SimpleNamespace(
        name=name,
        external=None,
        cases=[SimpleNamespace(spec=SimpleNamespace(name=label, label=label)) for label in labels],
    )


def runner(repeat: int, per: int, timed: list[tuple[str, str]], remote: bool = False) -> Runner:
    r = Runner.__new__(Runner)
    r.suite = SimpleNamespace(
        script_iterations=10, script_timings=per, load=SimpleNamespace(repeat=repeat)
    )
    r.spread = lambda: object() if remote else None
    r._script_timing = lambda p, spec, access: timed.append((p.name, spec.label, access))
    return r


class FakeServices:
    def __init__(self) -> None:
        self.prepared: list[list[str]] = []

    def prepare(self, names: list[str]) -> Any:
        self.prepared.append(names)
        return NO_SERVICES


def state(status: str, scripted: int) -> _CaseState:
    return _CaseState(0, status, Replay(()), scripted)


def test_each_turn_times_every_verified_case_then_the_next_turn_reverses():
    timed: list[tuple[str, str, Any]] = []
    php, node, gone = planned("php", "db"), planned("node", "db"), planned("gone", "db")
    cases = {
        ("php", "db"): state("pending", 2),
        ("node", "db"): state("ok", 2),
        ("gone", "db"): state("failed", 0),  # failed its verification: not timed
    }
    services = FakeServices()
    round_ = SimpleNamespace(repetition=1, order=[node, gone, php])
    runner(3, 2, timed)._timings_in_turns(round_, services, cases)
    assert [(s, w) for s, w, _ in timed] == [
        ("node", "db"),
        ("php", "db"),
        ("php", "db"),
        ("node", "db"),
    ]
    assert services.prepared == [["db", "db"]]  # seed data restored once for the turns
    assert {k: v.scripted for k, v in cases.items()} == {
        ("php", "db"): 4,
        ("node", "db"): 4,
        ("gone", "db"): 0,
    }


def test_a_resumed_case_with_its_timings_stored_is_not_timed_again():
    timed: list[tuple[str, str, Any]] = []
    cases = {("php", "db"): state("pending", 2), ("node", "db"): state("pending", 1)}
    round_ = SimpleNamespace(repetition=0, order=[planned("php", "db"), planned("node", "db")])
    runner(3, 2, timed)._timings_in_turns(round_, FakeServices(), cases)
    assert [(s, w) for s, w, _ in timed] == [("node", "db")]


def test_a_server_on_another_host_is_not_timed_here_and_says_why():
    timed: list[tuple[str, str, Any]] = []
    cases = {("php", "db"): state("pending", 0)}
    round_ = SimpleNamespace(repetition=0, order=[planned("php", "db")])
    services = FakeServices()
    runner(1, 1, timed, remote=True)._timings_in_turns(round_, services, cases)
    assert services.prepared == []
    ((_, _, why),) = timed
    assert isinstance(why, str) and why.startswith("not timed: the standalone timing runs only")


def test_a_round_with_no_timing_due_restores_no_seed_data():
    timed: list[tuple[str, str, Any]] = []
    cases = {("php", "db"): state("ok", 2)}
    services = FakeServices()
    round_ = SimpleNamespace(repetition=3, order=[planned("php", "db")])  # beyond repeat = 2
    runner(2, 1, timed)._timings_in_turns(round_, services, cases)
    assert timed == [] and services.prepared == []
