"""`stackbench compare A B`: two runs, case by case, as a terminal table, Markdown or JSON, and
as a CI gate (exit codes in errors.ExitCode: 0 no broken gate, 1 RULE_BROKEN a significant
regression beyond a threshold, 5 NOT_COMPARABLE no case in common).

A and B are run ids (or references `results` accepts) in the store of --out, or paths of two
results.json files written by the report (their run, cases and levels are read back)."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from stackbench.analysis.analysis import analyse
from stackbench.analysis.compare import (
    THROUGHPUT,
    CaseKey,
    Gate,
    MetricChange,
    RunComparison,
    broken_gates,
    compare_runs,
    parse_latency_gate,
    parse_slower_gate,
)
from stackbench.analysis.significance import format_benchstat, format_verdict
from stackbench.commands.resultsdir import open_existing_store
from stackbench.errors import ExitCode, InputError
from stackbench.store.records import CaseRow, LevelRow, RunRow, VerificationRow
from stackbench.store.store import RunData, Store

FORMATS = ("terminal", "md", "json")


def compare_command(console: Console, run_a: str, run_b: str, out: Path | None,
                    output_format: str, fail_if_slower: str | None,
                    fail_if: Sequence[str]) -> int:
    needs_store = not (is_results_file(run_a) and is_results_file(run_b))
    return run_compare(console, open_existing_store(out) if needs_store else None, run_a, run_b,
                       output_format, gates(fail_if_slower, fail_if))


def is_results_file(ref: str) -> bool:
    return ref.endswith(".json") and Path(ref).is_file()


def load_run(store: Store | None, ref: str) -> RunData:
    """A run from a results.json file, or from the store by its id/reference."""
    if is_results_file(ref):
        return run_from_results(Path(ref))
    if store is None:
        raise InputError(f"{ref!r} is neither a results.json file nor a run id")
    return store.load_run(store.resolve_run(ref))


def run_from_results(path: Path) -> RunData:
    """The stored records of a run, read back from the report's results.json."""
    try:
        doc = json.loads(path.read_text())
        return RunData(run=msgspec.convert(doc["run"], RunRow),
                       cases=msgspec.convert(doc["cases"], list[CaseRow]),
                       levels=msgspec.convert(doc["levels"], list[LevelRow]),
                       verifications=msgspec.convert(doc.get("verifications", []),
                                                     list[VerificationRow]))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read it as a results.json ({exc})") from exc
    except (KeyError, TypeError, msgspec.ValidationError) as exc:
        raise InputError(f"{path}: not a stackbench results.json with run, cases and levels "
                         f"({exc}); rewrite it with 'stackbench report RUN_ID'") from exc


def gates(fail_if_slower: str | None, fail_if: Sequence[str]) -> list[Gate]:
    out = [parse_slower_gate(fail_if_slower)] if fail_if_slower else []
    return out + [parse_latency_gate(text) for text in fail_if]


def run_compare(console: Console, store: Store | None, run_a: str, run_b: str,
                output_format: str, gate_list: Sequence[Gate]) -> int:
    """Print the comparison of B against A; the exit code says whether a gate broke."""
    if output_format not in FORMATS:
        raise InputError(f"--format {output_format!r}: expected one of {', '.join(FORMATS)}")
    a = analyse(load_run(store, run_a))
    b = analyse(load_run(store, run_b))
    comparison = compare_runs(a, b, _percentiles(gate_list))
    broken = broken_gates(comparison, gate_list)
    if output_format == "json":
        _plain(console, json.dumps(as_json(comparison, broken), indent=2))
    elif output_format == "md":
        _plain(console, markdown(comparison, broken))
    else:
        print_terminal(console, comparison, broken)
    if not comparison.comparable:
        return ExitCode.NOT_COMPARABLE
    return ExitCode.RULE_BROKEN if broken else ExitCode.OK


