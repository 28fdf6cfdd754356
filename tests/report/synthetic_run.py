"""A plausible stored run without servers: what the store would hold after a short suite.

Three stacks at 25/100/300 connections, 3 repetitions, two workloads, full native-driver
records (HdrHistogram, per-second series, per-role CPU and RSS), an SLO, a stack whose levels
turn invalid under load and an unavailable stack whose reason has square brackets (it must
survive the terminal as text, not be eaten as markup). Deterministic (seeded).
"""

import math
import random
from typing import Any

import msgspec
from hdrh.histogram import HdrHistogram

from stackbench.config.measured import RoleUsage
from stackbench.store.records import (
    CaseRecord,
    Environment,
    LevelFlag,
    LevelRecord,
    RunRecord,
    RunSettings,
    Superseded,
    VerificationRecord,
    dec_hook,
)
from stackbench.store.store import Store
from tests.measured import second
from tests.measured import usage as role_usage

LEVELS = (25, 100, 300)
REPEAT = 5  # the fewest repetitions with which a rank test can name a winner
DURATION_S = 5.0
WARMUP_S = 1.0
# stack -> (capacity req/s, base latency µs, server roles)
STACKS = {
    "go-nethttp": (42_000.0, 450.0, ("server",)),
    "node": (21_000.0, 900.0, ("node",)),
    "php-fpm-nginx": (9_000.0, 2_400.0, ("php-fpm", "nginx")),
}
WORKLOADS = {"hello": 1.0, "sha256?n=10": 0.12}  # share of the hello capacity
UNAVAILABLE_REASON = "swoole extension missing [epoll] — install: pecl install swoole"
SLO = {
    "percentile": 99.0,
    "latency_ms": 20.0,
    "max_error_rate": 0.01,
    "stop_after_failures": 0,
    "gate": True,
}
ENVIRONMENT = {
    "hostname": "bench-1",
    "cpu_model": "AMD EPYC 7B13 (synthetic)",
    "cores": 2,
    "cores_allowed": [0, 1],
    "memory_total_bytes": 8 * 2**30,
    "kernel": "6.1.0-18-amd64",
    "os": "Debian 12.5",
    "governor": None,
    "somaxconn": "4096",
    "ip_local_port_range": "32768\t60999",
    "tcp_tw_reuse": "2",
    "python": "3.11.2",
    "stackbench": "0.1.0",
    "git_rev": "96de583",
    "versions": {
        "go": "go version go1.22.1 linux/amd64",
        "node": "v20.11.0",
        "php-fpm": "PHP 8.2.7 (fpm-fcgi)",
        "nginx": "nginx version: nginx/1.22.1",
        "stackbench-load": "stackbench-load 0.1.0",
    },
}
SUITE_TEXT = """name = "synthetic"
stacks = ["go-nethttp", "node", "php-fpm-nginx", "php-swoole"]
workloads = ["hello", "sha256?n=10"]

[load]
connections = [25, 100, 300]
duration_s = 5
warmup_s = 1
repeat = 5

[slo]
percentile = 99
latency_ms = 20
"""


def settings(**changes: Any) -> dict[str, Any]:
    return {
        "mode": "closed",
        "level_kind": "connections",
        "keepalive": "on",
        "driver": "native",
        "duration_s": DURATION_S,
        "requests": None,
        "requests_per_connection": None,
        "warmup_s": WARMUP_S,
        "timeout_s": 10.0,
        "pause_s": 1.0,
        "repeat": REPEAT,
        "threads": 1,
        "pipeline": 1,
        "jit_warmup": True,
        "levels": list(LEVELS),
        "max_error_rate": 0.01,
        "variant": "",
        "description": "",
        "slo": SLO,
        "search": None,
        "script_iterations": 0,
        "variants": {},
        "workload_levels": {},
        "workload_durations": {},
        "placement": {"server": [0], "loader": [1], "services": [0]},
        **changes,
    }


# The store takes typed records; these build them from plain values (shared by the tests).
def start_run(
    store: Store,
    name: str,
    text: str = "",
    run_settings: dict[str, Any] | None = None,
    environment: dict[str, Any] | None = None,
    path: str = "suite.toml",
) -> int:
    return store.start_run(
        RunRecord(
            suite_name=name,
            suite_path=path,
            suite_text=text,
            settings=msgspec.convert(run_settings or settings(), RunSettings),
            environment=msgspec.convert(environment or {}, Environment),
            started_at=1_717_000_000.0,
        )
    )


def add_case(
    store: Store,
    run: int,
    stack: str,
    label: str,
    params: dict[str, str] | None = None,
    status: str = "pending",
    reason: str = "",
) -> int:
    return store.add_case(
        CaseRecord(
            run_id=run,
            stack=stack,
            workload=label.split("?")[0],
            label=label,
            path="/" + label,
            params=params or {},
            status=status,
            reason=reason,
        )
    )  # type: ignore[arg-type]


def add_level(store: Store, case: int, values: dict[str, Any]) -> int:
    return store.add_level(
        msgspec.convert(
            {"usage": {}, "command": "", **values, "case_id": case}, LevelRecord, dec_hook=dec_hook
        )
    )


def add_verification(store: Store, run: int, stack: str, workload: str, ok: bool = True) -> None:
    store.add_verification(
        VerificationRecord(
            run_id=run, stack=stack, workload=workload, ok=ok, checked=4, failures=(), at=0.0
        )
    )


