"""`stackbench hosts check` and `stackbench hosts setup`: are the hosts of a multi-host run
ready, and install stackbench's dependencies on them.

`check` opens every host the way a run does (engine/hosts.py `start_agent`: the SSH login with
its key checked, `stackbench agent` there, its version, its clock offset by remote/clock.py),
then asks the agent for its readiness (remote/readiness.py: Python, the native loader, every
stack's availability, the open-files limit and somaxconn as `doctor` judges them) and compares
it with this machine's.

A failed check (exit 3) is one sentence with what to do; limits below what `doctor` advises
are warnings, as they are in `doctor`.
"""

import contextlib
import os
import select
import subprocess
import time
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.text import Text

from stackbench.config.hosts import Host, HostsFile, load_hosts
from stackbench.config.paths import REPO_ROOT
from stackbench.engine.hosts import start_agent
from stackbench.errors import EnvironmentProblem, ExitCode, StackbenchError
from stackbench.lab.environment import git_revision, read_text
from stackbench.lab.machine import Verdict
from stackbench.remote.clock import ClockSample
from stackbench.remote.protocol import HostReadiness
from stackbench.remote.readiness import local_readiness
from stackbench.remote.ssh import SshLink, tail
from stackbench.report.termtable import Cell, Col, print_table

VERSION_TIMEOUT_S = 60.0
SETUP_TIMEOUT_S = 3600.0  # packages, a venv and a cargo build on a fresh machine
CLOCK_WARN_S = 1.0
PARALLEL_CHECKS = 8
MAX_LINE_BYTES = 1024 * 1024
BOOT_ID = "/proc/sys/kernel/random/boot_id"


@dataclass
class HostReport:
    """One host's row in the table, and its problems."""

    host: Host
    ssh: str = "-"
    version: str = "-"
    runtimes: str = "-"
    nofile: str = "-"
    somaxconn: str = "-"
    clock: str = "-"
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- pure judgement --------------------------------------------------------------------------


def format_clock(sample: ClockSample) -> str:
    return f"{sample.offset_s * 1000:+.2f} ms ± {sample.delay_s * 500:.2f} ms"


def parse_version(output: str) -> str | None:
    """'stackbench, version 0.1.0' (click's --version) -> '0.1.0'."""
    words = output.strip().split()
    return words[-1] if len(words) == 3 and words[1] == "version" else None


def judge_readiness(
    report: HostReport,
    here: HostReadiness,
    there: HostReadiness,
    needed_stacks: Collection[str] | None = None,
) -> None:
    """Compare a host's readiness with this machine's: the stacks available here (or only
    `needed_stacks`) and the native loader must be there too; limits warn as in `doctor`."""
    name = report.host.name
    wanted = [
        s
        for s, why in here.stacks.items()
        if not why and (needed_stacks is None or s in needed_stacks)
    ]
    missing = [s for s in wanted if there.stacks.get(s, "not there") != ""]
    available = sum(1 for why in there.stacks.values() if not why)
    report.runtimes = (
        f"py {there.python}, {'loader' if there.loader else 'no loader'}, "
        f"{available}/{len(there.stacks)} stacks"
    )
    if missing:
        reasons = "; ".join(f"{s}: {there.stacks.get(s) or 'not there'}" for s in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        report.failures.append(
            f"{name} lacks stacks available here ({reasons}{more}): run `stackbench hosts "
            f"setup`, and install the runtimes it does not (`stackbench stacks` on {name} says "
            "how)"
        )
    if here.loader and not there.loader:
        report.failures.append(
            f"{name} has no native loader (loadgen/target/release/"
            "stackbench-load): run `stackbench hosts setup` (it builds it)"
        )
    if here.git_rev and there.git_rev and here.git_rev != there.git_rev:
        report.warnings.append(
            f"{name}'s checkout is at {there.git_rev}, this one at "
            f"{here.git_rev}: results may differ; check out the same revision"
        )
    report.nofile = str(there.nofile_hard)
    report.somaxconn = "?" if there.somaxconn is None else str(there.somaxconn)
    for limit in there.limits:
        if limit.verdict != Verdict.OK.value:
            report.warnings.append(f"{name}: {limit.name} {limit.value}: {limit.advice}")


def judge_clock(report: HostReport, sample: ClockSample) -> None:
    report.clock = format_clock(sample)
    if abs(sample.offset_s) > CLOCK_WARN_S:
        report.warnings.append(
            f"{report.host.name}'s clock is {sample.offset_s:+.3f} s off this one's: runs "
            "measure and correct it, but run a time service there (chrony, "
            "systemd-timesyncd) so per-second series line up without it"
        )


# --- the controller --------------------------------------------------------------------------


class LineReader:
    """Lines from a pipe, each within a deadline (a stalled host never hangs the check)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buffer = b""

    def read_line(self, timeout_s: float) -> bytes | None:
        """The next line without its newline; None at the end of the stream."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no answer within {timeout_s:g} s")
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._fd, 65536)
            if not chunk:
                line, self._buffer = self._buffer, b""
                return line or None
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE_BYTES:
                raise ValueError(f"a line longer than {MAX_LINE_BYTES} bytes")
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line


