"""Shared types and process handling for the backing services.

Each service runs as a real server in its own session (process group), with its output
in a log file inside the service's run directory, so stopping it never touches another
process and nothing of it survives its owner. When stackbench is root, every server runs as
the unprivileged stack user (lab/privilege.py), which owns the service directory and nothing
else. Every service listens on loopback only, unless a multi-host run places the services on
a host of their own: then on that host's address (`ServiceLaunch.bind`), open to the server
host's address only where the service has accounts (MariaDB), behind a per-start password
(Redis), and — memcached has neither — only when the suite says so (config/placement.py).
"""

from __future__ import annotations

import enum
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stackbench.errors import ServiceError
from stackbench.lab import availability, cgroups, fs
from stackbench.lab.privilege import RunAs, server_environment
from stackbench.lab.procs import port_in_use, spawn, stop, tail

HOST = "127.0.0.1"
LOG_TAIL_LINES = 30
# sun_path is 108 bytes on Linux; keep a margin for the terminating NUL and safety.
MAX_UNIX_SOCKET_PATH = 100


class ServiceKind(enum.Enum):
    MARIADB = "mariadb"
    REDIS = "redis"
    MEMCACHED = "memcached"


@dataclass(frozen=True)
class ServiceEndpoint:
    kind: ServiceKind
    host: str
    port: int
    socket: Path | None
    env: Mapping[str, str]


def find_command(name: str, kind: ServiceKind) -> str:
    """Absolute path of a server binary, looking in sbin too (mariadbd lives in /usr/sbin)."""
    found = availability.find_command(name)
    if found is None:
        raise ServiceError(
            f"{kind.value}: command {name!r} not found on PATH, /usr/sbin or /usr/local/sbin "
            f"(install it: apt-get install {_APT_HINT[kind]})"
        )
    return found


_APT_HINT = {
    ServiceKind.MARIADB: "mariadb-server",
    ServiceKind.REDIS: "redis-server",
    ServiceKind.MEMCACHED: "memcached",
}


@dataclass(frozen=True)
class ServiceLaunch:
    """Where and as whom one service starts: its own directory, port, CPUs and user."""

    kind: ServiceKind
    service_dir: Path
    port: int
    cpus: frozenset[int] | None
    start_timeout_s: float
    run_as: RunAs | None
    # The address the server listens on (loopback, or a services host's own address) and the
    # addresses of the other hosts allowed to log in (MariaDB's accounts; IP literals).
    bind: str = HOST
    clients: tuple[str, ...] = ()

    def environment(self) -> dict[str, str]:
        """Our environment, with HOME and TMPDIR in the service dir when run as the stack user."""
        return server_environment(os.environ, self.run_as, self.service_dir)

    def spawn(self, command: Sequence[str], log_path: Path) -> subprocess.Popen[bytes]:
        """The server in its own session, as the stack user, output in its log, dying with us,
        in a control group of its own (the monitor counts its every process there; `stop`
        removes it)."""
        return spawn(
            command,
            self.service_dir,
            self.environment(),
            log_path,
            self.cpus,
            self.run_as,
            cgroups.new_group(self.kind.value),
        )

    def socket_path(self, name: str, temp_dirs: list[Path]) -> Path:
        """name in the service dir, or in a short private temp dir if that path is too long.

        A temp dir is handed to the stack user (the server creates its socket there) and
        recorded in temp_dirs so stop() removes it.
        """
        preferred = self.service_dir / name
        if len(os.fsencode(preferred)) <= MAX_UNIX_SOCKET_PATH:
            return preferred
        short_dir = fs.private_temp_dir("sb-sock-")
        temp_dirs.append(short_dir)
        if self.run_as is not None:
            os.chown(short_dir, *self.run_as.owner)
        return short_dir / name


def ensure_port_free(kind: ServiceKind, port: int, bind: str = HOST) -> None:
    """Fail early and clearly instead of letting the server die with a bind error."""
    # No SO_REUSEADDR in port_in_use: a port held by anyone, listening or not, counts.
    if port_in_use(bind, port):
        raise ServiceError(
            f"{kind.value}: port {port} on {bind} is already in use; "
            "choose another port or stop whatever holds it"
        )


BindFailureCheck = Callable[[str], bool]


def wait_until_ready(
    kind: ServiceKind,
    proc: subprocess.Popen[bytes],
    command: Sequence[str],
    log_path: Path,
    probe: Callable[[], str],
    bind_failed: BindFailureCheck,
    port: int,
    timeout_s: float,
) -> str:
    """Poll probe() until it answers (returns the server version) or the server dies.

    Raises ServiceError naming the service, the command and the log tail.
    """
    deadline = time.monotonic() + timeout_s
    last_error = "no attempt yet"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise start_failure(
                kind, command, log_path, _exit_reason(proc, log_path, port, bind_failed)
            )
        if bind_failed(_read_log(log_path)):
            raise start_failure(kind, command, log_path, f"port {port} already in use")
        try:
            return probe()
        except (OSError, ServiceError) as err:
            last_error = str(err)
        time.sleep(0.1)
    raise start_failure(
        kind, command, log_path, f"not ready after {timeout_s:g}s (last probe: {last_error})"
    )


def _exit_reason(
    proc: subprocess.Popen[bytes], log_path: Path, port: int, bind_failed: BindFailureCheck
) -> str:
    if bind_failed(_read_log(log_path)):
        return f"exited with status {proc.returncode}: port {port} already in use"
    return f"exited with status {proc.returncode} before becoming ready"


def _read_log(log_path: Path) -> str:
    try:
        return log_path.read_text(errors="replace")
    except OSError:
        return ""


def start_failure(
    kind: ServiceKind, command: Sequence[str], log_path: Path, reason: str
) -> ServiceError:
    return ServiceError(
        f"{kind.value} failed to start: {reason}\n"
        f"command: {subprocess.list2cmdline(list(command))}\n"
        f"log {log_path} (last lines):\n{tail(log_path, LOG_TAIL_LINES)}"
    )


def log_tail(log_path: Path, lines: int = LOG_TAIL_LINES) -> str:
    return tail(log_path, lines)


def stop_process_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the server's process group, wait up to grace_s, then SIGKILL what is left."""
    stop(proc, grace_s)
