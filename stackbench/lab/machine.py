"""Is this machine fit for benchmarking, and for a given plan? Checks with concrete advice."""

import enum
import os
import resource
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from stackbench.config.loadspec import KeepAlive, Mode
from stackbench.config.paths import REPO_ROOT, loadgen_binary
from stackbench.config.placement import allowed_cpus, default_placement, format_cpus
from stackbench.config.plan import Plan
from stackbench.lab.environment import read_text


class Verdict(enum.Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    """One check: its verdict, what was found, and the fix: `hint` says what to do, `commands`
    are the shell commands that do it (run as root), each printed on a line of its own so that
    copy and paste works at any width."""

    name: str
    verdict: Verdict
    value: str
    hint: str = ""
    commands: tuple[str, ...] = ()

    @property
    def advice(self) -> str:
        """The fix in one line (plans, stored warnings, other hosts' checks)."""
        if not self.commands:
            return self.hint
        return f"{self.hint}: {'; '.join(self.commands)}" if self.hint else "; ".join(self.commands)


SYSCTL_KEEP = "to keep the settings after a reboot, add them to /etc/sysctl.d/"
CPU_SYS = Path("/sys/devices/system/cpu")


def check_cores() -> Check:
    cpus = allowed_cpus()
    p = default_placement(cpus)
    placement = f"server on {format_cpus(p.server)}, loader on {format_cpus(p.loader)}"
    if len(cpus) < 2:
        return Check(
            "cores",
            Verdict.WARN,
            f"{len(cpus)} usable ({placement})",
            "server and loader share one core: results mix both; use a machine or "
            "cgroup with at least 2 cores",
        )
    return Check("cores", Verdict.OK, f"{len(cpus)} usable of {os.cpu_count()}; {placement}")


def check_pinning() -> Check:
    cpus = sorted(allowed_cpus())
    try:
        os.sched_setaffinity(0, {cpus[0]})
        os.sched_setaffinity(0, set(cpus))
    except OSError as exc:
        return Check(
            "cpu pinning",
            Verdict.WARN,
            f"not permitted ({exc})",
            "server and loader cannot be kept apart; run where sched_setaffinity works",
        )
    return Check("cpu pinning", Verdict.OK, "sched_setaffinity works")


def check_governor(cpus: Iterable[int] | None = None, root: Path = CPU_SYS) -> Check:
    """The frequency scaling governor of the usable cores ('performance' holds the clock)."""
    found = {
        cpu: read_text(str(root / f"cpu{cpu}" / "cpufreq" / "scaling_governor"))
        for cpu in sorted(allowed_cpus() if cpus is None else cpus)
    }
    visible = {cpu: gov for cpu, gov in found.items() if gov is not None}
    if not visible:
        return Check(
            "cpu governor",
            Verdict.OK,
            "not visible here (a VM or container: the host sets the clock)",
        )
    slow = {cpu: gov for cpu, gov in visible.items() if gov != "performance"}
    if slow:
        shown = ", ".join(f"CPU {cpu} {gov}" for cpu, gov in slow.items())
        return Check(
            "cpu governor",
            Verdict.WARN,
            shown,
            "frequency scaling changes the clock under load and adds noise; set "
            "'performance' on every core",
            ("echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",),
        )
    return Check("cpu governor", Verdict.OK, "performance on every usable core")


# The machine-wide turbo switches: (file under CPU_SYS, value meaning on, value that turns
# it off, what the check shows when on / off).
TURBO_SWITCHES = (
    ("intel_pstate/no_turbo", "0", "1", "on (intel_pstate)", "off (intel_pstate)"),
    ("cpufreq/boost", "1", "0", "boost on (cpufreq)", "boost off (cpufreq)"),
)


def check_turbo(root: Path = CPU_SYS) -> Check:
    """Turbo (Intel) or boost (AMD, acpi-cpufreq): the clock then depends on temperature and
    on how many cores are busy, so a level's figure depends on what ran before it."""
    for name, on_value, off_value, shown_on, shown_off in TURBO_SWITCHES:
        value = read_text(str(root / name))
        if value is None:
            continue
        if value == on_value:
            return Check(
                "turbo", Verdict.WARN, shown_on, TURBO_HINT, (f"echo {off_value} > {root / name}",)
            )
        return Check("turbo", Verdict.OK, shown_off)
    policies = sorted((root / "cpufreq").glob("policy*/boost"))
    on = [p.parent.name for p in policies if read_text(str(p)) == "1"]
    if on:
        return Check(
            "turbo",
            Verdict.WARN,
            f"boost on ({', '.join(on)})",
            TURBO_HINT,
            (f"echo 0 | tee {root / 'cpufreq'}/policy*/boost",),
        )
    if policies:
        return Check("turbo", Verdict.OK, "boost off")
    return Check("turbo", Verdict.OK, "not visible here (a VM or container: the host decides)")


TURBO_HINT = (
    "the clock then follows temperature and the other cores' load, so figures drift "
    "during a run; turn it off for the benchmark"
)


def check_nofile(wanted: int = 20000) -> Check:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    value = f"soft {soft}, hard {hard}"
    if hard < wanted:
        return Check(
            "open files",
            Verdict.WARN,
            value,
            f"10,000 connections need ~{wanted} descriptors in the loader and server: "
            f"raise the hard limit in this shell (or LimitNOFILE= / "
            f"/etc/security/limits.conf to keep it); stackbench raises the soft "
            f"limit itself",
            (f"ulimit -Hn {wanted}",),
        )
    return Check("open files", Verdict.OK, value + " (stackbench raises soft to hard)")


def check_somaxconn() -> Check:
    value = read_text("/proc/sys/net/core/somaxconn")
    if value is None:
        return Check("somaxconn", Verdict.OK, "unknown")
    if int(value) < 4096:
        return Check(
            "somaxconn",
            Verdict.WARN,
            value,
            f"accept queues overflow under thousands of connections; {SYSCTL_KEEP}",
            ("sysctl -w net.core.somaxconn=65535",),
        )
    return Check("somaxconn", Verdict.OK, value)


PORT_COMMANDS = (
    "sysctl -w net.ipv4.ip_local_port_range='1024 65535'",
    "sysctl -w net.ipv4.tcp_tw_reuse=1",
)


def check_ports() -> Check:
    rng = read_text("/proc/sys/net/ipv4/ip_local_port_range")
    reuse = read_text("/proc/sys/net/ipv4/tcp_tw_reuse")
    if rng is None:
        return Check("ephemeral ports", Verdict.OK, "unknown")
    lo, hi = (int(x) for x in rng.split())
    value = f"{lo}-{hi} ({hi - lo + 1} ports), tcp_tw_reuse={reuse}"
    if hi - lo + 1 < 50000 or reuse not in ("1", "2"):
        return Check(
            "ephemeral ports",
            Verdict.WARN,
            value,
            f"runs without keep-alive leave sockets in TIME_WAIT and exhaust ports; {SYSCTL_KEEP}",
            PORT_COMMANDS,
        )
    return Check("ephemeral ports", Verdict.OK, value)


def check_loadgen() -> Check:
    binary = loadgen_binary()
    if not binary.exists():
        return Check(
            "stackbench-load",
            Verdict.FAIL,
            f"not built ({binary})",
            "build the native loader (scripts/setup.sh does it too)",
            (
                f"cargo build --release --locked --manifest-path "
                f"{REPO_ROOT / 'loadgen' / 'Cargo.toml'}",
            ),
        )
    return Check("stackbench-load", Verdict.OK, str(binary))


def suite_limits(
    max_connections: int, keepalive_off: bool, total_requests: int | None
) -> list[Check]:
    """What a suite needs from this machine: descriptors, accept queue, ephemeral ports."""
    checks = []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max_connections + 512  # loader sockets, plus the server's own files and logs
    if needed > hard:
        checks.append(
            Check(
                "open files for this suite",
                Verdict.FAIL,
                f"{max_connections} connections need ~{needed}, hard limit {hard}",
                f"raise it in this shell before the run (or LimitNOFILE="
                f"{needed * 2} / nofile in /etc/security/limits.conf to keep it); "
                "levels above the limit will show too-many-files errors",
                (f"ulimit -Hn {needed * 2}",),
            )
        )
    somaxconn = read_text("/proc/sys/net/core/somaxconn")
    if somaxconn and int(somaxconn) < max_connections:
        checks.append(
            Check(
                "accept queue for this suite",
                Verdict.WARN,
                f"net.core.somaxconn={somaxconn} < {max_connections} connections",
                f"connection bursts will be dropped and retried; {SYSCTL_KEEP}",
                ("sysctl -w net.core.somaxconn=65535",),
            )
        )
    rng = read_text("/proc/sys/net/ipv4/ip_local_port_range")
    if keepalive_off and rng:
        lo, hi = (int(x) for x in rng.split())
        ports = hi - lo + 1
        if total_requests is None or total_requests > ports:
            checks.append(
                Check(
                    "ephemeral ports for this suite",
                    Verdict.WARN,
                    f"{ports} local ports; without keep-alive every request uses "
                    "one, held ~60 s in TIME_WAIT",
                    "widen the port range and reuse TIME_WAIT sockets, or expect "
                    "address-exhausted errors at high rates; "
                    f"{SYSCTL_KEEP}",
                    PORT_COMMANDS,
                )
            )
    return checks


def all_checks() -> list[Check]:
    return [
        check_cores(),
        check_pinning(),
        check_governor(),
        check_turbo(),
        check_nofile(),
        check_somaxconn(),
        check_ports(),
        check_loadgen(),
    ]


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
