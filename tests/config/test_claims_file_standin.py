"""A claims file's stand-ins ([[stand_in]], named by a claim's `stand_in`): parsed into typed
records on the claims that name them, and every mistake an InputError naming the file, the
table or claim, and the key."""

import copy
from pathlib import Path
from typing import Any

import pytest

from stackbench.config.claims import StandIn, claims_from_data, parse_claims
from stackbench.config.suite import parse_suite
from stackbench.errors import InputError

ROOT = Path(__file__).resolve().parents[2]

POOL = {
    "stack": "cluster-pool",
    "by": "one-pool",
    "article": "4 workers with the pool on 4 cores",
    "ours": "one process with the pool",
    "on": {"hello": "one"},
    "on_why": "the pool does not apply on hello",
}
BASE: dict[str, Any] = {
    "article": "002_x.txt",
    "title": "t",
    "suites": ["s"],
    "stand_in": [POOL],
    "claim": [
        {
            "id": "pool-beats-php",
            "says": "The pool beats PHP.",
            "stand_in": ["cluster-pool"],
            "requires": {"server_cores": 2, "params": {"cluster-pool": {"db": "pool"}}},
            "test": {
                "kind": "ratio",
                "metric": "requests_per_s",
                "numerator": {"stack": "cluster-pool"},
                "denominator": {"stack": "php"},
                "expect": "greater",
                "workloads": ["hello", "mysql"],
            },
        },
        {
            "id": "cluster-gain",
            "says": "The cluster beats one process.",
            "requires": {"server_cores": 4},
            "test": {
                "kind": "ratio",
                "metric": "requests_per_s",
                "numerator": {"stack": "cluster-pool"},
                "denominator": {"stack": "one"},
                "expect": "greater",
                "workloads": ["mysql"],
            },
        },
    ],
}


def bad(change: Any) -> str:
    data = copy.deepcopy(BASE)
    change(data)
    with pytest.raises(InputError) as info:
        claims_from_data(Path("bad.toml"), data)
    return str(info.value)


def test_a_claim_carries_the_stand_ins_it_names():
    pool_beats, gain = claims_from_data(Path("ok.toml"), copy.deepcopy(BASE)).claims
    assert pool_beats.stand_in == (
        StandIn(
            "cluster-pool",
            "one-pool",
            "4 workers with the pool on 4 cores",
            "one process with the pool",
            {"hello": "one"},
            "the pool does not apply on hello",
        ),
    )
    assert gain.stand_in == ()


def test_pool_and_cluster_names_its_stand_ins_and_the_suite_runs_them():
    """The article's per-core claims name stand-ins the full suite runs; the claims about what
    the missing cores add name none."""
    claims = parse_claims(ROOT / "suites" / "claims" / "pool-and-cluster.toml").claims
    suite = parse_suite(ROOT / "suites" / "pool-and-cluster.toml")
    stood = {c.id for c in claims if c.stand_in}
    assert len(stood) == 14
    assert {c.id for c in claims if c.requires.server_cores > 1} - stood == {
        "cluster-gain-redis",
        "cluster-gain-mysql",
        "hello-cluster-saturates-cpus",
        "cluster-no-failures-redis",
        "node-never-fails",  # failures depend on the clients one process holds
    }
    for claim in claims:
        for stand in claim.stand_in:
            assert {stand.by, *stand.on.values()} <= set(suite.stacks), claim.id


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d["claim"][0].update(stand_in=["cluster"]),
            "bad.toml: claim 'pool-beats-php' (the 1st [[claim]]), key 'stand_in': 'cluster' is "
            "the stack of no [[stand_in]] of this file (declared: cluster-pool)",
        ),
        (
            lambda d: d["claim"][0].update(stand_in="cluster-pool"),
            "key 'stand_in': a list of the stacks of the file's [[stand_in]] tables",
        ),
        (
            lambda d: d["claim"][0].update(stand_in=["cluster-pool", "cluster-pool"]),
            "key 'stand_in': a stack is named twice",
        ),
        (
            lambda d: d["stand_in"][0].pop("ours"),
            "bad.toml: key 'stand_in[0]': Object missing required field `ours`",
        ),
        (
            lambda d: d["stand_in"][0].update(colour="red"),
            "bad.toml: key 'stand_in[0]': Object contains unknown field `colour` (allowed: "
            "stack, by, article, ours, on, on_why)",
        ),
        (
            lambda d: d["stand_in"][0].update(by="cluster-pool"),
            "bad.toml: [[stand_in]] 'cluster-pool' (the 1st): key 'by': a stack cannot stand in "
            "for itself",
        ),
        (
            lambda d: d["stand_in"][0].pop("on_why"),
            "[[stand_in]] 'cluster-pool' (the 1st): keys 'on'/'on_why': say why",
        ),
        (
            lambda d: d["stand_in"].append({**POOL, "by": "other"}),
            "[[stand_in]] 'cluster-pool' (the 2nd): key 'stack': another [[stand_in]] has this",
        ),
        (
            lambda d: d["stand_in"].append({**POOL, "stack": "unused", "on": {}, "on_why": None}),
            "[[stand_in]] 'unused' (the 2nd): no claim names it in 'stand_in'",
        ),
        (
            lambda d: d["claim"][0]["requires"].update(server_cores=1),
            "claim 'pool-beats-php' (the 1st [[claim]]): key 'stand_in': a stand-in is read "
            "where the server has fewer cores than the claim's requires.server_cores; this "
            "claim requires 1",
        ),
        (
            lambda d: d["claim"][0]["test"]["numerator"].update(stack="other"),
            "key 'stand_in': the test does not read 'cluster-pool' (other, php)",
        ),
        (
            # cluster mode's gain over the one process that would stand in for it
            lambda d: (
                d["claim"][1].update(stand_in=["cluster-pool"])
                or d["claim"][1]["test"]["denominator"].update(stack="one-pool")
            ),
            "claim 'cluster-gain' (the 2nd [[claim]]): key 'stand_in': 'one-pool' would stand "
            "in for 'cluster-pool', but the test reads it for 'one-pool' too",
        ),
        (
            # on hello, 'one' stands in for cluster-pool, but the test reads 'one' itself
            lambda d: (
                d["claim"][1].update(stand_in=["cluster-pool"])
                or d["claim"][1]["test"].update(workloads=["hello"])
                or d["claim"][1]["test"]["denominator"].update(stack="one")
            ),
            "key 'stand_in': 'one' would stand in for 'cluster-pool', but the test reads it "
            "for 'one' too",
        ),
    ],
)
def test_bad_stand_ins_are_input_errors(change, message):
    assert message in bad(change)
