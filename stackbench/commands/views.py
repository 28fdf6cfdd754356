"""Terminal views for the informational commands (stacks, workloads, verify, results)."""

from pathlib import Path

from rich.console import Console
from rich.text import Text

from stackbench.analysis.capacity import CapacityAsk
from stackbench.commands.claims import print_claims, run_claims, suite_columns
from stackbench.commands.resultsdir import check_report_dir, open_existing_store, results_dir
from stackbench.config.placement import default_placement
from stackbench.config.status import unavailable_reason
from stackbench.config.workloads import CATALOG, parse_spec
from stackbench.errors import InputError
from stackbench.lab.inventory import load_inventory
from stackbench.report import DEFAULT_FORMATS, EXPORTERS, write_all
from stackbench.report.terminal import RunFilter, filter_run, print_run, print_runs
from stackbench.report.termtable import Cell, Col, print_commands, print_table
from stackbench.session.script import run_script
from stackbench.session.stacks import verify_stack


def print_stacks(console: Console) -> None:
    """Every stack. At 80 columns the language and I/O model columns give way (in that order)
    to the description or the reason a stack is unavailable, which is never cut."""
    rows: list[list[Cell]] = []
    inventory = load_inventory()
    for name, entry in inventory.items():
        if entry.parsed is None:  # a broken stack.toml: say what to fix, the rest still works
            rows.append([name, Text("invalid", style="red"), "", "", unavailable_reason(entry)])
            continue
        m = entry.parsed
        if entry.status.available:
            rows.append(
                [
                    name,
                    Text("available", style="green"),
                    m.language,
                    m.io_model.value,
                    m.description,
                ]
            )
        else:
            rows.append(
                [
                    name,
                    Text("unavailable", style="red"),
                    m.language,
                    m.io_model.value,
                    entry.status.reason,
                ]
            )
    print_table(
        console,
        "stacks",
        [
            Col("stack"),
            Col("status"),
            Col("language", drop=1),
            Col("I/O model", drop=2),
            Col("description / reason", wrap=True, min_width=36),
        ],
        rows,
    )
    print_commands(
        console,
        "to make them available (as root):",
        [
            (name, (e.status.hint,))
            for name, e in inventory.items()
            if e.parsed is not None and not e.status.available and e.status.hint
        ],
    )


def print_workloads(console: Console) -> None:
    """The catalog. When too narrow the services, then group columns give way (in that
    order); the work column wraps."""
    rows: list[list[Cell]] = [
        [w.name, w.group.value, w.path(w.default), w.description, ", ".join(w.services) or "-"]
        for w in CATALOG.values()
    ]
    print_table(
        console,
        "workloads",
        [
            Col("workload"),
            Col("group", drop=2),
            Col("request", wrap=True, min_width=12),
            Col("work", wrap=True, min_width=28),
            Col("services", wrap=True, drop=1, min_width=9),
        ],
        rows,
    )


def _parse_params(params: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for item in params:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InputError(f"--param '{item}': expected NAME=VALUE")
        parsed[name] = value
    return parsed


def run_verify(
    console: Console, stack: str, workloads: list[str] | None, params: tuple[str, ...]
) -> bool:
    entry = load_inventory([stack])[stack]
    outcomes = verify_stack(entry, default_placement(), workloads, _parse_params(params))
    rows: list[list[Cell]] = [
        [
            o.workload,
            Text("pass", style="green") if o.ok else Text("FAIL", style="red"),
            str(o.checked),
            "\n".join(o.failures),
        ]
        for o in outcomes
    ]
    print_table(
        console,
        f"verification of {stack}",
        [
            Col("workload"),
            Col("result"),
            Col("requests", "right"),
            Col("failures", wrap=True, min_width=30),
        ],
        rows,
    )
    return all(o.ok for o in outcomes)


def print_results(
    console: Console,
    run_id: str | None,
    out: Path | None,
    run_filter: RunFilter | None = None,
    verbose: bool = False,
    ask: CapacityAsk | None = None,
) -> None:
    """The stored runs (filtered), or one run's tables restricted to some stacks/workloads;
    `ask`: the capacity's target load and price."""
    f = run_filter or RunFilter()
    store = open_existing_store(out)
    if run_id is None:
        print_runs(console, store, f)
        return
    if f.suite is not None or f.since is not None or f.until is not None:
        raise InputError(
            "--suite, --since and --until select among runs: give them without "
            "a RUN_ID (with a RUN_ID, --stack and --workload narrow that run)"
        )
    data = store.load_run(store.resolve_run(run_id))
    print_run(
        console,
        filter_run(data, f.stacks, f.workloads),
        suite_columns(data.run.suite_name),
        verbose=verbose,
        ask=ask,
    )
    print_claims(console, run_claims(data, load_inventory()))


def write_report_files(
    console: Console,
    run_id: str,
    out: Path | None,
    formats: tuple[str, ...] | None = None,
    to: Path | None = None,
    ask: CapacityAsk | None = None,
) -> None:
    """The report files of a stored run: in its run folder of the results directory, or in
    `to` (report --to DIR, checked before any work); `ask`: the capacity's target and price."""
    target_dir = check_report_dir(to) if to is not None else None
    store = open_existing_store(out)
    data = store.load_run(store.resolve_run(run_id))
    wanted = formats or DEFAULT_FORMATS
    target = write_all(
        data,
        target_dir or results_dir(out) / f"run-{data.run.id}",
        wanted,
        run_claims(data, load_inventory()),
        ask=ask,
    )
    console.print(
        Text(
            f"written to {target}: " + ", ".join(e.file_name for e in EXPORTERS if e.name in wanted)
        )
    )


def run_script_timing(
    console: Console,
    stack: str,
    workload: str,
    query: str | None,
    iterations: int,
    params: tuple[str, ...],
) -> bool:
    spec = parse_spec(f"{workload}?{query}" if query else workload, "WORKLOAD")
    entry = load_inventory([stack])[stack]
    t = run_script(entry, spec, iterations, default_placement(), _parse_params(params))
    print_table(
        console,
        f"{stack}: {spec.label} x {iterations}, one process, no HTTP",
        [
            Col("real", "right"),
            Col("user", "right"),
            Col("sys", "right"),
            Col("per iteration", "right"),
            Col("output", wrap=True),
        ],
        [
            [
                f"{t.wall_s:.3f} s",
                f"{t.user_s:.3f} s",
                f"{t.sys_s:.3f} s",
                f"{t.per_iteration_ms:.3f} ms",
                t.check,
            ]
        ],
    )
    return t.check == "ok" or t.check.startswith("not checked")
