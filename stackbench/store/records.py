"""The records stackbench stores, each defined once.

The SQLite tables (`store.py`: DDL, insert, read-back) and the exports (`report/exports.py`:
results.json, results.csv) take their field lists from these definitions. Adding a field to a
level is one edit here plus the code that fills it in (the runner) or reads it (the reports).

A `...Record` is what the engine writes; a `...Row` is what the store gives back: the same
fields plus the row's `id` where readers need it. Records are frozen and built by keyword.
"""

import enum
from collections.abc import Iterable
from typing import Literal

import msgspec
import msgspec.inspect as mi
from msgspec import UNSET, UnsetType

from stackbench.config.deviations import deviation_sentence
from stackbench.config.loadspec import LevelKind, error_rate
from stackbench.config.measured import CoreAccount, OpenLoop, RoleUsage, Second

RunStatus = Literal["running", "complete", "interrupted", "failed"]
CaseStatus = Literal["pending", "ok", "failed", "unavailable"]
LevelStatus = Literal["ok", "invalid", "failed"]
# Why a level failed: a stack or service process exited during (or before) it, or the load
# tool itself failed (crashed, timed out, printed nothing usable). "" for a level that ran.
LevelErrorClass = Literal["", "server-exited", "loader-failed", "host-lost"]


class LevelFlag(enum.StrEnum):
    """The kinds of flag a level carries (`LevelRecord.flags`), defined once for the engine
    that sets them and the analysis and reports that read them."""

    LOADER_BOUND = "loader-bound"  # the loader, not the server, was saturated
    NOISY = "noisy"  # repetitions vary by more than the noise threshold (CV)
    UNSTEADY = "unsteady"  # each connection did not get one answer: start-up, not steady
    STARVED = "starved"  # a request left unanswered longer than any answered one
    INVALID = "invalid"  # a validity limit broken (the error rate)
    FAILED = "failed"  # a server exited, the loader failed, a host was lost
    # other processes or the hypervisor's steal took more of the level's cores than the band:
    # no verdict rests on it
    DISTURBED = "disturbed"
    # the server's CPU fell while its load held, nothing seen taking it: said, not excluded
    HELD_BACK = "held back"
    # Set by the analysis on a level's aggregate, never stored: no repetition completed one.
    NO_COMPLETED = "no completed requests"
    # Set by the analysis on a level's aggregate, never stored: repetitions still disturbed
    # after their re-measure, left out of its figures because it has undisturbed ones.
    LEFT_OUT = "disturbed repetitions left out"

    def detail(self, text: str) -> "Flag":
        """The flag with its detail: `unsteady: 3 responses for 8 connections ...`."""
        return Flag(self, text)

    @property
    def alone(self) -> "Flag":
        """The flag without a detail: `loader-bound`."""
        return Flag(self)


