"""The results.json document as types: what `exports.results_json` writes, and what
`schema.py` turns into docs/schema/results.schema.json (`make schema`). One definition for
both, so the published schema cannot drift from the file.

The stored records and the analysis' own records appear as they are; only the parts the
export assembles itself (a level with its derived figures, a workload's summary) are
defined here. The level figures of analysis/figures.py are fields of a level and of an
aggregate, one per figure, added to those types from the registry (`with_figures`).
"""

import dataclasses
import typing
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import msgspec

from stackbench.analysis.analysis import LevelRanking
from stackbench.analysis.capacity import Capacity, Span
from stackbench.analysis.figures import LEVEL_FIGURES
from stackbench.analysis.findings import Finding
from stackbench.analysis.stats import Breakpoint, Jitter, LevelAggregate
from stackbench.analysis.verdicts import RunSpread
from stackbench.config.loadspec import LevelKind
from stackbench.config.suite import Slo
from stackbench.store.records import CaseRow, LevelRow, RunRow, ScriptRow, VerificationRow

# The document's version: a change readers must know about is a new one (and `make schema`).
# 4: levels name their steady-window and whole-level figures apart (rps_steady,
# rps_whole_level, latency_us_steady, headline_source); cases give each aggregate's source.
SchemaVersion = Literal["stackbench-results/4"]
RESULTS_SCHEMA: Final[SchemaVersion] = "stackbench-results/4"


def _figure_fields() -> list[tuple[str, Any]]:
    """One field per level figure: a number or null, described by its meaning and unit."""
    return [
        (
            f.name,
            Annotated[float | None, msgspec.Meta(description=f.described)],
        )
        for f in LEVEL_FIGURES
    ]


def with_figures(name: str, base: type[msgspec.Struct], doc: str | None) -> Any:
    """A frozen record named `name`: `base`'s fields, then one per level figure."""
    return msgspec.defstruct(
        name,
        _figure_fields(),
        bases=(base,),
        frozen=True,
        kw_only=True,
        module=__name__,
        namespace={"__doc__": doc},
    )


class _LevelExport(LevelRow, frozen=True, kw_only=True):
    """One repetition of one load level as stored, with the figures derived from it.

    Two kinds of figures: the whole level's, as the driver measured them over every second
    (`requests_per_s`, `latency_us` and the figures below them; `rps_whole_level` repeats
    requests_per_s under an explicit name), and the steady window's, where the per-second
    series has one (`rps_steady`, `latency_us_steady`). `headline_source` says which one the
    report's headline uses for this repetition."""

    rps_whole_level: float  # completed requests / the whole level's duration
    rps_steady: float | None  # mean req/s of the steady window; None: no steady window
    latency_us_steady: dict[str, float]  # p50/p90/p99 merged over the steady window
    headline_source: str  # "steady window", or "whole level: <why there is no window>"

    errors_total: int
    error_rate: float
    jitter: Jitter | None


def _aggregate_base() -> type[msgspec.Struct]:
    """LevelAggregate's fields as a record, but its figures (a field each, `with_figures`)."""
    hints = typing.get_type_hints(LevelAggregate)
    return msgspec.defstruct(
        "_LevelAggregate",
        [
            (f.name, hints[f.name])
            for f in dataclasses.fields(LevelAggregate)
            if f.name != "figures"
        ],
        frozen=True,
        kw_only=True,
        module=__name__,
    )


# The types the document names (mypy sees the hand-written bases; msgspec and the schema the
# records with the figures).
if TYPE_CHECKING:
    LevelExport = _LevelExport
    AggregateExport = msgspec.Struct
else:
    LevelExport = with_figures("LevelExport", _LevelExport, _LevelExport.__doc__)
    AggregateExport = with_figures("LevelAggregate", _aggregate_base(), LevelAggregate.__doc__)


def aggregate_export(g: LevelAggregate) -> Any:
    """An aggregate as the document writes it: its figures as fields of their own."""
    values = {f.name: getattr(g, f.name) for f in dataclasses.fields(g) if f.name != "figures"}
    return AggregateExport(**values, **g.figures)


class CapacityExport(msgspec.Struct, frozen=True, kw_only=True):
    """A case's capacity at the SLO (docs/methods.md, "Capacity"): the bracket of offered
    rates, per server core, and what it means for the run's --target-rps and
    --price-per-core-hour (null when not asked). A null end of a span: no evidence there."""

    bracket: Capacity
    rps_per_core: Span
    target_rps: float | None
    cores_needed: Span | None
    price_per_core_hour: float | None
    cost_per_million: Span | None
    scaling: str  # what the cores for a target assume
    # The server cores whose req/s per core `cores_needed` uses: the most measured for the
    # stack and workload ([placement] server_cores = [1, 2]); null when not asked
    cores_needed_from: int | None = None
    # Measured on several core counts: req/s at these cores over req/s at `scaling_base_cores`
    # (the fewest measured) with its interval, and that ratio over the ratio of cores
    # (1 = linear); null on one count, or on the base count itself
    scaling_base_cores: int | None = None
    scaling_ratio: Span | None = None
    per_core_efficiency: Span | None = None
    # The loader ran on the server's cores at this count (no other core was left for it)
    loader_shared: bool = False


class CaseExport(msgspec.Struct, frozen=True, kw_only=True):
    """A measured case of a workload: its aggregates per level and where it broke."""

    case_id: int
    stack: str
    status: str
    rankable: bool
    breakpoint: Breakpoint | None
    aggregates: list[AggregateExport]  # the report's headline figures, over repetitions
    # Per aggregate (same order): "steady window" when every repetition's figure comes from
    # its steady window, else "whole level: <why>" (the whole level's figures were combined).
    headline_sources: list[str]
    # Open loop with an SLO: the sustainable rate at the SLO (None: no capacity in this run)
    capacity: CapacityExport | None = None


class NotMeasuredExport(msgspec.Struct, frozen=True, kw_only=True):
    """A case of a workload without a measured level: unavailable, failed or never reached."""

    stack: str
    status: str
    reason: str
    verification_failures: list[str]


class WorkloadExport(msgspec.Struct, frozen=True, kw_only=True):
    """One workload label: its cases, the levels they share and the rankings per level."""

    label: str
    workload: str
    level_values: list[float]
    cases: list[CaseExport]
    not_measured: list[NotMeasuredExport]
    rankings: list[LevelRanking]


class ResultsDocument(msgspec.Struct, frozen=True, kw_only=True):
    """Everything stackbench stored and derived for one run (written by `stackbench run` and
    `stackbench report N --format json`). Latencies are in microseconds; a figure the driver
    did not measure is absent or null, never 0. A number that is not finite (inf, NaN) is
    written as null: strict JSON has neither. A level measured again because its first
    measurement was disturbed is in `levels` once, as measured again: the first measurement
    stays in the store, superseded, counted in no figure here, and a finding says so."""

    schema: SchemaVersion
    generated_at: float  # Unix time the file was written
    run: RunRow
    slo: Slo | None
    level_kind: LevelKind
    run_spread: RunSpread  # the run-to-run spread the verdicts used
    cases: list[CaseRow]
    levels: list[LevelExport]
    verifications: list[VerificationRow]
    scripts: list[ScriptRow]
    workloads: list[WorkloadExport]
    findings: list[Finding]
