"""`stackbench agent`: the remote side of a multi-host run, driven over its stdin/stdout.

The controller starts it on each host over SSH and speaks the JSON-lines protocol of
`protocol.py` with it. The agent starts the stack, its data services and the loaders with the
same `lab/` and `drivers/` code a single-host run uses (stack processes as the unprivileged
stack user, pinned to the cores asked for), samples their CPU and memory per role, and answers
for their exits.

Nothing may outlive a lost controller: OpenSSH leaves a remote command running when the
channel closes, so the agent itself stops everything it started — on end of file on stdin, on
`bye`, on SIGTERM/SIGHUP/SIGINT, and when no message arrived for `--heartbeat-s` seconds. Every
process it starts runs in a process group of its own (stacks, services and loaders alike), and
the agent is a child subreaper, so whatever a process leaves behind stays its descendant: the
clean-up stops the stack and the services the way a local run does, then sends SIGTERM to the
group of every descendant still alive and SIGKILL after a grace period. Everything it writes
lives under its run directory, removed at the end unless --keep.

stdout is the protocol and nothing else: the agent keeps its own copy of the descriptor and
points descriptor 1 at stderr, so a stray print or a child's output cannot corrupt the channel;
the children's stdin is /dev/null, never the channel. Logs go to stderr and to agent.log in
the run directory.

Requests are answered by the main thread, except those that start or wait for processes
(start-stack, stop-stack, verify, warm-up, run-load, readiness): one long-lived worker thread
runs them in order. Long-lived, because the kernel sends a child its parent-death signal when
the *thread* that started it ends (lab/procs.py). While the worker waits for a load level, the
main thread still answers heartbeats, clock readings, the crash watch (exits) and stop-load.
"""

import base64
import binascii
import contextlib
import ctypes
import ipaddress
import logging
import math
import os
import queue
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TextIO

import msgspec
import psutil

from stackbench import __version__
from stackbench.config.external import checked_external
from stackbench.config.loadspec import LoadRequest
from stackbench.config.manifest import Manifest, parse_manifest
from stackbench.config.measured import RoleUsage
from stackbench.config.names import check_name
from stackbench.config.placement import Placement, allowed_cpus, format_cpus
from stackbench.config.status import unavailable_reason
from stackbench.config.workloads import CATALOG
from stackbench.drivers import RunningLoad, get_driver, start_load, warm_up
from stackbench.errors import DriverError, EnvironmentProblem, ExitCode, InputError, StackError
from stackbench.lab import external, fs
from stackbench.lab.external import ExternalProcesses
from stackbench.lab.inventory import load_inventory
from stackbench.lab.monitor import Monitor, process_counts
from stackbench.lab.stack import StackInstance
from stackbench.remote import protocol as p
from stackbench.remote import stackfiles
from stackbench.remote.readiness import local_readiness
from stackbench.services import ServiceKind
from stackbench.session.stacks import (
    ServiceAccess,
    Services,
    exited_processes,
    exited_services,
    pick_workloads,
    running_stack,
    service_access,
    services_needed,
)
from stackbench.verify.http import verify_workload

log = logging.getLogger(__name__)


def wall_clock() -> float:
    """The time this agent reads and reports (time.time(); a test's launcher shifts it to play
    a host whose clock is off: tests/remote/skewed_agent.py)."""
    return time.time()


# Marks a run directory an agent made: a later agent may empty it (after --keep).
RUN_DIR_MARKER = ".stackbench-agent"
LOG_NAME = "agent.log"
STACKS_DIR = "stacks"  # run_dir/stacks/<name>/: one stack's run directory
OWN_DIR = "own"  # run_dir/own/<name>/<folder>/: a stack of the user's own, as put-stack sent it
SERVICES_DIR = "services"
LOG_TAIL_LINES = 20  # of a dead process's log, as the local crash watch keeps
STOP_GRACE_S = 5.0  # between SIGTERM and SIGKILL for what the clean-up finds still alive
WORKER_JOIN_S = 30.0  # a request in progress ends soon once its processes are gone
_PR_SET_CHILD_SUBREAPER = 36
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
# (readiness reads every stack's manifest and asks for runtimes' versions: seconds, during which
# the main thread must go on answering heartbeats)
_WORKER_REQUESTS = (
    p.PutStack,
    p.AttachExternal,
    p.StartStack,
    p.StartServices,
    p.StopStack,
    p.Verify,
    p.WarmUp,
    p.RunLoad,
    p.Readiness,
)
# What a stack may be given from a services host of its own: addresses, ports, the account and
# the per-start passwords (token_urlsafe), nothing that could change how a process runs.
_SERVICE_ENV_KEYS = frozenset(
    {
        "DB_HOST",
        "DB_PORT",
        "DB_USER",
        "DB_PASSWORD",
        "DB_NAME",
        "REDIS_HOST",
        "REDIS_PORT",
        "REDIS_PASSWORD",
        "MEMCACHED_HOST",
        "MEMCACHED_PORT",
    }
)
_SERVICE_ENV_VALUE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