def _histogram(rng: random.Random, median_us: float, spread: float, completed: int) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    samples = 400
    weight = max(1, completed // samples)
    for _ in range(samples):
        value = median_us * math.exp(rng.gauss(0.0, spread))
        h.record_value(max(1, int(value)), weight)
    return h.encode().decode("ascii")


def _level(
    rng: random.Random, stack: str, workload: str, index: int, conns: int, rep: int
) -> dict[str, object]:
    capacity, base_us, roles = STACKS[stack]
    capacity *= WORKLOADS[workload]
    rps = capacity * (1.0 - math.exp(-conns / 40.0)) * rng.uniform(0.97, 1.03)
    p50 = max(base_us / WORKLOADS[workload], 1e6 * conns / rps * 0.9)
    spread = 0.35 + 0.1 * index
    p99 = p50 * math.exp(2.33 * spread) * rng.uniform(0.95, 1.05)
    completed = int(rps * DURATION_S)
    failing = stack == "php-fpm-nginx" and conns == 300  # accept queue overflows
    errors = {"connect": 0, "reset": int(completed * 0.03) if failing else 0, "timeout": 0}
    flags = ["invalid: error rate 3.0% > 1.0%"] if failing else []
    if stack == "go-nethttp" and conns == 300:
        flags.append("loader-bound")
    usage: dict[str, RoleUsage] = {}
    for i, role in enumerate(roles):
        usage[role] = role_usage(
            95.0 / len(roles) * (1 - math.exp(-conns / 60)),
            rss_max_bytes=(30 + 20 * i + conns / 10) * 2**20,
            rss_mean_bytes=(28 + 20 * i + conns / 12) * 2**20,
            threads_max=8,
            processes_max=1 + i,
        )
    usage["loader"] = role_usage(
        40.0 + conns / 10, rss_max_bytes=12 * 2**20, rss_mean_bytes=11 * 2**20
    )
    series = [
        second(
            t,
            rps * (0.5 if t in (1, 5) else rng.uniform(0.95, 1.05)),
            p50_us=p50 * rng.uniform(0.9, 1.1),
            p99_us=p99 * rng.uniform(0.8, 1.2),
        )
        for t in range(1, 6)
    ]
    return {
        "level_index": index,
        "level_value": float(conns),
        "repetition": rep,
        "driver": "native",
        "mode": "closed",
        "keepalive": "on",
        "started_at": 1_717_000_000.0 + 10 * index + rep,
        "duration_s": DURATION_S,
        "completed": completed,
        "ok": completed - sum(errors.values()),
        "errors": errors,
        "requests_per_s": rps,
        "latency_us": {
            "min": p50 / 4,
            "p50": p50,
            "p75": p50 * 1.3,
            "p80": p50 * 1.5,
            "p90": p50 * 1.8,
            "p99": p99,
            "p99_9": p99 * 1.6,
            "max": p99 * 3,
            "mean": p50 * 1.1,
            "stdev": p50 / 2,
        },
        "histogram": _histogram(rng, p50, spread, completed),
        "timeseries": series,
        "loader_cpu_s": (1.2, 0.8),
        "bytes_read": completed * 150,
        "usage": usage,
        "flags": flags,
        "status": "invalid" if failing else "ok",
        "command": "stackbench-load ...",
    }


def fill(store: Store, seed: int = 7) -> int:
    """Store the synthetic run; returns its id."""
    rng = random.Random(seed)
    run = start_run(
        store, "synthetic", SUITE_TEXT, settings(), ENVIRONMENT, "suites/synthetic.toml"
    )
    for stack in STACKS:
        params = {"workers": "2"} if stack == "php-fpm-nginx" else {}
        for workload in WORKLOADS:
            add_verification(store, run, stack, workload.split("?")[0])
            case = add_case(store, run, stack, workload, params)
            for index, conns in enumerate(LEVELS):
                for rep in range(REPEAT):
                    add_level(store, case, _level(rng, stack, workload, index, conns, rep))
            store.set_case_status(case, "ok")
    for workload in WORKLOADS:
        add_case(
            store, run, "php-swoole", workload, status="unavailable", reason=UNAVAILABLE_REASON
        )
    store.finish_run(run, "complete")
    return run


# What the judge said of the superseded measurements `supersede_some` adds.
SUPERSEDED_WHY = "other processes used 13.0% of core 0 (server), more than the 2% noise band allows"


def _disturbed_copy(lv: LevelRecord, superseded: Superseded, **changes: Any) -> LevelRecord:
    """`lv` as a disturbed machine would have measured it: a third of its answers, flagged."""
    series = tuple(
        msgspec.structs.replace(s, completed=s.completed // 3) for s in lv.timeseries or ()
    )
    values = {f: getattr(lv, f) for f in LevelRecord.__struct_fields__}
    values.update(
        completed=lv.completed // 3,
        ok=lv.ok // 3,
        requests_per_s=lv.requests_per_s / 3,
        latency_us={k: v * 3 for k, v in lv.latency_us.items()},
        timeseries=series or None,
        flags=(*lv.flags, LevelFlag.DISTURBED.detail(SUPERSEDED_WHY)),
        superseded=superseded,
        **changes,
    )
    return LevelRecord(**values)


def supersede_some(store: Store, run: int) -> int:
    """Add to a stored run what a disturbed machine leaves: first measurements marked
    superseded, after the run's levels (which keep their ids). One per case, of its first
    level's first repetition, replaced by that level's standing record; and one of a level
    beyond the sweep, whose run stopped before measuring it again. Their figures are far from
    every standing one: a reader that counted them would compute something else. Returns
    how many it added."""
    data = store.load_run(run)
    firsts = [lv for lv in data.levels if (lv.level_index, lv.repetition) == (0, 0)]
    for lv in firsts:
        store.add_level(_disturbed_copy(lv, Superseded(why=SUPERSEDED_WHY, by=lv.id)))
    beyond = _disturbed_copy(
        firsts[0],
        Superseded(why=SUPERSEDED_WHY),
        level_index=len(LEVELS),
        level_value=1000.0,
    )
    store.add_level(beyond)
    return len(firsts) + 1