def _plain(console: Console, text: str) -> None:
    """Machine-readable text: never wrapped, highlighted or read as markup."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _percentiles(gate_list: Sequence[Gate]) -> tuple[str, ...]:
    extra = [g.metric for g in gate_list if g.metric != THROUGHPUT]
    return tuple(dict.fromkeys(["p50", "p99", *extra]))


def _case(key: CaseKey) -> str:
    return f"{key.stack} {key.label} @{key.level_value:g}"


def _figure(metric: str, value: float) -> str:
    return f"{value:,.0f} req/s" if metric == THROUGHPUT else f"{value / 1000:.3g} ms"


def _gate_lines(broken: Sequence[tuple[Gate, CaseKey, MetricChange]]) -> list[str]:
    return [f"gate broken: {g.describe()} — {_case(k)}: {m.metric} {_figure(m.metric, m.a_value)}"
            f" -> {_figure(m.metric, m.b_value)}, {format_verdict(m.difference)}"
            for g, k, m in broken]


def _summary(comparison: RunComparison) -> list[str]:
    lines = []
    if not comparison.comparable:
        lines.append(f"runs {comparison.a_run} and {comparison.b_run} are not comparable: no "
                     "(stack, workload, level) with a valid figure in both")
    for key in comparison.only_in_a:
        lines.append(f"only in run {comparison.a_run}: {_case(key)}")
    for key in comparison.only_in_b:
        lines.append(f"only in run {comparison.b_run}: {_case(key)}")
    return lines


def print_terminal(console: Console, comparison: RunComparison,
                   broken: Sequence[tuple[Gate, CaseKey, MetricChange]]) -> None:
    table = Table(title=f"run {comparison.b_run} vs run {comparison.a_run} (ratio = B / A)")
    for column in ("case", "metric", "A", "B", "verdict", "benchstat"):
        table.add_column(column, overflow="fold")  # never an ellipsis: every word counts
    for case in comparison.cases:
        for m in case.metrics:
            table.add_row(escape(_case(case.key)), m.metric, _figure(m.metric, m.a_value),
                          _figure(m.metric, m.b_value), format_verdict(m.difference),
                          format_benchstat(m.difference))
    console.print(table)
    for change in comparison.changes:
        console.print(escape(f"changed ({change.section}): {change.key}: {change.a} -> "
                             f"{change.b}"))
    for line in _summary(comparison) + _gate_lines(broken):
        console.print(escape(line))


def markdown(comparison: RunComparison,
             broken: Sequence[tuple[Gate, CaseKey, MetricChange]]) -> str:
    lines = [f"# run {comparison.b_run} vs run {comparison.a_run}", "",
             "Ratio = B / A. Throughput > 1 is faster; latency > 1 is slower.", "",
             "| case | metric | A | B | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {_case(c.key)} | {m.metric} | {_figure(m.metric, m.a_value)} | "
              f"{_figure(m.metric, m.b_value)} | {format_verdict(m.difference)} |"
              for c in comparison.cases for m in c.metrics]
    if comparison.changes:
        lines += ["", "## What changed", "", "| section | key | A | B |", "|---|---|---|---|"]
        lines += [f"| {c.section} | {c.key} | {c.a} | {c.b} |" for c in comparison.changes]
    notes = _summary(comparison) + _gate_lines(broken)
    if notes:
        lines += [""] + [f"- {line}" for line in notes]
    return "\n".join(lines)


def as_json(comparison: RunComparison,
            broken: Sequence[tuple[Gate, CaseKey, MetricChange]]) -> dict[str, Any]:
    return {
        "a_run": comparison.a_run, "b_run": comparison.b_run,
        "comparable": comparison.comparable,
        "cases": [{"stack": c.key.stack, "workload": c.key.label,
                   "level": c.key.level_value,
                   "metrics": [_metric_json(m) for m in c.metrics]} for c in comparison.cases],
        "only_in_a": [_case(k) for k in comparison.only_in_a],
        "only_in_b": [_case(k) for k in comparison.only_in_b],
        "changes": [{"section": c.section, "key": c.key, "a": c.a, "b": c.b}
                    for c in comparison.changes],
        "gates_broken": _gate_lines(broken),
    }


def _metric_json(m: MetricChange) -> dict[str, Any]:
    d = m.difference
    return {"metric": m.metric, "a": m.a_value, "b": m.b_value, "verdict": d.verdict.value,
            "ratio": d.ratio, "low": d.low, "high": d.high, "p_value": d.p_value,
            "n_a": d.n_a, "n_b": d.n_b, "unit": d.unit, "note": d.note,
            "text": format_verdict(d)}
