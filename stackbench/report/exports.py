"""results.json (everything), results.csv (one row per level × repetition) and summary.md.

Both name the steady-window figures and the whole-level ones apart (`rps_steady`,
`rps_whole_level`, ...) and say which one a headline uses (`headline_source`): the report's
headline is the steady window's where the level has one, which differs from the whole level's
(its ramp-up and cut last second included)."""

import csv
import dataclasses
import enum
import io
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import msgspec

from stackbench.analysis import claimtable, fmt, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.capacity import (
    Capacity,
    CapacityAsk,
    Span,
    capacities,
    case_capacity,
    cores_needed,
    cost_per_million,
    planning_capacity,
    scaling_note,
    scalings,
)
from stackbench.analysis.claims import ClaimResult
from stackbench.analysis.figures import LEVEL_FIGURES, level_figures
from stackbench.analysis.findings import RANKING_LEGEND, Finding, slo_text
from stackbench.analysis.levelsteady import SOURCE_NO_SERIES, SOURCE_WINDOW, level_steady
from stackbench.analysis.tiers import LEGEND as TIER_LEGEND
from stackbench.analysis.wording import FIGURES_NOTE, RULE
from stackbench.report import tables
from stackbench.report.capacityview import capacity_view
from stackbench.report.context import Context, build_context, memory_table
from stackbench.report.document import (
    RESULTS_SCHEMA,
    CapacityExport,
    CaseExport,
    LevelExport,
    NotMeasuredExport,
    ResultsDocument,
    WorkloadExport,
    aggregate_export,
)
from stackbench.report.glance import WorkloadGlance, glance, pair_rows
from stackbench.report.tables import TextTable
from stackbench.store.records import (
    NOT_IN_CSV,
    NOT_IN_JSON,
    Flag,
    LevelRecord,
    LevelRow,
    flags_text,
    flat_fields,
)

# results.csv: who measured what, then every single-valued field of a level record (in its
# order, see store/records.py), then figures computed from the nested ones.
# Figures of two kinds are named apart: `_whole_level` (the driver's, over every second of the
# level) and `_steady` (the level's steady window, empty without one); `headline_source` says
# which one the report's headline uses. max, mean and p80 exist for the whole level only.
CSV_CASE_COLUMNS = ["run_id", "stack", "workload", "label", "case_status", "level_kind"]
CSV_LEVEL_FIELDS = [f for f in flat_fields(LevelRecord) if f not in NOT_IN_CSV]
CSV_RENAMED = {"requests_per_s": "rps_whole_level"}
STEADY_KEYS = ("p50", "p90", "p99")
CSV_STEADY = ["headline_source", "rps_steady", *(f"{k}_us_steady" for k in STEADY_KEYS)]
CSV_FIGURES = [
    *(f"{k}_us_whole_level" for k in STEADY_KEYS),
    "max_us",
    "mean_us",
    "p80_us",
    "errors_total",
    "error_rate",
    *(f.name for f in LEVEL_FIGURES),
]
# The case's capacity at the SLO (repeated on each of its levels; empty: none, or an open
# end of the bracket, or not asked for with --target-rps / --price-per-core-hour).
CSV_CAPACITY = [
    "server_cores",
    "capacity_rps_per_core_low",
    "capacity_rps_per_core_high",
    "cores_needed_low",
    "cores_needed_high",
    "cost_per_million_low",
    "cost_per_million_high",
    # several server core counts: which count the cores needed rest on, and the scaling
    "cores_needed_from",
    "scaling_base_cores",
    "scaling_ratio_low",
    "scaling_ratio_high",
    "per_core_efficiency_low",
    "per_core_efficiency_high",
    "loader_shared",
]
CSV_COLUMNS = (
    CSV_CASE_COLUMNS
    + [CSV_RENAMED.get(f, f) for f in CSV_LEVEL_FIELDS]
    + CSV_STEADY
    + CSV_FIGURES
    + CSV_CAPACITY
)


def jsonable(value: Any) -> Any:
    """Records, dataclasses, enums, flags and tuples to JSON types; inf/NaN become null (strict
    JSON). A record gives every field but those results.json leaves out (NOT_IN_JSON) and
    those it did not record (UNSET)."""
    if isinstance(value, msgspec.Struct):
        return {
            f: jsonable(v)
            for f in value.__struct_fields__
            if f not in NOT_IN_JSON and (v := getattr(value, f)) is not msgspec.UNSET
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Flag):
        return value.text
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _steady_figures(row: LevelRow) -> tuple[str, float | None, dict[str, float]]:
    """(headline source, steady req/s, steady p50/p90/p99) of one repetition."""
    steady = level_steady(row)
    return (
        steady.source,
        None if steady.throughput is None else steady.throughput.value,
        {k: f.value for k, f in steady.latency_us.items()},
    )


