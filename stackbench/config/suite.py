"""Parse a suite file (TOML) into a frozen `Suite`. Strict: every bad key names file and key.

A sweep list may mix plain values with ranges, e.g. `connections = [1, {start = 100,
step = 100, stop = 10000}]` for "1, then 100 to 10,000 in steps of 100".
"""

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stackbench.config.loadspec import DriverKind, KeepAlive, LoadSettings, Mode
from stackbench.config.placement import Placement, make_placement
from stackbench.config.workloads import WorkloadSpec, parse_spec
from stackbench.errors import InputError

_TOP = {"name", "description", "variant", "stacks", "workloads", "params", "load", "placement",
        "limits", "slo", "search", "variants", "levels", "durations", "script_iterations"}
_LOAD = {"driver", "mode", "keepalive", "connections", "rates", "duration_s", "requests",
         "requests_per_connection",
         "warmup_s", "timeout_s", "pause_s", "repeat", "threads", "pipeline"}
_PLACEMENT = {"server_cpus", "loader_cpus", "services_cpus"}
_LIMITS = {"max_error_rate", "max_restarts"}
_SLO = {"percentile", "latency_ms", "max_error_rate", "stop_after_failures"}
_SEARCH = {"lo", "hi", "probes", "tolerance"}
MAX_LEVELS = 1000
# [limits] max_restarts: how often a stack whose process exited mid-run is restarted before it
# is given up for the rest of the run.
DEFAULT_MAX_RESTARTS = 2


@dataclass(frozen=True)
class Slo:
    percentile: float = 99.0
    latency_ms: float = 3000.0
    max_error_rate: float = 0.01
    stop_after_failures: int = 0  # 0: never stop a sweep early


@dataclass(frozen=True)
class RateSearch:
    """Open loop: find the highest rate in [lo, hi] that meets the SLO, in at most `probes`."""

    lo: float
    hi: float
    probes: int = 8
    tolerance: float = 0.05


@dataclass(frozen=True)
class Variant:
    """A named configuration of a stack, e.g. node-cluster with db_strategy = "pool"."""

    name: str
    stack: str
    params: dict[str, str]


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
    max_error_rate: float
    slo: Slo | None
    search: RateSearch | None = None
    variants: dict[str, Variant] = field(default_factory=dict)
    workload_levels: dict[str, tuple[float, ...]] = field(default_factory=dict)
    workload_durations: dict[str, float] = field(default_factory=dict)
    script_iterations: int = 0  # >0: time each workload without HTTP before loading it
    max_restarts: int = DEFAULT_MAX_RESTARTS
    raw_text: str = field(repr=False, default="")

    @property
    def level_kind(self) -> str:
        return "rate" if self.load.mode is Mode.OPEN else "connections"

    def levels_for(self, label: str) -> tuple[float, ...]:
        return self.workload_levels.get(label, self.levels)

    def load_for(self, label: str) -> LoadSettings:
        """The load settings of one workload: a slow workload may need longer levels."""
        if label in self.workload_durations:
            return replace(self.load, duration_s=self.workload_durations[label])
        return self.load


class _Reader:
    def __init__(self, path: Path, data: dict[str, Any], section: str, allowed: set[str]):
        self.path, self.data, self.section = path, data, section
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InputError(f"{self.where(unknown[0])}: unknown key (allowed: "
                             f"{', '.join(sorted(allowed))})")

    def where(self, key: str) -> str:
        prefix = f"[{self.section}] " if self.section else ""
        return f"{self.path}: {prefix}key '{key}'"

    def get(self, key: str, kinds: tuple[type, ...], default: Any, what: str) -> Any:
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise InputError(f"{self.where(key)}: expected {what}, got {value!r}")
        return value

    def number(self, key: str, default: float | None, minimum: float = 0.0) -> float | None:
        value = self.get(key, (int, float), default, "a number")
        if value is not None and value < minimum:
            raise InputError(f"{self.where(key)}: must be at least {minimum:g}, got {value}")
        return None if value is None else float(value)

    def integer(self, key: str, default: int | None, minimum: int = 0) -> int | None:
        value = self.get(key, (int,), default, "a whole number")
        if value is not None and value < minimum:
            raise InputError(f"{self.where(key)}: must be at least {minimum}, got {value}")
        return value

    def choice(self, key: str, enum_type: type, default: Any) -> Any:
        text = self.get(key, (str,), None, "a string")
        if text is None:
            return default
        try:
            return enum_type(text)
        except ValueError:
            allowed = ", ".join(e.value for e in enum_type)
            raise InputError(f"{self.where(key)}: '{text}' is not one of: {allowed}") from None

    def str_list(self, key: str) -> list[str]:
        value = self.get(key, (list,), None, "a list of strings")
        if value is None:
            raise InputError(f"{self.where(key)}: missing (a list is required)")
        if not value or not all(isinstance(v, str) for v in value):
            raise InputError(f"{self.where(key)}: expected a non-empty list of strings")
        return value


