"""Terminal views: one run's tables and findings, the list of runs, the per-level line."""

import time

from rich.console import Console
from rich.table import Table

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, WorkloadView, analyse
from stackbench.analysis.findings import findings
from stackbench.report import tables
from stackbench.store.store import LevelRow, RunData, Store

_SEVERITY_STYLE = {"info": "", "warn": "yellow", "error": "red"}


def level_line(stack: str, label: str, level_row: LevelRow) -> str:
    """One line printed by the orchestrator after each level (plain text, no markup)."""
    r = level_row
    latency = stats.measured_latency(r)
    where = (f"rate {fmt.rate(r.level_value)}/s" if r.mode == "open"
             else f"c={fmt.level(r.level_value)}")
    parts = [f"{stack} {label} {where} rep {r.repetition + 1}:",
             f"{fmt.rate(r.requests_per_s)} req/s",
             f"p50 {fmt.latency(latency.get('p50'))}",
             f"p99 {fmt.latency(latency.get('p99'))}",
             f"errors {r.errors_total:,} ({fmt.fraction(stats.level_error_rate(r))})",
             f"server CPU {fmt.percent(stats.server_cpu_percent(r), 0)}"]
    if r.status != "ok":
        parts.append(r.status.upper())
    if r.flags:
        parts.append("[" + ", ".join(r.flags) + "]")
    return "  ".join(parts)


def _workload_table(a: Analysis, w: WorkloadView) -> Table:
    table = Table(title=w.label, title_justify="left")
    for col in ("stack", a.level_label, "req/s [95% CI]", "p50", "p99", "errors",
                "server CPU", "flags"):
        table.add_column(col, justify="left" if col in ("stack", "flags") else "right")
    for c in w.cases:
        for g in c.aggregates:
            flags = tables.flags_cell(g)
            style = "red" if g.status != "ok" or not c.rankable else ""
            table.add_row(c.stack, fmt.level(g.level_value), fmt.estimate(g.throughput),
                          fmt.latency(g.latency_value("p50")), fmt.latency(g.latency_value("p99")),
                          f"{g.errors_total:,} ({fmt.fraction(g.error_rate.value)})",
                          fmt.percent(g.server_cpu_percent), flags, style=style)
    for c in w.not_measured:
        table.add_row(c.stack, "–", "–", "–", "–", "–", "–",
                      f"{c.case.status}: {c.case.reason}", style="yellow")
    return table


def print_run(console: Console, data: RunData) -> None:
    a = analyse(data)
    run = data.run
    console.print(f"[bold]run {run.id}[/] {run.suite_name} — {run.status}, "
                  f"{a.settings.get('mode', '?')} loop, {a.repeat} repetition(s)",
                  highlight=False)
    for w in a.workloads:
        console.print(_workload_table(a, w))
    for title, extra in (("sweep notes", tables.case_notes(a)),
                         ("standalone timing (no HTTP)", tables.script_timings(a))):
        if extra is not None:
            table = Table(title=title, title_justify="left")
            for col in extra.header:
                table.add_column(col)
            for row in extra.rows:
                table.add_row(*row)
            console.print(table)
    console.print("[bold]findings[/]")
    for f in findings(a):
        prefix = f"{f.workload}: " if f.workload else ""
        console.print(f"- {prefix}{f.text}", style=_SEVERITY_STYLE[f.severity], markup=False,
                      highlight=False)


def _counts(store: Store) -> dict[int, tuple[int, int]]:
    """run id -> (cases, levels) without loading every level's histogram."""
    rows = store.db.execute(
        "SELECT c.run_id AS run_id, COUNT(DISTINCT c.id) AS cases, COUNT(l.id) AS levels "
        "FROM cases c LEFT JOIN levels l ON l.case_id = c.id GROUP BY c.run_id").fetchall()
    return {r["run_id"]: (r["cases"], r["levels"]) for r in rows}


def print_runs(console: Console, store: Store) -> None:
    runs = store.runs()
    if not runs:
        console.print("no runs stored yet (start one with 'stackbench run')")
        return
    counts = _counts(store)
    table = Table(title="runs")
    for col in ("id", "suite", "started", "status", "cases", "levels"):
        table.add_column(col, justify="right" if col in ("id", "cases", "levels") else "left")
    for run in runs:
        cases, levels = counts.get(run.id, (0, 0))
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.started_at))
        table.add_row(str(run.id), run.suite_name, started, run.status, str(cases), str(levels))
    console.print(table)
