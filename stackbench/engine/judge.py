"""Judging a level: pure functions from what was measured to a status, flags and SLO verdicts.

Nothing here starts a process or touches a file: every rule can be tested on hand-made
figures (tests/engine/test_judge.py).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median

from stackbench.config.loadspec import LoadResult, Mode
from stackbench.config.measured import RoleUsage
from stackbench.config.placement import OTHER_ROLE
from stackbench.config.slo import SloOutcome, SloStatus, evaluate_slo, percentile_key
from stackbench.config.suite import Slo
from stackbench.lab.monitor import loader_bound
from stackbench.store.records import (
    ERROR_RATE,
    Flag,
    LevelErrorClass,
    LevelFlag,
    LevelRecord,
    LevelStatus,
    LoaderPart,
)

# A request still waiting at the end is "starved" only past this age, and only if it waited
# longer than every answered request (a slow server alone is not starvation).
STARVED_MIN_US = 1e6


@dataclass(frozen=True)
class LevelFailure:
    """Why a level could not be measured: a watched process exited, or the loader failed."""

    error_class: LevelErrorClass
    error: str  # which process and how it ended, or the loader's error
    log_tail: str  # the last lines of the dead process's log, or of the loader's stderr

    @property
    def flag(self) -> Flag:
        return LevelFlag.FAILED.detail(f"{self.error_class}: {self.error}")


@dataclass(frozen=True)
class Measurement:
    """One level as measured: the driver's result, the per-role usage and the set-up.

    `result` is None when the load tool gave no result (it failed, or it was stopped because
    a server died); `failure` then says why. A result with a failure is a level during which
    a server died although the tool finished: its figures are kept, its status is failed."""

    result: LoadResult | None
    usage: Mapping[str, RoleUsage]
    mode: Mode
    connections: int
    duration_s: float | None  # planned length; None when a request count bounds the level
    server_roles: tuple[str, ...]
    server_cores: int
    loader_cores: int
    failure: LevelFailure | None = None
    # A level spread over hosts: role -> host, the loaders' start skew and their parts.
    hosts: Mapping[str, str] = field(default_factory=dict)
    start_skew_s: float | None = None
    loader_parts: tuple[LoaderPart, ...] = ()


@dataclass(frozen=True)
class Verdict:
    status: LevelStatus
    flags: tuple[Flag, ...]


def judge_level(m: Measurement, max_error_rate: float) -> Verdict:
    """ok, or invalid (with the reason in the flags); warnings become flags too. A level
    during which a server died or the loader failed is failed, whatever its figures say."""
    if m.failure is not None:
        warnings = _warnings(m.result) if m.result is not None else ()
        return Verdict("failed", (m.failure.flag, *warnings))
    assert m.result is not None, "a level without a result has a failure"
    flags = list(_warnings(m.result))
    status: LevelStatus = "ok"
    # A level spread over loader hosts is checked host by host: one saturated loader is
    # enough to make the level's figure a lower bound.
    loaders = [role for role in m.usage if role.startswith("loader@")] or ["loader"]
    if any(
        loader_bound(m.usage, m.loader_cores, list(m.server_roles), m.server_cores, role)
        for role in loaders
    ):
        flags.append(LevelFlag.LOADER_BOUND.alone)
    unsteady = unsteady_flag(m)
    if unsteady:
        status = "invalid"
        flags.append(unsteady)
    starved = starvation_flag(m.result)
    if starved:
        flags.append(starved)
    disturbed = disturbed_flag(m.usage)
    if disturbed:
        flags.append(disturbed)
    if m.result.error_rate > max_error_rate:
        status = "invalid"
        flags.append(
            LevelFlag.INVALID.detail(
                f"{ERROR_RATE} {m.result.error_rate:.1%} > {max_error_rate:.1%}"
            )
        )
    return Verdict(status, tuple(flags))


def _warnings(result: LoadResult) -> tuple[Flag, ...]:
    """The load tool's own warnings, kept in its words (flags of no kind)."""
    return tuple(Flag(None, w) for w in result.warnings)


# Other processes using more than this share of one core on the level's cores disturb it: a
# busy loop on the server's core halves a CPU-bound stack's throughput, and a verdict between
# two stacks, one of them measured while something else ran, would name the machine's winner.
DISTURBED_CPU_PERCENT = 15.0


def disturbed_flag(usage: Mapping[str, RoleUsage]) -> Flag | None:
    other = usage.get(OTHER_ROLE)
    if other is None or other.cpu_percent <= DISTURBED_CPU_PERCENT:
        return None
    return LevelFlag.DISTURBED.detail(
        f"other processes used {other.cpu_percent:.0f}% of a core on the level's cores; "
        "repeat it on a quiet machine (stackbench doctor names what runs)"
    )


def unsteady_flag(m: Measurement) -> Flag | None:
    """Closed loop, timed level: each connection did not get even one answer.

    Requests in flight at the end are dropped, so the level saw start-up, not a steady state;
    a processor-sharing server (every request progressing at once) then shows 0 req/s.
    """
    if (
        m.result is None
        or m.mode is not Mode.CLOSED
        or not m.duration_s
        or m.result.completed >= m.connections
    ):
        return None
    return LevelFlag.UNSTEADY.detail(
        f"{m.result.completed} responses for {m.connections} "
        f"connections in {m.duration_s:g} s; raise duration_s"
    )


def starvation_flag(result: LoadResult) -> Flag | None:
    """A request still unanswered at the end that had waited longer than any answered one:
    the server left some connections starving (e.g. a prefork pool smaller than the
    connection count), which the latency of the answered requests alone would hide."""
    if result.unanswered_at_end is None:
        return None
    count, oldest_us = result.unanswered_at_end
    longest = result.latency_us.get("max", 0.0)
    if count == 0 or oldest_us <= max(longest, STARVED_MIN_US):
        return None
    return LevelFlag.STARVED.detail(
        f"a request was still unanswered after {oldest_us / 1e6:.1f} s at the end "
        f"(longest answered: {longest / 1e6:.2f} s; {count} in flight at the end)"
    )


def slo_outcome(levels: Sequence[LevelRecord], slo: Slo) -> SloOutcome:
    """The SLO judged on the median over a level's repetitions (unknown when one of them
    lacks the percentile)."""
    key = percentile_key(slo.percentile)
    latencies = [lv.latency_us[key] for lv in levels if key in lv.latency_us]
    latency = {key: median(latencies)} if len(latencies) == len(levels) else {}
    return evaluate_slo(latency, median([lv.error_rate for lv in levels]), slo)


def slo_failed(levels: Sequence[LevelRecord], slo: Slo) -> bool:
    return slo_outcome(levels, slo).status is SloStatus.FAIL


def sustained(level: LevelRecord, slo: Slo) -> bool:
    """An open-loop probe holds when the rate was achieved and the SLO met."""
    # wrk and ab keep no schedule: their open-loop levels are judged by the SLO alone.
    achieved = level.open_loop is None or level.open_loop.sustained
    return achieved and slo_outcome([level], slo).status is SloStatus.PASS
