"""One load level when the server or the loaders run on other hosts (a multi-host run).

The same steps as `measure` on one machine, through the hosts' agents: the crash watch polls
the server host's agent, every host samples its own roles, and with several loader hosts the
level is split (connections or rate) over them, started together on a time the controller
sets — each loader gets it on its own clock, the host's measured offset added — and merged
exactly from their histograms (drivers/merge.py). A host whose channel dies fails the level
with class `host-lost`, naming the host and when.
"""

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from stackbench.config.loadspec import LoadRequest, LoadResult, level_budget_s
from stackbench.config.measured import RoleUsage
from stackbench.drivers.merge import merge_results, split_request
from stackbench.engine.hosts import Agent
from stackbench.engine.judge import LevelFailure, Measurement
from stackbench.engine.measure import LoadHere, Target, load_here
from stackbench.engine.watch import ProcessExit, Watcher, loader_failed, server_exited
from stackbench.errors import DriverError, HostLost, StackbenchError
from stackbench.store.records import LoaderPart

# The loaders start this long after the controller sends the start time: enough for every
# request to arrive over SSH before the moment it names.
START_LEAD_S = 1.5
LOCAL_HOST = "controller"  # how the level's hosts name this machine


@dataclass(frozen=True)
class Spread:
    """Where a stack's levels run: the server's host, the loaders' (empty: this machine) and
    the data services' when they have a host of their own (None: with the server)."""

    server: Agent
    loaders: tuple[Agent, ...] = ()
    services: Agent | None = None

    @property
    def stack_hosts(self) -> tuple[Agent, ...]:
        """The hosts running the stack and its services: watched, and sampled every level."""
        return (self.server,) if self.services is None else (self.server, self.services)

    @property
    def services_host(self) -> Agent:
        return self.server if self.services is None else self.services


@dataclass
class HostWatch:
    """The crash watch of a server on another host: its agent's view of the stack and its
    services (and the services host's agent's, when they have their own). A lost channel
    stops the load like a dead server, and is remembered to fail the level as `host-lost`
    rather than `server-exited`."""

    agents: tuple[Agent, ...]
    lost: HostLost | None = None
    lost_at: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self) -> list[ProcessExit]:
        if self.lost is not None:
            return [ProcessExit(f"host {self.lost.host}", -1, str(self.lost))]
        found: list[ProcessExit] = []
        for agent in self.agents:
            try:
                exits = agent.client.exits()
            except HostLost as exc:
                self.note_lost(exc)
                return [ProcessExit(f"host {agent.name}", -1, str(exc))]
            found += [ProcessExit(self._on(agent, e.name), e.status, e.log_tail) for e in exits]
        return found

    def _on(self, agent: Agent, name: str) -> str:
        """ "service mariadb on host h3" when the stack's processes span two hosts."""
        return f"{name} on host {agent.name}" if len(self.agents) > 1 else name

    def note_lost(self, exc: HostLost) -> None:
        with self._lock:
            if self.lost is None:
                self.lost, self.lost_at = exc, time.time()


def host_lost(exc: HostLost, at: float) -> LevelFailure:
    when = time.strftime("%H:%M:%S", time.localtime(at))
    return LevelFailure("host-lost", f"{exc} (at {when}, during the level)", "")


def measure_spread(
    target: Target, req: LoadRequest, spread: Spread, watch: HostWatch
) -> Measurement:
    """The level on other hosts; never raises for a host lost during it (the level fails)."""
    dead = watch()
    if dead:
        failure = (
            host_lost(watch.lost, watch.lost_at)
            if watch.lost is not None
            else server_exited(dead, before_level=True)
        )
        return _measurement(target, req, spread, None, {}, failure)
    if not spread.loaders:
        return _local_loader(target, req, spread, watch)
    return _remote_loaders(target, req, spread, watch)


def _local_loader(
    target: Target, req: LoadRequest, spread: Spread, watch: HostWatch
) -> Measurement:
    """The server over there, the loader here (pinned to loader_cpus of this machine): the
    same loop as a local level, its roles sampled by their hosts' agents."""
    load = LoadHere(None, {}, "")
    usage: dict[str, RoleUsage] = {}

    def start_monitors() -> None:
        for agent in spread.stack_hosts:
            agent.client.monitor_start()

    try:
        load = load_here(req, {}, watch, start_monitors)
        usage.update(load.usage)
        for agent in spread.stack_hosts:
            usage.update(
                {role: u for role, u in agent.client.monitor_stop().items() if role != "loader"}
            )
    except HostLost as exc:
        watch.note_lost(exc)
    return _measurement(target, req, spread, load.result, usage, _failure(watch, load.error))


