"""`stackbench history`: every stored run of the same case (suite, stack, workload, level),
oldest first, each with its figure and interval, its verdict against the run before, the
stack folder's git revision when recorded, and the runs where the series changed."""

import datetime
from pathlib import Path

from msgspec import UNSET
from rich.console import Console
from rich.text import Text

from stackbench.analysis import fmt
from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.fmt import estimate, slug
from stackbench.analysis.history import CaseHistory, HistoryPoint, histories
from stackbench.analysis.verdicts import Outcome
from stackbench.analysis.wording import ratio_and_bounds
from stackbench.commands.resultsdir import open_existing_store, results_dir
from stackbench.errors import InputError
from stackbench.report.historychart import history_png
from stackbench.report.termtable import Cell, Col, print_table, print_wrapped

HISTORY_DIR = "history"


def run_history(
    console: Console,
    out: Path | None,
    suite: str | None,
    stack: str | None,
    workload: str | None,
    chart: bool,
) -> int:
    store = open_existing_store(out, console)
    try:
        runs = [store.load_run(r.id) for r in store.runs()]
    finally:
        store.close()
    analyses: list[Analysis] = [analyse(data) for data in runs]
    revisions = [
        {}
        if d.run.environment.stack_revisions is UNSET
        else dict(d.run.environment.stack_revisions)
        for d in runs
    ]
    labels = [d.run.label for d in runs]
    found = histories(analyses, revisions, labels, stack=stack, workload=workload, suite=suite)
    if not found:
        asked = ", ".join(
            f"{flag} {value}"
            for flag, value in (("--suite", suite), ("--stack", stack), ("--workload", workload))
            if value
        )
        raise InputError(
            f"history: no measured case in {results_dir(out)}"
            + (f" matches {asked}" if asked else "")
            + "; `stackbench results` lists the stored runs"
        )
    for h in found:
        _print_history(console, h)
        if chart:
            path = _write_chart(out, h)
            console.print(f"  chart: {path}")
    return 0


def _print_history(console: Console, h: CaseHistory) -> None:
    k = h.key
    console.print()
    console.print(
        Text.assemble((f"{k.stack} · {k.workload} @ {k.level:g}", "bold"), f" (suite {k.suite})")
    )
    rows: list[list[Cell]] = [_row(p) for p in h.points]
    print_table(
        console,
        "",
        [
            Col("run"),
            Col("date", drop=2),
            Col("revision", drop=1),
            Col("req/s [95%]", justify="right"),
            Col("against the run before", wrap=True, min_width=24),
        ],
        rows,
    )
    shifts = [f"run {p.run_id}" for p in h.changes]
    print_wrapped(
        console,
        (
            f"the series changed at {', '.join(shifts)} (change points over all "
            f"{len(h.points)} runs, judged against a run-to-run spread of {h.spread.sigma:.0%})"
        )
        if shifts
        else f"no change point over {len(h.points)} run(s)"
        + (" (4 or more runs are needed to find one)" if len(h.points) < 4 else ""),
        indent=1,
        style="dim",
    )


def _row(p: HistoryPoint) -> list[Cell]:
    when = datetime.datetime.fromtimestamp(p.started_at).strftime("%Y-%m-%d %H:%M")
    run = f"{p.run_id}" + (f" {p.label}" if p.label else "") + (" ◆" if p.change else "")
    return [run, when, p.revision or "–", estimate(p.throughput), _against(p)]


def _against(p: HistoryPoint) -> Cell:
    v = p.against_previous
    if v is None:
        return "first run"
    ratio, bounds = ratio_and_bounds(v)
    said = f"{v.outcome.value}: {ratio}" + (f" ({bounds})" if bounds != fmt.MISSING else "")
    if v.outcome is Outcome.UNDECIDED and v.decide:
        said += f"; {v.decide}"  # never left at "not enough evidence" without what decides it
    style = {Outcome.FASTER: "green", Outcome.SLOWER: "red"}.get(v.outcome, "")
    return Text(said, style=style)


def _write_chart(out: Path | None, h: CaseHistory) -> Path:
    k = h.key
    folder = results_dir(out) / HISTORY_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slug(k.suite)}-{slug(k.stack)}-{slug(k.workload)}-{k.level:g}.png"
    path.write_bytes(history_png(h))
    return path
