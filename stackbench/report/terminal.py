"""Terminal views: one run (a table per workload, notes, findings and, last, the at-a-glance
summary), the list of runs, and the line printed after each level.

Everything fits the console width (see termtable: wrap, fold, then drop columns in the order
given here) and is printed as text, never as markup. The per-workload table drops, when too
wide: 1 server CPU, 2 p50, 3 the 95% CI, 4 % of best, then the article's extra columns (see
below) from the last named to the first. Flags and warnings are never dropped: they are
numbered notes under the table, wrapped to the full width.

An article suite's claims file may name `columns`: the figures its article's tables showed
besides req/s (Tpq, p80, failed requests, MiB/s ...; report/tables.py FIGURES). They join the
per-workload table after p99, and fit 80 columns by the same rule; summary.md and report.html
show every figure in their detail tables anyway.
"""

import datetime
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rich.console import Console
from rich.text import Text

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, WorkloadView, analyse
from stackbench.analysis.capacity import CapacityAsk
from stackbench.analysis.figures import SERVER_CPU
from stackbench.analysis.findings import findings, slo_text
from stackbench.analysis.tiers import LEGEND
from stackbench.analysis.wording import FIGURES_NOTE, RULE
from stackbench.errors import InputError
from stackbench.report import tables
from stackbench.report.capacityview import BRACKET, CAVEATS, SERVER_CORES, capacity_view
from stackbench.report.colors import stack_color
from stackbench.report.glance import (
    PAIR_HEADER,
    GlanceBar,
    MetricGlance,
    WorkloadGlance,
    glance,
    pair_cells,
)
from stackbench.report.termtable import Cell, Col, print_notes, print_table, print_wrapped
from stackbench.store.records import LevelFlag, flags_text, has_flag
from stackbench.store.store import LevelRow, RunData, RunRow, Store

_SEVERITY_STYLE = {"info": "", "warn": "yellow", "error": "red"}
BLOCKS = " ▏▎▍▌▋▊▉█"  # eighths of a character cell
MIN_BAR = 8


# --- the lines after each level ----------------------------------------------------------------
def _level_parts(level_row: LevelRow) -> tuple[str, list[str]]:
    """Where the level ran ('c=300 rep 1:') and its figures, each part never split."""
    r = level_row
    latency = stats.measured_latency(r)
    where = (
        f"rate {fmt.rate(r.level_value)}/s" if r.mode == "open" else f"c={fmt.level(r.level_value)}"
    )
    parts = [
        f"{fmt.rate(r.requests_per_s)} req/s",
        f"p50 {fmt.latency(latency.get('p50'))}",
        f"p99 {fmt.latency(latency.get('p99'))}",
        (
            f"errors {r.errors_total:,} ({fmt.fraction(stats.level_error_rate(r))})"
            if r.errors_total
            else "errors 0"
        ),
        f"CPU {fmt.percent(SERVER_CPU.of_level(r), 0)}",
    ]
    if r.status != "ok":
        parts.append(r.status.upper())
    return f"{where} rep {r.repetition + 1}:", parts


def level_line(stack: str, label: str, level_row: LevelRow) -> str:
    """A finished level in one line, however long (for logs and wide terminals)."""
    where, parts = _level_parts(level_row)
    flags = ["[" + flags_text(level_row.flags) + "]"] if level_row.flags else []
    return "  ".join([f"{stack} {label} {where}", *parts, *flags])


LEVEL_INDENT = "  "


def level_lines(
    stack: str, label: str, level_row: LevelRow, width: int, new_case: bool
) -> list[str]:
    """What `run` prints after each level, every line within `width` (80 columns included):
    the case ('node sha256?n=10') on a line of its own when `new_case`, then the level
    indented under it ('  c=300 rep 1:  2,081 req/s  p50 95.4 ms ...'), broken between
    figures (never inside one) when too wide, then its flags wrapped at spaces."""
    where, parts = _level_parts(level_row)
    out = [f"{stack} {label}"] if new_case else []
    line = LEVEL_INDENT + where
    for part in parts:
        if len(line) + 2 + len(part) > width and line.strip():
            out.append(line)
            line = LEVEL_INDENT * 2 + part
        else:
            line += "  " + part
    out.append(line)
    if level_row.flags:
        out += textwrap.wrap(
            "[" + flags_text(level_row.flags) + "]",
            width,
            initial_indent=LEVEL_INDENT * 2,
            subsequent_indent=LEVEL_INDENT * 2 + " ",
            break_on_hyphens=False,
        )
    return out