class Flag:
    """One flag of a level: its kind and its detail. A load tool's own warning has no kind
    (None) and is its detail, in the tool's words.

    Stored, exported and shown as one text, as stores before this record wrote it: the kind
    alone ("loader-bound"), or the kind, a colon and the detail ("unsteady: 3 responses for
    ..."), or the warning. `parse` reads that text back; `text` writes it. Not a msgspec
    Struct, so that it keeps that text form on disk (`enc_hook`, `dec_hook`)."""

    __slots__ = ("kind", "detail")

    def __init__(self, kind: LevelFlag | None, detail: str = "") -> None:
        self.kind = kind
        self.detail = detail

    @property
    def text(self) -> str:
        if self.kind is None:
            return self.detail
        return f"{self.kind.value}: {self.detail}" if self.detail else self.kind.value

    @classmethod
    def parse(cls, text: str) -> "Flag":
        """A stored flag's text back into its kind and detail."""
        name, colon, detail = text.partition(":")
        try:
            kind = LevelFlag(name.strip())
        except ValueError:
            return cls(None, text)
        return cls(kind, detail.strip() if colon else "")

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Flag({self.kind!r}, {self.detail!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Flag) and (self.kind, self.detail) == (other.kind, other.detail)

    def __hash__(self) -> int:
        return hash((self.kind, self.detail))

    def __lt__(self, other: "Flag") -> bool:
        return self.text < other.text


# The start of an invalid flag's detail when the error rate broke the limit (the judge's
# `invalid: error rate 5.0% > 1.0%`): a level that is data for error-rate claims.
ERROR_RATE = "error rate"


def is_error_rate_flag(flag: Flag) -> bool:
    return flag.kind is LevelFlag.INVALID and flag.detail.startswith(ERROR_RATE)


def has_flag(flags: Iterable[Flag], kind: LevelFlag) -> bool:
    """Whether any of `flags` is of `kind`."""
    return any(f.kind is kind for f in flags)


def flags_text(flags: Iterable[Flag]) -> str:
    """Flags as one line: `loader-bound, noisy`."""
    return ", ".join(f.text for f in flags)


def enc_hook(value: object) -> object:
    """msgspec's hook for the stored form of the types it does not know: a Flag is its text."""
    if isinstance(value, Flag):
        return value.text
    raise NotImplementedError(f"cannot store {type(value).__name__}")


def dec_hook(kind: type, value: object) -> object:
    """msgspec's hook reading back what `enc_hook` wrote."""
    if kind is Flag and isinstance(value, str):
        return Flag.parse(value)
    raise NotImplementedError(f"cannot read {kind.__name__} from {type(value).__name__}")


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every stored record."""


# --- the settings a run was made with ------------------------------------------------------
# The store keeps its own copy of the suite's shape: a stored run stays readable when the
# suite parser changes. No defaults here: the suite's defaults live with the suite parser.
class SloSettings(Record, frozen=True, kw_only=True):
    percentile: float
    latency_ms: float
    max_error_rate: float
    stop_after_failures: int
    gate: bool


class SearchSettings(Record, frozen=True, kw_only=True):
    lo: float
    hi: float
    probes: int
    tolerance: float


class VariantSettings(Record, frozen=True, kw_only=True):
    stack: str
    params: dict[str, str]


class PlacementSettings(Record, frozen=True, kw_only=True):
    server: tuple[int, ...]
    loader: tuple[int, ...]
    services: tuple[int, ...]
    # Multi-host runs only (defaults: this machine): the hosts of [placement].
    server_host: str | None = None
    loader_hosts: tuple[str, ...] = ()
    services_host: str | None = None  # the data services' host, when not the server's
    memcached_on_network: bool = False  # memcached on that host's address, unauthenticated


class CoreCountSettings(Record, frozen=True, kw_only=True):
    """One stack measured at one of the suite's server core counts ([placement]
    server_cores = [1, 2]): the stack it is, and the cores its server, loader and services
    had (the run's `placement` is that of the smallest count)."""

    stack: str
    server: tuple[int, ...]
    loader: tuple[int, ...]
    services: tuple[int, ...]


class DeviationSettings(Record, frozen=True, kw_only=True):
    """Where the run departed from the article its suite reproduces (config/deviations.py)."""

    setting: str
    article: str
    ours: str
    why: str

    def sentence(self) -> str:
        return deviation_sentence(self.setting, self.article, self.ours, self.why)


class RunSettings(Record, frozen=True, kw_only=True):
    """The suite's settings in force for a run (the report's "Settings" table, in order)."""

    mode: str  # closed | open
    level_kind: LevelKind
    keepalive: str  # on | off
    driver: str  # native | wrk | ab
    duration_s: float | None
    requests: int | None
    requests_per_connection: int | None
    warmup_s: float
    timeout_s: float
    pause_s: float
    repeat: int
    threads: int
    pipeline: int
    jit_warmup: bool  # JIT stacks warmed up before each case (stack.toml [warmup])
    levels: tuple[float, ...]
    max_error_rate: float
    variant: str
    description: str
    slo: SloSettings | None
    search: SearchSettings | None
    script_iterations: int
    variants: dict[str, VariantSettings]
    workload_levels: dict[str, tuple[float, ...]]
    workload_durations: dict[str, float]
    placement: PlacementSettings
    # `run --until-decided`: the most looks at the data the run may take (its first analysis
    # and every round added after it); each verdict uses alpha / decision_looks (1: a plain run)
    decision_looks: int = 1
    # Departures from the suite's article, one line each (none recorded before store 8's runs)
    deviations: tuple[DeviationSettings, ...] = ()
    # [placement] server_cores = [1, 2]: each planned stack name ("node.2c") at its count;
    # empty: every stack on `placement` (runs before core counts record none)
    core_counts: dict[str, CoreCountSettings] = {}
    # Standalone timings in each repetition (the suite's script_timings; runs before it was a
    # key made one)
    script_timings: int = 1


# --- the machine a run was made on -----------------------------------------------------------
class HostFacts(Record, frozen=True, kw_only=True):
    """Another host of a multi-host run, as the run found it (engine.hosts.Agent.facts)."""

    address: str
    hostname: str
    run_dir: str = ""  # everything the agent wrote there (not recorded before run --keep)
    version: str  # the agent's stackbench
    cores: tuple[int, ...]
    clock_offset_s: float  # its clock minus ours; the loaders' starts were corrected by it
    clock_delay_s: float  # the round trip of the probe that measured it


class Environment(Record, frozen=True, kw_only=True):
    """The machine a run was made on (lab.environment.snapshot), its tunables and the tools'
    versions, and the other hosts of a multi-host run. A field a run did not record (an
    older run) is UNSET: "not recorded", and left out of the stored and exported record;
    None is a fact: the machine does not expose it (no CPU governor in a VM)."""

    hostname: str | UnsetType = UNSET
    cpu_model: str | UnsetType = UNSET
    cpu_crypto: str | UnsetType = UNSET  # SHA/AES instruction flags present ('none')
    cores: int | None | UnsetType = UNSET
    cores_allowed: tuple[int, ...] | UnsetType = UNSET  # this process's CPU affinity
    memory_total_bytes: int | UnsetType = UNSET
    kernel: str | UnsetType = UNSET
    os: str | UnsetType = UNSET
    governor: str | None | UnsetType = UNSET
    somaxconn: str | None | UnsetType = UNSET
    ip_local_port_range: str | None | UnsetType = UNSET
    tcp_tw_reuse: str | None | UnsetType = UNSET
    python: str | UnsetType = UNSET
    stackbench: str | UnsetType = UNSET
    git_rev: str | None | UnsetType = UNSET
    versions: dict[str, str] | UnsetType = UNSET  # tool -> its version output
    # doctor's warnings of a busy machine when the run started (lab/busy.py)
    machine_warnings: tuple[str, ...] | UnsetType = UNSET
    hosts: dict[str, HostFacts] | UnsetType = UNSET  # multi-host runs only
    # The git revision of each stack of the user's own whose folder is a git work tree
    # ("3f2c1ab9e0d4", "-dirty" appended when its files differ from that commit)
    stack_revisions: dict[str, str] | UnsetType = UNSET


# --- the stored records --------------------------------------------------------------------
class RunRecord(Record, frozen=True, kw_only=True):
    suite_name: str
    suite_path: str
    suite_text: str
    settings: RunSettings
    environment: Environment
    started_at: float
    finished_at: float | None = None
    status: RunStatus = "running"
    # The process that runs it: a run still "running" whose owner is gone (SIGKILL, power
    # loss) is marked interrupted by the next command. The start time tells a reused pid apart.
    owner_pid: int = 0
    owner_started_at: float = 0.0  # psutil create_time of the owner
    owner_host: str = ""
    scratch_dir: str = ""  # temporary files of the run, removed when it ends or is found stale
    # The selection the run was started with (empty: the whole suite), so a resume has the
    # same plan.
    only_stacks: tuple[str, ...] = ()
    only_workloads: tuple[str, ...] = ()
    resumed: int = 0  # how many times `run --resume` continued it
    label: str = ""  # run --label NAME: how `compare` and `history` may name it


class RunRow(RunRecord, frozen=True, kw_only=True):
    id: int


class LoaderPart(Record, frozen=True, kw_only=True):
    """One loader's share of a level spread over several loader hosts."""

    host: str
    connections: int
    rate: float | None  # open loop: its share of the rate
    completed: int
    errors: int
    requests_per_s: float
    started_at: float  # on the controller's clock (the host's measured offset removed)
    histogram: str | None  # its own HDR histogram: the level's is their exact sum


class JitWarmupRecord(Record, frozen=True, kw_only=True):
    """The pass a JIT stack gets before a case's first level (its stack.toml [warmup]): what
    it measured while cold. Discarded from every figure; kept to show cold against warm."""

    seconds: float
    why: str  # the manifest's reason, e.g. "the JVM compiles hot methods (C2) after ~10 s"
    level_value: float  # the load it ran at: the case's first level
    completed: int
    errors: int
    requests_per_s: float  # over the whole pass
    first_second_rps: float | None  # None: the driver gives no per-second series
    last_second_rps: float | None  # the last full second
    failure: str = ""  # why the pass did not run to its end, if it did not


class CaseRecord(Record, frozen=True, kw_only=True):
    """One stack x workload of a run."""

    run_id: int
    stack: str  # the stack, or a variant's name
    workload: str  # catalog name, e.g. sha256
    label: str  # with parameters, e.g. sha256?n=1000
    path: str
    params: dict[str, str]  # stack parameters the suite or variant set
    status: CaseStatus = "pending"
    reason: str = ""  # why it failed, or a note (early stop, search result)
    # Every parameter of the stack as it resolved them when it started (defaults included,
    # "{{server_core_count}}" substituted): the settings the figures were measured with.
    effective_params: dict[str, str] = msgspec.field(default_factory=dict)
    jit_warmup: JitWarmupRecord | None = None  # None: the stack needs none, or it was off


class CaseRow(CaseRecord, frozen=True, kw_only=True):
    id: int


class VerificationRecord(Record, frozen=True, kw_only=True):
    run_id: int
    stack: str
    workload: str
    ok: bool
    checked: int  # requests checked
    failures: tuple[str, ...]
    at: float


VerificationRow = VerificationRecord


class ScriptRecord(Record, frozen=True, kw_only=True):
    """A standalone timing (no HTTP), see `stackbench script`; no times when it failed."""

    run_id: int
    stack: str
    label: str
    iterations: int
    wall_s: float | None
    user_s: float | None
    sys_s: float | None
    outcome: str  # ok / not checked (...) / the error


ScriptRow = ScriptRecord


class Superseded(Record, frozen=True, kw_only=True):
    """Why a stored measurement of a level no longer stands: the level was measured again
    (a disturbed first measurement, issue 32). Kept so that nothing measured is lost; every
    reader of results passes over it as if it were absent (`Store.load_run` hands it apart,
    `RunData.superseded`), and the report says the level was measured again and why."""

    why: str  # the judge's disturbance sentence: "other processes used 13.0% of core 0 ..."
    # The level's record that replaced it; None while it is being measured again, and for
    # good when the run stopped first (a resumed run measures the level and links it then)
    by: int | None = None


class LevelRecord(Record, frozen=True, kw_only=True):
    """One finished load level (one repetition): what the driver and the monitor measured,
    and the judge's verdict. Figures a driver does not give are None, never invented."""

    case_id: int
    level_index: int
    level_value: float  # connections (closed loop) or requests/s (open loop)
    repetition: int
    driver: str
    mode: str
    keepalive: str
    started_at: float
    duration_s: float
    completed: int  # responses fully received, any status
    ok: int  # responses that passed the status and body checks
    errors: dict[str, int]  # failed attempts per class (timeout, status, connect ...)
    requests_per_s: float
    latency_us: dict[str, float]  # p50, p99, max ... only what the driver measured
    connect_us: dict[str, float] | None = None
    histogram: str | None = None  # HdrHistogram V2 compressed, base64
    timeseries: tuple[Second, ...] | None = None  # the native loader's; wrk and ab give none
    open_loop: OpenLoop | None = None  # target/achieved rate, sustained, waits
    loader_cpu_s: tuple[float, float] | None = None  # user, sys
    # Bytes received (headers and bodies) in the measured phase, as the tool printed them;
    # None when it did not (the transfer rate in MiB/s is bytes_read / duration_s).
    bytes_read: int | None = None
    # The native loader's I/O engine (uring | epoll, or each loader host's when they differ)
    loader_engine: str | None = None
    usage: dict[str, RoleUsage]  # per role: CPU, memory, threads, processes, context switches
    # The level's cores accounted completely (what else used them, steal); None: not
    # accounted (the server on another host, or a store before version 9)
    cores: CoreAccount | None = None
    flags: tuple[Flag, ...] = ()  # stored as texts: "loader-bound", "invalid: error rate 5% > 1%"
    status: LevelStatus
    error_class: LevelErrorClass = ""  # set when status is "failed"
    error: str = ""  # what failed: the process and its exit status or signal, or the loader error
    log_tail: str = ""  # the last lines of the dead process's log, or of the loader's stderr
    command: str
    raw_output: str = ""  # the tool's own output (tail), for the record
    # Multi-host levels: role -> host ("server", "loader@h2" ...), the spread of the loaders'
    # measured starts, and each loader's own part of the merged figures.
    hosts: dict[str, str] = msgspec.field(default_factory=dict)
    start_skew_s: float | None = None
    loader_parts: tuple[LoaderPart, ...] = ()
    # Set on a measurement the level was measured again after (None: the record stands)
    superseded: Superseded | None = None

    @property
    def stands(self) -> bool:
        """Whether this record is the level's measurement (not one measured again after)."""
        return self.superseded is None

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    @property
    def error_rate(self) -> float:
        return error_rate(self.completed, self.errors)


class LevelRow(LevelRecord, frozen=True, kw_only=True):
    id: int


# What the exports leave out of a level (report/exports.py): the raw tool output repeats what
# the other fields parsed from it (it stays in the store); the encoded histogram is no column.
# A run's owner process and scratch dir are bookkeeping of the machine that ran it (stale-run
# detection), not results. A level's `superseded` mark is always null there: the exports hold
# the standing levels only, a superseded measurement stays in the store (and the findings).
NOT_IN_JSON: frozenset[str] = frozenset(
    {"raw_output", "owner_pid", "owner_started_at", "owner_host", "scratch_dir", "superseded"}
)
NOT_IN_CSV: frozenset[str] = frozenset({"histogram", "raw_output", "log_tail"})


# --- the machine's run-to-run spread (stackbench calibrate) ----------------------------------
class CalibrationRecord(Record, frozen=True, kw_only=True):
    """How much a level's figure moves between fresh server starts on one machine."""

    machine: str  # machine_key() of the environment it was measured on
    at: float  # when (epoch seconds)
    run_id: int  # the calibration run whose levels it was computed from
    stack: str
    workload: str
    level_value: float
    figures: tuple[float, ...]  # each start's steady-window req/s
    within_variance: float  # mean within-level variance of ln(figure) (the windows' own noise)
    sigma: float  # run-to-run SD of ln(figure) beyond the windows' noise
    sigma_used: float  # what verdicts use: an upper confidence bound, floored


class CalibrationRow(CalibrationRecord, frozen=True, kw_only=True):
    id: int


def machine_key(environment: Environment) -> str:
    """The machine a run or a calibration was made on: host name, CPU model and cores (a
    resized VM, or another CPU under the same name, is another machine)."""
    parts = (environment.hostname, environment.cpu_model, environment.cores)
    return "/".join("?" if p is UNSET else str(p) for p in parts)


_SCALARS = (mi.IntType, mi.FloatType, mi.StrType, mi.BoolType, mi.LiteralType)


def _flat(info: mi.Type) -> bool:
    if isinstance(info, mi.UnionType):
        return all(_flat(t) for t in info.types)
    if isinstance(info, mi.VarTupleType):
        item = info.item_type
        return isinstance(item, mi.StrType) or (
            isinstance(item, mi.CustomType) and item.cls is Flag
        )
    return isinstance(info, (*_SCALARS, mi.NoneType))


def flat_fields(record: type[Record]) -> tuple[str, ...]:
    """The fields that fit one table cell: a number, a text, a flag (maybe None), or a tuple
    of texts (a level's flags are texts there). Nested values (dicts, pairs, records) are
    left out."""
    info = mi.type_info(record)
    assert isinstance(info, mi.StructType)
    return tuple(f.name for f in info.fields if _flat(f.type))