def _end(proc: "subprocess.Popen[bytes]") -> int:
    """Close the channel and reap ssh; killed if it lingers."""
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        status = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        status = proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()
    return status


def check_host(
    host: Host, here: HostReadiness, needed_stacks: Collection[str] | None = None
) -> HostReport:
    """One host checked through its agent, as a run would start it."""
    report = HostReport(host)
    try:
        with SshLink(host) as link:
            link.check()
            report.ssh = "ok"
            agent = start_agent(link)
            try:
                report.version = agent.info.version
                judge_readiness(report, here, agent.client.readiness(), needed_stacks)
                judge_clock(report, agent.clock)
            finally:
                agent.client.close()
    except StackbenchError as exc:  # the login, the agent (HostLost: it went silent) ...
        report.ssh = "failed" if report.ssh == "-" else report.ssh
        report.failures.append(str(exc))
    return report


def run_hosts_check(console: Console, hosts_file: Path | None, suite: Path | None) -> int:
    hosts = load_hosts(hosts_file, suite)
    here = local_readiness()
    with ThreadPoolExecutor(max_workers=min(PARALLEL_CHECKS, len(hosts.hosts))) as pool:
        reports = list(pool.map(lambda h: check_host(h, here), hosts.hosts.values()))
    print_reports(console, hosts, reports)
    return ExitCode.ENVIRONMENT if any(r.failures for r in reports) else ExitCode.OK


def print_reports(console: Console, hosts: HostsFile, reports: Sequence[HostReport]) -> None:
    rows: list[list[Cell]] = [
        [
            Text(r.host.name, style="red" if r.failures else ""),
            _endpoint(r.host),
            r.ssh,
            r.version,
            r.runtimes,
            r.nofile,
            r.somaxconn,
            r.clock,
        ]
        for r in reports
    ]
    print_table(
        console,
        f"hosts of {hosts.source}",
        [
            Col("host"),
            Col("address"),
            Col("ssh"),
            Col("stackbench"),
            Col("runtimes", wrap=True, min_width=20),
            Col("ulimit -n", "right"),
            Col("somaxconn", "right"),
            Col("clock offset", "right"),
        ],
        rows,
    )
    for report in reports:
        for failure in report.failures:
            console.print(Text.assemble(("failed: ", "red bold"), failure))
        for warning in report.warnings:
            console.print(Text.assemble(("warning: ", "yellow"), warning))
    failed = sum(1 for r in reports if r.failures)
    if failed:
        console.print(f"{failed} of {len(reports)} hosts failed a check")
    else:
        console.print(f"all {len(reports)} hosts ready (clock offsets measured from here)")


def _endpoint(host: Host) -> str:
    return host.address if host.port == 22 else f"{host.address}:{host.port}"


# --- hosts setup -----------------------------------------------------------------------------


