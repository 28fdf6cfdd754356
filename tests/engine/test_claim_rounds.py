"""run --until-decided on an article suite: which levels the next round repeats for the
undecided claims, within the budget, and why it stops (hand-made claim readings)."""

from pathlib import Path

import pytest
from conftest import native_loader_built

from stackbench.analysis.claims import evaluate, facts_from_run, undecided_claims
from stackbench.config.claims import parse_claims
from stackbench.config.plan import LevelKey, build_plan
from stackbench.config.suite import parse_suite
from stackbench.config.todecide import (
    MAX_CLAIM_ROUNDS,
    MAX_LOOKS,
    ClaimRound,
    Stop,
    ToDecide,
    UndecidedClaim,
    claims_round,
)
from stackbench.engine import claim_rounds
from stackbench.engine.claim_rounds import (
    Allowance,
    UntilClaimsDecided,
    load_measured,
    until_claims_decided,
)
from stackbench.engine.progress import Phase, ProgressEvent
from stackbench.engine.runner import Runner, RunSetup
from stackbench.engine.until_decided import repetitions_of
from stackbench.lab.inventory import load_inventory
from stackbench.store.records import Superseded
from stackbench.store.store import RunData, Store
from tests.engine.test_until_decided import stored_plan
from tests.store.test_store import case as stored_case
from tests.store.test_store import level, run_record

A, B, C = (LevelKey(s, "hello", 50.0) for s in ("a", "b", "c"))
COST = {"a": 10.0, "b": 20.0, "c": 40.0}


def cost(key: LevelKey) -> float:
    return COST[key.stack]


def claim(name: str, *wants: tuple[tuple[LevelKey, ...], int | None]) -> UndecidedClaim:
    return UndecidedClaim(name, tuple(ToDecide(lv, n, f"why {name}") for lv, n in wants))


def test_a_superseded_measurement_is_load_spent_but_no_repetition() -> None:
    """A level measured again after a disturbance: the allowance paid for both measurements,
    the level has one repetition (the standing one) for the claims."""
    store = Store(":memory:")
    cid = store.add_case(stored_case(store.start_run(run_record())))
    store.add_level(level(cid, 0, duration_s=5.0, superseded=Superseded(why="disturbed")))
    store.add_level(level(cid, 0, duration_s=5.0))
    data = store.load_run(1)
    assert load_measured(data) == 10.0
    assert repetitions_of(data) == {LevelKey("node", "sha256?n=1", 25.0): 1}


def test_nothing_undecided_stops_at_once() -> None:
    assert claims_round([], {}, cost, 1000.0, 5) == Stop("every testable claim is decided")


@pytest.mark.parametrize(
    ("rounds_left", "share", "seconds"),
    [(5, 1, 30.0), (2, 2, 60.0), (1, 3, 90.0)],
)
def test_a_round_gives_each_level_its_share_of_the_repetitions_still_asked_for(
    rounds_left: int, share: int, seconds: float
) -> None:
    """a/b needs 4 a side and has 1: 3 more, over the rounds left (rounded up: 1 of 5, 2 of
    2, all 3 in the last); b/c needs 2 and c has 2 already, so only b, which a/b repeats as
    often or more (counted once). bc is cheaper (20 s) and taken first; then a/b adds a's
    share and b's beyond bc's one: 10 s x share + 20 s x (share - 1)."""
    undecided = [claim("ab", ((A, B), 4)), claim("bc", ((B, C), 2))]
    step = claims_round(undecided, {A: 1, B: 1, C: 2}, cost, 1000.0, rounds_left)
    assert step == ClaimRound(((B, share), (A, share)), ("bc", "ab"), seconds)


def test_the_cheapest_claims_first_as_many_as_the_budget_pays_for() -> None:
    undecided = [claim("c", ((C,), 3)), claim("a", ((A,), 3)), claim("b", ((B,), 3))]
    step = claims_round(undecided, {}, cost, 35.0, 3)
    assert step == ClaimRound(((A, 1), (B, 1)), ("a", "b"), 30.0)
    stop = claims_round(undecided, {}, cost, 5.0, 3)
    assert stop == Stop(
        "the budget left (5 s) cannot pay for the next round: the cheapest, for a, would "
        "cost about 10 s (1 level(s)); 3 claim(s) still undecided"
    )