def _level_export(row: LevelRow) -> LevelExport:
    # no zeros standing in for "not measured"
    stored = msgspec.structs.replace(row, latency_us=stats.measured_latency(row))
    source, rps_steady, latency_steady = _steady_figures(row)
    values: dict[str, Any] = {
        **msgspec.structs.asdict(stored),
        "rps_whole_level": row.requests_per_s,
        "rps_steady": rps_steady,
        "latency_us_steady": latency_steady,
        "headline_source": source,
        "errors_total": row.errors_total,
        "error_rate": stats.level_error_rate(row),
        "jitter": stats.jitter(stats.completed_series(row)),
        **level_figures(row),
    }
    return LevelExport(**values)


def capacity_export(
    a: Analysis, c: CaseView, label: str, ask: CapacityAsk, caps: Sequence[Capacity] = ()
) -> CapacityExport | None:
    """`caps`: every capacity of the run (capacities(a)), for the scaling over core counts."""
    cap = case_capacity(a, c, label)
    if cap is None:
        return None
    planned = planning_capacity(caps, cap)
    scaling = next((s for s in scalings(caps) if cap in s.points), None)
    counts = len({p.server_cores for p in scaling.points}) if scaling else 1
    scaled = scaling is not None and cap.server_cores != scaling.base.server_cores
    counted = a.settings.core_counts.get(c.stack)
    return CapacityExport(
        bracket=cap,
        rps_per_core=cap.per_core,
        target_rps=ask.target_rps,
        cores_needed=None if ask.target_rps is None else cores_needed(planned, ask.target_rps),
        price_per_core_hour=ask.price_per_core_hour,
        cost_per_million=(
            None
            if ask.price_per_core_hour is None
            else cost_per_million(cap, ask.price_per_core_hour)
        ),
        scaling=scaling_note(planned.server_cores, counts),
        cores_needed_from=None if ask.target_rps is None else planned.server_cores,
        scaling_base_cores=scaling.base.server_cores if scaling and scaled else None,
        scaling_ratio=scaling.ratio(cap) if scaling and scaled else None,
        per_core_efficiency=scaling.efficiency(cap) if scaling and scaled else None,
        loader_shared=counted is not None and bool(set(counted.server) & set(counted.loader)),
    )


def _workload_export(
    a: Analysis, w: WorkloadView, ask: CapacityAsk, caps: Sequence[Capacity]
) -> WorkloadExport:
    return WorkloadExport(
        label=w.label,
        workload=w.workload,
        level_values=w.level_values,
        cases=[
            CaseExport(
                case_id=c.case.id,
                stack=c.stack,
                status=c.case.status,
                rankable=c.rankable,
                breakpoint=c.breakpoint,
                aggregates=[aggregate_export(g) for g in c.aggregates],
                headline_sources=[_aggregate_source(c, g.level_index) for g in c.aggregates],
                capacity=capacity_export(a, c, w.label, ask, caps),
            )
            for c in w.cases
        ],
        not_measured=[
            NotMeasuredExport(
                stack=c.stack,
                status=c.case.status,
                reason=c.case.reason,
                verification_failures=c.verification_failures,
            )
            for c in w.not_measured
        ],
        rankings=w.rankings,
    )


def _aggregate_source(c: CaseView, level_index: int) -> str:
    steady = c.steady_at(level_index)
    if steady is None or steady.steady:
        return SOURCE_WINDOW if steady is not None else SOURCE_NO_SERIES
    return "; ".join(steady.whole_level_sources)


def results_json(a: Analysis, found: list[Finding], ask: CapacityAsk | None = None) -> str:
    caps = capacities(a)
    doc = ResultsDocument(
        schema=RESULTS_SCHEMA,
        generated_at=time.time(),
        run=a.data.run,
        slo=a.slo,
        level_kind=a.level_kind,
        run_spread=a.spread,
        cases=a.data.cases,
        levels=[_level_export(r) for r in a.data.levels],
        verifications=a.data.verifications,
        scripts=a.data.scripts,
        workloads=[_workload_export(a, w, ask or CapacityAsk(), caps) for w in a.workloads],
        findings=found,
    )
    return json.dumps(jsonable(doc), indent=1, allow_nan=False)


