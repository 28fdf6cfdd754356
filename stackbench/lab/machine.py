"""Is this machine fit for benchmarking, and for a given plan? Checks with concrete advice."""

import enum
import os
import resource
from dataclasses import dataclass

from stackbench.config.loadspec import KeepAlive, Mode
from stackbench.config.paths import loadgen_binary
from stackbench.config.placement import allowed_cpus, default_placement, format_cpus
from stackbench.config.plan import Plan
from stackbench.lab.environment import governor, read_text


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



def plan_limits(plan: Plan) -> list[Check]:
    """The limits of this machine that the plan's largest level would exceed."""
    suite = plan.suite
    levels = [lv.value for s in plan.stacks for c in s.cases for lv in c.levels]
    if suite.load.mode is Mode.OPEN or not levels:
        return []
    biggest = int(max(levels))
    per_conn = suite.load.requests_per_connection
    total = per_conn * biggest if per_conn else suite.load.requests
    return suite_limits(biggest, suite.load.keepalive is KeepAlive.OFF, total)