def test_a_share_the_budget_cannot_pay_for_falls_back_to_one_repetition() -> None:
    """The last round would give a all 5 it asks for (50 s); 35 s left pay for one, and
    the 15 s after it for b's share of 1 but not c's."""
    undecided = [claim("a", ((A,), 5)), claim("b", ((B,), 1)), claim("c", ((C,), 1))]
    step = claims_round(undecided, {}, cost, 35.0, 1)
    assert step == ClaimRound(((B, 1), (A, 1)), ("b", "a"), 30.0)


def test_a_claim_with_a_point_repetitions_cannot_decide_is_not_chased() -> None:
    """At the bound (None), or a point without levels (a standalone timing): said, with why;
    the other claim is still chased."""
    undecided = [
        claim("bound", ((A,), 3), ((B,), None)),
        claim("script", ((), 2)),
        claim("ok", ((C,), 2)),
    ]
    assert claims_round(undecided, {C: 1}, cost, 100.0, 5) == ClaimRound(((C, 1),), ("ok",), 40.0)
    stop = claims_round(undecided[:2], {}, cost, 100.0, 5)
    assert stop == Stop(
        "more measurement cannot decide 2 claim(s): bound (why bound); script (why script)"
    )


def test_a_stop_for_the_budget_names_the_claims_no_measurement_decides() -> None:
    stop = claims_round([claim("x", ((A,), 2)), claim("y", ((B,), None))], {}, cost, 1.0, 5)
    assert isinstance(stop, Stop)
    assert stop.why.endswith(
        "1 claim(s) still undecided; more measurement cannot decide 1 claim(s): y (why y)"
    )


