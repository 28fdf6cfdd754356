"""Claims read with stand-ins (issue 31 item 8): below the server cores a claim requires, the
stacks its claims file names stand in, per core, for those the article ran; every verdict
resting on one says so first, the dry run counts them, and pool-and-cluster's plan on a
1-core server decides them by design (the item-2 test, on the stand-ins)."""

import dataclasses
from pathlib import Path

import msgspec

from stackbench.analysis.claims import ClaimStatus, evaluate, facts_from_plan, requirements_unmet
from stackbench.analysis.claims.design import designs, scenarios, synthetic_run
from stackbench.analysis.claims.standin import stand_ins
from stackbench.analysis.verdicts import assumed_spread
from stackbench.config.claims import parse_claims
from stackbench.config.estimate import plan_timeline
from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite
from stackbench.config.todecide import rounds_room
from stackbench.lab.inventory import load_inventory

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = {
    c.id: c for c in parse_claims(ROOT / "suites" / "claims" / "pool-and-cluster.toml").claims
}
POOL_WORDS = (
    "node-pool (one Node process with the pool, on 1 core) stands in for node-cluster-pool "
    "(4 workers with the pool on 4 cores)"
)
HELLO_WORDS = (
    ", on hello node (hello never touches a data store, so the pool does not apply and the "
    "suite runs plain node there only)"
)
CLUSTER_WORDS = (
    "node (one Node process, on 1 core) stands in for node-cluster (4 workers on 4 cores)"
)
# Testable with a stand-in, but 3 repetitions and the rounds the budget leaves do not decide
# them with the assumed spread: what each would need (the dry run says it too).
NOT_DECIDABLE_HERE = {
    "hello-more-at-1000": "1.04 against a bound at 1: 14 repetitions a side",
}


def _plan_facts():
    """pool-and-cluster's plan on this machine's default placement (the server on 1 core),
    every stack available but those it leaves out for their cores, and its rounds' room."""
    suite = parse_suite(ROOT / "suites" / "pool-and-cluster.toml")
    assert suite.server_cores == 1
    inventory = load_inventory()
    plan = build_plan(suite, inventory, None, None)
    stacks = tuple(
        dataclasses.replace(s, available="server core" not in s.reason, reason=s.reason)
        for s in plan.stacks
    )
    plan = dataclasses.replace(plan, stacks=stacks)
    return facts_from_plan(plan, inventory), rounds_room(plan_timeline(plan), suite.load_budget_s)


def test_stand_ins_apply_only_below_the_cores_a_claim_requires():
    claim = CLAIMS["mysql-below-hello-node"]  # reads node-cluster-pool on hello and MySQL
    assert stand_ins(claim, 2) is None
    standing = stand_ins(claim, 1)
    assert standing is not None
    assert standing.words == POOL_WORDS + HELLO_WORDS + ": per core"
    assert standing.stack("node-cluster-pool", "mysql-row") == "node-pool"
    assert standing.stack("node-cluster-pool", "hello") == "node"
    assert standing.stack("php-fpm-nginx", "hello") == "php-fpm-nginx"
    # the `on` words only where the claim reads such a workload
    both = stand_ins(CLAIMS["pool-gain-mysql"], 1)
    assert both is not None and both.words == f"{POOL_WORDS}; {CLUSTER_WORDS}: per core"
    assert stand_ins(CLAIMS["cluster-gain-mysql"], 1) is None  # names none


def test_the_plan_counts_the_claims_read_with_a_stand_in():
    facts, _ = _plan_facts()
    ready = {r.claim.id: r for r in requirements_unmet(CLAIMS.values(), facts)}
    untestable = {i for i, r in ready.items() if not r.testable}
    assert untestable == {
        "cluster-gain-redis",
        "cluster-gain-mysql",
        "hello-cluster-saturates-cpus",
        "cluster-no-failures-redis",
        "node-never-fails",  # failures depend on the clients one process holds: no stand-in
    }
    assert ready["cluster-no-failures-redis"].reasons[0] == (
        "needs 2 server cores; this run gives the server 1"
    )
    stood = {i for i, r in ready.items() if r.stand_in}
    assert stood == {c.id for c in CLAIMS.values() if c.stand_in} and len(stood) == 14
    assert ready["hello-node-beats-php"].stand_in == f"{CLUSTER_WORDS}: per core"
    assert ready["hello-php-flat"].stand_in == ""
    # node-pool runs no hello: a claim reading it there would say so
    claim = CLAIMS["mysql-below-hello-node"]
    no_on = msgspec.structs.replace(
        claim, stand_in=(msgspec.structs.replace(claim.stand_in[0], on={}),)
    )
    (blocked,) = requirements_unmet([no_on], facts)
    assert blocked.reasons == (
        "needs node-pool on hello, which this suite does not run it on ([stack_workloads]: "
        "mysql-row, memcache-get, redis-get)",
    )


def test_a_verdict_on_a_stand_in_says_so_and_reads_its_figures():
    facts, _ = _plan_facts()
    claim = CLAIMS["mysql-below-hello-node"]
    confirm, refute = scenarios(claim, facts)
    assert ("node-pool", "mysql-row", 3000.0, "requests_per_s") in confirm.figures
    assert ("node", "hello", 3000.0, "requests_per_s") in confirm.figures
    assert not any(k[0] == "node-cluster-pool" for k in confirm.figures)
    (result,) = evaluate(
        [claim], synthetic_run(facts, confirm, assumed_spread()), facts, pair_priors=False
    )
    assert result.status is ClaimStatus.CONFIRMED
    assert result.stand_in == POOL_WORDS + HELLO_WORDS + ": per core"
    assert result.why.startswith(result.stand_in + "; ")
    assert result.ours[0].label == "node-pool mysql-row @3,000 / node hello @3,000"
    (opposite,) = evaluate(
        [claim], synthetic_run(facts, refute, assumed_spread()), facts, pair_priors=False
    )
    assert opposite.status is ClaimStatus.REFUTED and opposite.why.startswith(POOL_WORDS)


def test_pool_and_cluster_decides_its_stand_in_claims_by_design_on_one_core():
    """Data at the article's figures confirm and the opposite refute every claim read with a
    stand-in, with the plan's repetitions and the until-decided rounds its 20 min leave,
    but the few named with what they would need."""
    facts, room = _plan_facts()
    found = {d.claim.id: d for d in designs(CLAIMS.values(), facts, assumed_spread(), room)}
    stood = {i for i, d in found.items() if d.stand_in}
    assert len(stood) == 14 and all(found[i].testable for i in stood)
    undecided = {i for i in stood if not found[i].decidable}
    assert undecided == set(NOT_DECIDABLE_HERE), {i: found[i].why for i in undecided}
    for claim_id in undecided:
        assert "not enough evidence" in found[claim_id].why
        assert POOL_WORDS not in found[claim_id].why  # said once, beside the claim
    # the claims read as written (PHP's own) are decidable too
    assert {i for i, d in found.items() if d.testable and not d.decidable} == set(undecided)
