"""The agent protocol: one JSON object per line over the agent's stdin (requests) and stdout
(replies), each a tagged msgspec Struct.

Every request carries an `id` chosen by the controller; the reply to it echoes that id, so
replies to requests handled in parallel (a load level running while the crash watch asks for
exits) find their caller. A request that fails on the agent gets an `Error` reply naming the
StackbenchError class and its exit code, so the controller raises the same class.

The protocol has no number of its own: it is the stackbench version's, which `hello` returns
and the controller checks before any other request (engine/hosts.py).

Times are `time.time()` on the agent's clock, never the
controller's: the controller converts with the offset it measured (`clock.py`).
"""

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from stackbench.config.loadspec import LoadRequest, LoadResult
from stackbench.config.measured import RoleUsage
from stackbench.errors import (
    BuildError,
    DriverError,
    EnvironmentProblem,
    ExitCode,
    InputError,
    ServiceError,
    StackbenchError,
    StackError,
    VerifyAbort,
)
from stackbench.verify.outcome import VerifyOutcome

# A request is a few hundred bytes; a reply can hold a loader's whole output (its histogram,
# its per-second series). Longer lines are refused rather than buffered without end.
MAX_REQUEST_BYTES = 1 << 20
MAX_REPLY_BYTES = 256 << 20
# A log sent back to the controller: its tail, so that a few logs stay far below a reply's limit.
MAX_LOG_BYTES = 4 << 20
# A stack of the user's own travels in parts (remote/stackfiles.py): at most this many.
MAX_STACK_PARTS = 128
# How far ahead a load may be scheduled: further is a controller bug, not a plan.
MAX_START_DELAY_S = 300.0

Cpus = Annotated[frozenset[Annotated[int, Meta(ge=0, le=65535)]], Meta(min_length=1)]


