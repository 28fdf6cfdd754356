"""Is this machine fit for benchmarking, and for a given plan? Checks with concrete advice."""

import enum
import os
import resource
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from stackbench.config.loadspec import DriverKind, KeepAlive, Mode
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


# Descriptors besides the loader's sockets: the server's own files and logs.
FD_RESERVE = 512
# Linux's CAP_SYS_RESOURCE (capability bit 24): may raise a hard resource limit.
CAP_SYS_RESOURCE = 24
# The native loader spreads a loopback target's connections over at most this many source
# addresses of 127.0.0.0/8 (loadgen/src/source.rs MAX_SOURCES), each with the whole port range.
LOADER_SOURCES = 64


def may_raise_hard_limits(status: str | None = None) -> bool:
    """Does this process hold CAP_SYS_RESOURCE (root usually does; a container may drop it)?"""
    text = status if status is not None else read_text("/proc/self/status")
    for line in (text or "").splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    return False


def nofile_ceiling() -> int:
    """The highest RLIMIT_NOFILE this process (and the loader it starts) can reach: fs.nr_open
    with CAP_SYS_RESOURCE, else the hard limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    nr_open = read_text("/proc/sys/fs/nr_open")
    if may_raise_hard_limits() and nr_open:
        return max(hard, int(nr_open))
    return hard


@dataclass(frozen=True)
class PortSettings:
    """The kernel settings that decide how many local ports a run holds (source.rs reads
    the same)."""

    ports: int  # ip_local_port_range, per source address and target
    fin_timeout_s: float  # tcp_fin_timeout: an orphan waits this long in FIN_WAIT2
    max_orphans: int  # tcp_max_orphans: beyond it the kernel resets orphans, freeing ports

    @classmethod
    def read(cls) -> "PortSettings | None":
        rng = read_text("/proc/sys/net/ipv4/ip_local_port_range")
        if rng is None:
            return None
        lo, hi = (int(x) for x in rng.split())
        fin = read_text("/proc/sys/net/ipv4/tcp_fin_timeout")
        orphans = read_text("/proc/sys/net/ipv4/tcp_max_orphans")
        return cls(hi - lo + 1, float(fin or 60), int(orphans or 65536))


def ports_needed(connections: int, timeout_s: float, ports: PortSettings) -> int:
    """Local ports `connections` may hold at once in the worst case (loadgen/src/source.rs
    `ports_needed`): every connection open, plus one orphan per connection and timeout whose
    server never closed its side, for tcp_fin_timeout, as many as the kernel keeps."""
    per_connection = int(ports.fin_timeout_s // timeout_s) if timeout_s > 0 else 0
    return connections + min(connections * per_connection, ports.max_orphans)


def suite_limits(
    max_connections: int,
    keepalive_off: bool,
    timeout_s: float = 3.0,
    sources: int = 1,
    ports: PortSettings | None = None,
) -> list[Check]:
    """What a suite's largest level needs from this machine: descriptors (one a connection in
    the loader, which raises its limit as far as it may), accept queue, local ports (`sources`:
    the source addresses the loader spreads its connections over)."""
    checks = []
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = nofile_ceiling()
    needed = max_connections + FD_RESERVE
    if needed > ceiling:
        checks.append(
            Check(
                "open files for this suite",
                Verdict.FAIL,
                f"{max_connections} connections need ~{needed}, hard limit {hard}"
                + ("" if ceiling == hard else f", can be raised to {ceiling}"),
                f"the largest level, {max_connections:,} connections, needs about {needed:,} "
                f"descriptors, more than RLIMIT_NOFILE can be raised to here ({ceiling:,}; "
                "raising the hard limit needs CAP_SYS_RESOURCE): raise it in this shell before "
                f"the run (or LimitNOFILE={needed * 2} / nofile in /etc/security/limits.conf to "
                "keep it); levels above the limit will show too-many-files errors",
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
    ports = ports or PortSettings.read()
    if keepalive_off and ports:
        held = ports_needed(max_connections, timeout_s, ports)
        offered = ports.ports * sources
        if held > offered:
            across = f" from {sources} source addresses" if sources > 1 else ""
            checks.append(
                Check(
                    "ephemeral ports for this suite",
                    Verdict.WARN,
                    f"up to {held:,} ports held, {offered:,} offered{across}",
                    f"the largest level, {max_connections:,} connections without keep-alive "
                    f"and a {timeout_s:g}-s timeout, can hold up to {held:,} local ports (each "
                    f"timed-out connection keeps its port up to tcp_fin_timeout, "
                    f"{ports.fin_timeout_s:g} s), more than the {offered:,} this machine "
                    f"offers{across}, so connects may fail with address-exhausted errors: "
                    f"widen the port range; {SYSCTL_KEEP}",
                    PORT_COMMANDS[:1],
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
    # The native loader spreads its connections over source addresses only toward loopback:
    # a server of this machine, never one on another host or one the user runs.
    local = suite.placement.server_host is None and not suite.placement.loader_hosts
    loopback = local and not suite.external and suite.load.driver is DriverKind.NATIVE
    return suite_limits(
        int(max(levels)),
        suite.load.keepalive is KeepAlive.OFF,
        suite.load.timeout_s,
        LOADER_SOURCES if loopback else 1,
    )
