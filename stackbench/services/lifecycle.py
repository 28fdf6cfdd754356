"""start_service and ServiceSet: what the orchestrator calls.

Each service gets its own directory under the set's run dir, checked to lie inside it before
anything is removed or created there, owned by the stack user the server runs as (mode 0700).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from stackbench.errors import ServiceError
from stackbench.lab import fs
from stackbench.lab.privilege import RunAs, can_enter, stack_user
from stackbench.lab.procs import free_port
from stackbench.services.base import HOST, ServiceKind, ServiceLaunch, ensure_port_free
from stackbench.services.mariadb import connect as connect_mariadb
from stackbench.services.mariadb import start_mariadb
from stackbench.services.memcached import start_memcached
from stackbench.services.redis import start_redis
from stackbench.services.resp import memcached_set, redis_command
from stackbench.services.running import RunningService
from stackbench.services.seed import CACHE_KEY, CACHE_VALUE, table_statements

# Marks a directory we created, so a later start may wipe it without risking user data.
MARKER = ".stackbench-service"

Starter = Callable[[ServiceLaunch], RunningService]
_STARTERS: dict[ServiceKind, Starter] = {
    ServiceKind.MARIADB: start_mariadb,
    ServiceKind.REDIS: start_redis,
    ServiceKind.MEMCACHED: start_memcached,
}


def start_service(
    kind: ServiceKind,
    run_dir: Path,
    cpus: frozenset[int] | None = None,
    port: int | None = None,
    start_timeout_s: float = 60,
    bind: str = HOST,
    clients: tuple[str, ...] = (),
) -> RunningService:
    """Start one service in run_dir/<kind>, seeded and ready, or raise ServiceError. It
    listens on `bind` (loopback unless a services host's own address); `clients` are the
    other addresses MariaDB lets log in."""
    run_as = stack_user()
    service_dir = _fresh_service_dir(Path(run_dir), kind, run_as)
    if port is None:
        port = free_port(bind)
    else:
        ensure_port_free(kind, port, bind)
    return _STARTERS[kind](
        ServiceLaunch(kind, service_dir, port, cpus, start_timeout_s, run_as, bind, clients)
    )


def service_dir_for(run_dir: Path, kind: ServiceKind) -> Path:
    return Path(run_dir) / kind.value


def _fresh_service_dir(run_dir: Path, kind: ServiceKind, run_as: RunAs | None) -> Path:
    """An empty directory for this start, owned by run_as: stale data is never reused."""
    service_dir = service_dir_for(run_dir, kind)
    if service_dir.exists() and any(service_dir.iterdir()):
        if not (service_dir / MARKER).exists():
            raise ServiceError(
                f"{kind.value}: {service_dir} exists and is not a stackbench service "
                "directory; refusing to delete it (choose an empty run directory)"
            )
        fs.safe_rmtree(service_dir, run_dir)
    owner = run_as.owner if run_as else None
    real = fs.safe_mkdir(service_dir, run_dir, owner, mode=0o700)
    if run_as is not None:
        for private in ("home", "tmp"):  # HOME and TMPDIR of the server
            fs.safe_mkdir(real / private, real, owner, mode=0o700)
        fs.open_path_for(real, lambda directory: can_enter(directory.stat(), run_as))
    fs.write_new_file(real / MARKER, real, f"{kind.value}\n")
    return real


def reset_data(services: Iterable[RunningService]) -> None:
    """Restore every seed (e.g. World after /updates) in the given running services."""
    for service in services:
        endpoint = service.endpoint
        if service.kind is ServiceKind.MARIADB:
            with connect_mariadb(endpoint) as connection, connection.cursor() as cur:
                for statement in table_statements():
                    cur.execute(statement)
        elif service.kind is ServiceKind.REDIS:
            redis_command(
                endpoint.host,
                endpoint.port,
                "SET",
                CACHE_KEY,
                CACHE_VALUE,
                password=endpoint.env["REDIS_PASSWORD"],
            )
        else:
            memcached_set(endpoint.host, endpoint.port, CACHE_KEY, CACHE_VALUE)


class ServiceSet:
    """Several services sharing a run dir; all stopped on exit, even after an error."""

    def __init__(
        self,
        run_dir: Path,
        cpus: frozenset[int] | None = None,
        bind: str = HOST,
        clients: tuple[str, ...] = (),
    ) -> None:
        self._run_dir = Path(run_dir)
        self._cpus = cpus
        self._bind = bind
        self._clients = clients
        self._running: dict[ServiceKind, RunningService] = {}
        self._started: list[ServiceKind] = []  # every start attempt, kept after stop_all

    def ensure(self, kinds: Iterable[ServiceKind]) -> None:
        """Start the services of kinds that are not running yet (in a stable order); one that
        exited (crashed) is cleaned up and started afresh."""
        wanted = set(kinds)  # kinds may be a one-shot iterator
        for kind in ServiceKind:
            if kind in self._running and not self._running[kind].is_alive():
                self._running.pop(kind).stop()
            if kind in wanted and kind not in self._running:
                if kind not in self._started:
                    self._started.append(kind)
                self._running[kind] = start_service(
                    kind, self._run_dir, self._cpus, bind=self._bind, clients=self._clients
                )

    def logs(self) -> dict[str, Path]:
        """Log name -> file for every service started (also after stop_all or a failed start):
        mariadb, mariadb-install, redis, memcached, each as far as it was written.

        Copy them with lab.fs.copy_log: the services' directories belong to the stack user,
        so a "log" there may be a symlink, which copy_log refuses to follow.
        """
        found: dict[str, Path] = {}
        for kind in self._started:
            service_dir = service_dir_for(self._run_dir, kind)
            if service_dir.is_symlink() or not service_dir.is_dir():
                continue
            for log in sorted(service_dir.glob("*.log")):
                if log.is_file() and not log.is_symlink():
                    found[log.stem] = log
        return found

    def env(self) -> dict[str, str]:
        merged: dict[str, str] = {}
        for service in self._running.values():
            merged.update(service.endpoint.env)
        return merged

    def running(self) -> list[RunningService]:
        return list(self._running.values())

    def stop_all(self) -> None:
        """Stop in reverse start order; every service is attempted even if one fails."""
        errors: list[str] = []
        for kind in reversed(list(self._running)):
            try:
                self._running[kind].stop()
            except Exception as err:  # noqa: BLE001 - keep stopping the others
                errors.append(f"{kind.value}: {err}")
        self._running.clear()
        if errors:
            raise ServiceError("stopping services failed: " + "; ".join(errors))

    def __enter__(self) -> ServiceSet:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop_all()