class Request(Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    id: Annotated[int, Meta(ge=1)]


class Hello(Request, frozen=True, tag="hello"):
    """-> AgentInfo."""


class Clock(Request, frozen=True, tag="clock"):
    """-> ClockReading: when the agent received this request and when it answered."""


class StartStack(Request, frozen=True, tag="start-stack"):
    """Start the data services `workloads` need (if not running yet) and the stack, ready to
    serve on `host`. A stack started before is stopped first. -> StackStarted.

    With `service_env`, the services run on a host of their own (StartServices there): the
    stack gets their addresses and credentials from it and this agent starts none."""

    stack: str  # the stack's folder (a variant's base stack)
    name: str  # the planned stack's name (the stack, or a variant): its run directory
    server_cpus: Cpus
    services_cpus: Cpus
    workloads: tuple[str, ...]
    params: dict[str, str] = {}  # overrides of the manifest's defaults
    host: str = "127.0.0.1"  # the address the stack listens on: this host's own address
    service_env: dict[str, str] | None = None


class PutStack(Request, frozen=True, tag="put-stack"):
    """One part of a stack of the user's own (remote/stackfiles.py), sent before it is
    started: parts 0 .. parts-1 in order, each its bytes in base64; the last one unpacks the
    whole (its SHA-256 checked) into the agent's run directory, where `start-stack` with that
    name finds it. -> Ok."""

    stack: str  # the stack's name
    part: Annotated[int, Meta(ge=0)]
    parts: Annotated[int, Meta(ge=1, le=MAX_STACK_PARTS)]
    sha256: Annotated[str, Meta(pattern="^[0-9a-f]{64}$")]
    data: str


class AttachExternal(Request, frozen=True, tag="attach-external"):
    """A server the user runs on this host ([external.NAME] of a multi-host run): its url
    answers here and its processes (`pids`, or a systemd `unit`'s main process) are there;
    monitor-start samples them and exits watches them until stop-stack. Nothing is started,
    stopped or signalled. -> ExternalAttached."""

    name: str
    url: str
    pids: tuple[int, ...] = ()
    unit: str | None = None


class StartServices(Request, frozen=True, tag="start-services"):
    """Start the data services `workloads` need on this host (if not running yet; the seed
    data of those running is restored), listening on `host`, this host's own address, and
    letting MariaDB logins in from `clients` (the server host's address) only.
    -> ServicesStarted."""

    cpus: Cpus
    workloads: tuple[str, ...]
    host: str
    clients: tuple[str, ...]


class Verify(Request, frozen=True, tag="verify"):
    """Run the verifiers of these workloads against the running stack (with the services'
    data, which only this host can reach). -> Verified."""

    workloads: tuple[str, ...]


class Exits(Request, frozen=True, tag="exits"):
    """-> Exited: the stack and service processes that are no longer running."""


class MonitorStart(Request, frozen=True, tag="monitor-start"):
    """Start sampling CPU and memory per role (the stack's processes, the services, and the
    loader once a RunLoad starts it). -> Ok."""

    interval_s: Annotated[float, Meta(ge=0.01, le=60.0)] = 0.25


class MonitorStop(Request, frozen=True, tag="monitor-stop"):
    """-> Usage."""


class WarmUp(Request, frozen=True, tag="warm-up"):
    """The driver's separate warm-up pass (wrk, ab), run to its end; run it before
    MonitorStart so that its CPU is not counted in the level. -> Ok."""

    request: LoadRequest


class RunLoad(Request, frozen=True, tag="run-load"):
    """Wait until `start_at` (agent clock), start the measured pass pinned to the request's
    loader cpus, wait for its end (at most `timeout_s`). -> LoadDone."""

    request: LoadRequest
    start_at: float
    timeout_s: Annotated[float, Meta(gt=0.0, le=7 * 86_400.0)]


class StopLoad(Request, frozen=True, tag="stop-load"):
    """Kill the running load (a stack process died): its RunLoad fails. -> Ok."""


class StopStack(Request, frozen=True, tag="stop-stack"):
    """Stop the stack (the services keep running for the next stack). -> Ok."""


class FetchLogs(Request, frozen=True, tag="fetch-logs"):
    """The *.log files of one part of this agent's run directory: a stack's (`name`), the
    services' or the agent's own; each at most MAX_LOG_BYTES, its tail. -> LogFiles."""

    part: Literal["stack", "services", "agent"]
    name: str = ""  # the stack's planned name, for part "stack"


class Readiness(Request, frozen=True, tag="readiness"):
    """What `hosts check` judges this host by: runtimes, loader, stacks, limits.
    -> ReadinessReport."""


class Heartbeat(Request, frozen=True, tag="heartbeat"):
    """The controller is alive. -> Ok."""


class Bye(Request, frozen=True, tag="bye"):
    """Stop everything, remove the run directory (unless --keep), exit. -> Ok."""


AnyRequest = (
    Hello
    | Clock
    | PutStack
    | StartStack
    | AttachExternal
    | StartServices
    | Verify
    | Exits
    | MonitorStart
    | MonitorStop
    | WarmUp
    | RunLoad
    | StopLoad
    | StopStack
    | FetchLogs
    | Readiness
    | Heartbeat
    | Bye
)


class Reply(Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    id: int


class Ok(Reply, frozen=True, tag="ok"):
    pass


class AgentInfo(Reply, frozen=True, tag="agent"):
    version: str
    hostname: str
    pid: int
    cores: tuple[int, ...]  # the CPUs this agent may use (its affinity)


class ClockReading(Reply, frozen=True, tag="clock"):
    t2: float  # the request received
    t3: float  # this reply sent


class StackStarted(Reply, frozen=True, tag="stack-started"):
    base_url: str
    server_roles: dict[str, int]  # the stack's processes: role -> root pid
    service_roles: dict[str, int]  # the data services: name -> root pid
    params: dict[str, str]  # every parameter as the stack resolved it (StackInstance)
    processes: str = ""  # what each role runs once started (lab.monitor.process_counts)


class ExternalAttached(Reply, frozen=True, tag="external-attached"):
    roles: dict[str, int]  # role -> pid, as the monitor samples them (empty: none given)
    cpus: frozenset[int]  # the cores its processes may run on (empty: none given)


class ServicesStarted(Reply, frozen=True, tag="services-started"):
    env: dict[str, str]  # their TCP addresses and credentials, for the stack's environment
    roles: dict[str, int]  # service name -> root pid


class Limit(Struct, frozen=True, forbid_unknown_fields=True):
    """One of doctor's checks of a limit (open files, somaxconn), as the host judged itself."""

    name: str
    verdict: str  # lab.machine.Verdict's value: "ok", "warn", "fail"
    value: str
    advice: str = ""


class HostReadiness(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A host's facts that decide whether it can take part in a run (remote/readiness.py);
    `hosts check` compares another host's with this machine's."""

    python: str
    git_rev: str | None
    loader: bool  # the native loader is built
    stacks: dict[str, str]  # every stack: "" when available, else why not
    nofile_soft: int
    nofile_hard: int
    somaxconn: int | None  # None: not readable there
    limits: tuple[Limit, ...]


class ReadinessReport(Reply, frozen=True, tag="readiness"):
    readiness: HostReadiness


class LogFiles(Reply, frozen=True, tag="log-files"):
    files: dict[str, str]  # path under the part's directory ("mariadb/mariadb.log") -> text


class Verified(Reply, frozen=True, tag="verified"):
    outcomes: tuple[VerifyOutcome, ...]


class ExitInfo(Struct, frozen=True, forbid_unknown_fields=True):
    """A stack or service process that exited, as the crash watch reports it."""

    name: str
    status: int | None  # negative: the signal that killed it; None: not ours to know (external)
    log_tail: str


class Exited(Reply, frozen=True, tag="exited"):
    exits: tuple[ExitInfo, ...]


class Usage(Reply, frozen=True, tag="usage"):
    usage: dict[str, RoleUsage]


class LoadDone(Reply, frozen=True, tag="load-done"):
    result: LoadResult
    started_at: float  # when the measured pass was started (agent clock)


class Error(Reply, frozen=True, tag="error"):
    kind: str  # the StackbenchError class name; "internal" for a bug in the agent
    exit_code: int
    message: str


AnyReply = (
    Ok
    | AgentInfo
    | ClockReading
    | StackStarted
    | ExternalAttached
    | ServicesStarted
    | Verified
    | Exited
    | Usage
    | LoadDone
    | LogFiles
    | ReadinessReport
    | Error
)


class _IdOnly(Struct):
    """What is left of a message that does not decode: its id, if it has one."""

    id: int = 0


_request_decoder = msgspec.json.Decoder(AnyRequest)
_reply_decoder = msgspec.json.Decoder(AnyReply)
_id_decoder = msgspec.json.Decoder(_IdOnly)
_encoder = msgspec.json.Encoder()


def encode(message: Request | Reply) -> bytes:
    """One line: the JSON object and a newline (JSON escapes every newline inside strings)."""
    return _encoder.encode(message) + b"\n"


def decode_request(line: bytes) -> AnyRequest:
    """msgspec.ValidationError / DecodeError when the line is not a valid request."""
    request: AnyRequest = _request_decoder.decode(line)
    return request


def decode_reply(line: bytes) -> AnyReply:
    reply: AnyReply = _reply_decoder.decode(line)
    return reply


def message_id(line: bytes) -> int:
    """The id of a message that failed to decode, 0 when it has none."""
    try:
        return _id_decoder.decode(line).id
    except msgspec.MsgspecError:
        return 0


# The classes an agent's error is raised again as on the controller, by name.
_ERRORS: dict[str, type[StackbenchError]] = {
    cls.__name__: cls
    for cls in (
        InputError,
        EnvironmentProblem,
        DriverError,
        StackError,
        BuildError,
        ServiceError,
        VerifyAbort,
    )
}
# Any other StackbenchError is raised as the base class of its exit code.
_BY_EXIT_CODE: dict[int, type[StackbenchError]] = {
    ExitCode.BAD_INPUT: InputError,
    ExitCode.ENVIRONMENT: EnvironmentProblem,
    ExitCode.STACK_FAILED: StackError,
}
INTERNAL = "internal"


def error_reply(request_id: int, exc: BaseException) -> Error:
    """The reply for a request that raised `exc` on the agent."""
    if isinstance(exc, StackbenchError):
        return Error(
            id=request_id, kind=type(exc).__name__, exit_code=exc.exit_code, message=str(exc)
        )
    if isinstance(exc, OSError):  # a full disk, a vanished directory: the machine
        return Error(
            id=request_id,
            kind=EnvironmentProblem.__name__,
            exit_code=ExitCode.ENVIRONMENT,
            message=str(exc),
        )
    return Error(
        id=request_id,
        kind=INTERNAL,
        exit_code=ExitCode.INTERNAL,
        message=f"{type(exc).__name__}: {exc}",
    )


def remote_error(host: str, reply: Error) -> Exception:
    """The exception to raise for an Error reply from `host`: the agent's own class, its
    message prefixed with the host. A bug in the agent is a RuntimeError, like a bug here."""
    message = f"{host}: {reply.message}"
    cls = _ERRORS.get(reply.kind) or _BY_EXIT_CODE.get(reply.exit_code)
    if reply.kind == INTERNAL or cls is None:
        return RuntimeError(f"{host}: the agent failed: {reply.message}")
    return cls(message)


def describe(message: Any) -> str:
    """`start-stack #3`, for log lines and errors."""
    tag = getattr(type(message), "__struct_config__", None)
    name = tag.tag if tag is not None and isinstance(tag.tag, str) else type(message).__name__
    return f"{name} #{getattr(message, 'id', '?')}"
