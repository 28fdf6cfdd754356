"""`stackbench doctor`: is this machine fit for benchmarking, and what to change if not."""

import enum
import os
import resource
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from stackbench.environment import cpu_model, governor, read_text, tool_versions
from stackbench.inventory import load_inventory, unavailable_reason
from stackbench.paths import loadgen_binary
from stackbench.placement import allowed_cpus, default_placement, format_cpus


class Verdict(enum.Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    name: str
    verdict: Verdict
    value: str
    advice: str = ""


def check_cores() -> Check:
    cpus = allowed_cpus()
    p = default_placement(cpus)
    placement = (f"server on {format_cpus(p.server)}, loader on {format_cpus(p.loader)}")
    if len(cpus) < 2:
        return Check("cores", Verdict.WARN, f"{len(cpus)} usable ({placement})",
                     "server and loader share one core: results mix both; use a machine or "
                     "cgroup with at least 2 cores")
    return Check("cores", Verdict.OK, f"{len(cpus)} usable of {os.cpu_count()}; {placement}")


def check_pinning() -> Check:
    cpus = sorted(allowed_cpus())
    try:
        os.sched_setaffinity(0, {cpus[0]})
        os.sched_setaffinity(0, set(cpus))
    except OSError as exc:
        return Check("cpu pinning", Verdict.WARN, f"not permitted ({exc})",
                     "server and loader cannot be kept apart; run where sched_setaffinity works")
    return Check("cpu pinning", Verdict.OK, "sched_setaffinity works")


def check_governor() -> Check:
    gov = governor()
    if gov is None:
        return Check("cpu governor", Verdict.OK, "not exposed (VM or container)")
    if gov != "performance":
        return Check("cpu governor", Verdict.WARN, gov,
                     "frequency scaling adds noise: sudo cpupower frequency-set -g performance")
    return Check("cpu governor", Verdict.OK, gov)


def check_nofile(wanted: int = 20000) -> Check:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    value = f"soft {soft}, hard {hard}"
    if hard < wanted:
        return Check("open files", Verdict.WARN, value,
                     f"10,000 connections need ~{wanted} descriptors in the loader and server: "
                     f"raise the hard limit (ulimit -Hn {wanted} as root, or LimitNOFILE= / "
                     f"/etc/security/limits.conf); stackbench raises the soft limit itself")
    return Check("open files", Verdict.OK, value + " (stackbench raises soft to hard)")


def check_somaxconn() -> Check:
    value = read_text("/proc/sys/net/core/somaxconn")
    if value is None:
        return Check("somaxconn", Verdict.OK, "unknown")
    if int(value) < 4096:
        return Check("somaxconn", Verdict.WARN, value,
                     "accept queues overflow under thousands of connections: "
                     "sudo sysctl -w net.core.somaxconn=65535")
    return Check("somaxconn", Verdict.OK, value)


def check_ports() -> Check:
    rng = read_text("/proc/sys/net/ipv4/ip_local_port_range")
    reuse = read_text("/proc/sys/net/ipv4/tcp_tw_reuse")
    if rng is None:
        return Check("ephemeral ports", Verdict.OK, "unknown")
    lo, hi = (int(x) for x in rng.split())
    value = f"{lo}-{hi} ({hi - lo + 1} ports), tcp_tw_reuse={reuse}"
    if hi - lo + 1 < 50000 or reuse not in ("1", "2"):
        return Check("ephemeral ports", Verdict.WARN, value,
                     "runs without keep-alive leave sockets in TIME_WAIT and exhaust ports: "
                     "sudo sysctl -w net.ipv4.ip_local_port_range='1024 65535' "
                     "net.ipv4.tcp_tw_reuse=1")
    return Check("ephemeral ports", Verdict.OK, value)


def check_loadgen() -> Check:
    binary = loadgen_binary()
    if not binary.exists():
        return Check("stackbench-load", Verdict.FAIL, "not built",
                     "run scripts/setup.sh (builds loadgen/ with cargo)")
    return Check("stackbench-load", Verdict.OK, str(binary))


def suite_limits(max_connections: int, keepalive_off: bool, total_requests: int | None
                 ) -> list[Check]:
    """What a suite needs from this machine: descriptors, accept queue, ephemeral ports."""
    checks = []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max_connections + 512  # loader sockets, plus the server's own files and logs
    if needed > hard:
        checks.append(Check("open files for this suite", Verdict.FAIL,
                            f"{max_connections} connections need ~{needed}, hard limit {hard}",
                            f"raise it before the run: ulimit -Hn {needed * 2} (as root) or "
                            f"LimitNOFILE={needed * 2} / nofile in /etc/security/limits.conf; "
                            "levels above the limit will show too-many-files errors"))
    somaxconn = read_text("/proc/sys/net/core/somaxconn")
    if somaxconn and int(somaxconn) < max_connections:
        checks.append(Check("accept queue for this suite", Verdict.WARN,
                            f"net.core.somaxconn={somaxconn} < {max_connections} connections",
                            "connection bursts will be dropped and retried: sudo sysctl -w "
                            "net.core.somaxconn=65535"))
    rng = read_text("/proc/sys/net/ipv4/ip_local_port_range")
    if keepalive_off and rng:
        lo, hi = (int(x) for x in rng.split())
        ports = hi - lo + 1
        if total_requests is None or total_requests > ports:
            checks.append(Check("ephemeral ports for this suite", Verdict.WARN,
                                f"{ports} local ports; without keep-alive every request uses "
                                "one, held ~60 s in TIME_WAIT",
                                "sudo sysctl -w net.ipv4.ip_local_port_range='1024 65535' "
                                "net.ipv4.tcp_tw_reuse=1; otherwise expect address-exhausted "
                                "errors at high rates"))
    return checks


def all_checks() -> list[Check]:
    return [check_cores(), check_pinning(), check_governor(), check_nofile(), check_somaxconn(),
            check_ports(), check_loadgen()]


def run_doctor(console: Console, suite_path: Path | None = None) -> None:
    console.print(f"[bold]machine[/]: {cpu_model()}")
    checks = all_checks()
    if suite_path is not None:
        from stackbench.plan import build_plan
        from stackbench.runcmd import plan_limits
        from stackbench.suite import parse_suite

        plan = build_plan(parse_suite(suite_path), load_inventory(), None, None)
        checks += plan_limits(plan) or [Check(f"limits for {suite_path.name}", Verdict.OK,
                                              "enough for the suite's largest level")]
    table = Table(title="checks")
    for col in ("check", "", "value", "advice"):
        table.add_column(col)
    colours = {Verdict.OK: "green", Verdict.WARN: "yellow", Verdict.FAIL: "red"}
    for c in checks:
        table.add_row(c.name, f"[{colours[c.verdict]}]{c.verdict.value}[/]", c.value, c.advice)
    console.print(table)
    tools = Table(title="runtimes and servers")
    tools.add_column("tool")
    tools.add_column("version")
    for name, version in tool_versions().items():
        tools.add_row(name, version)
    console.print(tools)
    stacks = Table(title="stacks")
    stacks.add_column("stack")
    stacks.add_column("status")
    for name, entry in load_inventory().items():
        stacks.add_row(name, "[green]available[/]" if entry.status.available
                       else f"[red]unavailable[/]: {unavailable_reason(entry)}")
    console.print(stacks)