def _num(value: float | None) -> str:
    """CSV cell: empty when not measured (never 0 for a missing percentile)."""
    return "" if value is None or not math.isfinite(value) else f"{value:.15g}"


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, tuple):
        return ";".join(str(v) for v in value)
    if isinstance(value, float):
        return _num(value)
    return str(value)


def _capacity_cells(export: CapacityExport | None) -> list[str]:
    if export is None:
        return [""] * len(CSV_CAPACITY)
    spans = [export.rps_per_core, export.cores_needed, export.cost_per_million]
    ends = [(s or Span(None, None)) for s in spans]
    scaling = [export.scaling_ratio, export.per_core_efficiency]
    scaled = [(s or Span(None, None)) for s in scaling]
    return [
        str(export.bracket.server_cores),
        *(_num(v) for s in ends for v in (s.low, s.high)),
        _cell(export.cores_needed_from),
        _cell(export.scaling_base_cores),
        *(_num(v) for s in scaled for v in (s.low, s.high)),
        "true" if export.loader_shared else "false",
    ]


def results_csv(a: Analysis, ask: CapacityAsk | None = None) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    cases = {c.id: c for c in a.data.cases}
    caps = capacities(a)
    capacity = {
        v.case.id: _capacity_cells(capacity_export(a, v, w.label, ask or CapacityAsk(), caps))
        for w in a.workloads
        for v in w.cases
    }
    for r in a.data.levels:
        c = cases[r.case_id]
        lat = stats.measured_latency(r)
        source, rps_steady, lat_steady = _steady_figures(r)
        writer.writerow(
            [
                a.data.run.id,
                c.stack,
                c.workload,
                c.label,
                c.status,
                a.level_kind,
                *(_cell(getattr(r, f)) for f in CSV_LEVEL_FIELDS),
                source,
                _num(rps_steady),
                *(_num(lat_steady.get(k)) for k in STEADY_KEYS),
                *(_num(lat.get(k)) for k in (*STEADY_KEYS, "max", "mean", "p80")),
                r.errors_total,
                _num(stats.level_error_rate(r)),
                *(_num(f.of_level(r)) for f in LEVEL_FIGURES),
                *capacity.get(r.case_id, [""] * len(CSV_CAPACITY)),
            ]
        )
    return buf.getvalue()


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(t: TextTable) -> str:
    lines = [
        "| " + " | ".join(_md_cell(h) for h in t.header) + " |",
        "|" + "|".join("---" for _ in t.header) + "|",
    ]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in t.rows]
    return "\n".join(lines)


def _when(ts: float | None) -> str:
    return "–" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _glance_md(g: WorkloadGlance) -> list[str]:
    """Per figure its tier line (the headline, one line), the figures and the pairs; the
    verdicts in words are in the workload's own section (`_verdicts_md`)."""
    out = [f"### {g.label}", ""]
    for m, value_fmt in ((g.throughput, fmt.rate), (g.latency, fmt.latency)):
        out += [] if m.higher_is_better else [f"{m.metric} latency, {m.where}:", ""]
        out += [m.line, ""]
        rows = [
            [
                b.stack,
                fmt.estimate(b.estimate, value_fmt),
                fmt.level(b.level_value),
                f"{b.share_of_best:.0%}",
                flags_text(b.flags),
            ]
            for b in m.bars
        ]
        what = "req/s" if m.higher_is_better else f"{m.metric} ({m.where})"
        if rows:
            header = [what, "figure [95%]", "level", "% of best", "flags"]
            out += [md_table(TextTable(header, rows)), ""]
        header_row, pairs = pair_rows(m)
        if pairs:
            out += [md_table(TextTable(header_row, pairs)), ""]
    out += [f"- not ranked: {stack} — {why}" for stack, why in g.not_ranked]
    return out + ([""] if g.not_ranked else [])


def _verdicts_md(g: WorkloadGlance) -> list[str]:
    return [
        "Verdicts in words:",
        "",
        f"- req/s ({g.throughput.where}): {g.throughput.verdict}",
        f"- p99 ({g.latency.where}): {g.latency.verdict}",
        "",
    ]


def _context_md(ctx: Context) -> list[str]:
    memory = memory_table(ctx)
    params = TextTable(
        ["stack", "parameters in force"],
        [
            [
                p.stack,
                (", ".join(f"{k}={v}" for k, v in p.params) or "defaults")
                + ("" if p.effective else " (set by the suite; never started)"),
            ]
            for p in ctx.stack_params
        ],
    )
    return [
        "## Context",
        "",
        md_table(TextTable(["machine", ""], [list(r) for r in ctx.machine.rows()])),
        "",
        md_table(TextTable(["role", "CPUs"], [list(r) for r in ctx.cores])),
        "",
        md_table(params),
        "",
        ctx.params_note,
        "",
        md_table(TextTable(["tool", "version"], [list(r) for r in ctx.versions])),
        "",
        ctx.memory_note,
        "",
        *([md_table(memory), ""] if ctx.memory else []),
    ]