def _remote_loaders(
    target: Target, req: LoadRequest, spread: Spread, watch: HostWatch
) -> Measurement:
    loaders = spread.loaders
    parts = split_request(req, [req.loader_cpus] * len(loaders))
    budget = level_budget_s(req.settings)
    usage: dict[str, RoleUsage] = {}
    outcomes: list[tuple[LoadResult, float] | BaseException | None] = [None] * len(loaders)
    try:
        _together(
            [
                lambda a=a, r=r: a.client.warm_up(r, budget)  # type: ignore[misc]
                for a, r in zip(loaders, parts, strict=True)
            ]
        )
        hosts = _distinct([*spread.stack_hosts, *loaders])
        for agent in hosts:
            agent.client.monitor_start()
        start_at = time.time() + START_LEAD_S

        def run(i: int) -> None:
            agent = loaders[i]
            try:
                outcomes[i] = agent.client.run_load(
                    parts[i], start_at + agent.clock.offset_s, budget
                )
            except BaseException as exc:  # noqa: BLE001 - handed to the controller thread
                outcomes[i] = exc

        threads = [
            threading.Thread(target=run, args=(i,), daemon=True, name=f"load-{loaders[i].name}")
            for i in range(len(loaders))
        ]
        with Watcher(watch, on_exit=lambda: _stop_loads(loaders)):
            for t in threads:
                t.start()
            for t in threads:
                t.join(budget + START_LEAD_S + 60)
        for agent in hosts:
            usage.update(_host_usage(agent, spread.stack_hosts))
    except HostLost as exc:
        watch.note_lost(exc)
    except DriverError as exc:  # a warm-up pass failed on a loader host
        return _measurement(target, req, spread, None, usage, loader_failed(str(exc)))
    return _merged(target, req, spread, parts, outcomes, usage, watch)


def _merged(
    target: Target,
    req: LoadRequest,
    spread: Spread,
    parts: Sequence[LoadRequest],
    outcomes: Sequence[tuple[LoadResult, float] | BaseException | None],
    usage: dict[str, RoleUsage],
    watch: HostWatch,
) -> Measurement:
    loader_error = ""
    for agent, outcome in zip(spread.loaders, outcomes, strict=True):
        if isinstance(outcome, HostLost):
            watch.note_lost(outcome)
        elif isinstance(outcome, DriverError):
            loader_error = loader_error or f"loader on {agent.name}: {outcome}"
        elif isinstance(outcome, BaseException):
            raise outcome
        elif outcome is None:
            loader_error = loader_error or f"loader on {agent.name} gave no answer in time"
    failure = _failure(watch, loader_error)
    done = [o for o in outcomes if isinstance(o, tuple)]
    if len(done) != len(outcomes):
        return _measurement(target, req, spread, None, usage, failure)
    started = [
        at - agent.clock.offset_s for (_, at), agent in zip(done, spread.loaders, strict=True)
    ]
    names = [a.name for a in spread.loaders]
    merged = merge_results([r for r, _ in done], started, names)
    loader_parts = tuple(
        LoaderPart(
            host=name,
            connections=part.connections,
            rate=part.rate,
            completed=r.completed,
            errors=r.errors_total,
            requests_per_s=r.requests_per_s,
            started_at=at,
            histogram=r.histogram,
        )
        for name, part, (r, _), at in zip(names, parts, done, started, strict=True)
    )
    return _measurement(
        target, req, spread, merged.result, usage, failure, merged.start_skew_s, loader_parts
    )


def _failure(watch: HostWatch, loader_error: str) -> LevelFailure | None:
    if watch.lost is not None:
        return host_lost(watch.lost, watch.lost_at)
    dead = watch()
    if dead:
        return server_exited(dead)
    return loader_failed(loader_error) if loader_error else None


def _stop_loads(loaders: Sequence[Agent]) -> None:
    for agent in loaders:
        # A host that is gone, or whose load already ended, has nothing left to stop.
        with contextlib.suppress(StackbenchError):
            agent.client.stop_load()


def _together(calls: Sequence[Callable[[], None]]) -> None:
    """Run the calls at once (one thread each); the first error is raised when all ended."""
    errors: list[BaseException] = []

    def call(fn: Callable[[], None]) -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(fn,), daemon=True) for fn in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _distinct(agents: Sequence[Agent]) -> list[Agent]:
    return list({a.name: a for a in agents}.values())


def _host_usage(agent: Agent, stack_hosts: Sequence[Agent]) -> dict[str, RoleUsage]:
    """One host's roles: the stack's and its services' on their hosts, `loader@HOST` for the
    loader a host ran."""
    out = {}
    for role, values in agent.client.monitor_stop().items():
        if role == "loader":
            out[f"loader@{agent.name}"] = values
        elif agent.name in {h.name for h in stack_hosts}:
            out[role] = values
    return out


def _with_loader_summary(usage: dict[str, RoleUsage]) -> dict[str, RoleUsage]:
    """`loader`, the busiest loader host, for the tables' loader column (the judge checks
    every `loader@HOST` itself)."""
    loaders = [u for role, u in usage.items() if role.startswith("loader@")]
    if loaders and "loader" not in usage:
        usage = {**usage, "loader": max(loaders, key=lambda u: u.cpu_percent)}
    return usage


def _measurement(
    target: Target,
    req: LoadRequest,
    spread: Spread,
    result: LoadResult | None,
    usage: Mapping[str, RoleUsage],
    failure: LevelFailure | None,
    start_skew_s: float | None = None,
    loader_parts: tuple[LoaderPart, ...] = (),
) -> Measurement:
    s = req.settings
    hosts = {role: spread.server.name for role in target.server_roles}
    hosts.update({role: spread.services_host.name for role in target.service_roles})
    if spread.loaders:
        hosts.update({f"loader@{a.name}": a.name for a in spread.loaders})
    else:
        hosts["loader"] = LOCAL_HOST
    return Measurement(
        result=result,
        usage=_with_loader_summary(dict(usage)),
        mode=s.mode,
        connections=req.connections,
        duration_s=s.duration_s,
        server_roles=tuple(target.server_roles),
        server_cores=target.server_cores,
        loader_cores=len(req.loader_cpus),
        failure=failure,
        hosts=hosts,
        start_skew_s=start_skew_s,
        loader_parts=loader_parts,
    )
