"""Judging a level: pure functions from what was measured to a status, flags and SLO verdicts.

Nothing here starts a process or touches a file: every rule can be tested on hand-made
figures (tests/engine/test_judge.py).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median

from stackbench.config.loadspec import LoadResult, Mode
from stackbench.config.measured import CoreAccount, CoreSetUse, RoleUsage
from stackbench.config.noise import THROUGHPUT_THRESHOLD
from stackbench.config.slo import SloOutcome, SloStatus, evaluate_slo, percentile_key
from stackbench.config.suite import Slo
from stackbench.engine.cpu_drop import cpu_drop
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
# The native loader's error classes that mean the loader ran out, not the server: of file
# descriptors (EMFILE/ENFILE) or of local ports toward the server (EADDRNOTAVAIL).
LOADER_LIMIT_ERRORS = ("too_many_files", "address_exhausted")
LOADER_LIMIT_ADVICE = (
    "raise the loader's descriptor limit (ulimit -Hn; stackbench raises it itself where it "
    "may: root with CAP_SYS_RESOURCE), widen net.ipv4.ip_local_port_range, or give the "
    "loader a host of its own ([placement] loader_hosts)"
)


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
    # The level's cores accounted completely (None: not on this machine, not accounted).
    account: CoreAccount | None = None


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
    held = loader_limit_flag(m)
    if held:
        status = "invalid"
        flags.append(held)
    starved = starvation_flag(m.result)
    if starved:
        flags.append(starved)
    disturbed = disturbed_flag(m.account)
    if disturbed:
        flags.append(disturbed)
    # only where no disturbance was seen: one that was explains the fall, and says so
    fell = None if disturbed else cpu_drop(m.account, m.server_roles, m.result.timeseries)
    if fell is not None:
        flags.append(LevelFlag.HELD_BACK.detail(fell.sentence()))
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


# What a disturbed flag advises (its detail's end).
QUIET_ADVICE = "; repeat it on a quiet machine (stackbench doctor names what runs)"


def disturbed_flag(account: CoreAccount | None, band: float = THROUGHPUT_THRESHOLD) -> Flag | None:
    """Other processes (named or too short-lived to name) and the hypervisor's steal took
    more of a set of the level's cores (the server's, the loader's) than the noise band
    allows: a CPU-bound server that loses that share of its cores loses about as much of its
    figure, so the level could have moved by more than a verdict's threshold. Kernel threads
    are not counted: the level's own network work runs in them (ksoftirqd); nor is the
    kernel's work in no task (the remainder of seconds that forked nothing unseen).

    The reference loop's reading of how fast the host ran the cores (lab/corespeed.py) is
    recorded in the account and judges nothing: on this project's guest the servers'
    throughput did not follow it second by second (benchmarks/core_speed_effect.py: a slope
    of -0.09 ± 0.05 over 172 saturated seconds of Node hashing, 128 of them read at 0.56-0.8
    of the loop's fastest; +0.04 ± 0.13 over 136 of pool-and-cluster's, 17 read 1.3-1.6x
    faster), so a level flagged for it was measured again for nothing."""
    if account is None or account.elapsed_s <= 0:
        return None
    found = []
    for cores in account.sets:
        if not cores.roles:
            continue
        if cores.taken_share(account.elapsed_s) > band:
            capacity = cores.capacity_s(account.elapsed_s)
            found.append(_lost(cores, cores.other_s / capacity, cores.steal_s / capacity))
    if not found:
        return None
    said = "; ".join(found) + f", more than the {band:.0%} noise band allows{_named(account)}"
    return LevelFlag.DISTURBED.detail(said + QUIET_ADVICE)


def _lost(cores: CoreSetUse, other: float, steal: float) -> str:
    """What took a set's cores, in words: the parts that took any."""
    where = f"{_cores_name(cores.cores)} ({', '.join(cores.roles)})"
    parts = []
    if other >= 0.001 or steal < 0.001:
        parts.append(f"other processes used {other:.1%} of {where}")
    if steal >= 0.001:
        parts.append(f"the hypervisor stole {steal:.1%}" + ("" if parts else f" of {where}"))
    return " and ".join(parts)