# --- one run ------------------------------------------------------------------------------------
def filter_run(
    data: RunData, stacks: Sequence[str] | None = None, workloads: Sequence[str] | None = None
) -> RunData:
    """The run restricted to some stacks and workloads (a workload matches by name, e.g.
    sha256, or by label, e.g. sha256?n=10)."""
    cases = [
        c
        for c in data.cases
        if (not stacks or c.stack in stacks)
        and (not workloads or c.workload in workloads or c.label in workloads)
    ]
    if (stacks or workloads) and not cases:
        what = ", ".join(
            [*(f"stack {s}" for s in stacks or ()), *(f"workload {w}" for w in workloads or ())]
        )
        raise InputError(
            f"run {data.run.id} has no case for {what} (its stacks: "
            f"{', '.join(dict.fromkeys(c.stack for c in data.cases))}; workloads: "
            f"{', '.join(dict.fromkeys(c.label for c in data.cases))})"
        )
    ids = {c.id for c in cases}
    kept = {(c.stack, c.workload) for c in cases}
    return replace(
        data,
        cases=cases,
        levels=[r for r in data.levels if r.case_id in ids],
        superseded=[r for r in data.superseded if r.case_id in ids],
        verifications=[v for v in data.verifications if (v.stack, v.workload) in kept],
        scripts=[s for s in data.scripts if not stacks or s.stack in stacks],
    )


def _best_at(w: WorkloadView) -> dict[float, float]:
    """Best valid median req/s at each level (the 100% of the '% best' column)."""
    best: dict[float, float] = {}
    for c in w.cases:
        for g in c.aggregates:
            if c.rankable and g.status == "ok" and not has_flag(g.flags, LevelFlag.NO_COMPLETED):
                best[g.level_value] = max(best.get(g.level_value, 0.0), g.throughput.value)
    return best


def _ci(g_est: stats.Estimate) -> str:
    if not g_est.has_interval or g_est.low == g_est.high:
        return "–"
    return f"{fmt.rate(g_est.low)}–{fmt.rate(g_est.high)}"


class _Notes:
    """Numbered notes of one table: the same text gets the same number."""

    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def mark(self, texts: Sequence[str]) -> str:
        marks = []
        for t in texts:
            if t not in self.items:
                self.items[t] = len(self.items) + 1
            marks.append(str(self.items[t]))
        return ",".join(marks)

    def lines(self) -> list[tuple[str, str]]:
        return [(f"[{n}]", t) for t, n in self.items.items()]


# Drop priority of the first extra column: after the table's own droppable columns.
_EXTRA_DROP_FROM = 5


def _workload_table(
    console: Console, a: Analysis, w: WorkloadView, columns: Sequence[str] = ()
) -> None:
    level_header = "rate" if a.level_kind == "rate" else "conns"
    extras = [tables.FIGURES[name] for name in columns]
    # The last named is dropped first: a claims file lists its article's figures by weight.
    extra_cols = [
        Col(f.header, "right", drop=_EXTRA_DROP_FROM + len(extras) - 1 - i)
        for i, f in enumerate(extras)
    ]
    cols = [
        Col("stack"),
        Col(level_header, "right"),
        Col("req/s", "right"),
        Col("95% CI", "right", drop=3),
        Col("% best", "right", drop=4),
        Col("p50", "right", drop=2),
        Col("p99", "right"),
        *extra_cols,
        Col("errors", "right"),
        Col("CPU", "right", drop=1),
        Col("notes"),
    ]
    best = _best_at(w)
    notes = _Notes()
    rows: list[list[Cell]] = []
    styles = []
    for c in w.cases:
        for g in c.aggregates:
            valid = c.rankable and g.status == "ok"
            texts = [f.text for f in g.flags]
            if g.slo is not None and g.slo.status.value != "pass":
                texts.append(
                    f"SLO {g.slo.status.value}: {slo_text(a)} not met"
                    if g.slo.status.value == "fail"
                    else f"SLO unknown: {g.slo.reason}"
                )
            if not c.rankable:
                texts.append(
                    f"{c.stack}: not ranked (case {c.case.status}"
                    + (", verification failed)" if c.verification_failures else ")")
                )
            top = best.get(g.level_value)
            share = f"{g.throughput.value / top:.0%}" if valid and top else "–"
            rows.append(
                [
                    Text(c.stack, style=stack_color(a.stacks, c.stack)),
                    fmt.level(g.level_value),
                    fmt.rate(g.throughput.value),
                    _ci(g.throughput),
                    share,
                    fmt.latency(g.latency_value("p50")),
                    fmt.latency(g.latency_value("p99")),
                    *(f.cell(g) for f in extras),
                    fmt.fraction(g.error_rate.value),
                    fmt.percent(g.value(SERVER_CPU), 0),
                    notes.mark(texts),
                ]
            )
            styles.append("" if valid else "red")
    for c in w.not_measured:
        reason = c.case.reason or "; ".join(c.verification_failures) or "no levels measured"
        rows.append(
            [
                c.stack,
                *(["–"] * (len(cols) - 2)),
                notes.mark([f"{c.stack}: {c.case.status} — {reason}"]),
            ]
        )
        styles.append("yellow")
    print_table(console, w.label, cols, rows, styles)
    print_notes(console, notes.lines())