# --- events reaching the main loop ------------------------------------------------------------
@dataclass(frozen=True)
class _Line:
    data: bytes
    received: float  # wall_clock() when the line was read


@dataclass(frozen=True)
class _Closed:
    why: str
    exit_code: int


@dataclass(frozen=True)
class _Signalled:
    signum: int


_Event = _Line | _Closed | _Signalled


class Channel:
    """The protocol's descriptors: a reader thread putting each line into the inbox (so the
    main loop never blocks on stdin and the heartbeat watchdog always fires), a locked writer."""

    def __init__(self, in_fd: int, out_fd: int, inbox: "queue.SimpleQueue[_Event]") -> None:
        self._in = os.fdopen(in_fd, "rb")
        self._out = os.fdopen(out_fd, "wb")
        self._inbox = inbox
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="agent-stdin", daemon=True)

    def start(self) -> None:
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                line = self._in.readline(p.MAX_REQUEST_BYTES + 1)
            except (OSError, ValueError) as exc:
                self._inbox.put(_Closed(f"reading stdin failed: {exc}", ExitCode.ENVIRONMENT))
                return
            received = wall_clock()
            if not line:
                self._inbox.put(
                    _Closed(
                        "stdin reached end of file (the controller closed the channel)", ExitCode.OK
                    )
                )
                return
            if not line.endswith(b"\n"):
                why = (
                    f"a request longer than {p.MAX_REQUEST_BYTES} bytes"
                    if len(line) > p.MAX_REQUEST_BYTES
                    else "stdin reached end of file in the middle of a request"
                )
                self._inbox.put(_Closed(why, ExitCode.ENVIRONMENT))
                return
            self._inbox.put(_Line(line, received))

    def send(self, make: Callable[[], p.Reply]) -> None:
        """Write the reply `make` builds, built under the lock so that a clock reading is
        stamped as late as possible. A dead channel ends the agent (via the inbox)."""
        with self._lock:
            reply = make()
            try:
                line = p.encode(reply)
            except (msgspec.EncodeError, TypeError, ValueError) as exc:  # a bug: say so
                line = p.encode(p.error_reply(reply.id, exc))
            try:
                self._out.write(line)
                self._out.flush()
            except (OSError, ValueError) as exc:
                self._inbox.put(_Closed(f"writing stdout failed: {exc}", ExitCode.ENVIRONMENT))

    def reply(self, reply: p.Reply) -> None:
        self.send(lambda: reply)

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError, ValueError):
            self._out.close()


@dataclass(frozen=True)
class _Stack:
    """The running stack: leaving `started` stops it."""

    started: ExitStack
    instance: StackInstance
    access: ServiceAccess
    service_kinds: frozenset[ServiceKind]  # of this host's services, watched with the stack


