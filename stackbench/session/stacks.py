"""The one way to start a stack with its data services: for a run, `stackbench verify` and
`stackbench script` alike.

`Services` starts MariaDB/Redis/memcached when a workload first needs them, keeps them for the
next stack and restores their seed data between stacks; `running_stack` builds and starts a
stack against them. Stopping never raises: a failure while stopping is logged (a finished run
stays finished), and everything started is stopped even after an error or Ctrl-C.
"""

import logging
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import pymysql

from stackbench.config.placement import Placement
from stackbench.config.status import StackEntry, unavailable_reason
from stackbench.config.workloads import CATALOG
from stackbench.errors import InputError, ServiceError, StackError
from stackbench.lab.stack import StackConfig, StackInstance
from stackbench.services import RunningService, ServiceKind, ServiceSet, reset_data
from stackbench.verify.data import DataVerifyContext
from stackbench.verify.http import verify_workload
from stackbench.verify.outcome import VerifyOutcome

log = logging.getLogger(__name__)


def stack_service_env(env: Mapping[str, str]) -> dict[str, str]:
    """The service addresses a stack gets: TCP on loopback only, for every stack alike.

    The services also listen on unix sockets, but only some drivers can use them; handing
    sockets to the stacks that can would measure the transport, not the stack. TCP is also
    what a multi-host run must use.
    """
    return {k: v for k, v in env.items() if not k.endswith("_SOCKET")}


def services_needed(workloads: Iterable[str]) -> set[ServiceKind]:
    """The services of these catalog workloads (a suite's own endpoints need none)."""
    return {ServiceKind(s) for w in workloads if w in CATALOG for s in CATALOG[w].services}


def pick_workloads(entry: StackEntry, requested: Sequence[str] | None) -> list[str]:
    implemented = list(entry.manifest.workloads)
    if not requested:
        return implemented
    missing = [w for w in requested if w not in implemented]
    if missing:
        raise InputError(
            f"stack '{entry.manifest.name}' does not implement '{missing[0]}' "
            f"(it implements: {', '.join(implemented)})"
        )
    return list(requested)


@dataclass(frozen=True)
class ServiceAccess:
    """What a stack and the verifiers get from the running services."""

    env: dict[str, str]  # TCP addresses and credentials, for the stack's environment
    context: DataVerifyContext | None  # the verifiers' view of the same services


NO_SERVICES = ServiceAccess({}, None)


def service_access(env: Mapping[str, str]) -> ServiceAccess:
    """The access a stack gets from the services' environment (their TCP addresses and
    credentials), here or sent over from a services host of their own."""
    if not env:
        return NO_SERVICES
    tcp = stack_service_env(env)
    return ServiceAccess(tcp, DataVerifyContext.from_env(tcp))


class Services:
    """The data services of one run or command, started on first need, stopped once.

    They listen on loopback, or — on a services host of their own in a multi-host run — on
    `bind`, that host's address, letting MariaDB logins in from `clients` only."""

    def __init__(
        self,
        run_dir: Path,
        cpus: frozenset[int],
        bind: str = "127.0.0.1",
        clients: tuple[str, ...] = (),
    ) -> None:
        self._run_dir = run_dir
        self._cpus = cpus
        self._bind = bind
        self._clients = clients
        self._set: ServiceSet | None = None

    def prepare(self, workloads: Iterable[str]) -> ServiceAccess:
        """Start what these workloads need and is not running yet; restore the seed data of
        those that were already running (the previous stack's /updates changed World)."""
        kinds = services_needed(workloads)
        if not kinds:
            return NO_SERVICES
        if self._set is None:
            self._run_dir.mkdir(parents=True, exist_ok=True)
            self._set = ServiceSet(self._run_dir, self._cpus, self._bind, self._clients)
        running = [s for s in self._set.running() if s.kind in kinds and s.is_alive()]
        self._set.ensure(kinds)
        try:
            reset_data(running)
        except (OSError, pymysql.MySQLError) as exc:
            raise ServiceError(
                f"restoring the seed data of "
                f"{', '.join(s.kind.value for s in running)} failed: {exc}"
            ) from exc
        return service_access(self._set.env())

    def running(self) -> list[RunningService]:
        """The services started so far (the crash watch polls them)."""
        return [] if self._set is None else self._set.running()

    def roles(self) -> dict[str, int]:
        """Service name -> root pid, for the monitor."""
        if self._set is None:
            return {}
        return {s.kind.value: s.root_pid() for s in self._set.running()}

    def stop(self) -> None:
        """Stop every service; a failure is logged, never raised."""
        if self._set is None:
            return
        try:
            self._set.stop_all()
        except ServiceError as exc:
            log.warning("%s", exc)

    def __enter__(self) -> "Services":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