# Columns of the run-wide text tables that may be hidden to fit (1 first), by header; the
# names, the workload, the time per iteration and the last column (the note, the output) stay,
# the last wrapping at spaces, so that at 80 columns no word is split.
TEXT_DROPS = {"sys": 1, "user": 2, "iterations": 3, "real": 4}
WRAPPED_MIN_WIDTH = 10


def _text_table(console: Console, title: str, t: tables.TextTable, wrap_last: bool) -> None:
    last = len(t.header) - 1
    cols = [
        Col(h, wrap=True, min_width=WRAPPED_MIN_WIDTH)
        if wrap_last and i == last
        else Col(h, drop=TEXT_DROPS.get(h, 0))
        for i, h in enumerate(t.header)
    ]
    print_table(console, title, cols, t.rows)


def print_run(
    console: Console,
    data: RunData,
    columns: Sequence[str] = (),
    analysis: Analysis | None = None,
    verbose: bool = False,
    ask: CapacityAsk | None = None,
) -> None:
    """The run's tables; `columns`: the article's extra figures (a claims file's columns);
    `analysis`: the run's, when the caller has it already (the figures and verdicts are
    computed once); `verbose`: the glance says its verdicts in words too; `ask`: the
    capacity's target load and price."""
    a = analysis or analyse(data)
    run = data.run
    console.print(
        Text(
            f"run {run.id} {run.suite_name} — {run.status}, "
            f"{a.settings.mode} loop, {a.repeat} repetition(s)",
            style="bold",
        )
    )
    print_wrapped(
        console,
        f"{FIGURES_NOTE} % best: of the best valid stack at the same "
        "level; notes under each table.",
        indent=0,
        style="dim",
    )
    if columns:
        print_wrapped(console, tables.legend(columns), indent=0, style="dim")
    for w in a.workloads:
        console.print()
        _workload_table(console, a, w, columns)
    for title, extra in (
        ("sweep notes", tables.case_notes(a)),
        ("standalone timing (no HTTP)", tables.script_timings(a)),
    ):
        if extra is not None:
            console.print()
            _text_table(console, title, extra, wrap_last=True)
    console.print()
    console.print(Text("findings", style="bold"))
    for f in findings(a):
        prefix = f"{f.workload}: " if f.workload else ""
        print_wrapped(console, prefix + f.text, "- ", indent=2, style=_SEVERITY_STYLE[f.severity])
    console.print()
    print_glance(console, a, glance(a), verbose)
    print_capacity(console, a, ask)


NO_CAPACITY = (
    "no capacity at the SLO in this run: it needs an open loop (offered rates) with an [slo]; "
    "--target-rps and --price-per-core-hour have nothing to act on"
)


def _capacity_row_name(t: tables.TextTable, row: list[str]) -> str:
    """'go hello', and its server cores when the run measured several counts."""
    name = f"{row[1]} {row[0]}"
    if SERVER_CORES in t.header:
        cores = row[t.header.index(SERVER_CORES)]
        name += f" on {cores} core{'' if cores == '1' else 's'}"
    return name