class Agent:
    """One controller's agent: what it started on this host, and the requests that drive it."""

    def __init__(self, run_dir: Path, heartbeat_s: float, in_fd: int, out_fd: int) -> None:
        self.run_dir = run_dir
        self.heartbeat_s = heartbeat_s
        self.hostname = socket.gethostname()
        self.inbox: queue.SimpleQueue[_Event] = queue.SimpleQueue()
        self.channel = Channel(in_fd, out_fd, self.inbox)
        self.stopping = threading.Event()
        self._load_stop = threading.Event()  # stop-load, or the agent stops
        self._lock = threading.Lock()  # guards the state below, shared with the worker
        self._services: Services | None = None
        self._services_placement: tuple[frozenset[int], str, tuple[str, ...]] | None = None
        self._watched_services: frozenset[ServiceKind] = frozenset()  # start-services asked
        self._stack: _Stack | None = None
        self._external: tuple[str, ExternalProcesses] | None = None  # attach-external's
        self._own: dict[str, Manifest] = {}  # the user's own stacks put here, by name
        self._incoming: dict[str, bytearray] = {}  # a stack's parts received so far
        self._load: RunningLoad | None = None
        self._monitor: Monitor | None = None
        self._work: queue.SimpleQueue[p.AnyRequest | None] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work_loop, name="agent-worker", daemon=True)

    def now(self) -> float:
        """The time this agent reports: its clock."""
        return wall_clock()

    # --- the main loop ------------------------------------------------------------------------
    def serve(self) -> int:
        """Answer requests until the channel ends, then stop everything. The exit code: 0 after
        bye or end of file, 3 when the controller went silent, 128 + n after signal n."""
        self.channel.start()
        self._worker.start()
        why, code = "the agent failed", ExitCode.INTERNAL
        try:
            why, code = self._loop()
        finally:
            self.shutdown(why)
        return code

    def _loop(self) -> tuple[str, int]:
        deadline = time.monotonic() + self.heartbeat_s
        while True:
            try:
                event = self.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return (
                    f"no message from the controller for {self.heartbeat_s:g} s (heartbeat lost)",
                    ExitCode.ENVIRONMENT,
                )
            if isinstance(event, _Closed):
                return event.why, event.exit_code
            if isinstance(event, _Signalled):
                return f"signal {signal.Signals(event.signum).name}", 128 + event.signum
            deadline = time.monotonic() + self.heartbeat_s
            if self._handle(event):
                return "the controller said bye", ExitCode.OK

    def _handle(self, line: _Line) -> bool:
        """Answer one request (or hand it to the worker); True after bye."""
        try:
            request = p.decode_request(line.data)
        except msgspec.MsgspecError as exc:
            bad = p.Error(
                id=p.message_id(line.data),
                kind=InputError.__name__,
                exit_code=ExitCode.BAD_INPUT,
                message=f"not a valid request: {exc}",
            )
            self.channel.reply(bad)
            return False
        log.debug("request %s", p.describe(request))
        if isinstance(request, _WORKER_REQUESTS):
            self._work.put(request)
            return False
        if isinstance(request, p.Clock):
            t2 = line.received
            self.channel.send(lambda: p.ClockReading(id=request.id, t2=t2, t3=self.now()))
            return False
        try:
            reply = self._answer(request)
        except Exception as exc:  # noqa: BLE001 - every failure goes back as an Error reply
            reply = p.error_reply(request.id, exc)
        self.channel.reply(reply)
        return isinstance(request, p.Bye)

    def _answer(self, request: p.AnyRequest) -> p.Reply:
        """The requests the main thread answers at once."""
        rid = request.id
        if isinstance(request, p.Hello):
            return p.AgentInfo(
                id=rid,
                version=__version__,
                hostname=self.hostname,
                pid=os.getpid(),
                cores=tuple(sorted(allowed_cpus())),
            )
        if isinstance(request, p.Exits):
            return p.Exited(id=rid, exits=self._exits())
        if isinstance(request, p.FetchLogs):
            return p.LogFiles(id=rid, files=self._logs(request))
        if isinstance(request, p.MonitorStart):
            self._monitor_start(request.interval_s)
        elif isinstance(request, p.MonitorStop):
            return p.Usage(id=rid, usage=self._monitor_stop())
        elif isinstance(request, p.StopLoad):
            self._stop_load()
        # Heartbeat and Bye need nothing but the answer.
        return p.Ok(id=rid)

    # --- the worker -----------------------------------------------------------------------------
    def _work_loop(self) -> None:
        while True:
            request = self._work.get()
            if request is None or self.stopping.is_set():
                return
            log.info("%s", p.describe(request))
            try:
                reply = self._perform(request)
            except Exception as exc:  # noqa: BLE001 - every failure goes back as an Error reply
                log.info("%s failed: %s", p.describe(request), exc)
                reply = p.error_reply(request.id, exc)
            if self.stopping.is_set():
                # The controller is gone (or said bye): no answer; and a stack started while
                # the clean-up ran is stopped too.
                self._stop_stack()
                return
            self.channel.reply(reply)

    def _perform(self, request: p.AnyRequest) -> p.Reply:
        if isinstance(request, p.PutStack):
            self._put_stack(request)
            return p.Ok(id=request.id)
        if isinstance(request, p.StartStack):
            return self._start_stack(request)
        if isinstance(request, p.AttachExternal):
            return self._attach_external(request)
        if isinstance(request, p.StartServices):
            return self._start_services(request)
        if isinstance(request, p.Verify):
            return self._verify(request)
        if isinstance(request, p.RunLoad):
            return self._run_load(request)
        if isinstance(request, p.Readiness):
            return p.ReadinessReport(id=request.id, readiness=local_readiness())
        if isinstance(request, p.WarmUp):
            load = self._checked_load(request.request, "warm-up")
            warm_up(get_driver(load.settings.driver), load, new_session=True)
        elif isinstance(request, p.StopStack):
            self._stop_stack()
        return p.Ok(id=request.id)

    # --- the stack and its services -------------------------------------------------------------
    def _attach_external(self, request: p.AttachExternal) -> p.ExternalAttached:
        """A server the user runs here, found (never started nor signalled): its processes
        sampled and watched until stop-stack, as a started stack's are."""
        name = check_name(request.name, "attach-external: name")
        where = f"attach-external {name}"
        ext = checked_external(name, request.url, request.pids, request.unit, where, True)
        self._stop_stack()
        found = external.attach(ext, f"{where} (on {self.hostname})")
        with self._lock:
            self._external = (name, found)
        return p.ExternalAttached(id=request.id, roles=found.roles, cpus=found.cpus)

    def _put_stack(self, request: p.PutStack) -> None:
        """One part of a stack of the user's own; the last one unpacks it (a fresh copy: a
        stack put again replaces the one before) and reads its manifest."""
        name = check_name(request.stack, "put-stack: stack")
        received = self._incoming.pop(name, bytearray()) if request.part else bytearray()
        if request.part != (len(received) + stackfiles.PART_BYTES - 1) // stackfiles.PART_BYTES:
            raise InputError(f"put-stack {name}: part {request.part} came out of order")
        try:
            received += base64.b64decode(request.data, validate=True)
        except binascii.Error as exc:
            raise InputError(f"put-stack {name}: part {request.part} is not base64") from exc
        if request.part + 1 < request.parts:
            self._incoming[name] = received
            return
        if stackfiles.digest(bytes(received)) != request.sha256:
            raise InputError(f"put-stack {name}: the archive's SHA-256 does not match")
        base = self.run_dir / OWN_DIR
        fs.safe_mkdir(base, self.run_dir, mode=0o711)
        dest = base / name
        if dest.exists():
            fs.safe_rmtree(dest, base)
        self._own.pop(name, None)
        folder = stackfiles.unpack(bytes(received), dest)
        # the suite's own endpoints run on one machine only: none is known here
        manifest = parse_manifest(folder / "stack.toml", catalog=False, endpoints=frozenset())
        if manifest.name != name:
            raise InputError(f"put-stack {name}: its stack.toml names it {manifest.name!r}")
        self._own[name] = manifest
        log.info("stack %s put into %s", name, folder)

    def _start_stack(self, request: p.StartStack) -> p.StackStarted:
        check_name(request.stack, "start-stack: stack")
        check_name(request.name, "start-stack: name")
        host = self._listen_address(request.host)
        self._check_cpus(request.server_cpus, "start-stack: server_cpus")
        self._check_cpus(request.services_cpus, "start-stack: services_cpus")
        self._check_workloads(request.workloads, "start-stack")
        self._stop_stack()
        entry = load_inventory([request.stack], own=self._own)[request.stack]
        if entry.manifest is None or not entry.status.available:
            raise StackError(
                f"{request.stack} is unavailable on {self.hostname}: {unavailable_reason(entry)}"
            )
        workloads = pick_workloads(entry, request.workloads)
        if request.service_env is None:
            access = self._services_for(request.services_cpus).prepare(workloads)
            kinds = frozenset(services_needed(workloads))
        else:  # on a services host of their own: watched by that host's agent
            access = service_access(self._checked_service_env(request.service_env))
            kinds = frozenset()
        started = ExitStack()
        instance = started.enter_context(
            running_stack(
                entry,
                Placement(request.server_cpus, frozenset(), request.services_cpus),
                self.run_dir / STACKS_DIR / request.name,
                request.params,
                access.env,
                lambda step: log.info("%s: %s", request.name, step),
                host=host,
            )
        )
        with self._lock:
            self._stack = _Stack(started, instance, access, kinds)
            service_roles = self._services.roles() if self._services and kinds else {}
        return p.StackStarted(
            id=request.id,
            base_url=instance.base_url,
            server_roles=instance.roles(),
            service_roles=service_roles,
            params=instance.params_in_force(),
            processes=process_counts(instance.roles()),
        )

    def _start_services(self, request: p.StartServices) -> p.ServicesStarted:
        """The services alone, on this host's address for a server on another host."""
        self._check_cpus(request.cpus, "start-services: cpus")
        self._check_workloads(request.workloads, "start-services")
        host = self._listen_address(request.host, "start-services")
        clients = tuple(self._listen_address(c, "start-services: clients") for c in request.clients)
        services = self._services_for(request.cpus, host, clients)
        access = services.prepare(request.workloads)
        with self._lock:
            self._watched_services |= services_needed(request.workloads)
        return p.ServicesStarted(id=request.id, env=access.env, roles=services.roles())

    def _services_for(
        self, cpus: frozenset[int], bind: str = "127.0.0.1", clients: tuple[str, ...] = ()
    ) -> Services:
        with self._lock:
            if self._services is None:
                self._services = Services(self.run_dir / SERVICES_DIR, cpus, bind, clients)
                self._services_placement = (cpus, bind, clients)
            elif (cpus, bind, clients) != self._services_placement:
                raise InputError(
                    f"services on cores {format_cpus(cpus)}, address {bind}, for clients "
                    f"{', '.join(clients) or 'on this host'} differ from those this agent "
                    "started its services with; keep one services placement per host for "
                    "the whole run"
                )
            return self._services

    @staticmethod
    def _checked_service_env(env: dict[str, str]) -> dict[str, str]:
        """Only the services' addresses and credentials reach the stack's environment."""
        for key, value in env.items():
            if key not in _SERVICE_ENV_KEYS:
                raise InputError(
                    f"start-stack: service_env key {key!r} is not one of "
                    f"{', '.join(sorted(_SERVICE_ENV_KEYS))}"
                )
            if not _SERVICE_ENV_VALUE.fullmatch(value):
                raise InputError(
                    f"start-stack: service_env {key} has characters an address, "
                    "port or generated password never has"
                )
        return env

    def _stop_stack(self) -> None:
        """The running stack stopped; an attached external server only forgotten."""
        with self._lock:
            stack, self._stack = self._stack, None
            self._external = None
        if stack is not None:
            stack.started.close()  # running_stack stops it; a failure there is only logged

    def _verify(self, request: p.Verify) -> p.Verified:
        self._check_workloads(request.workloads, "verify")
        with self._lock:
            stack = self._stack
        if stack is None:
            raise InputError("verify: no stack is running on this agent (start-stack first)")
        return p.Verified(
            id=request.id,
            outcomes=tuple(
                verify_workload(w, stack.instance.base_url, stack.access.context)
                for w in request.workloads
            ),
        )

    def _exits(self) -> tuple[p.ExitInfo, ...]:
        """The stack's and the services' processes that exited: those of the running stack,
        and those of the services start-services asked for (a services host's only duty)."""
        with self._lock:
            stack, services, watched = self._stack, self._services, self._watched_services
            attached = self._external
        running = services.running() if services is not None else []
        if stack is not None:
            found = exited_processes(stack.instance, running, stack.service_kinds | watched)
        else:
            found = exited_services(running, watched)
        gone: tuple[p.ExitInfo, ...] = ()
        if attached is not None:
            name, processes = attached
            gone = tuple(
                p.ExitInfo(f"external stack {name}'s process {pid}", None, "")
                for pid in processes.gone()
            )
        return gone + tuple(
            p.ExitInfo(e.name, e.status, fs.log_tail(e.log_path, LOG_TAIL_LINES)) for e in found
        )

    def _logs(self, request: p.FetchLogs) -> dict[str, str]:
        """The part's *.log files, path relative to its directory -> text; the directories
        belong to the processes under test, so no symlink is followed (fs.read_log)."""
        if request.part == "agent":
            logs = {LOG_NAME: self.run_dir / LOG_NAME}
        elif request.part == "stack":
            base = self.run_dir / STACKS_DIR / check_name(request.name, "fetch-logs: name")
            logs = {path.name: path for path in _log_files(base)}
        else:
            base = self.run_dir / SERVICES_DIR
            subdirs = [] if base.is_symlink() or not base.is_dir() else sorted(base.iterdir())
            logs = {
                f"{sub.name}/{path.name}": path
                for sub in subdirs
                if sub.is_dir() and not sub.is_symlink()
                for path in _log_files(sub)
            }
        texts = {name: fs.read_log(path, p.MAX_LOG_BYTES) for name, path in logs.items()}
        return {name: text for name, text in texts.items() if text is not None}

    # --- the monitor ----------------------------------------------------------------------------
    def _monitor_start(self, interval_s: float) -> None:
        with self._lock:
            if self._monitor is not None:
                raise InputError("monitor-start: the monitor runs already (monitor-stop first)")
            roles: dict[str, int] = {}
            if self._stack is not None:
                roles.update(self._stack.instance.roles())
            if self._external is not None:
                roles.update(self._external[1].roles)
            if self._services is not None:
                roles.update(self._services.roles())
            monitor = Monitor(roles, interval_s)
            if self._load is not None:
                monitor.add_role("loader", self._load.pid)
            self._monitor = monitor.start()

    def _monitor_stop(self) -> dict[str, RoleUsage]:
        with self._lock:
            monitor, self._monitor = self._monitor, None
        if monitor is None:
            raise InputError("monitor-stop: the monitor does not run (monitor-start first)")
        return monitor.stop()

    # --- loads ----------------------------------------------------------------------------------
    def _run_load(self, request: p.RunLoad) -> p.LoadDone:
        load = self._checked_load(request.request, "run-load")
        ahead = request.start_at - self.now()
        if ahead > p.MAX_START_DELAY_S:
            raise InputError(
                f"run-load: start_at is {ahead:.0f} s ahead on this host's clock "
                f"(at most {p.MAX_START_DELAY_S:.0f} s): is its clock offset right?"
            )
        driver = get_driver(load.settings.driver)
        self._load_stop.clear()
        if not self._sleep_until(request.start_at):
            raise DriverError(
                "the load was stopped before it started (stop-load, or the agent is stopping)"
            )
        started_at = self.now()
        running = start_load(driver, load, warm_up_first=False, new_session=True)
        with self._lock:
            self._load = running
            if self._monitor is not None:
                self._monitor.add_role("loader", running.pid)
        try:
            result = running.finish(timeout_s=request.timeout_s)
        finally:
            with self._lock:
                self._load = None
            _kill_group(running)
        return p.LoadDone(id=request.id, result=result, started_at=started_at)

    def _sleep_until(self, at: float) -> bool:
        """Wait until `at` on the reported clock; False when the load is stopped meanwhile."""
        while (left := at - self.now()) > 0.0005:
            if self._load_stop.wait(left - 0.0005):
                return False
        while self.now() < at:  # the last half millisecond: Event.wait is not that precise
            pass
        return not self._load_stop.is_set()

    def _stop_load(self) -> None:
        self._load_stop.set()
        with self._lock:
            running = self._load
        if running is not None:
            _kill_group(running, wait=False)  # the worker reaps it and answers run-load

    def _checked_load(self, load: LoadRequest, where: str) -> LoadRequest:
        """Refuse what no controller would send: the loader runs as root on this host."""
        # The URL is the loader's first argument: it must not read as an option.
        if not load.url.startswith("http://"):
            raise InputError(f"{where}: url {load.url!r} must start with http://")
        if not 1 <= load.connections <= 1_000_000:
            raise InputError(f"{where}: connections {load.connections} must be 1..1000000")
        if load.rate is not None and not (math.isfinite(load.rate) and load.rate > 0):
            raise InputError(f"{where}: rate {load.rate} must be a positive number")
        if not 100 <= load.expect_status <= 599:
            raise InputError(f"{where}: expect_status {load.expect_status} must be 100..599")
        sha = load.expect_body_sha256
        if sha is not None and not _SHA256_HEX.fullmatch(sha):
            raise InputError(f"{where}: expect_body_sha256 must be 64 lowercase hex digits")
        if load.method != "GET" or load.headers or load.body is not None:
            raise InputError(f"{where}: a suite's own endpoints run on one machine only")
        self._check_cpus(load.loader_cpus, f"{where}: loader_cpus")
        return load

    # --- checks ---------------------------------------------------------------------------------
    def _check_cpus(self, cpus: frozenset[int], where: str) -> None:
        allowed = allowed_cpus()
        if not cpus:
            raise InputError(f"{where}: no CPU given")
        if not cpus <= allowed:
            raise InputError(
                f"{where}: CPUs {format_cpus(cpus - allowed)} are not available on "
                f"{self.hostname} (allowed: {format_cpus(allowed)})"
            )

    @staticmethod
    def _check_workloads(workloads: Sequence[str], where: str) -> None:
        unknown = [w for w in workloads if w not in CATALOG]
        if unknown:
            raise InputError(
                f"{where}: unknown workload {unknown[0]!r} (known: {', '.join(CATALOG)})"
            )

    @staticmethod
    def _listen_address(host: str, where: str = "start-stack: host") -> str:
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError:
            raise InputError(
                f"{where}: {host!r} is not an IPv4 address (a host's own address, or 127.0.0.1)"
            ) from None

    # --- the end --------------------------------------------------------------------------------
    def shutdown(self, why: str) -> None:
        """Stop everything this agent started; never raises."""
        log.info("stopping everything: %s", why)
        self.stopping.set()
        self._load_stop.set()
        self._work.put(None)
        self._stop_load()
        with self._lock:
            monitor, self._monitor = self._monitor, None
        if monitor is not None:
            monitor.stop()
        self._stop_all()
        self._worker.join(timeout=WORKER_JOIN_S)
        if self._worker.is_alive():
            log.warning("the request in progress did not end within %.0f s", WORKER_JOIN_S)
        self._stop_all()  # whatever the worker started while the first pass ran
        self.channel.close()

    def _stop_all(self) -> None:
        try:
            self._stop_stack()
        except Exception as exc:  # noqa: BLE001 - the clean-up goes on
            log.warning("stopping the stack failed: %s", exc)
        with self._lock:
            services = self._services
        if services is not None:
            services.stop()
        kill_descendants(STOP_GRACE_S)


