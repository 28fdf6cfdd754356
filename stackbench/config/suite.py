"""Parse a suite file (TOML) into a frozen `Suite`. Strict: every bad key names file and key.

The file's shape is declared once by the Structs below and converted by `config.toml`; this
module adds the rules that span several keys (open loop needs rates, a search needs an SLO ...).
A sweep list may mix plain values with ranges, e.g. `connections = [1, {start = 100,
step = 100, stop = 10000}]` for "1, then 100 to 10,000 in steps of 100".

Bounds (documented in the error messages too): at most MAX_LEVELS levels per sweep, each level
at most MAX_LEVEL_VALUE connections or requests/s, `repeat` at most MAX_REPEAT, `script_timings`
at most MAX_SCRIPT_TIMINGS, a suite file at most 1 MiB.
"""

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from stackbench.config.deviations import ArticleLoader, Deviation, loader_deviation
from stackbench.config.endpoints import Endpoint, parse_endpoints
from stackbench.config.external import ExternalStack, parse_external
from stackbench.config.hosts import HostsFile, hosts_from_table, parse_hosts_file
from stackbench.config.loadspec import MAX_SECONDS, DriverKind, LevelKind, LoadSettings, Mode
from stackbench.config.manifest import Manifest, discover, param_text, parse_manifest
from stackbench.config.names import NAME_RULE, check_name, is_name
from stackbench.config.paths import STACKS_DIR
from stackbench.config.placement import (
    MAX_CORE_COUNTS,
    CoreCount,
    Placement,
    core_counts,
    make_placement,
)
from stackbench.config.toml import Segment, convert, location, read_toml
from stackbench.config.workloads import CATALOG, WorkloadSpec, own_workload, parse_spec
from stackbench.errors import InputError

MAX_LEVELS = 1000
MAX_LEVEL_VALUE = 10_000_000.0  # connections or requests/s of one level
MAX_SCRIPT_ITERATIONS = 10_000_000
MAX_SCRIPT_TIMINGS = 20  # standalone timings per repetition
MAX_LOAD_BUDGET_MIN = 1440.0  # a suite designed for at most a day of load
DEFAULT_CONNECTIONS = (25.0,)  # closed loop without a `connections` list

LevelValue = Annotated[float, Meta(gt=0.0, le=MAX_LEVEL_VALUE)]
Fraction = Annotated[float, Meta(ge=0.0, le=1.0)]
ParamValue = str | int | bool


class Range(Struct, frozen=True, forbid_unknown_fields=True):
    """`{start = 100, step = 100, stop = 1000}` in a sweep list."""

    start: LevelValue
    step: LevelValue
    stop: LevelValue


Sweep = Annotated[list[LevelValue | Range], Meta(min_length=1)]


