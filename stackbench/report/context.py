"""Under which conditions the numbers hold: machine, cores per role, each stack's parameters,
tool versions, memory per role and the suite file. Pure functions of the stored run.

Only what the store holds is shown; anything it does not record is named as such (never
guessed from the machine the report happens to be written on).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from msgspec import UNSET

from stackbench.analysis.analysis import Analysis
from stackbench.analysis.figures import LOADER_ROLE, SERVICE_ROLES
from stackbench.config.placement import OTHER_ROLE
from stackbench.report.tables import TextTable
from stackbench.store.records import Environment, PlacementSettings
from stackbench.store.store import LevelRow

NOT_RECORDED = "not recorded in this run"
PARAMS_NOTE = (
    "Every parameter as each stack resolved it when it started: its stack.toml "
    "defaults, the suite's overrides, and the values derived from the cores it got "
    "(workers, children, pool sizes, JIT, keep-alive). A stack that never started "
    "shows only what the suite set."
)


@dataclass(frozen=True)
class StackParams:
    stack: str
    params: tuple[tuple[str, str], ...]  # (name, value) in force
    effective: bool = False  # as resolved at start (else only what the suite set)


@dataclass(frozen=True)
class MemoryRow:
    stack: str
    role: str
    peak_bytes: int | None  # highest RSS sample over every level of the stack
    mean_bytes: int | None  # mean over levels of each level's mean RSS
    levels: int  # levels with an RSS figure for this role
    # What ran, as the monitor counted it (not what the parameters say should): the most
    # processes and threads of the role's tree in any level.
    processes: int | None = None
    threads: int | None = None


def _labelled(label: str) -> Any:
    return field(metadata={"label": label})


@dataclass(frozen=True)
class MachineFacts:
    """The machine a run was measured on, each fact as the reports write it; read by field
    (`facts.governor`), shown as a table by `rows` with each field's label."""

    cpu: str = _labelled("CPU")
    cpu_crypto: str = _labelled("CPU hash/AES instructions")
    cores: str = _labelled("cores")
    memory: str = _labelled("memory")
    kernel: str = _labelled("kernel")
    os: str = _labelled("OS")
    governor: str = _labelled("CPU governor")
    somaxconn: str = _labelled("net.core.somaxconn")
    ephemeral_ports: str = _labelled("ephemeral ports")
    tcp_tw_reuse: str = _labelled("tcp_tw_reuse")
    host: str = _labelled("host")

    def rows(self) -> tuple[tuple[str, str], ...]:
        """(label, fact) in field order: the machine table of report.html and summary.md."""
        return tuple((f.metadata["label"], getattr(self, f.name)) for f in fields(self))


@dataclass(frozen=True)
class Context:
    machine: MachineFacts
    cores: tuple[tuple[str, str], ...]  # role -> cpus
    stack_params: tuple[StackParams, ...]
    params_note: str
    versions: tuple[tuple[str, str], ...]
    memory: tuple[MemoryRow, ...]
    memory_note: str
    suite_path: str
    suite_text: str


def gib(value: int) -> str:
    return f"{value / 2**30:.1f} GiB"


def mib(value: float | None) -> str:
    return "–" if value is None else f"{value / 2**20:,.1f} MiB"


def cpu_list(cpus: Sequence[int] | None) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    if not cpus:
        return NOT_RECORDED
    values = sorted(int(c) for c in cpus)
    runs: list[list[int]] = []
    for c in values:
        if runs and c == runs[-1][-1] + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _recorded(value: object, empty: str = NOT_RECORDED) -> str:
    if value is UNSET:
        return NOT_RECORDED
    return empty if value is None or value == "" else " ".join(str(value).split())


def machine(env: Environment) -> MachineFacts:
    cores = _recorded(env.cores)
    if env.cores_allowed is not UNSET:
        cores += f" (usable: CPU {cpu_list(env.cores_allowed)})"
    return MachineFacts(
        cpu=_recorded(env.cpu_model),
        cpu_crypto=_recorded(env.cpu_crypto),
        cores=cores,
        memory=NOT_RECORDED if env.memory_total_bytes is UNSET else gib(env.memory_total_bytes),
        kernel=_recorded(env.kernel),
        os=_recorded(env.os),
        governor=_recorded(env.governor, "not exposed (VM or container)"),
        somaxconn=_recorded(env.somaxconn),
        ephemeral_ports=_recorded(env.ip_local_port_range),
        tcp_tw_reuse=_recorded(env.tcp_tw_reuse),
        host=_recorded(env.hostname),
    )


def cores_per_role(placement: PlacementSettings) -> tuple[tuple[str, str], ...]:
    server_host, loader_hosts = placement.server_host, placement.loader_hosts
    services_host = placement.services_host or server_host
    open_memcached = (
        ", memcached on its network address without authentication (memcached_on_network)"
        if placement.memcached_on_network
        else ""
    )
    return (
        (
            "stack (server)",
            cpu_list(placement.server) + (f" on host {server_host}" if server_host else ""),
        ),
        (
            "load generator",
            cpu_list(placement.loader)
            + (f" on each of hosts {', '.join(loader_hosts)}" if loader_hosts else ""),
        ),
        (
            "data services",
            cpu_list(placement.services)
            + (f" on host {services_host}{open_memcached}" if services_host else ""),
        ),
    )