def _log_files(directory: Path) -> list[Path]:
    if directory.is_symlink() or not directory.is_dir():
        return []
    return [path for path in sorted(directory.glob("*.log")) if not path.is_symlink()]


def _kill_group(running: RunningLoad, wait: bool = True) -> None:
    """SIGKILL the loader's process group (its own: new_session), while it runs."""
    if running.proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(running.pid, signal.SIGKILL)
    if wait:
        running.kill()


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def _signal_all(procs: Sequence[psutil.Process], signum: int) -> None:
    """Signal the process group of each process (each started in a group of its own), and
    each process itself in case it left its group. The agent's own group is never signalled."""
    own = os.getpgrp()
    groups: set[int] = set()
    for proc in procs:
        with contextlib.suppress(psutil.Error, OSError):
            groups.add(os.getpgid(proc.pid))
    for group in groups - {own, 0, 1}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signum)


def kill_descendants(grace_s: float) -> None:
    """SIGTERM every descendant's group, SIGKILL whatever is left after grace_s, reap."""
    procs = _descendants()
    if not procs:
        return
    log.info(
        "stopping %d leftover process(es): %s",
        len(procs),
        ", ".join(str(proc.pid) for proc in procs),
    )
    _signal_all(procs, signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    left = alive + [proc for proc in _descendants() if proc not in procs]
    if left:
        _signal_all(left, signal.SIGKILL)
        psutil.wait_procs(left, timeout=5)


# --- setting up the process ---------------------------------------------------------------------
def prepare_run_dir(path: Path) -> Path:
    """The agent's run directory, made afresh (mode 0711: the stack user may pass through to
    its own directories, not list). An existing one is emptied only if an agent made it."""
    where = f"--run-dir {path}"
    if not path.is_absolute() or ".." in path.parts or path == path.parent:
        raise InputError(f"{where}: give an absolute path without '..', not '/'")
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"{where}: its parent {parent} is not a directory")
    if path.is_symlink():
        raise InputError(f"{where}: it is a symlink; give a plain directory")
    if path.exists():
        info = path.stat()
        if not path.is_dir() or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise InputError(
                f"{where}: it exists and is not a private directory of this user; give a new path"
            )
        if any(path.iterdir()) and not (path / RUN_DIR_MARKER).is_file():
            raise InputError(
                f"{where}: refusing to empty it: an agent did not make it; give a new path"
            )
        fs.safe_rmtree(path, parent)
    real = fs.safe_mkdir(path, parent, mode=0o711)
    fs.write_new_file(real / RUN_DIR_MARKER, real, f"{os.getpid()}\n")
    fs.safe_mkdir(real / STACKS_DIR, real, mode=0o711)
    return real


