"""Terminal views for the informational commands (stacks, workloads, verify, results)."""

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from stackbench.config.placement import default_placement
from stackbench.config.status import unavailable_reason
from stackbench.config.workloads import CATALOG, parse_spec
from stackbench.errors import InputError
from stackbench.lab.inventory import load_inventory
from stackbench.lab.script import run_script
from stackbench.lab.session import verify_stack


def print_stacks(console: Console) -> None:
    table = Table(title="stacks")
    for col in ("stack", "status", "language", "I/O model"):
        table.add_column(col, no_wrap=True)
    table.add_column("description / reason", min_width=30)
    for name, entry in load_inventory().items():
        if entry.parsed is None:  # a broken stack.toml: say what to fix, the rest still works
            table.add_row(name, "[red]invalid[/]", "", "", escape(unavailable_reason(entry)))
            continue
        m = entry.parsed
        if entry.status.available:
            table.add_row(name, "[green]available[/]", m.language, m.io_model.value,
                          m.description)
        else:
            table.add_row(name, "[red]unavailable[/]", m.language, m.io_model.value,
                          unavailable_reason(entry))
    console.print(table)


def print_workloads(console: Console) -> None:
    table = Table(title="workloads")
    for col in ("workload", "group", "request", "work", "services"):
        table.add_column(col)
    for w in CATALOG.values():
        table.add_row(w.name, w.group.value, w.path(w.default), w.description,
                      ", ".join(w.services) or "-")
    console.print(table)


def _parse_params(params: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for item in params:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InputError(f"--param '{item}': expected NAME=VALUE")
        parsed[name] = value
    return parsed


def run_verify(console: Console, stack: str, workloads: list[str] | None,
               params: tuple[str, ...]) -> bool:
    entry = load_inventory([stack])[stack]
    outcomes = verify_stack(entry, default_placement(), workloads, _parse_params(params))
    table = Table(title=f"verification of {stack}")
    for col in ("workload", "result", "requests", "failures"):
        table.add_column(col)
    for o in outcomes:
        table.add_row(o.workload, "[green]pass[/]" if o.ok else "[red]FAIL[/]", str(o.checked),
                      "\n".join(o.failures))
    console.print(table)
    return all(o.ok for o in outcomes)


def print_results(console: Console, run_id: str | None, out: Path | None) -> None:
    from stackbench.commands.run import open_store
    from stackbench.report.terminal import print_run, print_runs

    store = open_store(out)
    if run_id is None:
        print_runs(console, store)
    else:
        print_run(console, store.load_run(store.resolve_run(run_id)))


def write_report_files(console: Console, run_id: str, out: Path | None) -> None:
    from stackbench.commands.run import open_store, results_dir
    from stackbench.report import write_all

    store = open_store(out)
    data = store.load_run(store.resolve_run(run_id))
    target = write_all(data, results_dir(out) / f"run-{data.run.id}")
    console.print(f"report written to {target / 'report.html'}")


def run_script_timing(console: Console, stack: str, workload: str, query: str | None,
                      iterations: int, params: tuple[str, ...]) -> bool:
    spec = parse_spec(f"{workload}?{query}" if query else workload, "WORKLOAD")
    entry = load_inventory([stack])[stack]
    t = run_script(entry, spec, iterations, default_placement(), _parse_params(params))
    table = Table(title=f"{stack}: {spec.label} x {iterations}, one process, no HTTP")
    for col in ("real", "user", "sys", "per iteration", "output"):
        table.add_column(col)
    table.add_row(f"{t.wall_s:.3f} s", f"{t.user_s:.3f} s", f"{t.sys_s:.3f} s",
                  f"{t.per_iteration_ms:.3f} ms", t.check)
    console.print(table)
    return t.check == "ok" or t.check.startswith("not checked")
