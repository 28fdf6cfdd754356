"""Tables as plain text cells, shared by the Markdown, HTML and terminal views."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgspec

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis, WorkloadView
from stackbench.analysis.figures import (
    BY_CLAIM_METRIC,
    LEVEL_FIGURES,
    LOADER_ROLE,
    SERVER_CPU,
    SERVICE_ROLES,
    LevelFigure,
)
from stackbench.analysis.stats import LevelAggregate
from stackbench.config.claims import COLUMNS
from stackbench.store.records import LevelFlag, has_flag


@dataclass(frozen=True)
class TextTable:
    header: list[str]
    rows: list[list[str]]


Cell = Callable[[LevelAggregate], str]


def latency_cell(key: str) -> Cell:
    return lambda g: fmt.estimate(g.latency_us.get(key), fmt.latency)


METRICS: dict[str, Cell] = {
    "req/s": lambda g: fmt.estimate(g.throughput),
    "p50": latency_cell("p50"),
    "p90": latency_cell("p90"),
    "p99": latency_cell("p99"),
    "max": latency_cell("max"),
    "error rate": lambda g: fmt.estimate(g.error_rate, fmt.fraction),
    SERVER_CPU.header: lambda g: SERVER_CPU.cell(g.value(SERVER_CPU)),
}


@dataclass(frozen=True)
class Figure:
    """A per-level figure the articles' tables showed besides req/s: its column header, its
    cell (the median over repetitions, no interval: a compact column) and what it means."""

    header: str
    cell: Cell
    meaning: str


def plain_latency(key: str) -> Cell:
    return lambda g: fmt.latency(g.latency_value(key))


def cpu_by_role_cell(g: LevelAggregate) -> str:
    """'php-fpm 61%, nginx 30%, mariadb 8%': the stack's roles, then the services, each as
    % of one core (the loader is a column of its own)."""
    roles = [r for r in g.cpu_by_role if r != LOADER_ROLE]
    ordered = sorted(roles, key=lambda r: (r in SERVICE_ROLES, r))
    return ", ".join(f"{r} {fmt.percent(g.cpu_by_role[r], 0)}" for r in ordered) or fmt.MISSING


def figure_cell(figure: LevelFigure) -> Cell:
    """A level figure's cell: the median over repetitions, as the figure writes it."""
    return lambda g: figure.cell(g.value(figure))


def _of(figure: LevelFigure) -> Figure:
    return Figure(figure.header, figure_cell(figure), figure.described)


# The extra columns a claims file may name (config/claims.py COLUMNS), by the names of the
# claims' metrics; the detail table (summary.md, report.html) always has them all.
FIGURES: dict[str, Figure] = {
    "mean_latency": Figure("mean", plain_latency("mean"), "mean latency"),
    "p80": Figure("p80", plain_latency("p80"), "80% of the requests answered within"),
    **{name: _of(figure) for name, figure in BY_CLAIM_METRIC.items() if name in COLUMNS},
    "errors": Figure("failed", lambda g: f"{g.errors_total:,}", "failed requests"),
}


def legend(names: Sequence[str]) -> str:
    """'Tpq: ...; p80: ...' for the named figures."""
    return "; ".join(f"{FIGURES[n].header}: {FIGURES[n].meaning}" for n in names) + "."


# The detail table's legend: the mean, then every level figure.
FIGURES_LEGEND = (
    "; ".join(
        f"{f.header}: {f.meaning}"
        for f in [FIGURES["mean_latency"], *(_of(figure) for figure in LEVEL_FIGURES)]
    )
    + "."
)


def flags_cell(g: LevelAggregate) -> str:
    parts = [f.text for f in g.flags]
    if g.slo is not None and g.slo.status.value != "pass":
        parts.append(f"SLO {g.slo.status.value}")
    return ", ".join(parts)


def pivot(w: WorkloadView, cell: Cell) -> TextTable:
    """Stacks as rows, levels as columns: the compact table under each chart."""
    header = ["stack", *(fmt.level(v) for v in w.level_values)]
    rows = []
    for c in w.cases:
        row = [c.stack]
        for value in w.level_values:
            agg = c.aggregate_at(value)
            row.append(fmt.MISSING if agg is None else cell(agg))
        rows.append(row)
    return TextTable(header, rows)