def take_protocol_fds() -> tuple[int, int]:
    """Private copies of stdin and stdout for the protocol; descriptor 0 becomes /dev/null and
    descriptor 1 a copy of stderr, for everything else in this process and its children."""
    in_fd, out_fd = os.dup(0), os.dup(1)  # not inherited by children (O_CLOEXEC)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return in_fd, out_fd


def become_subreaper() -> None:
    """Orphans of our descendants are re-parented to the agent, not to init, so the clean-up
    finds a daemonising process too."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            log.warning("could not become a child subreaper (errno %d)", ctypes.get_errno())


@dataclass(frozen=True)
class _Logging:
    handlers: tuple[logging.Handler, ...]
    file: TextIO

    def close(self) -> None:
        for handler in self.handlers:
            logging.getLogger().removeHandler(handler)
            handler.close()
        self.file.close()


def _log_to(run_dir: Path) -> _Logging:
    """The agent's log lines to stderr and to agent.log in the run directory."""
    fmt = logging.Formatter("%(asctime)s agent[%(process)d] %(levelname)s %(message)s")
    file = os.fdopen(fs.open_log(run_dir / LOG_NAME), "a", encoding="utf-8")
    handlers = (logging.StreamHandler(sys.stderr), logging.StreamHandler(file))
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in handlers:
        handler.setFormatter(fmt)
        root.addHandler(handler)
    return _Logging(handlers, file)