def hosts(env: Environment) -> tuple[tuple[str, str], ...]:
    """The other hosts of a multi-host run: address, host name, cores and measured clock
    offset (the loaders' start times were corrected by it); () for a one-machine run."""
    if env.hosts is UNSET:
        return ()
    return tuple(
        (
            name,
            f"{h.address} ({h.hostname}), CPUs {cpu_list(h.cores)}, stackbench {h.version}, "
            f"clock {h.clock_offset_s * 1000:+.2f} ms (round trip "
            f"{h.clock_delay_s * 1000:.2f} ms)",
        )
        for name, h in env.hosts.items()
    )


def versions(env: Environment) -> tuple[tuple[str, str], ...]:
    out = [
        ("stackbench", _recorded(env.stackbench)),
        ("git revision", _recorded(env.git_rev)),
        ("python", _recorded(env.python)),
    ]
    if env.versions is UNSET:
        out.append(("runtimes and servers", NOT_RECORDED))
    else:
        out += [(k, v.splitlines()[0] if v else "–") for k, v in env.versions.items()]
    return tuple(out)


def stack_params(a: Analysis) -> tuple[StackParams, ...]:
    """Per stack, every parameter as it resolved them at start (workers from the cores it got,
    pool sizes, JIT, keep-alive); for stacks that never started, what the suite set."""
    seen: dict[str, StackParams] = {}
    for c in a.data.cases:
        if c.stack not in seen or (c.effective_params and not seen[c.stack].effective):
            params = c.effective_params or c.params
            seen[c.stack] = StackParams(
                c.stack, tuple(sorted(params.items())), bool(c.effective_params)
            )
    return tuple(seen.values())


def _role_order(role: str) -> tuple[int, str]:
    group = 2 if role == LOADER_ROLE else 1 if role in SERVICE_ROLES else 0
    return group, role


def memory(a: Analysis) -> tuple[MemoryRow, ...]:
    """Peak and mean RSS per stack and role over every level the stack ran."""
    stack_of = {c.id: c.stack for c in a.data.cases}
    per: dict[tuple[str, str], list[LevelRow]] = {}
    for row in a.data.levels:
        for role in row.usage:
            if role != OTHER_ROLE:  # CPU time only: no memory of its own to show
                per.setdefault((stack_of[row.case_id], role), []).append(row)
    out = []
    for stack in a.stacks:
        roles = sorted({r for s, r in per if s == stack}, key=_role_order)
        for role in roles:
            rows = per[(stack, role)]
            # 0 bytes: no process of the role was sampled in that level, no figure
            sampled = [u for r in rows if (u := r.usage[role]).rss_max_bytes]
            peaks = [u.rss_max_bytes for u in sampled]
            means = [u.rss_mean_bytes for u in sampled]
            procs = [u.processes_max for r in rows if (u := r.usage[role]).processes_max]
            threads = [u.threads_max for r in rows if (u := r.usage[role]).threads_max]
            out.append(
                MemoryRow(
                    stack,
                    role,
                    int(max(peaks)) if peaks else None,
                    int(sum(means) / len(means)) if means else None,
                    max(len(peaks), len(means)),
                    int(max(procs)) if procs else None,
                    int(max(threads)) if threads else None,
                )
            )
    return tuple(out)


def memory_table(ctx: Context) -> TextTable:
    """Processes, threads and memory per stack and role, for every format alike."""
    return TextTable(
        ["stack", "role", "processes", "threads", "peak RSS", "mean RSS", "levels"],
        [
            [
                m.stack,
                m.role,
                _count(m.processes),
                _count(m.threads),
                mib(m.peak_bytes),
                mib(m.mean_bytes),
                str(m.levels),
            ]
            for m in ctx.memory
        ],
    )


def _count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def build_context(a: Analysis) -> Context:
    run = a.data.run
    env = run.environment
    mem = memory(a)
    note = (
        "Processes and threads: the most the monitor counted in the role's process tree "
        "during any level — what ran, derived from the cores and parameters above. RSS "
        "sampled every 0.25 s during each level, summed over the role's process tree; "
        "mean: the average of each level's mean."
    )
    if not any(m.peak_bytes is not None or m.mean_bytes is not None for m in mem):
        note = "No RSS figure is stored for this run (the monitor recorded no memory sample)."
    where = cores_per_role(a.settings.placement) + tuple(
        (f"host {name}", text) for name, text in hosts(env)
    )
    engines = sorted({lv.loader_engine for lv in a.data.levels if lv.loader_engine})
    tools = versions(env) + ((("stackbench-load engine", ", ".join(engines)),) if engines else ())
    return Context(
        machine(env),
        where,
        stack_params(a),
        PARAMS_NOTE,
        tools,
        mem,
        note,
        run.suite_path,
        run.suite_text,
    )
