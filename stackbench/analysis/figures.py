"""The figures derived from one level, each defined once: its name, unit, column header,
meaning, how it is computed from a stored level, how a cell writes it, and under which name a
claims file may test it.

Everything that shows or exports a level's figures reads them from `LEVEL_FIGURES`: the
aggregate over repetitions (`stats.LevelAggregate.figures`, the median of the repetitions
that have the figure), results.json (a field of each level and aggregate, and the schema
`make schema` derives from them), results.csv (a column), the detail tables, the terminal and
the claims' readings. Adding a figure is one entry here plus `make schema`.

The figures with a statistic of their own (throughput and latency with their intervals, the
error rate with its bootstrap, the errors summed over repetitions) are not here: they are
computed where that statistic is (stats.py, levelsteady.py).
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from stackbench.analysis import fmt
from stackbench.config.measured import RoleUsage
from stackbench.config.placement import OTHER_ROLE
from stackbench.store.records import LevelRow

LOADER_ROLE = "loader"
SERVICE_ROLES = frozenset({"mariadb", "redis", "memcached"})
MIB = 1024 * 1024


@dataclass(frozen=True)
class LevelFigure:
    """One figure of a level. `of_level` gives None where the level does not have it (no
    CPU sample, no byte count, the open loop); `missing` then says why, for a claim."""

    name: str  # results.json field, results.csv column (with the unit in the name)
    unit: str
    header: str  # table column
    meaning: str  # what it is, without its unit
    of_level: Callable[[LevelRow], float | None]
    cell: Callable[[float | None], str]
    missing: Callable[[LevelRow], str]
    claim_metric: str | None = None  # config/claims.py's metric name, when a claim may test it

    @property
    def described(self) -> str:
        """Its meaning and unit: the tables' legend and the schema's description."""
        return f"{self.meaning}, in {self.unit}"


def server_roles(usage: Mapping[str, RoleUsage]) -> list[str]:
    """The stack's own process roles: all but the data services, the loader and the other
    processes on the level's cores."""
    return [r for r in usage if r not in (LOADER_ROLE, OTHER_ROLE) and r not in SERVICE_ROLES]


def _server_cpu(row: LevelRow) -> float | None:
    roles = [row.usage[r].cpu_percent for r in server_roles(row.usage)]
    return math.fsum(roles) if roles else None


def _service_cpu(row: LevelRow) -> float | None:
    roles = [u.cpu_percent for role, u in row.usage.items() if role in SERVICE_ROLES]
    return math.fsum(roles) if roles else None


def _loader_cpu(row: LevelRow) -> float | None:
    """From the monitor when it sampled the loader, else from the loader's own CPU time."""
    sampled = row.usage.get(LOADER_ROLE)
    if sampled is not None:
        return sampled.cpu_percent
    if row.loader_cpu_s is not None and row.duration_s > 0:
        return 100.0 * (row.loader_cpu_s[0] + row.loader_cpu_s[1]) / row.duration_s
    return None


def ab_time_per_request(connections: float, duration_s: float, completed: int) -> float | None:
    """ab's "Time per request (mean)": connections x elapsed / completed, in ms: how long each
    client waited per answer. None when nothing completed."""
    if completed <= 0:
        return None
    return connections * duration_s * 1000.0 / completed


def ab_time_per_request_all(duration_s: float, completed: int) -> float | None:
    """ab's "Time per request (mean, across all concurrent requests)", the pool/cluster
    article's Tpq: elapsed / completed, in ms (4,025 req/s -> 0.248 ms). None when nothing
    completed."""
    if completed <= 0:
        return None
    return duration_s * 1000.0 / completed


def transfer_rate(bytes_read: int | None, duration_s: float) -> float | None:
    """Bytes received per second in MiB (2**20 bytes, as ab's Kbytes and wrk's MB are
    1024-based). None when the tool gave no byte count or the level has no duration."""
    if bytes_read is None or duration_s <= 0:
        return None
    return bytes_read / duration_s / MIB


def _time_per_request(row: LevelRow) -> float | None:
    """Only in the closed loop, where the level value is the connection (client) count."""
    if row.mode != "closed":
        return None
    return ab_time_per_request(row.level_value, row.duration_s, row.completed)


def _none_completed_or(reason: str) -> Callable[[LevelRow], str]:
    return lambda row: "no request completed" if row.completed <= 0 else reason


SERVER_CPU = LevelFigure(
    name="server_cpu_percent",
    unit="% of one core",
    header="server CPU",
    meaning="CPU of the stack's own processes",
    of_level=_server_cpu,
    cell=fmt.percent,
    missing=lambda row: "no CPU sample of the server",
    claim_metric="server_cpu",
)
SERVICE_CPU = LevelFigure(
    name="service_cpu_percent",
    unit="% of one core",
    header="services CPU",
    meaning="CPU of MariaDB, Redis and memcached",
    of_level=_service_cpu,
    cell=fmt.percent,
    missing=lambda row: "no CPU sample of the service",
    claim_metric="service_cpu",
)
LOADER_CPU = LevelFigure(
    name="loader_cpu_percent",
    unit="% of one core",
    header="loader CPU",
    meaning="CPU of the load generator",
    of_level=_loader_cpu,
    cell=fmt.percent,
    missing=lambda row: "no CPU figure of the loader",
)
TIME_PER_REQUEST = LevelFigure(
    name="time_per_request_ms",
    unit="ms",
    header="time/req",
    meaning="ab's time per request, connections × duration / completed (how long each client "
    "waited per answer)",
    of_level=_time_per_request,
    cell=fmt.milliseconds,
    missing=_none_completed_or("no time per request in the open loop"),
    claim_metric="time_per_request",
)
TIME_PER_REQUEST_ALL = LevelFigure(
    name="time_per_request_all_ms",
    unit="ms",
    header="Tpq",
    meaning="ab's time per request across all concurrent requests, duration / completed",
    of_level=lambda row: ab_time_per_request_all(row.duration_s, row.completed),
    cell=fmt.milliseconds,
    missing=_none_completed_or("no time per request"),
    claim_metric="time_per_request_all",
)
TRANSFER = LevelFigure(
    name="transfer_mib_per_s",
    unit="MiB/s",
    header="MiB/s",
    meaning="bytes received per second, headers included, 2^20 bytes to the MiB",
    of_level=lambda row: transfer_rate(row.bytes_read, row.duration_s),
    cell=fmt.mib_per_s,
    missing=lambda row: f"the {row.driver} driver gave no byte count",
    claim_metric="transfer",
)

# In the order of the exports' columns and the detail table's.
LEVEL_FIGURES: tuple[LevelFigure, ...] = (
    SERVER_CPU,
    SERVICE_CPU,
    LOADER_CPU,
    TIME_PER_REQUEST,
    TIME_PER_REQUEST_ALL,
    TRANSFER,
)
BY_CLAIM_METRIC: dict[str, LevelFigure] = {
    f.claim_metric: f for f in LEVEL_FIGURES if f.claim_metric is not None
}


def level_figures(row: LevelRow) -> dict[str, float | None]:
    """Every figure of one repetition, by name."""
    return {f.name: f.of_level(row) for f in LEVEL_FIGURES}