def detail(a: Analysis, w: WorkloadView) -> TextTable:
    """One row per stack × level with every figure (medians over repetitions): the columns of
    all five articles' tables (mean, p80, ab's two times per request, MiB/s, CPU by role)."""
    header = [
        "stack",
        a.level_label,
        "reps",
        "req/s [CI]",
        "mean",
        "p50",
        "p80",
        "p90",
        "p99",
        "max",
        "errors",
        "error rate",
        *(f.header for f in LEVEL_FIGURES),
        "CPU by role",
        "flags",
    ]
    rows = []
    for c in w.cases:
        for g in c.aggregates:
            rows.append(
                [
                    c.stack,
                    fmt.level(g.level_value),
                    str(g.repetitions),
                    METRICS["req/s"](g),
                    *(plain_latency(k)(g) for k in ("mean", "p50", "p80", "p90", "p99", "max")),
                    f"{g.errors_total:,}",
                    fmt.fraction(g.error_rate.value),
                    *(f.cell(g.value(f)) for f in LEVEL_FIGURES),
                    cpu_by_role_cell(g),
                    flags_cell(g),
                ]
            )
    return TextTable(header, rows)


def not_measured(w: WorkloadView) -> TextTable:
    rows = [
        [c.stack, c.case.status, c.case.reason or "; ".join(c.verification_failures)]
        for c in w.not_measured
    ]
    return TextTable(["stack", "status", "reason"], rows)


def environment(a: Analysis) -> TextTable:
    # Every field the run recorded, in order; the other hosts have rows of their own in the
    # cores table (context.hosts).
    env = msgspec.to_builtins(a.data.run.environment)
    rows = [[k, _plain(v)] for k, v in env.items() if k not in ("versions", "hosts")]
    for name, version in env.get("versions", {}).items():
        rows.append([f"version: {name}", _plain(version)])
    return TextTable(["item", "value"], rows)


def settings(a: Analysis) -> TextTable:
    rows = [
        [k, _plain(v)] for k, v in msgspec.to_builtins(a.settings).items() if k != "deviations"
    ]  # their own table: deviations()
    return TextTable(["setting", "value"], rows)


def deviations(a: Analysis) -> TextTable | None:
    """Where the run departed from its suite's article: the setting, the article's, ours,
    why (None when the run recorded none)."""
    rows = [[d.setting, d.article, d.ours, d.why] for d in a.settings.deviations]
    return TextTable(["setting", "the article", "here", "why"], rows) if rows else None


def _plain(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_plain(v) for v in value)
    return "–" if value is None else str(value)


def _best(w: WorkloadView, stack: str, within_slo: bool) -> str:
    """Highest median throughput of a stack over its valid levels (optionally SLO-passing)."""
    view = next((c for c in w.cases if c.stack == stack), None)
    if view is None:
        missing = next((c for c in w.not_measured if c.stack == stack), None)
        return missing.case.status if missing else fmt.MISSING
    if not view.rankable:
        return f"{view.case.status} (not ranked)"
    valid = [
        g
        for g in view.aggregates
        if g.status == "ok"
        and not has_flag(g.flags, LevelFlag.NO_COMPLETED)
        and (not within_slo or (g.slo is not None and g.slo.status.value == "pass"))
    ]
    if not valid:
        return "none" if within_slo else "no valid level"
    top = max(valid, key=lambda g: g.throughput.value)
    return f"{fmt.rate(top.throughput.value)} @ {fmt.level(top.level_value)}"


def at_a_glance(a: Analysis, within_slo: bool = False) -> TextTable:
    """Workloads × stacks: the best median req/s and the level where it was reached."""
    rows = [[w.label, *(_best(w, s, within_slo) for s in a.stacks)] for w in a.workloads]
    return TextTable(["workload", *a.stacks], rows)


def script_timings(a: Analysis) -> TextTable | None:
    """Standalone timings (no HTTP), when the suite asked for them (script_iterations)."""
    if not a.data.scripts:
        return None
    rows = []
    for t in a.data.scripts:
        per = (
            f"{1000.0 * t.wall_s / t.iterations:.3f} ms"
            if t.wall_s is not None and t.iterations
            else "–"
        )
        rows.append(
            [
                t.stack,
                t.label,
                f"{t.iterations:,}",
                _seconds(t.wall_s),
                _seconds(t.user_s),
                _seconds(t.sys_s),
                per,
                t.outcome,
            ]
        )
    return TextTable(
        ["stack", "workload", "iterations", "real", "user", "sys", "per iteration", "output"], rows
    )


def case_notes(a: Analysis) -> TextTable | None:
    """What the runner noted on finished cases: early-stopped sweeps, max sustainable rates."""
    rows = [[c.stack, c.label, c.reason] for c in a.data.cases if c.status == "ok" and c.reason]
    return TextTable(["stack", "workload", "note"], rows) if rows else None


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f} s"