def expand_sweep(items: Any, where: str) -> tuple[float, ...]:
    """[25, 100, {start=200, step=100, stop=1000}] -> (25, 100, 200, 300, ..., 1000)."""
    if not isinstance(items, list) or not items:
        raise InputError(f"{where}: expected a non-empty list of numbers or "
                         "{start, step, stop} ranges")
    values: list[float] = []
    for item in items:
        if isinstance(item, int | float) and not isinstance(item, bool):
            values.append(float(item))
        elif isinstance(item, dict):
            values += _expand_range(item, where)
        else:
            raise InputError(f"{where}: {item!r} is neither a number nor a range table")
        if len(values) > MAX_LEVELS:
            raise InputError(f"{where}: more than {MAX_LEVELS} levels")
    if any(v <= 0 for v in values):
        raise InputError(f"{where}: every level must be positive")
    return tuple(values)


def _expand_range(item: dict[str, Any], where: str) -> list[float]:
    if set(item) != {"start", "step", "stop"}:
        raise InputError(f"{where}: a range needs exactly start, step and stop (got "
                         f"{', '.join(sorted(item))})")
    start, step, stop = item["start"], item["step"], item["stop"]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (start, step, stop)):
        raise InputError(f"{where}: start, step and stop must be numbers")
    if step <= 0 or stop < start:
        raise InputError(f"{where}: need step > 0 and stop >= start")
    count = int((stop - start) / step + 1e-9) + 1
    if count > MAX_LEVELS:
        raise InputError(f"{where}: the range has {count} levels; at most {MAX_LEVELS}")
    return [float(start + i * step) for i in range(count)]


def _load(path: Path, data: dict[str, Any]) -> tuple[LoadSettings, tuple[float, ...]]:
    r = _Reader(path, data, "load", _LOAD)
    mode = r.choice("mode", Mode, Mode.CLOSED)
    requests = r.integer("requests", None, 1)
    per_conn = r.integer("requests_per_connection", None, 1)
    if requests is not None and per_conn is not None:
        raise InputError(f"{r.where('requests')}: give requests or requests_per_connection")
    counted = requests is not None or per_conn is not None
    duration = r.number("duration_s", None if counted else 5.0, 0.1)
    if counted and duration is not None:
        raise InputError(f"{r.where('requests')}: give either a request count or duration_s, "
                         "not both")
    settings = LoadSettings(
        driver=r.choice("driver", DriverKind, DriverKind.NATIVE),
        mode=mode,
        keepalive=r.choice("keepalive", KeepAlive, KeepAlive.ON),
        duration_s=duration,
        requests=requests,
        requests_per_connection=per_conn,
        warmup_s=r.number("warmup_s", 1.0),
        timeout_s=r.number("timeout_s", 3.0, 0.001),
        pause_s=r.number("pause_s", 1.0),
        repeat=r.integer("repeat", 1, 1),
        threads=r.integer("threads", 0, 0),
        pipeline=r.integer("pipeline", 1, 1),
    )
    if mode is Mode.OPEN:
        if "rates" not in data:
            raise InputError(f"{r.where('rates')}: open loop (mode = \"open\") needs a list of "
                             "request rates")
        if counted:
            raise InputError(f"{r.where('requests')}: open loop runs for duration_s, not a "
                             "request count")
        levels = expand_sweep(data["rates"], r.where("rates"))
    else:
        if "rates" in data:
            raise InputError(f"{r.where('rates')}: rates need mode = \"open\"")
        levels = expand_sweep(data.get("connections", [25]), r.where("connections"))
        if any(v != int(v) for v in levels):
            raise InputError(f"{r.where('connections')}: connections must be whole numbers")
    if settings.driver is not DriverKind.NATIVE and mode is Mode.OPEN:
        raise InputError(f"{r.where('driver')}: '{settings.driver.value}' has no open-loop mode; "
                         "use driver = \"native\"")
    if settings.driver is DriverKind.WRK and counted:
        raise InputError(f"{r.where('requests')}: wrk cannot stop after a request count; use "
                         "duration_s or driver = \"native\"/\"ab\"")
    return settings, levels


def _params(path: Path, data: Any) -> dict[str, dict[str, str]]:
    if not isinstance(data, dict):
        raise InputError(f"{path}: [params] must be a table of [params.STACK] tables")
    out: dict[str, dict[str, str]] = {}
    for stack, values in data.items():
        if not isinstance(values, dict):
            raise InputError(f"{path}: [params.{stack}] must be a table of NAME = value")
        out[stack] = {k: str(v) for k, v in values.items()}
    return out


def _slo(path: Path, data: Any) -> Slo | None:
    if data is None:
        return None
    r = _Reader(path, data, "slo", _SLO)
    pct = r.number("percentile", 99.0, 0.0)
    if not 0 < pct <= 100:
        raise InputError(f"{r.where('percentile')}: must be in (0, 100]")
    return Slo(pct, r.number("latency_ms", 3000.0, 0.001), r.number("max_error_rate", 0.01),
               r.integer("stop_after_failures", 0, 0))


