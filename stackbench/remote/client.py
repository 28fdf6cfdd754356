"""The controller's side of `stackbench agent`: `RemoteHost` speaks the protocol over the
pipes of any process running the agent (in production an SSH channel, `SshLink.open`; in the
tests a local `python -m stackbench agent`).

Each method sends one request and waits for its reply, at most a timeout. Calls may come from
several threads at once (the crash watch asks for exits while a load level runs): a reader
thread hands every reply to the call whose id it echoes. A reply that is an `Error` raises the
agent's own StackbenchError class, its message prefixed with the host's name. A dead channel —
end of file, a broken pipe, no answer in time, a line that is not the protocol — raises
`HostLost` from that call and from every later one; the calls waiting at that moment are woken
and raise it too. A heartbeat thread keeps the agent's watchdog fed and notices a silent host
while the engine waits for a long level.
"""

import base64
import contextlib
import logging
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Literal, NoReturn, TypeVar

import msgspec

from stackbench.config.loadspec import LoadRequest, LoadResult
from stackbench.config.measured import RoleUsage
from stackbench.errors import ExitCode, HostLost
from stackbench.remote import protocol as p
from stackbench.remote import stackfiles
from stackbench.remote.clock import ClockSample, best_sample, clock_sample
from stackbench.verify.outcome import VerifyOutcome

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0  # a request answered at once (hello, exits, monitor, stop-load)
START_TIMEOUT_S = 3600.0  # start-stack may build the stack first (builds time out at 1800 s)
# put-stack: one part of a stack's folder over the SSH channel; the last one unpacks it too
PUT_PART_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 120.0  # stop-stack: SIGTERM, a grace period, SIGKILL
VERIFY_TIMEOUT_S = 600.0
READINESS_TIMEOUT_S = 120.0  # every stack's manifest read, runtimes asked for their versions
ANSWER_MARGIN_S = 30.0  # on top of a load's own budget, for the reply to come back
HEARTBEAT_S = 3.0  # well inside the agent's default --heartbeat-s 10
CLOCK_SAMPLES = 8
STDERR_LINES = 20  # of the agent's stderr, kept for the message when the host is lost

R = TypeVar("R", bound=p.Reply)


def agent_argv(
    launcher: Sequence[str],
    run_dir: PurePosixPath | str,
    heartbeat_s: float = 10.0,
    keep: bool = False,
) -> list[str]:
    """The command line that starts an agent: `launcher` is the remote `stackbench` command
    (e.g. ["/work/main/.venv/bin/stackbench"] or [python, "-m", "stackbench"])."""
    argv = [*launcher, "agent", "--run-dir", str(run_dir), "--heartbeat-s", f"{heartbeat_s:g}"]
    if keep:
        argv.append("--keep")
    return argv


@dataclass
class _Pending:
    """One call waiting for its reply."""

    done: threading.Event = field(default_factory=threading.Event)
    reply: p.AnyReply | None = None
    received_at: float = 0.0  # time.time() when its line was read