class Slo(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A service level objective: a level passes when both limits hold."""

    percentile: Annotated[float, Meta(gt=0.0, le=100.0)] = 99.0
    latency_ms: Annotated[float, Meta(ge=0.001, le=MAX_SECONDS * 1000)] = 3000.0
    max_error_rate: Fraction = 0.01
    stop_after_failures: Annotated[int, Meta(ge=0, le=MAX_LEVELS)] = 0  # 0: never stop early
    # A broken SLO makes `run` exit 1 (a CI gate). Off for sweeps whose finding is the level
    # where the objective breaks.
    gate: bool = True


class RateSearch(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Open loop: find the highest rate in [lo, hi] that meets the SLO, in at most `probes`."""

    lo: LevelValue
    hi: LevelValue
    probes: Annotated[int, Meta(ge=2, le=100)] = 8
    tolerance: Annotated[float, Meta(gt=0.0, le=1.0)] = 0.05


class Limits(Struct, frozen=True, forbid_unknown_fields=True):
    """[limits]: a level with more errors than this is not used for rankings; a stack whose
    process exits mid-run is restarted at most max_restarts times, then given up."""

    max_error_rate: Fraction = 0.01
    max_restarts: Annotated[int, Meta(ge=0, le=100)] = 2


class Variant(Struct, frozen=True):
    """A named configuration of a stack, e.g. node-cluster with db_strategy = "pool"."""

    name: str
    stack: str
    params: dict[str, str]


class _LoadTable(LoadSettings, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """[load]: the load settings plus the levels of the sweep."""

    connections: Sweep | None = None
    rates: Sweep | None = None


MAX_ARTICLE_CORES = 4096


class _PlacementTable(Struct, frozen=True, forbid_unknown_fields=True):
    server_cpus: str | None = None
    loader_cpus: str | None = None
    services_cpus: str | None = None
    server_host: str | None = None
    loader_hosts: list[str] = []
    services_host: str | None = None
    # memcached has no authentication: on a services host of its own it listens on that
    # host's address, open to the network, only when the suite says so here.
    memcached_on_network: bool = False
    # The cores the server had in the article the suite reproduces: a statement, not a
    # request; the plan and the run say so when the placement gives the server fewer.
    article_server_cores: Annotated[int, Meta(ge=1, le=MAX_ARTICLE_CORES)] | None = None
    # Where the article's load tool ran (config/deviations.py): the plan states a deviation
    # when this placement differs.
    article_loader: ArticleLoader | None = None
    # The server measured at each of these core counts, each its own planned stack
    # ("node.2c"); the capacity output then shows the measured scaling. Not with server_cpus.
    server_cores: (
        Annotated[
            list[Annotated[int, Meta(ge=1, le=MAX_ARTICLE_CORES)]],
            Meta(min_length=1, max_length=MAX_CORE_COUNTS),
        ]
        | None
    ) = None


class _VariantTable(Struct, frozen=True, forbid_unknown_fields=True):
    stack: str
    params: dict[str, Any] = {}  # checked entry by entry, like [params.STACK]


class _SuiteFile(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    stacks: list[str]  # may be empty when [external] tables name every stack
    workloads: Annotated[list[str], Meta(min_length=1)]
    name: str | None = None
    description: str = ""
    variant: str = "full"
    load: _LoadTable = _LoadTable()
    placement: _PlacementTable = _PlacementTable()
    limits: Limits = Limits()
    slo: Slo | None = None
    search: RateSearch | None = None
    script_iterations: Annotated[int, Meta(ge=0, le=MAX_SCRIPT_ITERATIONS)] = 0
    # Standalone timings in each repetition, each a fresh process: a timing is one whole run,
    # so several a repetition give the timing's interval without more rounds of load.
    script_timings: Annotated[int, Meta(ge=1, le=MAX_SCRIPT_TIMINGS)] = 1
    # The minutes of load the suite is designed to fit (an article suite: to decide its claims
    # within them); the plan states it and refuses a plan estimated longer (run --budget wins).
    load_budget_min: Annotated[float, Meta(gt=0, le=MAX_LOAD_BUDGET_MIN)] | None = None
    # Tables keyed by names the user chooses: converted entry by entry below, so an error can
    # name the entry (msgspec reports a dict key only as "[...]").
    params: dict[str, Any] = {}
    variants: dict[str, Any] = {}
    levels: dict[str, Any] = {}
    durations: dict[str, Any] = {}
    min_server_cores: dict[str, Any] = {}
    max_server_cores: dict[str, Any] = {}
    stack_workloads: dict[str, Any] = {}
    # Other hosts for [placement] server_host / loader_hosts: [hosts.NAME] tables here, or a
    # hosts file (relative to the suite's folder), read when the run starts (--hosts wins).
    hosts: dict[str, Any] = {}
    hosts_file: Annotated[str, Meta(min_length=1, max_length=4096)] | None = None
    # Where an article suite departs from its article, one [[deviation]] each.
    deviation: Annotated[list[Deviation], Meta(max_length=50)] = []
    # The suite's own workloads, [endpoints.NAME] (config/endpoints.py), listed in workloads.
    endpoints: dict[str, Any] = {}
    # Servers the user runs: [external.NAME] tables (config/external.py).
    external: dict[str, Any] = {}


@dataclass(frozen=True)
class Suite:
    path: Path
    name: str
    description: str
    variant: str
    stacks: tuple[str, ...]
    workloads: tuple[WorkloadSpec, ...]
    params: dict[str, dict[str, str]]
    load: LoadSettings
    levels: tuple[float, ...]  # connections (closed loop) or requests/s (open loop)
    placement: Placement
    article_server_cores: int | None  # the article's server had this many cores (if known)
    max_error_rate: float
    max_restarts: int
    slo: Slo | None
    search: RateSearch | None
    variants: dict[str, Variant]
    workload_levels: dict[str, tuple[float, ...]]
    workload_durations: dict[str, float]
    script_iterations: int  # >0: time each workload without HTTP before loading it
    raw_text: str
    script_timings: int = 1  # standalone timings per repetition (with script_iterations)
    hosts: HostsFile | None = None  # the suite's own [hosts] tables
    hosts_file: Path | None = None  # or its hosts_file, read by `resolve_hosts`
    declared_deviations: tuple[Deviation, ...] = ()  # the suite file's [[deviation]]
    article_loader: ArticleLoader | None = None
    load_budget_s: float | None = None  # the suite's load_budget_min, in seconds
    # The user's own stacks (a `stacks` entry that is a path), their manifests read once here.
    own_stacks: dict[str, Manifest] = dataclasses.field(default_factory=dict)
    # The suite's own workloads ([endpoints.NAME]), by name.
    endpoints: dict[str, Endpoint] = dataclasses.field(default_factory=dict)
    # Servers the user runs ([external.NAME]), listed last in `stacks`.
    external: dict[str, ExternalStack] = dataclasses.field(default_factory=dict)
    # Stacks that measure nothing the suite is for below this many server cores (a cluster of
    # one worker is no cluster): the plan leaves them out there, as unavailable, with why.
    min_server_cores: dict[str, int] = dataclasses.field(default_factory=dict)
    # Stacks that stand in for others where the server is too small for those (one Node
    # process for a cluster): the plan leaves them out above this many server cores.
    max_server_cores: dict[str, int] = dataclasses.field(default_factory=dict)
    # The workload labels a stack runs when not every one of the suite's ([stack_workloads]):
    # a stand-in where another stack's figures serve, or a workload no claim reads of it.
    stack_workloads: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    # [placement] server_cores with two or more counts: each stack planned at each (empty:
    # every stack on `placement`, which is the fewest count's when there are counts)
    core_counts: tuple[CoreCount, ...] = ()

    @property
    def stack_folders(self) -> dict[str, Path]:
        """The user's own stacks' folders, by name."""
        return {name: m.stack_dir for name, m in self.own_stacks.items()}

    # Departures that depend on the machine (lab/cpufeatures.py `with_machine_deviations`).
    machine_deviations: tuple[Deviation, ...] = ()

    @property
    def is_article_suite(self) -> bool:
        """A suite that reproduces an article: it states where it departs from it."""
        return bool(
            self.declared_deviations
            or self.article_loader is not None
            or self.article_server_cores is not None
        )

    @property
    def deviations(self) -> tuple[Deviation, ...]:
        """Every departure from the article: the declared ones, the loader's placement, then
        the machine's."""
        loader = loader_deviation(self.article_loader, self.placement)
        return (
            self.declared_deviations
            + ((loader,) if loader else ())
            + self._count_deviations(loader)
            + self.machine_deviations
        )

    def _count_deviations(self, first: Deviation | None) -> tuple[Deviation, ...]:
        """A core count whose loader sits elsewhere, against the article, than at the fewest
        count (2 server cores on 2 cores: the loader shares them)."""
        out = []
        for count in self.core_counts[1:]:
            d = loader_deviation(self.article_loader, count.placement)
            if d is not None and d != first:
                setting = f"loader placement at {count.cores} server cores"
                out.append(msgspec.structs.replace(d, setting=setting))
        return tuple(out)

    @property
    def server_cores(self) -> int:
        """The cores the placement gives the server: what the stacks size themselves for."""
        return len(self.placement.server)

    @property
    def level_kind(self) -> LevelKind:
        return "rate" if self.load.mode is Mode.OPEN else "connections"

    def levels_for(self, label: str) -> tuple[float, ...]:
        return self.workload_levels.get(label, self.levels)

    def load_for(self, label: str) -> LoadSettings:
        """The load settings of one workload: a slow workload may need longer levels."""
        if label in self.workload_durations:
            return msgspec.structs.replace(self.load, duration_s=self.workload_durations[label])
        return self.load


def expand_sweep(items: list[float | Range], where: str) -> tuple[float, ...]:
    """[25, 100, Range(200, 100, 1000)] -> (25, 100, 200, 300, ..., 1000)."""
    values: list[float] = []
    for item in items:
        values += _expand_range(item, where) if isinstance(item, Range) else [float(item)]
        if len(values) > MAX_LEVELS:
            raise InputError(f"{where}: more than {MAX_LEVELS} levels")
    return tuple(values)


def _expand_range(item: Range, where: str) -> list[float]:
    start, step, stop = item.start, item.step, item.stop
    if stop < start:
        raise InputError(
            f"{where}: a range needs stop >= start (got start = {start:g}, stop = {stop:g})"
        )
    count = int((stop - start) / step + 1e-9) + 1
    if count > MAX_LEVELS:
        raise InputError(f"{where}: the range has {count} levels; at most {MAX_LEVELS}")
    return [float(start + i * step) for i in range(count)]


def _where(path: Path, *segments: Segment) -> str:
    return f"{path}: {location(segments)}"


def _whole(levels: tuple[float, ...], where: str) -> tuple[float, ...]:
    if any(v != int(v) for v in levels):
        raise InputError(f"{where}: connections must be whole numbers")
    return levels


def _load(
    path: Path, table: _LoadTable, given: dict[str, Any], searching: bool
) -> tuple[LoadSettings, tuple[float, ...]]:
    """The load settings and the levels of [load], after the rules that span several keys."""
    settings = LoadSettings(**{f: getattr(table, f) for f in LoadSettings.__struct_fields__})
    counted = settings.requests is not None or settings.requests_per_connection is not None
    if settings.requests is not None and settings.requests_per_connection is not None:
        raise InputError(
            f"{_where(path, 'load', 'requests')}: give requests or requests_per_connection"
        )
    if counted:
        if "duration_s" in given:
            raise InputError(
                f"{_where(path, 'load', 'requests')}: give either a request count "
                "or duration_s, not both"
            )
        settings = msgspec.structs.replace(settings, duration_s=None)
    if settings.driver is not DriverKind.NATIVE and settings.mode is Mode.OPEN:
        raise InputError(
            f"{_where(path, 'load', 'driver')}: '{settings.driver.value}' has no "
            'open-loop mode; use driver = "native"'
        )
    if settings.driver is DriverKind.WRK and counted:
        raise InputError(
            f"{_where(path, 'load', 'requests')}: wrk cannot stop after a request "
            'count; use duration_s or driver = "native"/"ab"'
        )
    if settings.mode is Mode.OPEN:
        if counted:
            raise InputError(
                f"{_where(path, 'load', 'requests')}: open loop runs for "
                "duration_s, not a request count"
            )
        if table.rates is None and not searching:
            raise InputError(
                f'{_where(path, "load", "rates")}: open loop (mode = "open") '
                "needs a list of request rates"
            )
        if table.connections is not None:
            raise InputError(
                f"{_where(path, 'load', 'connections')}: open loop (mode = "
                '"open") is set by request rates; remove connections'
            )
        if searching or table.rates is None:  # a search chooses the rates itself
            return settings, ()
        return settings, expand_sweep(table.rates, _where(path, "load", "rates"))
    if table.rates is not None:
        raise InputError(f'{_where(path, "load", "rates")}: rates need mode = "open"')
    where = _where(path, "load", "connections")
    sweep = table.connections
    levels = DEFAULT_CONNECTIONS if sweep is None else expand_sweep(sweep, where)
    return settings, _whole(levels, where)


def _search(
    path: Path, search: RateSearch | None, mode: Mode, slo: Slo | None
) -> RateSearch | None:
    if search is None:
        return None
    if mode is not Mode.OPEN:
        raise InputError(f'{path}: [search] finds a maximum rate, so it needs [load] mode = "open"')
    if slo is None:
        raise InputError(f"{path}: [search] needs an [slo] to judge each probe")
    if search.hi < search.lo:
        raise InputError(f"{_where(path, 'search', 'hi')}: [search] needs lo <= hi")
    return search


def _name_table(path: Path, data: dict[str, Any], section: str) -> None:
    """The keys of [params] and [variants] are stack and variant names."""
    for name in data:
        check_name(name, f"{path}: [{section}] {location((name,))}")


def _params(path: Path, data: dict[str, Any]) -> dict[str, dict[str, str]]:
    _name_table(path, data, "params")
    return {stack: _param_values(path, values, ("params", stack)) for stack, values in data.items()}


def _param_values(path: Path, values: object, at: tuple[Segment, ...]) -> dict[str, str]:
    """NAME = value, as text; the stack's manifest checks each value's type in the plan."""
    if not isinstance(values, dict):
        raise InputError(f"{path}: {location(at)}: expected a table of NAME = value")
    return {
        key: param_text(convert(value, ParamValue, path, (*at, key)))
        for key, value in values.items()
    }


def _variants(path: Path, data: dict[str, Any]) -> dict[str, Variant]:
    _name_table(path, data, "variants")
    out = {}
    for name, spec in data.items():
        table = convert(spec, _VariantTable, path, ("variants", name))
        check_name(table.stack, _where(path, "variants", name, "stack"))
        params = _param_values(path, table.params, ("variants", name, "params"))
        out[name] = Variant(name, table.stack, params)
    return out


def _workload_levels(
    path: Path, data: dict[str, Any], labels: tuple[str, ...], mode: Mode
) -> dict[str, tuple[float, ...]]:
    out = {}
    for label, items in data.items():
        where = _where(path, "levels", label)
        if label not in labels:
            raise InputError(f"{where}: not one of the suite's workloads ({', '.join(labels)})")
        levels = expand_sweep(convert(items, Sweep, path, ("levels", label)), where)
        out[label] = _whole(levels, where) if mode is Mode.CLOSED else levels
    return out


def _workload_durations(
    path: Path, data: dict[str, Any], labels: tuple[str, ...], load: LoadSettings
) -> dict[str, float]:
    if data and load.duration_s is None:
        raise InputError(f"{path}: [durations] needs [load] duration_s (not a request count)")
    out = {}
    for label, seconds in data.items():
        where = _where(path, "durations", label)
        if label not in labels:
            raise InputError(f"{where}: not one of the suite's workloads ({', '.join(labels)})")
        out[label] = convert(
            seconds, Annotated[float, Meta(ge=0.1, le=MAX_SECONDS)], path, ("durations", label)
        )
    return out


def _server_cores_bound(
    path: Path, data: dict[str, Any], stacks: tuple[str, ...], key: str
) -> dict[str, int]:
    """[min_server_cores] or [max_server_cores]: a core count for some of the suite's stacks."""
    out = {}
    for name, cores in data.items():
        where = _where(path, key, name)
        if name not in stacks:
            raise InputError(f"{where}: not one of the suite's stacks ({', '.join(stacks)})")
        out[name] = convert(cores, Annotated[int, Meta(ge=1, le=1024)], path, (key, name))
    return out


def _min_server_cores(path: Path, data: dict[str, Any], stacks: tuple[str, ...]) -> dict[str, int]:
    return _server_cores_bound(path, data, stacks, "min_server_cores")


def _max_server_cores(
    path: Path, data: dict[str, Any], stacks: tuple[str, ...], least: dict[str, int]
) -> dict[str, int]:
    out = _server_cores_bound(path, data, stacks, "max_server_cores")
    for name, cores in out.items():
        if least.get(name, 1) > cores:
            raise InputError(
                f"{_where(path, 'max_server_cores', name)}: {cores} is below its "
                f"[min_server_cores] {least[name]}, so no server would run it"
            )
    return out


def _stack_workloads(
    path: Path, data: dict[str, Any], stacks: tuple[str, ...], labels: tuple[str, ...]
) -> dict[str, tuple[str, ...]]:
    """[stack_workloads]: for some of the suite's stacks, the workloads each runs (labels of
    the suite's, each once, at least one)."""
    out = {}
    for name, items in data.items():
        where = _where(path, "stack_workloads", name)
        if name not in stacks:
            raise InputError(f"{where}: not one of the suite's stacks ({', '.join(stacks)})")
        chosen = convert(
            items,
            Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(min_length=1)],
            path,
            ("stack_workloads", name),
        )
        unknown = [w for w in chosen if w not in labels]
        if unknown:
            raise InputError(
                f"{where}: '{unknown[0]}' is not one of the suite's workloads ({', '.join(labels)})"
            )
        if len(set(chosen)) != len(chosen):
            raise InputError(f"{where}: a workload is listed twice")
        out[name] = tuple(chosen)
    return out


def is_stack_path(entry: str) -> bool:
    """A `stacks` entry naming a folder ("./myapp", "/srv/app") rather than a catalog stack."""
    return "/" in entry


def _stacks(
    path: Path, stacks: list[str], endpoints: frozenset[str]
) -> tuple[tuple[str, ...], dict[str, Manifest]]:
    """The stacks' names, and the manifests of the user's own stacks among them (which may
    list the suite's own `endpoints` among their workloads)."""
    where = _where(path, "stacks")
    names: list[str] = []
    own: dict[str, Manifest] = {}
    catalog = discover(STACKS_DIR) if any(map(is_stack_path, stacks)) else {}
    for entry in stacks:
        if is_stack_path(entry):
            manifest = _own_stack(path, entry, where, catalog, endpoints)
            own[manifest.name] = manifest
            names.append(manifest.name)
        else:
            names.append(check_name(entry, where))
    twice = sorted({s for s in names if names.count(s) > 1})
    if twice:
        raise InputError(f"{where}: '{twice[0]}' is listed twice")
    return tuple(names), own


def _own_stack(
    path: Path, entry: str, where: str, catalog: dict[str, Path], endpoints: frozenset[str]
) -> Manifest:
    """A stack from a folder of the user's: resolved from the suite file's folder, holding a
    stack.toml, named by its manifest (or its folder) and clashing with no catalog stack."""
    if any(ord(c) < 32 or c == "\x7f" for c in entry) or len(entry) > 4096:
        raise InputError(f"{where}: {entry!r} is not a usable folder path")
    folder = (path.parent / entry).resolve()
    manifest_path = folder / "stack.toml"
    if not manifest_path.is_file():
        raise InputError(
            f"{where}: {entry!r} ({folder}) holds no stack.toml: give the folder of a stack "
            "(`stackbench new-stack DIR --like node` writes a starting one)"
        )
    try:
        manifest = parse_manifest(manifest_path, catalog=False, endpoints=endpoints)
    except InputError as exc:
        raise InputError(f"{where}: {entry!r}: {exc}") from exc
    if manifest.name in catalog and catalog[manifest.name].parent.resolve() != folder:
        raise InputError(
            f"{where}: {entry!r} is named {manifest.name!r}, the name of a catalog stack "
            f"({catalog[manifest.name].parent}): set another `name` in {manifest_path}"
        )
    return manifest


def _external(
    path: Path,
    tables: dict[str, Any],
    listed: tuple[str, ...],
    own: dict[str, Manifest],
    variants: dict[str, Any],
    placement: Placement,
    endpoints: frozenset[str],
) -> dict[str, ExternalStack]:
    """The [external.NAME] servers, named apart from every other stack of the suite."""
    if not tables:
        if not listed:
            raise InputError(
                f"{path}: key 'stacks': expected a non-empty list of stacks (or an "
                "[external.NAME] table for a server you run)"
            )
        return {}
    taken = {name: "a stack in the suite's `stacks`" for name in listed}
    taken |= {name: "a catalog stack" for name in discover(STACKS_DIR)}
    taken |= {name: f"the suite's own stack in {m.stack_dir}" for name, m in own.items()}
    taken |= {name: "a variant ([variants])" for name in variants}
    # On a multi-host run (the placement's rules require a server host for every other host),
    # an external server runs on the server host, where its agent samples its processes.
    return parse_external(path, tables, taken, endpoints, placement.server_host is not None)


def _workloads(
    path: Path, texts: list[str], endpoints: dict[str, Endpoint]
) -> tuple[WorkloadSpec, ...]:
    where = _where(path, "workloads")
    own = {name: own_workload(e) for name, e in endpoints.items()}
    specs = tuple(parse_spec(w, where, own) for w in texts)
    labels = [s.label for s in specs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise InputError(f"{where}: the workload '{twice[0]}' is listed twice")
    unlisted = [name for name in endpoints if name not in labels]
    if unlisted:
        raise InputError(
            f"{path}: [endpoints.{unlisted[0]}] is not in the suite's workloads: add "
            f'"{unlisted[0]}" to workloads, or remove the table'
        )
    return specs


def _check_endpoints(
    path: Path, endpoints: dict[str, Endpoint], load: LoadSettings, placement: Placement
) -> None:
    """What every load tool of the run can send, on the machines it runs on."""
    if not endpoints:
        return
    if placement.remote:
        raise InputError(
            f"{path}: [endpoints] run on one machine only for now; remove server_host, "
            "loader_hosts and services_host from [placement]"
        )
    if load.driver is DriverKind.NATIVE:
        return
    rich = [e.name for e in endpoints.values() if not e.plain_get]
    if rich:
        raise InputError(
            f"{path}: [endpoints.{rich[0]}]: {load.driver.value} sends only a plain GET "
            'here; a method, headers or a body need [load] driver = "native"'
        )


def _suite_name(path: Path, name: str | None) -> str:
    if name is not None:
        return check_name(name, _where(path, "name"))
    if not is_name(path.stem):
        raise InputError(
            f"{path}: the file name {path.stem!r} is not a valid suite name; "
            f'add name = "..." using {NAME_RULE}'
        )
    return path.stem


def parse_suite(path: Path) -> Suite:
    text, data = read_toml(path, "suite file")
    suite = convert(data, _SuiteFile, path)
    load_settings, levels = _load(
        path, suite.load, data.get("load", {}), searching=suite.search is not None
    )
    search = _search(path, suite.search, load_settings.mode, suite.slo)
    counts = _core_counts(path, suite)
    placement = (
        counts[0].placement
        if counts
        else make_placement(
            suite.placement.server_cpus,
            suite.placement.loader_cpus,
            suite.placement.services_cpus,
            f"{path}: [placement]",
            _host_name(path, suite.placement.server_host, "server_host"),
            tuple(
                check_name(h, f"{path}: [placement] key 'loader_hosts'")
                for h in suite.placement.loader_hosts
            ),
            _host_name(path, suite.placement.services_host, "services_host"),
            suite.placement.memcached_on_network,
        )
    )
    if suite.hosts and suite.hosts_file is not None:
        raise InputError(
            f"{path}: key 'hosts_file': give [hosts.NAME] tables or a hosts_file, not both"
        )
    endpoints = parse_endpoints(suite.endpoints, path, set(CATALOG))
    specs = _workloads(path, suite.workloads, endpoints)
    _check_memcached(path, placement, specs)
    _check_endpoints(path, endpoints, load_settings, placement)
    labels = tuple(s.label for s in specs)
    stack_names, own_stacks = _stacks(path, suite.stacks, frozenset(endpoints))
    least = _min_server_cores(path, suite.min_server_cores, stack_names)
    external = _external(
        path,
        suite.external,
        stack_names,
        own_stacks,
        suite.variants,
        placement,
        frozenset(endpoints),
    )
    return Suite(
        path=path,
        name=_suite_name(path, suite.name),
        description=suite.description,
        variant=check_name(suite.variant, _where(path, "variant")),
        stacks=stack_names + tuple(external),
        own_stacks=own_stacks,
        endpoints=endpoints,
        external=external,
        workloads=specs,
        params=_params(path, suite.params),
        load=load_settings,
        levels=levels,
        placement=placement,
        article_server_cores=suite.placement.article_server_cores,
        max_error_rate=suite.limits.max_error_rate,
        max_restarts=suite.limits.max_restarts,
        slo=suite.slo,
        search=search,
        variants=_variants(path, suite.variants),
        workload_levels=_workload_levels(path, suite.levels, labels, load_settings.mode),
        workload_durations=_workload_durations(path, suite.durations, labels, load_settings),
        script_iterations=suite.script_iterations,
        script_timings=_script_timings(path, suite, data),
        load_budget_s=None if suite.load_budget_min is None else suite.load_budget_min * 60,
        raw_text=text,
        hosts=hosts_from_table(data["hosts"], path) if suite.hosts else None,
        hosts_file=None if suite.hosts_file is None else path.parent / suite.hosts_file,
        declared_deviations=tuple(suite.deviation),
        article_loader=suite.placement.article_loader,
        min_server_cores=least,
        max_server_cores=_max_server_cores(path, suite.max_server_cores, stack_names, least),
        stack_workloads=_stack_workloads(path, suite.stack_workloads, stack_names, labels),
        core_counts=counts if len(counts) > 1 else (),
    )


def _script_timings(path: Path, suite: _SuiteFile, data: dict[str, Any]) -> int:
    """Timings per repetition: only where there is a standalone timing to repeat."""
    if "script_timings" in data and suite.script_iterations == 0:
        raise InputError(
            f"{_where(path, 'script_timings')}: standalone timings need script_iterations "
            "(the iterations each timing runs); add it, or remove script_timings"
        )
    return suite.script_timings


def _core_counts(path: Path, suite: _SuiteFile) -> tuple[CoreCount, ...]:
    """[placement] server_cores: the placement at each count; () when not given."""
    table = suite.placement
    if table.server_cores is None:
        return ()
    where = _where(path, "placement", "server_cores")
    clash = [
        key
        for key, given in (
            ("server_cpus", table.server_cpus),
            ("services_cpus", table.services_cpus),
            ("server_host", table.server_host),
            ("loader_hosts", table.loader_hosts),
            ("services_host", table.services_host),
        )
        if given
    ]
    if clash:
        raise InputError(
            f"{where}: the core counts place the server on this machine's first cores "
            f"themselves; remove {clash[0]}, or server_cores"
        )
    if suite.external:
        raise InputError(
            f"{where}: an [external] server runs on the cores you gave it; measure it at "
            "other counts by restarting it there, in a suite without server_cores"
        )
    return core_counts(table.server_cores, table.loader_cpus, f"{path}: [placement]")


def _check_memcached(path: Path, placement: Placement, specs: tuple[WorkloadSpec, ...]) -> None:
    """memcached has no authentication: on a services host of its own, anyone who reaches
    that host's address could read and change the cache the stacks are measured against."""
    if not placement.services_apart or placement.memcached_on_network:
        return
    needing = [s.label for s in specs if "memcached" in s.workload.services]
    if needing:
        raise InputError(
            f'{path}: [placement] services_host = "{placement.services_host}" would put '
            f"memcached (for {', '.join(needing)}) on that host's network address, and "
            "memcached has no authentication: any host that reaches it could read and change "
            "the cache being measured. Set memcached_on_network = true in [placement] if that "
            "network is yours alone, or leave the memcached workloads out of this suite"
        )


def _host_name(path: Path, name: str | None, key: str) -> str | None:
    return None if name is None else check_name(name, f"{path}: [placement] key '{key}'")


def resolve_hosts(suite: Suite, hosts_file: Path | None) -> HostsFile | None:
    """The hosts a run reaches: `--hosts FILE`, else the suite's [hosts] tables or its
    hosts_file; every host its [placement] names must be among them. None: one machine."""
    placement = suite.placement
    if not placement.remote:
        return None
    where = f"{suite.path}: [placement]"
    file = hosts_file or suite.hosts_file
    if file is not None:
        if not file.exists():
            raise InputError(
                f"{file}: no such hosts file (named by "
                f"{'--hosts' if hosts_file else f'{suite.path}: hosts_file'}); "
                "for test hosts on this machine run 'sudo scripts/testhosts.sh "
                "up 3', or pass --hosts FILE"
            )
        hosts = parse_hosts_file(file)
    elif suite.hosts is not None:
        hosts = suite.hosts
    else:
        raise InputError(
            f"{where}: server_host/loader_hosts name other hosts, but the suite "
            "has no [hosts] tables or hosts_file; add them or pass --hosts FILE"
        )
    for name in placement.hosts():
        if name not in hosts.hosts:
            raise InputError(
                f"{where}: host '{name}' is not in {hosts.source} (hosts: {', '.join(hosts.hosts)})"
            )
    _check_external_hosts(suite, hosts)
    _check_spread(suite)
    return hosts


def _check_external_hosts(suite: Suite, hosts: HostsFile) -> None:
    """An external server of a multi-host run is on its server host: its url has that
    host's address as the hosts file gives it, where that host's agent finds its processes."""
    server = suite.placement.server_host
    if server is None:
        return
    address = hosts.hosts[server].address
    for ext in suite.external.values():
        if ext.address != address:
            raise InputError(
                f"{suite.path}: [external.{ext.name}] key 'url': {ext.address} is not the "
                f"address of server_host {server} ({address} in {hosts.source}): an external "
                "server runs on the server host, where its agent samples its processes"
            )


def _check_spread(suite: Suite) -> None:
    """A level split over several loaders is merged from their histograms (native driver
    only) and gives each loader at least one connection."""
    loaders = len(suite.placement.loader_hosts)
    if loaders < 2:
        return
    where = f"{suite.path}: [placement] loader_hosts"
    if suite.load.driver is not DriverKind.NATIVE:
        raise InputError(
            f'{where}: {loaders} loaders need [load] driver = "native": only its '
            f"histograms merge exactly (driver is {suite.load.driver.value})"
        )
    if suite.load.mode is Mode.CLOSED:
        levels = [*suite.levels, *(v for lv in suite.workload_levels.values() for v in lv)]
        few = [v for v in levels if v < loaders]
        if few:
            raise InputError(
                f"{where}: a level of {few[0]:g} connections cannot be split over "
                f"{loaders} loaders; every level needs at least {loaders}"
            )