def print_capacity(console: Console, a: Analysis, ask: CapacityAsk | None) -> None:
    """The capacity at the SLO (open loop with an SLO only), with what it rests on."""
    view = capacity_view(a, ask)
    if view is None:
        if ask is not None and ask.asked:
            console.print()
            print_wrapped(console, NO_CAPACITY, "", indent=0, style="yellow")
        return
    console.print()
    # the caveats as lines under the table: a wrapped column would split the figures
    t = view.table
    keep = [i for i, h in enumerate(t.header) if h != CAVEATS]
    cols = [
        Col(t.header[i], "left" if i < 2 else "right", drop=1 if t.header[i] == BRACKET else 0)
        for i in keep
    ]
    print_table(console, "capacity at the SLO", cols, [[row[i] for i in keep] for row in t.rows])
    if CAVEATS in t.header:
        at = t.header.index(CAVEATS)
        for row in t.rows:
            if row[at]:
                print_wrapped(console, f"{_capacity_row_name(t, row)}: {row[at]}", "- ", indent=2)
    if view.scaling is not None:
        s = view.scaling
        scols = [Col(h, "left" if i < 2 else "right") for i, h in enumerate(s.header)]
        print_table(console, "scaling over server cores", scols, s.rows)
    for note in view.notes:
        print_wrapped(console, note, "", indent=0, style="dim")