def disturbance(flag: Flag) -> str:
    """What a disturbed flag says happened, without its advice: the record of a measurement
    the runner measured again (which is what the advice asks) keeps this."""
    return flag.detail.removesuffix(QUIET_ADVICE)


def _cores_name(cores: Sequence[int]) -> str:
    return ("core " if len(cores) == 1 else "cores ") + ",".join(map(str, cores))


def _named(account: CoreAccount) -> str:
    """The processes that used most, and what no one was seen to use."""
    elapsed = account.elapsed_s
    parts = [f"{u.name} (pid {u.pid}) {u.cpu_s / elapsed:.0%}" for u in account.top]
    # the short commands whose parent reaped them are named in `top` by that parent
    unseen = sum(max(0.0, s.unseen_s - s.reaped_s) for s in account.sets if s.roles) / elapsed
    if unseen >= 0.005:
        parts.append(f"processes too short-lived to name {unseen:.0%}")
    # not counted in the share: the seconds it comes from forked nothing unseen
    no_task = sum(s.no_task_s for s in account.sets if s.roles) / elapsed
    if no_task >= 0.005:
        parts.append(f"kernel work in no task {no_task:.0%}, the level's own, not counted")
    return f" ({', '.join(parts)}, of a core)" if parts else ""


def unsteady_flag(m: Measurement) -> Flag | None:
    """Closed loop, timed level: fewer requests ended than there are connections, so some
    connection never had one request answered or failed (a timeout ends one).

    Requests in flight at the end are dropped, so the level saw start-up, not a steady state;
    a processor-sharing server (every request progressing at once) then shows 0 req/s. With a
    timeout shorter than the level every connection's requests end, answered or timed out:
    a server that answers none within it is steadily failing, which its error rate shows. The
    loader's own failures to connect (out of descriptors or ports) end nothing of the
    server's: `loader_limit_flag` judges them.
    """
    if m.result is None or m.mode is not Mode.CLOSED or not m.duration_s:
        return None
    # Answered with a wrong status or body: already among the completed responses.
    not_ended = (*LOADER_LIMIT_ERRORS, "status", "body_mismatch")
    ended = sum(n for c, n in m.result.errors.items() if c not in not_ended)
    if m.result.completed + ended >= m.connections:
        return None
    said = f"{m.result.completed} responses for {m.connections} connections in {m.duration_s:g} s"
    limit = loader_limit(m.result)
    if limit:
        # A longer level would not help: the connections never were all there.
        return LevelFlag.UNSTEADY.detail(
            f"{said}: the loader could not hold its connections ({limit}); {LOADER_LIMIT_ADVICE}"
        )
    return LevelFlag.UNSTEADY.detail(f"{said}; raise duration_s")


def loader_limit(result: LoadResult) -> str | None:
    """The loader's own failures to open connections, as `too_many_files 304692,
    address_exhausted 4335`, or None when it had none."""
    counts = [(c, result.errors.get(c, 0)) for c in LOADER_LIMIT_ERRORS]
    found = [f"{c} {n}" for c, n in counts if n]
    return ", ".join(found) or None


def loader_limit_flag(m: Measurement) -> Flag | None:
    """The loader ran out of descriptors or local ports: the level did not hold the
    connections it names, whatever the server did (invalid; the unsteady flag says it
    instead when it is raised)."""
    assert m.result is not None
    limit = loader_limit(m.result)
    if limit is None or unsteady_flag(m) is not None:
        return None
    return LevelFlag.INVALID.detail(
        f"the loader could not hold the {m.connections} connections ({limit}); "
        f"{LOADER_LIMIT_ADVICE}"
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