def _search(path: Path, data: Any, mode: Mode, slo: Slo | None) -> RateSearch | None:
    if data is None:
        return None
    r = _Reader(path, data, "search", _SEARCH)
    if mode is not Mode.OPEN:
        raise InputError(f"{path}: [search] finds a maximum rate, so it needs [load] mode = "
                         "\"open\"")
    if slo is None:
        raise InputError(f"{path}: [search] needs an [slo] to judge each probe")
    lo, hi = r.number("lo", None, 0.001), r.number("hi", None, 0.001)
    if lo is None or hi is None or hi < lo:
        raise InputError(f"{r.where('lo')}: [search] needs lo and hi with lo <= hi")
    probes = r.integer("probes", 8, 2)
    tolerance = r.number("tolerance", 0.05, 0.0)
    return RateSearch(lo, hi, probes or 8, tolerance or 0.05)


def _variants(path: Path, data: Any) -> dict[str, Variant]:
    if not isinstance(data, dict):
        raise InputError(f"{path}: [variants] must hold [variants.NAME] tables")
    out = {}
    for name, spec in data.items():
        if not isinstance(spec, dict):
            raise InputError(f"{path}: [variants.{name}] must be a table")
        r = _Reader(path, spec, f"variants.{name}", {"stack", "params"})
        stack = r.get("stack", (str,), None, "a stack name")
        if stack is None:
            raise InputError(f"{r.where('stack')}: missing (which stack is this a variant of?)")
        params = r.get("params", (dict,), {}, "a table of NAME = value")
        out[name] = Variant(name, stack, {k: str(v) for k, v in params.items()})
    return out


def _workload_levels(path: Path, data: Any, labels: tuple[str, ...], mode: Mode
                     ) -> dict[str, tuple[float, ...]]:
    if not isinstance(data, dict):
        raise InputError(f"{path}: [levels] must map workload labels to level lists")
    out = {}
    for label, items in data.items():
        if label not in labels:
            raise InputError(f"{path}: [levels] key '{label}': not one of the suite's workloads "
                             f"({', '.join(labels)})")
        levels = expand_sweep(items, f"{path}: [levels] key '{label}'")
        if mode is Mode.CLOSED and any(v != int(v) for v in levels):
            raise InputError(f"{path}: [levels] key '{label}': connections must be whole numbers")
        out[label] = levels
    return out


def _workload_durations(path: Path, data: Any, labels: tuple[str, ...],
                        load: LoadSettings) -> dict[str, float]:
    if not isinstance(data, dict):
        raise InputError(f"{path}: [durations] must map workload labels to seconds")
    if data and load.duration_s is None:
        raise InputError(f"{path}: [durations] needs [load] duration_s (not a request count)")
    out = {}
    for label, seconds in data.items():
        where = f"{path}: [durations] key '{label}'"
        if label not in labels:
            raise InputError(f"{where}: not one of the suite's workloads ({', '.join(labels)})")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0.1:
            raise InputError(f"{where}: expected seconds (a number >= 0.1), got {seconds!r}")
        out[label] = float(seconds)
    return out


def parse_suite(path: Path) -> Suite:
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the suite file: {exc.strerror}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from exc
    r = _Reader(path, data, "", _TOP)
    load_data = r.get("load", (dict,), {}, "a table")
    if "search" in data and "rates" not in load_data:
        load_data = {**load_data, "rates": [1]}  # the search chooses the rates
    load_settings, levels = _load(path, load_data)
    slo = _slo(path, data.get("slo"))
    search = _search(path, data.get("search"), load_settings.mode, slo)
    if search is not None:
        levels = ()
    placement_data = r.get("placement", (dict,), {}, "a table")
    p = _Reader(path, placement_data, "placement", _PLACEMENT)
    placement = make_placement(p.get("server_cpus", (str,), None, "a CPU list string"),
                               p.get("loader_cpus", (str,), None, "a CPU list string"),
                               p.get("services_cpus", (str,), None, "a CPU list string"),
                               f"{path}: [placement]")
    limits = _Reader(path, r.get("limits", (dict,), {}, "a table"), "limits", _LIMITS)
    specs = tuple(parse_spec(w, r.where("workloads")) for w in r.str_list("workloads"))
    labels = tuple(s.label for s in specs)
    if len(set(labels)) != len(labels):
        raise InputError(f"{r.where('workloads')}: a workload is listed twice")
    return Suite(
        path=path,
        name=r.get("name", (str,), path.stem, "a string"),
        description=r.get("description", (str,), "", "a string"),
        variant=r.get("variant", (str,), "full", "a string"),
        stacks=tuple(r.str_list("stacks")),
        workloads=specs,
        params=_params(path, data.get("params", {})),
        load=load_settings,
        levels=levels,
        placement=placement,
        max_error_rate=limits.number("max_error_rate", 0.01) or 0.0,
        slo=slo,
        search=search,
        variants=_variants(path, data.get("variants", {})),
        workload_levels=_workload_levels(path, data.get("levels", {}), labels,
                                         load_settings.mode),
        workload_durations=_workload_durations(path, data.get("durations", {}), labels,
                                               load_settings),
        script_iterations=r.integer("script_iterations", 0, 0) or 0,
        max_restarts=limits.integer("max_restarts", DEFAULT_MAX_RESTARTS, 0) or 0,
        raw_text=text,
    )