# --- at a glance --------------------------------------------------------------------------------
def bar_text(fraction: float, width: int) -> str:
    """A horizontal bar of `width` cells filled to `fraction` (eighths of a cell)."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[part] if part else "")).ljust(width)


def _metric_lines(
    console: Console,
    a: Analysis,
    label: str,
    m: MetricGlance,
    value_fmt: Callable[[float | None], str],
    verbose: bool,
) -> None:
    """A figure of one workload: the heading, the tier line (at most 80 characters, bold),
    the bars, the table of the pairs the line rests on, and with `verbose` the verdicts in
    words."""
    title = "req/s" if m.higher_is_better else f"{m.metric} latency"
    console.print(Text(f"{label} — {title}, {m.where}", style="bold"))
    print_wrapped(console, m.line, indent=2, style="bold" if m.winner else "")
    if not m.bars:
        return
    name_w = max(len(b.stack) for b in m.bars)
    scale = max(b.estimate.value for b in m.bars) or 1.0

    def figures(b: GlanceBar, with_ci: bool) -> str:
        value = fmt.estimate(b.estimate, value_fmt) if with_ci else value_fmt(b.estimate.value)
        return f"{value} @{fmt.level(b.level_value)}"

    with_ci = True
    fig_w = max(len(figures(b, True)) for b in m.bars)
    fixed = 4 + name_w + 1 + 1 + fig_w + 1 + 4
    if console.width - fixed < MIN_BAR:  # narrow: keep the bar, drop the interval
        with_ci = False
        fig_w = max(len(figures(b, False)) for b in m.bars)
        fixed = 4 + name_w + 1 + 1 + fig_w + 1 + 4
    bar_w = max(MIN_BAR, console.width - fixed)
    for b in m.bars:
        line = Text(f"    {b.stack.ljust(name_w)} ")
        line.append(bar_text(b.estimate.value / scale, bar_w), style=stack_color(a.stacks, b.stack))
        line.append(f" {figures(b, with_ci).rjust(fig_w)} {b.share_of_best:>4.0%}")
        console.print(line, overflow="fold")
        if b.flags:
            print_wrapped(
                console, f"{b.stack}: {flags_text(b.flags)}", "      ", indent=8, style="yellow"
            )
    if m.shown:
        print_table(console, "", PAIR_COLUMNS, [pair_cells(p) for p in m.shown])
    if verbose:
        print_wrapped(console, m.verdict, "  → ", indent=4)
    console.print()


# The table of pairs at 80 columns: names wrap at ' vs ', the interval is hidden first when too
# wide, then what would decide (a column nobody needs when every pair is decided is left out).
PAIR_COLUMNS = [
    Col(PAIR_HEADER[0], wrap=True, min_width=8),
    Col(PAIR_HEADER[1], "right"),
    Col(PAIR_HEADER[2], "right", drop=1),
    Col(PAIR_HEADER[3]),  # "? undecided" on one line
    Col(PAIR_HEADER[4], wrap=True, drop=2),  # left out when every pair is decided
]


def print_glance(
    console: Console, a: Analysis, glances: Sequence[WorkloadGlance], verbose: bool = False
) -> None:
    """Per workload and figure: the tier line, the bars and the pairs (`verbose`: and the
    verdicts in words, which `results --verbose` prints)."""
    console.print(Text("At a glance", style="bold underline"))
    print_wrapped(
        console,
        f"Bars: figure [95% interval] @level and % of the best. {LEGEND} {RULE} "
        f"{a.spread.source.capitalize()}.",
        indent=0,
        style="dim",
    )
    console.print()
    for g in glances:
        _metric_lines(console, a, g.label, g.throughput, fmt.rate, verbose)
        _metric_lines(console, a, g.label, g.latency, fmt.latency, verbose)
        for stack, why in g.not_ranked:
            print_wrapped(console, f"not ranked: {stack} — {why}", "  ", indent=4, style="yellow")


# --- the list of runs ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RunFilter:
    suite: str | None = None
    stacks: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None  # inclusive


@dataclass(frozen=True)
class RunSummary:
    run: RunRow
    stacks: tuple[str, ...]
    workloads: tuple[str, ...]  # labels
    levels: int


def run_summaries(store: Store) -> list[RunSummary]:
    """Every run with its stacks, workloads and level count, without loading any level."""
    cases = store.db.execute(
        "SELECT c.run_id AS run_id, c.stack AS stack, c.workload AS workload, c.label AS label,"
        # the standing levels: a measurement a level was measured again after is not counted
        " (SELECT COUNT(*) FROM levels l WHERE l.case_id = c.id AND l.superseded IS NULL)"
        " AS levels "
        "FROM cases c ORDER BY c.id"
    ).fetchall()
    per: dict[int, list[tuple[str, str, str, int]]] = {}
    for r in cases:
        per.setdefault(r["run_id"], []).append((r["stack"], r["workload"], r["label"], r["levels"]))
    out = []
    for run in store.runs():
        rows = per.get(run.id, [])
        out.append(
            RunSummary(
                run,
                tuple(dict.fromkeys(s for s, _, _, _ in rows)),
                tuple(dict.fromkeys(lb for _, _, lb, _ in rows)),
                sum(n for *_, n in rows),
            )
        )
    return out


def matches(s: RunSummary, f: RunFilter) -> bool:
    started = datetime.datetime.fromtimestamp(s.run.started_at)
    names = {w.split("?")[0] for w in s.workloads} | set(s.workloads)
    return (
        (f.suite is None or s.run.suite_name == f.suite)
        and all(st in s.stacks for st in f.stacks)
        and all(w in names for w in f.workloads)
        and (f.since is None or started >= f.since)
        and (f.until is None or started <= f.until)
    )


def print_runs(console: Console, store: Store, run_filter: RunFilter | None = None) -> None:
    f = run_filter or RunFilter()
    summaries = run_summaries(store)
    if not summaries:
        console.print("no runs stored yet (start one with 'stackbench run')")
        return
    shown = [s for s in summaries if matches(s, f)]
    if not shown:
        console.print(
            Text(
                f"no run matches the filters ({len(summaries)} runs stored; "
                "'stackbench results' lists them all)"
            )
        )
        return
    cols = [
        Col("id", "right"),
        Col("suite"),
        Col("started"),
        Col("status"),
        Col("stacks", wrap=True, min_width=20),
        Col("workloads", wrap=True, drop=1),
        Col("levels", "right"),
    ]
    rows: list[list[Cell]] = [
        [
            str(s.run.id),
            s.run.suite_name + (f" ({s.run.label})" if s.run.label else ""),
            time.strftime("%Y-%m-%d %H:%M", time.localtime(s.run.started_at)),
            s.run.status,
            ", ".join(s.stacks),
            ", ".join(s.workloads),
            str(s.levels),
        ]
        for s in shown
    ]
    title = (
        "runs" if len(shown) == len(summaries) else f"runs ({len(shown)} of {len(summaries)} match)"
    )
    print_table(console, title, cols, rows)