def run_hosts_setup(console: Console, hosts_file: Path | None, suite: Path | None) -> int:
    """Run the installer (scripts/setup.sh of the host's checkout) on every host, once per
    machine and checkout. A host that is this machine with this checkout (the namespace test
    hosts) needs nothing: the local `make setup` did it."""
    hosts = load_hosts(hosts_file, suite)
    local_boot = read_text(BOOT_ID) or ""
    done: dict[tuple[str, str], str] = {}  # (boot id, checkout) -> the host set up there
    failed = 0
    for host in hosts.hosts.values():
        try:
            with SshLink(host) as link:
                ok = _setup_host(console, link, local_boot, done)
        except EnvironmentProblem as exc:
            console.print(Text.assemble(("failed: ", "red bold"), str(exc)))
            ok = False
        failed += 0 if ok else 1
    if failed:
        console.print(f"{failed} of {len(hosts.hosts)} hosts were not set up")
        return ExitCode.ENVIRONMENT
    console.print(f"all {len(hosts.hosts)} hosts set up; `stackbench hosts check` verifies them")
    return ExitCode.OK


def _setup_host(
    console: Console, link: SshLink, local_boot: str, done: dict[tuple[str, str], str]
) -> bool:
    host = link.host
    boot = link.run(["cat", BOOT_ID], timeout_s=VERSION_TIMEOUT_S).stdout.strip()
    key = (boot, str(host.checkout))
    if boot and boot == local_boot and os.path.realpath(host.checkout) == str(REPO_ROOT):
        console.print(
            f"{host.name}: this machine and this checkout ({REPO_ROOT}), e.g. a "
            "namespace test host: nothing to install, the local `make setup` covers it"
        )
        return _runs_stackbench(console, link)
    if key in done:
        console.print(f"{host.name}: same machine and checkout as {done[key]}: set up above")
        return True
    setup = f"{host.checkout}/scripts/setup.sh"
    if link.run(["test", "-f", setup], timeout_s=VERSION_TIMEOUT_S).returncode != 0:
        console.print(
            Text.assemble(
                ("failed: ", "red bold"),
                (
                    f"{host.name}: no stackbench checkout at {host.checkout} ({setup} is missing): "
                    f"clone the repository there at this revision "
                    f"({git_revision() or 'see git log'}), "
                    "or set checkout = in the hosts file"
                ),
            )
        )
        return False
    console.print(
        f"{host.name}: running {setup} (packages, venv, loader build: minutes on a fresh machine)"
    )
    status, last = stream(link, ["bash", setup], console, f"{host.name}| ", SETUP_TIMEOUT_S)
    if status != 0:
        console.print(
            Text.assemble(
                ("failed: ", "red bold"),
                (
                    f"{host.name}: {setup} exited {status} "
                    f"({' | '.join(last) or 'no output'}): fix "
                    "what it says there and run `stackbench hosts setup` again"
                ),
            )
        )
        return False
    done[key] = host.name
    return _runs_stackbench(console, link)


def _runs_stackbench(console: Console, link: SshLink) -> bool:
    host = link.host
    result = link.run([*host.stackbench, "--version"], timeout_s=VERSION_TIMEOUT_S)
    version = parse_version(result.stdout) if result.returncode == 0 else None
    if version is None:
        console.print(
            Text.assemble(
                ("failed: ", "red bold"),
                (
                    f"{host.name}: `{' '.join(host.stackbench)} --version` does not answer (exit "
                    f"{result.returncode}: {tail(result.stderr) or 'no message'}): "
                    "set stackbench = in "
                    "the hosts file to the stackbench command there"
                ),
            )
        )
        return False
    console.print(f"{host.name}: stackbench {version} runs there")
    return True


def stream(
    link: SshLink, argv: Sequence[str], console: Console, prefix: str, timeout_s: float
) -> tuple[int, list[str]]:
    """Run `argv` on the host, printing its output line by line: (exit status, last lines)."""
    proc = link.open(argv, stderr=subprocess.STDOUT)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()  # nothing to answer: a command asking for input gets EOF, not a hang
    lines = LineReader(proc.stdout)
    last: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        while (line := lines.read_line(max(0.0, deadline - time.monotonic()))) is not None:
            text = line.decode(errors="replace").rstrip()
            console.print(prefix + text, markup=False, highlight=False)
            last = (last + [text])[-3:] if text.strip() else last
    except (TimeoutError, ValueError) as exc:
        last.append(f"stopped: {exc}")
    return _end(proc), last