def _capacity_md(a: Analysis, ask: CapacityAsk | None) -> list[str]:
    view = capacity_view(a, ask)
    if view is None:
        return []
    scaling = (
        []
        if view.scaling is None
        else ["### Scaling over server cores", "", md_table(view.scaling), ""]
    )
    return ["## Capacity at the SLO", "", md_table(view.table), "", *scaling] + [
        line for note in view.notes for line in (note, "")
    ]


def summary_md(
    a: Analysis,
    found: list[Finding],
    claims: Sequence[ClaimResult] = (),
    ask: CapacityAsk | None = None,
) -> str:
    run = a.data.run
    out = [
        f"# stackbench run {run.id}: {run.suite_name}",
        "",
        f"Status **{run.status}**, started {_when(run.started_at)}, finished "
        f"{_when(run.finished_at)}. Load: {a.settings.mode} loop over "
        f"{a.level_label}, driver {a.settings.driver}, keep-alive "
        f"{a.settings.keepalive}, {a.repeat} repetition(s) per level. "
        f"SLO: {slo_text(a)}. {FIGURES_NOTE} {a.spread.source.capitalize()}.",
        "",
        "## At a glance",
        "",
        "Throughput: each stack's best valid level; p99: at the "
        f"highest level every stack measured validly. {TIER_LEGEND} Pairs: a/b is the first "
        f"stack's figure over the second's. {RULE}",
        "",
    ]
    glances = {g.label: g for g in glance(a)}
    for g in glances.values():
        out += _glance_md(g)
    if a.slo is not None:
        out += [
            "Highest median throughput within the SLO (req/s @ level):",
            "",
            md_table(tables.at_a_glance(a, within_slo=True)),
            "",
        ]
    out += _capacity_md(a, ask)
    out += _context_md(build_context(a))
    if claims:
        out += [
            "## The article's claims, tested here",
            "",
            "Ratios, not absolute numbers, are compared: the hardware differs. "
            + claimtable.counts_sentence(claims),
            "",
            *claimtable.as_markdown(claims),
            "",
        ]
    departures = tables.deviations(a)
    if departures:
        out += ["## Deviations from the article", "", md_table(departures), ""]
    out += ["## Findings", "", RANKING_LEGEND, ""]
    out += [
        f"- {'**' + f.workload + '** ' if f.workload else ''}"
        f"{'⚠ ' if f.severity != 'info' else ''}{f.text}"
        for f in found
    ] or ["- none"]
    for w in a.workloads:
        out += ["", f"## {w.label}", ""]
        out += _verdicts_md(glances[w.label]) if w.label in glances else []
        if w.cases:
            out += [
                "Throughput (req/s) by " + a.level_label + ":",
                "",
                md_table(tables.pivot(w, tables.METRICS["req/s"])),
                "",
                "p99 latency:",
                "",
                md_table(tables.pivot(w, tables.METRICS["p99"])),
                "",
                "All figures (" + tables.FIGURES_LEGEND.rstrip(".") + "):",
                "",
                md_table(tables.detail(a, w)),
            ]
        if w.not_measured:
            out += ["", "Not measured:", "", md_table(tables.not_measured(w))]
    if a.failed_verifications:
        out += [
            "",
            "## Verification failures",
            "",
            md_table(
                TextTable(
                    ["stack", "workload", "checked", "failures"],
                    [
                        [v.stack, v.workload, str(v.checked), "; ".join(v.failures)]
                        for v in a.failed_verifications
                    ],
                )
            ),
        ]
    unavailable = {c.stack: c.reason for c in a.data.cases if c.status == "unavailable"}
    if unavailable:
        out += [
            "",
            "## Unavailable stacks",
            "",
            md_table(TextTable(["stack", "reason"], [[s, r] for s, r in unavailable.items()])),
        ]
    notes = tables.case_notes(a)
    if notes:
        out += ["", "## Sweep notes", "", md_table(notes)]
    timings = tables.script_timings(a)
    if timings:
        out += ["", "## Standalone timing (no HTTP)", "", md_table(timings)]
    out += [
        "",
        "## Environment",
        "",
        md_table(tables.environment(a)),
        "",
        "## Settings",
        "",
        md_table(tables.settings(a)),
        "",
    ]
    return "\n".join(out)