def run_agent(run_dir: Path, heartbeat_s: float, keep: bool) -> int:
    """`stackbench agent`: serve the protocol on stdin/stdout until the controller is gone."""
    if not heartbeat_s > 0:
        raise InputError(f"--heartbeat-s {heartbeat_s}: give a positive number of seconds")
    in_fd, out_fd = take_protocol_fds()
    real = prepare_run_dir(run_dir)
    logs = _log_to(real)
    agent = Agent(real, heartbeat_s, in_fd, out_fd)

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        agent.inbox.put(_Signalled(signum))  # SimpleQueue.put is safe in a signal handler

    previous = {
        s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    }
    become_subreaper()
    log.info(
        "agent %s on %s, run dir %s, heartbeat %g s", __version__, agent.hostname, real, heartbeat_s
    )
    try:
        return agent.serve()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _finish(real, keep, logs)


def _finish(run_dir: Path, keep: bool, logs: _Logging) -> None:
    if keep:
        log.info("kept %s (--keep)", run_dir)
    logs.close()
    if not keep:
        try:
            fs.safe_rmtree(run_dir, run_dir.parent)
        except (OSError, InputError, EnvironmentProblem) as exc:
            # stderr only: the log file went with the directory.
            print(f"agent: removing {run_dir} failed: {exc}", file=sys.stderr)