def test_the_rounds_stop_when_the_looks_are_used_up(
    tmp_path: Path, fake_inventory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's verdicts spend alpha / MAX_LOOKS: a claim that stays undecided however
    much is added gets MAX_LOOKS - 1 rounds, each of its share (a level asking for 50 in
    all gets 10 of the 49 it lacks in round 1, 10 of 39 in round 2 ... all 9 left in the
    last), never a sixth."""
    plan, store, run_id = stored_plan(tmp_path, fake_inventory)
    case_id = store.add_case(stored_case(run_id))
    store.add_level(level(case_id, 0, duration_s=0.0))
    key = LevelKey("node", "sha256?n=1", 25.0)
    added: list[int] = []

    def repeat_once(_plan, _setup, _data, levels) -> None:
        assert levels == [key]
        added.append(len(added) + 1)
        store.add_level(level(case_id, 0, repetition=len(added), duration_s=0.0))

    monkeypatch.setattr(claim_rounds, "repeat_once", repeat_once)
    events: list[ProgressEvent] = []
    setup = RunSetup({}, store, Path("/nonexistent"), events.append)
    how = UntilClaimsDecided(Allowance(1e6), lambda _d: [claim("k", ((key,), 50))], "m")
    until_claims_decided(plan, setup, run_id, how)
    said = [e.text for e in events if e.phase is Phase.LOOK]
    assert [t.split(" for ")[0] for t in said[:-1]] == [
        f"until decided (claims): round {n}: {m} more repetition(s) of 1 level(s)"
        for n, m in ((1, 10), (2, 10), (3, 10), (4, 10), (5, 9))
    ]
    assert said[-1] == (
        "until decided (claims): stopped after 5 added rounds: the looks allowed are used up"
    )
    assert len(added) == 49 and MAX_CLAIM_ROUNDS == MAX_LOOKS - 1 == 5


def test_the_loop_says_why_it_adds_no_round(tmp_path: Path, fake_inventory) -> None:
    """A stored run whose one undecided claim needs a level the allowance cannot pay for:
    nothing runs, and the one look says what the round would cost."""
    plan, store, run_id = stored_plan(tmp_path, fake_inventory)
    events: list[ProgressEvent] = []
    setup = RunSetup({}, store, Path("/nonexistent"), events.append)
    key = LevelKey("refserver", "hello", 2.0)
    how = UntilClaimsDecided(
        Allowance(20.0, load_only=True), lambda _d: [claim("k", ((key,), 2))], "m"
    )
    until_claims_decided(plan, setup, run_id, how)
    assert [(e.phase, e.text) for e in events] == [
        (
            Phase.LOOK,
            "until decided (claims): the budget left (20 s) cannot pay for the next round: the "
            "cheapest, for k, would cost about 30 s (1 level(s)); 1 claim(s) still undecided "
            "(after 0 added round(s))",
        )
    ]
    assert store.load_run(run_id).levels == []


def test_a_run_started_without_until_decided_gets_no_round(tmp_path: Path, fake_inventory) -> None:
    """Its claims' intervals spend alpha on one look: no round, and it says why."""
    plan, store, run_id = stored_plan(tmp_path, fake_inventory, looks=1)
    events: list[ProgressEvent] = []
    setup = RunSetup({}, store, Path("/nonexistent"), events.append)
    key = LevelKey("refserver", "hello", 2.0)
    how = UntilClaimsDecided(Allowance(1e6), lambda _d: [claim("k", ((key,), 4))], "m")
    until_claims_decided(plan, setup, run_id, how)
    assert [e.text for e in events] == [
        f"until decided (claims): no round: run {run_id} was started without "
        "--until-decided: its verdicts spend alpha on one look, so a round would add a look "
        "they do not pay for; start the run with --until-decided"
    ]


CLAIMS = """
article = "none.txt"
title = "until-decided on claims, end to end"
suites = ["claimrounds"]

[[claim]]
id = "go-beats-node"
says = "Go answers hello faster than Node."
[claim.test]
kind = "ratio"
metric = "requests_per_s"
numerator = { stack = "go-nethttp" }
denominator = { stack = "node" }
expect = "greater"
workloads = ["hello"]
levels = [50]
"""


@pytest.mark.integration
@pytest.mark.timeout(600)
@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_rounds_for_an_undecided_claim_on_real_stacks(tmp_path: Path) -> None:
    """go-nethttp and node on hello at 50 connections, one 3-s level each: too short for a
    steady window, so the claim has no interval after the plan by design. The first look
    adds a round of both levels (fresh starts); the loop then stops for a reason it says.
    The machine is busy: no verdict is asserted, only the rounds and the stop."""
    suite = tmp_path / "claimrounds.toml"
    suite.write_text(
        'name = "claimrounds"\nstacks = ["go-nethttp", "node"]\nworkloads = ["hello"]\n'
        "[load]\nrepeat = 1\nconnections = [50]\nduration_s = 3\nwarmup_s = 0\npause_s = 0\n"
        "jit_warmup = false\n"
    )
    claims_path = tmp_path / "claims.toml"
    claims_path.write_text(CLAIMS)
    claims = parse_claims(claims_path).claims
    inventory = load_inventory()
    plan = build_plan(parse_suite(suite), inventory, None, None)
    store = Store(tmp_path / "s.sqlite")
    events: list[ProgressEvent] = []
    setup = RunSetup(inventory, store, tmp_path, events.append, decision_looks=MAX_LOOKS)
    run_id = Runner(plan, setup).execute()
    defaults = {name: e.manifest.param_defaults() for name, e in inventory.items()}

    def read(data: RunData) -> tuple[UndecidedClaim, ...]:
        return undecided_claims(evaluate(claims, data, facts_from_run(data, defaults)))

    first = read(store.load_run(run_id))
    assert [c.claim for c in first] == ["go-beats-node"]  # undecided by design
    # about 6 s of load measured (more on a busy machine, which measures a disturbed level
    # again); 7 s more pays for one round of both levels, not two
    spent = load_measured(store.load_run(run_id))
    how = UntilClaimsDecided(Allowance(spent + 7.0, load_only=True), read, "m")
    until_claims_decided(plan, setup, run_id, how)
    said = [e.text for e in events if e.phase is Phase.LOOK]
    assert said[0].startswith(
        "until decided (claims): round 1: 2 more repetition(s) of 2 level(s) for go-beats-node"
    ), said
    assert len(said) == 2, said
    assert said[1].endswith("(after 1 added round(s))")
    assert any(
        reason in said[1]
        for reason in ("every testable claim is decided", "cannot pay", "cannot decide")
    ), said[1]
    data = store.load_run(run_id)
    for case in data.cases:
        assert sorted(lv.repetition for lv in data.levels_of(case.id)) == [0, 1], case.stack
    assert data.run.status == "complete"
