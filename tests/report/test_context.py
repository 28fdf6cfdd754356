"""The context panel: only what the store holds, and says so for the rest."""

import dataclasses

from synthetic_run import add_case, add_level, settings, start_run

from stackbench.analysis.analysis import analyse
from stackbench.report.context import (
    NOT_RECORDED,
    build_context,
    cores_per_role,
    cpu_list,
    machine,
    memory,
    memory_table,
)
from stackbench.store.records import Environment, PlacementSettings
from stackbench.store.store import Store
from tests.measured import usage

MIB = 2**20


def _level(index, usage):
    return {
        "level_index": index,
        "level_value": 10.0 * (index + 1),
        "repetition": 0,
        "driver": "native",
        "mode": "closed",
        "keepalive": "on",
        "started_at": 0.0,
        "duration_s": 5.0,
        "completed": 10,
        "ok": 10,
        "errors": {},
        "requests_per_s": 2.0,
        "latency_us": {"p50": 1.0},
        "usage": usage,
        "flags": [],
        "status": "ok",
    }


def test_cpu_list():
    assert cpu_list([0]) == "0"
    assert cpu_list([3, 0, 1, 2, 5, 7, 8]) == "0-3,5,7-8"
    assert cpu_list([]) == NOT_RECORDED
    assert cpu_list(None) == NOT_RECORDED


def test_machine_says_what_was_not_recorded():
    facts = machine(
        Environment(
            cpu_model="X",
            cores=4,
            cores_allowed=(0, 1),
            governor=None,
            memory_total_bytes=3 * 2**30,
        )
    )
    assert facts.cpu == "X"
    assert facts.cores == "4 (usable: CPU 0-1)"
    assert facts.memory == "3.0 GiB"
    assert facts.governor == "not exposed (VM or container)"
    assert facts.kernel == NOT_RECORDED
    # The table shows every fact under its label, in field order.
    rows = facts.rows()
    assert len(rows) == len(dataclasses.fields(facts)) and rows[0] == ("CPU", "X")
    assert dict(rows)["CPU governor"] == facts.governor
    assert dict(cores_per_role(PlacementSettings(server=(0, 1), loader=(2,), services=()))) == {
        "stack (server)": "0-1",
        "load generator": "2",
        "data services": NOT_RECORDED,
    }


def test_memory_per_stack_and_role_by_hand():
    store = Store(":memory:")
    run = start_run(store, "t", "name = 't'", settings(repeat=1))
    a = add_case(store, run, "a", "hello", {"workers": "4"}, "ok")
    b = add_case(store, run, "a", "sha256?n=1", {"workers": "4"}, "ok")
    add_level(
        store,
        a,
        _level(
            0,
            {"nginx": usage(rss_max_bytes=10 * MIB, rss_mean_bytes=8 * MIB), "loader": usage(50.0)},
        ),
    )
    add_level(
        store,
        a,
        _level(
            1,
            {
                "nginx": usage(
                    rss_max_bytes=30 * MIB, rss_mean_bytes=20 * MIB, processes_max=3, threads_max=5
                )
            },
        ),
    )
    add_level(
        store,
        b,
        _level(
            0,
            {
                "nginx": usage(
                    rss_max_bytes=20 * MIB, rss_mean_bytes=14 * MIB, processes_max=2, threads_max=7
                )
            },
        ),
    )
    analysis = analyse(store.load_run(run), resamples=50)
    rows = {(m.stack, m.role): m for m in memory(analysis)}
    nginx = rows[("a", "nginx")]
    assert nginx.peak_bytes == 30 * MIB  # the highest sample of any level
    assert nginx.mean_bytes == (8 + 20 + 14) * MIB // 3  # mean of the levels' means
    assert nginx.levels == 3
    assert (nginx.processes, nginx.threads) == (3, 7)  # the most counted in any level
    loader = rows[("a", "loader")]  # CPU but no process sampled: no figure, not a zero
    assert (loader.peak_bytes, loader.mean_bytes, loader.levels) == (None, None, 0)
    assert (loader.processes, loader.threads) == (None, None)
    ctx = build_context(analysis)
    table = memory_table(ctx)
    assert table.header[:4] == ["stack", "role", "processes", "threads"]
    assert table.rows[0][:4] == ["a", "nginx", "3", "7"]
    # the stack never recorded what it resolved at start: only what the suite set, said so
    assert [(p.stack, p.params, p.effective) for p in ctx.stack_params] == [
        ("a", (("workers", "4"),), False)
    ]
    store.set_effective_params([a, b], {"workers": "4", "jit": "off"})
    ctx = build_context(analyse(store.load_run(run), resamples=50))
    assert [(p.stack, p.params, p.effective) for p in ctx.stack_params] == [
        ("a", (("jit", "off"), ("workers", "4")), True)
    ]
    assert "resolved it when it started" in ctx.params_note
    assert ctx.suite_text == "name = 't'"
    assert dict(ctx.cores) == {"stack (server)": "0", "load generator": "1", "data services": "0"}