@dataclass(frozen=True)
class ExitedProcess:
    """A stack or service process that is no longer running (the crash watch's view)."""

    name: str  # e.g. "node process 'server'" or "service redis"
    status: int  # its exit status; negative: the signal that killed it (as subprocess gives)
    log_path: Path  # its log: read it with fs.log_tail, never by following a symlink


def exited_processes(
    instance: StackInstance,
    services: Iterable[RunningService],
    service_kinds: Iterable[ServiceKind],
) -> list[ExitedProcess]:
    """Every process of the started stack, and of the `services` (Services.running()) of
    `service_kinds`, that has exited; empty while all run."""
    exits = [
        ExitedProcess(f"{instance.name} process '{role}'", status, instance.log_path)
        for role, status in instance.exited().items()
    ]
    return exits + exited_services(services, service_kinds)


def exited_services(
    services: Iterable[RunningService], service_kinds: Iterable[ServiceKind]
) -> list[ExitedProcess]:
    """Every one of the `services` of `service_kinds` that has exited."""
    kinds = set(service_kinds)
    exits = []
    for service in services:
        status = service.exit_status()
        if service.kind in kinds and status is not None:
            exits.append(ExitedProcess(f"service {service.kind.value}", status, service.log_path))
    return exits


def _stop_quietly(instance: StackInstance) -> None:
    try:
        instance.stop()
    except Exception as exc:  # noqa: BLE001 - stopping must not fail what was measured
        log.warning("%s: stopping the stack failed: %s", instance.name, exc)


@contextmanager
def running_stack(
    entry: StackEntry,
    placement: Placement,
    run_dir: Path,
    params: Mapping[str, str],
    service_env: Mapping[str, str],
    step: Callable[[str], None] = lambda _s: None,
    host: str = "127.0.0.1",
) -> Iterator[StackInstance]:
    """The stack built and started (ready to serve) in run_dir; stopped on leaving.

    `step` hears "building" and "starting" (the run shows them). `host` is the address the
    stack listens on: loopback, or a host's own address when the load comes from another
    host (`stackbench agent`)."""
    if not entry.status.available:
        raise StackError(f"{entry.manifest.name} is unavailable: {unavailable_reason(entry)}")
    cfg = StackConfig(
        entry.manifest, entry.status, run_dir, placement.server, params, service_env, host=host
    )
    instance = StackInstance(cfg)
    try:
        step("building")
        instance.build()
        step("starting")
        instance.start()
        yield instance
    finally:
        _stop_quietly(instance)


def verify_stack(
    entry: StackEntry,
    placement: Placement,
    workloads: Sequence[str] | None = None,
    params: Mapping[str, str] | None = None,
) -> list[VerifyOutcome]:
    """`stackbench verify`: private services, the stack, every chosen verifier, all stopped."""
    chosen = pick_workloads(entry, workloads)
    if not entry.status.available:
        raise StackError(f"{entry.manifest.name} is unavailable: {unavailable_reason(entry)}")
    with (
        tempfile.TemporaryDirectory(prefix=f"stackbench-{entry.manifest.name}-") as tmp,
        Services(Path(tmp) / "services", placement.services) as services,
    ):
        access = services.prepare(chosen)
        with running_stack(
            entry, placement, Path(tmp) / "stack", params or {}, access.env
        ) as instance:
            return [verify_workload(w, instance.base_url, access.context) for w in chosen]