class RemoteHost:
    """One agent, driven through `proc`'s stdin/stdout (both pipes, binary). Its stderr, when
    a pipe, is drained: its last lines go into the message when the host is lost."""

    def __init__(
        self,
        name: str,
        proc: "subprocess.Popen[bytes]",
        *,
        heartbeat_s: float | None = HEARTBEAT_S,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if proc.stdin is None or proc.stdout is None:
            raise ValueError("RemoteHost needs a process with stdin and stdout pipes")
        self.name = name
        self.timeout_s = timeout_s
        self.offset_s = 0.0  # agent clock - controller clock, once clock_offset() measured it
        self._proc = proc
        self._stdin: IO[bytes] = proc.stdin
        self._lock = threading.Lock()  # ids, pending calls, the lost state
        self._write_lock = threading.Lock()
        self._next_id = 0
        self._pending: dict[int, _Pending] = {}
        self._lost: str | None = None  # what happened, once the channel is dead
        self._closing = False
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._threads = [
            threading.Thread(
                target=self._read, args=(proc.stdout,), name=f"agent-{name}-stdout", daemon=True
            )
        ]
        if proc.stderr is not None:
            self._threads.append(
                threading.Thread(
                    target=self._drain,
                    args=(proc.stderr,),
                    name=f"agent-{name}-stderr",
                    daemon=True,
                )
            )
        for thread in self._threads:
            thread.start()
        self._beat_stop = threading.Event()
        self._beat: threading.Thread | None = None
        if heartbeat_s is not None:
            self.start_heartbeat(heartbeat_s)

    # --- the requests ---------------------------------------------------------------------------
    def hello(self) -> p.AgentInfo:
        """Version, host name, pid and allowed cores of the agent."""
        return self._call(p.Hello(id=self._new_id()), p.AgentInfo)

    def clock_offset(self, samples: int = CLOCK_SAMPLES) -> ClockSample:
        """The agent's clock minus ours, by `samples` four-timestamp exchanges (the one with
        the least delay wins); remembered in `offset_s` for run_load's time-out."""
        readings = []
        for _ in range(max(1, samples)):
            reply, t1, t4 = self._exchange(p.Clock(id=self._new_id()), self.timeout_s)
            reading = self._expect(reply, p.ClockReading, "clock")
            readings.append(clock_sample(t1, reading.t2, reading.t3, t4))
        best = best_sample(readings)
        self.offset_s = best.offset_s
        return best

    def start_stack(
        self,
        stack: str,
        *,
        server_cpus: frozenset[int],
        services_cpus: frozenset[int],
        workloads: Sequence[str],
        params: Mapping[str, str] | None = None,
        name: str | None = None,
        host: str = "127.0.0.1",
        service_env: Mapping[str, str] | None = None,
        timeout_s: float = START_TIMEOUT_S,
    ) -> p.StackStarted:
        """Start the services `workloads` need and the stack (folder `stack`; `name` is the
        planned name, a variant's, default `stack`), listening on `host`: the address the
        loaders reach this host at. A stack started before on this agent is stopped first.
        With `service_env` (from another host's start_services) it starts no services."""
        request = p.StartStack(
            id=self._new_id(),
            stack=stack,
            name=name or stack,
            server_cpus=frozenset(server_cpus),
            services_cpus=frozenset(services_cpus),
            workloads=tuple(workloads),
            params=dict(params or {}),
            host=host,
            service_env=None if service_env is None else dict(service_env),
        )
        return self._call(request, p.StackStarted, timeout_s)

    def attach_external(
        self,
        name: str,
        url: str,
        pids: Sequence[int] = (),
        unit: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> p.ExternalAttached:
        """Find a server the user runs on the agent's host: its url answers there and its
        processes are sampled and watched (never signalled) until stop_stack."""
        request = p.AttachExternal(
            id=self._new_id(), name=name, url=url, pids=tuple(pids), unit=unit
        )
        return self._call(request, p.ExternalAttached, timeout_s)

    def put_stack(self, stack: str, folder: Path, timeout_s: float = PUT_PART_TIMEOUT_S) -> int:
        """Copy the folder of a stack of the user's own (named `stack`) to the agent, which
        unpacks it into its run directory for `start_stack`; the archive's size in bytes."""
        data = stackfiles.pack(folder)
        pieces = stackfiles.parts(data)
        sha = stackfiles.digest(data)
        for number, piece in enumerate(pieces):
            request = p.PutStack(
                id=self._new_id(),
                stack=stack,
                part=number,
                parts=len(pieces),
                sha256=sha,
                data=base64.b64encode(piece).decode("ascii"),
            )
            self._call(request, p.Ok, timeout_s)
        return len(data)

    def start_services(
        self,
        workloads: Sequence[str],
        *,
        cpus: frozenset[int],
        host: str,
        clients: Sequence[str],
        timeout_s: float = START_TIMEOUT_S,
    ) -> p.ServicesStarted:
        """The services `workloads` need, on this host's address `host`, open to `clients`
        (the server host's address); those already running get their seed data back."""
        request = p.StartServices(
            id=self._new_id(),
            cpus=frozenset(cpus),
            workloads=tuple(workloads),
            host=host,
            clients=tuple(clients),
        )
        return self._call(request, p.ServicesStarted, timeout_s)

    def verify(
        self, workloads: Sequence[str], timeout_s: float = VERIFY_TIMEOUT_S
    ) -> tuple[VerifyOutcome, ...]:
        """The verifiers of `workloads`, run by the agent against its stack and services."""
        request = p.Verify(id=self._new_id(), workloads=tuple(workloads))
        return self._call(request, p.Verified, timeout_s).outcomes

    def fetch_logs(
        self, part: Literal["stack", "services", "agent"], name: str = ""
    ) -> dict[str, str]:
        """The *.log files of a stack (`name`), of the services or of the agent on this host:
        relative path -> text (each its last MAX_LOG_BYTES)."""
        return self._call(p.FetchLogs(id=self._new_id(), part=part, name=name), p.LogFiles).files

    def readiness(self, timeout_s: float = READINESS_TIMEOUT_S) -> p.HostReadiness:
        """What `hosts check` judges the host by (remote/readiness.py, run over there)."""
        return self._call(p.Readiness(id=self._new_id()), p.ReadinessReport, timeout_s).readiness

    def exits(self) -> tuple[p.ExitInfo, ...]:
        """The stack and service processes that exited (name, status, log tail)."""
        return self._call(p.Exits(id=self._new_id()), p.Exited).exits

    def monitor_start(self, interval_s: float = 0.25) -> None:
        self._call(p.MonitorStart(id=self._new_id(), interval_s=interval_s), p.Ok)

    def monitor_stop(self) -> dict[str, RoleUsage]:
        """Role -> its usage since monitor_start ("loader" for its loaders)."""
        return self._call(p.MonitorStop(id=self._new_id()), p.Usage).usage

    def warm_up(self, request: LoadRequest, timeout_s: float) -> None:
        """The driver's separate warm-up pass (wrk, ab; nothing for the native loader)."""
        self._call(p.WarmUp(id=self._new_id(), request=request), p.Ok, timeout_s)

    def run_load(
        self, request: LoadRequest, start_at: float, timeout_s: float
    ) -> tuple[LoadResult, float]:
        """Run the measured pass from `start_at` on the agent's clock (our time + offset_s);
        `timeout_s` bounds the pass itself. Returns its result and when it started (agent
        clock)."""
        wait = max(0.0, start_at - (time.time() + self.offset_s))
        done = self._call(
            p.RunLoad(id=self._new_id(), request=request, start_at=start_at, timeout_s=timeout_s),
            p.LoadDone,
            wait + timeout_s + ANSWER_MARGIN_S,
        )
        return done.result, done.started_at

    def stop_load(self) -> None:
        """Kill the load running (or waiting to start): its run_load raises DriverError."""
        self._call(p.StopLoad(id=self._new_id()), p.Ok)

    def stop_stack(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        self._call(p.StopStack(id=self._new_id()), p.Ok, timeout_s)

    def heartbeat(self) -> None:
        self._call(p.Heartbeat(id=self._new_id()), p.Ok)

    # --- the heartbeat --------------------------------------------------------------------------
    def start_heartbeat(self, interval_s: float) -> None:
        """Send a heartbeat every interval_s (keep it well under the agent's --heartbeat-s);
        one unanswered for max(4 intervals, 10 s) loses the host."""
        if self._beat is not None:
            return
        self._beat_stop.clear()
        self._beat = threading.Thread(
            target=self._beat_loop,
            args=(interval_s,),
            name=f"agent-{self.name}-heartbeat",
            daemon=True,
        )
        self._beat.start()

    def stop_heartbeat(self) -> None:
        beat, self._beat = self._beat, None
        self._beat_stop.set()
        if beat is not None and beat is not threading.current_thread():
            beat.join(timeout=self.timeout_s)

    def _beat_loop(self, interval_s: float) -> None:
        timeout = max(4 * interval_s, 10.0)
        while not self._beat_stop.wait(interval_s):
            try:
                self._call(p.Heartbeat(id=self._new_id()), p.Ok, timeout)
            except HostLost as exc:
                if not self._closing:
                    log.warning("%s", exc)
                return

    # --- the end --------------------------------------------------------------------------------
    @property
    def lost(self) -> HostLost | None:
        """HostLost (what happened) once the channel is dead, None while it works."""
        with self._lock:
            return None if self._lost is None else HostLost(self.name, self._lost)

    def close(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> int | None:
        """Say bye, let the agent stop everything and exit (terminate the channel process
        after timeout_s), reap it. Never raises; returns the channel process's exit code."""
        with self._lock:
            if self._closing:
                return self._proc.returncode
            self._closing = True
        self.stop_heartbeat()
        if self._lost is None:
            with contextlib.suppress(Exception):
                self._call(p.Bye(id=self._new_id()), p.Ok, min(timeout_s, DEFAULT_TIMEOUT_S))
        with contextlib.suppress(OSError, ValueError):
            self._stdin.close()  # end of file: the agent stops even if bye did not arrive
        try:
            code = self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            log.warning(
                "%s: the agent did not exit within %.0f s; terminating its channel",
                self.name,
                timeout_s,
            )
            self._proc.terminate()
            try:
                code = self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                code = self._proc.wait()
        self._lose("the controller closed the channel")
        for thread in self._threads:
            thread.join(timeout=5)
        return code

    def __enter__(self) -> "RemoteHost":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the channel ----------------------------------------------------------------------------
    def _new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def _call(self, request: p.Request, reply_type: type[R], timeout_s: float | None = None) -> R:
        reply, _, _ = self._exchange(request, self.timeout_s if timeout_s is None else timeout_s)
        return self._expect(reply, reply_type, p.describe(request))

    def _expect(self, reply: p.AnyReply, reply_type: type[R], what: str) -> R:
        if isinstance(reply, p.Error):
            raise p.remote_error(self.name, reply)
        if not isinstance(reply, reply_type):
            self._lose(
                f"it answered {p.describe(reply)} to {what}: is it the same stackbench version?"
            )
            self._raise_lost()
        return reply

    def _exchange(self, request: p.Request, timeout_s: float) -> tuple[p.AnyReply, float, float]:
        """Send, wait for the reply; (reply, sent at, received at) by our clock."""
        slot = _Pending()
        with self._lock:
            if self._lost is not None:
                self._raise_lost()
            self._pending[request.id] = slot
        try:
            data = p.encode(request)
            with self._write_lock:
                sent_at = time.time()
                try:
                    self._stdin.write(data)
                    self._stdin.flush()
                except (OSError, ValueError) as exc:
                    # The reader, reaching end of file, can say why (exit code, last words).
                    self._threads[0].join(timeout=5)
                    self._lose(f"writing to its channel failed ({exc})")
            if not slot.done.wait(timeout_s):
                self._lose(f"no answer to {p.describe(request)} within {timeout_s:.0f} s")
            if slot.reply is None:
                self._raise_lost()
            return slot.reply, sent_at, slot.received_at
        finally:
            with self._lock:
                self._pending.pop(request.id, None)

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            try:
                line = stream.readline(p.MAX_REPLY_BYTES + 1)
            except (OSError, ValueError) as exc:
                self._lose(f"reading its channel failed ({exc})")
                return
            received = time.time()
            if not line.endswith(b"\n"):
                self._lose(
                    self._ended()
                    if len(line) <= p.MAX_REPLY_BYTES
                    else f"it sent a line longer than {p.MAX_REPLY_BYTES} bytes"
                )
                return
            try:
                reply = p.decode_reply(line)
            except msgspec.MsgspecError as exc:
                rid = p.message_id(line)
                broken = p.Error(
                    id=rid,
                    kind=p.INTERNAL,
                    exit_code=ExitCode.INTERNAL,
                    message=f"its answer does not decode ({exc})",
                )
                if rid and self._deliver(broken, received):
                    continue
                self._lose(
                    f"it wrote a line that is not the agent protocol ({exc}): "
                    f"{line[:200]!r} (does the remote login shell print something?)"
                )
                return
            if not self._deliver(reply, received) and isinstance(reply, p.Error):
                self._lose(f"the agent could not read a request: {reply.message}")
                return

    def _deliver(self, reply: p.AnyReply, received: float) -> bool:
        with self._lock:
            slot = self._pending.get(reply.id)
        if slot is None:
            return False
        slot.reply, slot.received_at = reply, received
        slot.done.set()
        return True

    def _drain(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for raw in stream:
                line = raw.decode(errors="replace").rstrip()
                self._stderr.append(line)
                log.debug("%s: %s", self.name, line)

    def _ended(self) -> str:
        """Why the channel reached end of file, as far as we can tell."""
        code: int | None = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self._proc.wait(timeout=2)
        for thread in self._threads[1:]:  # the rest of its stderr
            thread.join(timeout=1)
        how = "its channel closed" + ("" if code is None else f" (exit code {code})")
        tail = [line for line in self._stderr if line.strip()][-3:]
        return how + (f"; its last words: {' | '.join(tail)}" if tail else "")

    def _lose(self, what: str) -> None:
        """The channel is dead: every waiting call and every later one raises HostLost."""
        with self._lock:
            if self._lost is None:
                self._lost = what
                if not self._closing:
                    log.warning("host %s lost: %s", self.name, what)
            pending = list(self._pending.values())
        for slot in pending:
            slot.done.set()

    def _raise_lost(self) -> NoReturn:
        raise HostLost(self.name, self._lost or "unknown")
