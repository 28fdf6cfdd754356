"""Typed load settings shared by the suite parser, the plan and the drivers."""

import enum
from dataclasses import dataclass
from typing import Annotated, Literal

from msgspec import Meta, Struct

from stackbench.config.measured import OpenLoop, Second


class DriverKind(enum.Enum):
    NATIVE = "native"
    WRK = "wrk"
    AB = "ab"


class Mode(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"


# What a level's value counts: connections (closed loop) or requests/s (open loop).
LevelKind = Literal["connections", "rate"]


class KeepAlive(enum.Enum):
    ON = "on"
    OFF = "off"


# Bounds of the [load] settings. They only keep out values that cannot be meant (a week-long
# level, a million repetitions, NaN, infinity); every real benchmark lies far inside them.
MAX_SECONDS = 86_400.0  # one level at most a day
MAX_REPEAT = 100
MAX_REQUESTS = 1_000_000_000
MAX_THREADS = 1024

Seconds = Annotated[float, Meta(ge=0.0, le=MAX_SECONDS)]


class LoadSettings(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """How each level is loaded: the [load] table of a suite, minus its levels. The defaults
    here are the only ones: the suite parser and the drivers both read them from this class."""

    driver: DriverKind = DriverKind.NATIVE
    mode: Mode = Mode.CLOSED
    keepalive: KeepAlive = KeepAlive.ON
    duration_s: Annotated[float, Meta(ge=0.1, le=MAX_SECONDS)] | None = 5.0
    requests: Annotated[int, Meta(ge=1, le=MAX_REQUESTS)] | None = None
    # e.g. ab -c 200 -n 20000 in the articles
    requests_per_connection: Annotated[int, Meta(ge=1, le=MAX_REQUESTS)] | None = None
    warmup_s: Seconds = 1.0
    timeout_s: Annotated[float, Meta(ge=0.001, le=MAX_SECONDS)] = 3.0
    pause_s: Seconds = 1.0
    repeat: Annotated[int, Meta(ge=1, le=MAX_REPEAT)] = 1
    threads: Annotated[int, Meta(ge=0, le=MAX_THREADS)] = 0  # 0: one per loader core
    pipeline: Annotated[int, Meta(ge=1, le=MAX_THREADS)] = 1
    # JIT stacks get a discarded pass before a case's first level (their stack.toml [warmup]);
    # false measures them cold.
    jit_warmup: bool = True


def level_budget_s(settings: LoadSettings) -> float:
    """How long the engine lets a level run before it kills the loader. Generous: a level
    that overruns this is hung, not slow (the plan's estimates never exceed it)."""
    return (settings.duration_s or 0) + settings.warmup_s + 10 * settings.timeout_s + 300


@dataclass(frozen=True)
class LoadRequest:
    """One load level as a driver must apply it."""

    url: str
    settings: LoadSettings
    connections: int
    rate: float | None
    loader_cpus: frozenset[int]
    expect_status: int = 200
    expect_body_sha256: str | None = None
    # A suite's own endpoint may send another method, headers ("Name: value") and a body.
    method: str = "GET"
    headers: tuple[str, ...] = ()
    body: str | None = None

    @property
    def request_count(self) -> int | None:
        s = self.settings
        if s.requests_per_connection is not None:
            return s.requests_per_connection * self.connections
        return s.requests

    @property
    def threads(self) -> int:
        wanted = self.settings.threads or len(self.loader_cpus) or 1
        return max(1, min(wanted, self.connections))


def error_rate(completed: int, errors: dict[str, int]) -> float:
    """Failed attempts / attempts. Status and body errors are completed responses already;
    other classes (connect, timeout ...) are attempts that never completed."""
    failed = sum(errors.values())
    attempts = completed + sum(v for k, v in errors.items() if k not in ("status", "body_mismatch"))
    return failed / attempts if attempts else 0.0


@dataclass(frozen=True)
class LoadResult:
    """What a driver measured. Figures a tool does not give are None, never invented."""

    driver: DriverKind
    command: tuple[str, ...]
    duration_s: float
    completed: int
    ok: int
    errors: dict[str, int]
    requests_per_s: float
    latency_us: dict[str, float]  # p50, p75, p90, p99, p99_9, max, mean, ... as the tool gives
    connect_us: dict[str, float] | None = None
    histogram: str | None = None
    timeseries: tuple[Second, ...] | None = None
    open_loop: OpenLoop | None = None
    loader_cpu_s: tuple[float, float] | None = None  # user, sys
    unanswered_at_end: tuple[int, float] | None = None  # count, oldest age in µs
    # Bytes received in the measured phase (headers and bodies, as read from the sockets), at
    # the resolution the tool prints them; None when the tool does not say.
    bytes_read: int | None = None
    # The native loader's I/O engine (uring | epoll); None for wrk and ab
    loader_engine: str | None = None
    warnings: tuple[str, ...] = ()
    raw_output: str = ""

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    @property
    def error_rate(self) -> float:
        return error_rate(self.completed, self.errors)
