"""`stackbench compare A B`: two runs, case by case, as terminal text, Markdown or JSON, and as a
CI gate (exit codes in errors.ExitCode: 0 every gated case shown not to regress beyond its
limit, 1 RULE_BROKEN a regression beyond a limit shown, 5 NOT_COMPARABLE no case in common,
6 UNDECIDED some gated case neither shown regressed nor shown not to be: the output says what
would decide it; a case resting on a disturbed level, or measured in both runs but invalid in
one (unsteady, an error rate beyond the limit), is never shown not to regress).

A and B are run numbers (or 'last') in the store of --out, or paths of results.json files
written by `run` or `report` (or of their report folders): their run, cases and levels are read
back, with the run-to-run spread their verdicts used; a file of another schema version is
refused, naming it."""

import json
import textwrap
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console

from stackbench.analysis.analysis import Analysis, analyse
from stackbench.analysis.compare import (
    THROUGHPUT,
    CaseKey,
    Gate,
    GatedCase,
    MetricChange,
    RunComparison,
    compare_runs,
    gated_cases,
    parse_latency_gate,
    parse_slower_gate,
)
from stackbench.analysis.verdicts import GateOutcome, Outcome, RunSpread
from stackbench.analysis.wording import SHORT, cell, sentence
from stackbench.commands.resultsdir import open_existing_store
from stackbench.errors import ExitCode, InputError
from stackbench.report.document import RESULTS_SCHEMA
from stackbench.store.records import (
    CaseRow,
    LevelRow,
    RunRow,
    ScriptRow,
    VerificationRow,
    dec_hook,
)
from stackbench.store.store import RunData, Store

FORMATS = ("terminal", "md", "json")


def compare_command(
    console: Console,
    run_a: str,
    run_b: str,
    out: Path | None,
    output_format: str,
    fail_if_slower: str | None,
    fail_if: Sequence[str],
) -> int:
    needs_store = not (is_path(run_a) and is_path(run_b))
    return run_compare(
        console,
        open_existing_store(out) if needs_store else None,
        run_a,
        run_b,
        output_format,
        gates(fail_if_slower, fail_if),
    )


def is_path(ref: str) -> bool:
    """A reference naming a file or folder rather than a stored run: it has a '/', ends with
    .json, or exists here (a run number or 'last' otherwise)."""
    return "/" in ref or ref.endswith(".json") or Path(ref).exists()


def results_file(ref: str) -> Path:
    """The results.json a path names: the file itself, or the one in a report folder."""
    path = Path(ref)
    if path.is_dir():
        path = path / "results.json"
    if not path.is_file():
        raise InputError(
            f"{ref}: no such file: give a results.json written by 'stackbench "
            "run' or 'stackbench report' (or its report folder), or a stored run "
            "number (see 'stackbench results')"
        )
    return path


def load_run(store: Store | None, ref: str) -> Analysis:
    """A run analysed: from a results.json file (with the run-to-run spread its verdicts
    used), or from the store by its number or 'last'."""
    if is_path(ref):
        data, spread = run_from_results(results_file(ref))
        return analyse(data, spread=spread)
    if store is None:  # only when both are paths
        raise InputError(f"{ref!r} is neither a results.json file nor a run number")
    return analyse(store.load_run(store.resolve_run(ref)))


class _Version(msgspec.Struct):
    schema: str = "none"


class _StoredParts(msgspec.Struct):
    """What compare reads back from a results.json (report/document.py ResultsDocument): the
    stored records, and the run-to-run spread its verdicts used."""

    run: RunRow
    cases: list[CaseRow]
    levels: list[LevelRow]
    verifications: list[VerificationRow]
    scripts: list[ScriptRow]
    run_spread: RunSpread


def run_from_results(path: Path) -> tuple[RunData, RunSpread]:
    """The stored records of a run and its spread, read back from the report's results.json;
    a file of another schema version, or not a results.json at all, is bad input."""
    try:
        raw = path.read_bytes()
        version = msgspec.json.decode(raw, type=_Version).schema
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except msgspec.DecodeError as exc:
        raise InputError(f"{path}: not a stackbench results.json ({exc})") from exc
    if version != RESULTS_SCHEMA:
        what = "it has no 'schema' key" if version == "none" else f"its schema is {version!r}"
        raise InputError(
            f"{path}: not a stackbench results.json of this version: {what}, "
            f"this stackbench reads {RESULTS_SCHEMA!r}; rewrite it from the store "
            "with 'stackbench report RUN_ID --format json', or compare stored "
            "runs by number"
        )
    try:
        parts = msgspec.json.decode(raw, type=_StoredParts, dec_hook=dec_hook)
    except msgspec.DecodeError as exc:
        raise InputError(
            f"{path}: not a valid stackbench results.json ({exc}); rewrite it "
            "with 'stackbench report RUN_ID --format json'"
        ) from exc
    return RunData(
        parts.run, parts.cases, parts.levels, parts.verifications, parts.scripts
    ), parts.run_spread


def gates(fail_if_slower: str | None, fail_if: Sequence[str]) -> list[Gate]:
    out = [parse_slower_gate(fail_if_slower)] if fail_if_slower else []
    return out + [parse_latency_gate(text) for text in fail_if]


def run_compare(
    console: Console,
    store: Store | None,
    run_a: str,
    run_b: str,
    output_format: str,
    gate_list: Sequence[Gate],
) -> int:
    """Print the comparison of B against A; the exit code says what the gates found."""
    if output_format not in FORMATS:
        raise InputError(f"--format {output_format!r}: expected one of {', '.join(FORMATS)}")
    a = load_run(store, run_a)
    b = load_run(store, run_b)
    comparison = compare_runs(a, b, _percentiles(gate_list))
    gated = gated_cases(comparison, gate_list)
    if output_format == "json":
        _plain(console, json.dumps(as_json(comparison, gated), indent=2))
    elif output_format == "md":
        _plain(console, markdown(comparison, gated))
    else:
        _plain(
            console,
            "\n".join(
                terminal_lines(comparison, gated, console.width, sources(store, run_a, run_b))
            ),
        )
    return exit_code(comparison, gated)


def exit_code(comparison: RunComparison, gated: Sequence[GatedCase]) -> int:
    # A case measured in both runs but unfit in one is gated (undecided): not "nothing to
    # compare", which a CI job might take for a pass.
    if not comparison.comparable and not gated:
        return ExitCode.NOT_COMPARABLE
    outcomes = {g.outcome for g in gated}
    if GateOutcome.REGRESSED in outcomes:
        return ExitCode.RULE_BROKEN
    if GateOutcome.UNDECIDED in outcomes:
        return ExitCode.UNDECIDED
    return ExitCode.OK


def _plain(console: Console, text: str) -> None:
    """Text laid out here: never re-wrapped, highlighted or read as markup."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _percentiles(gate_list: Sequence[Gate]) -> tuple[str, ...]:
    extra = [g.metric for g in gate_list if g.metric != THROUGHPUT]
    return tuple(dict.fromkeys(["p50", "p99", *extra]))


def _case(key: CaseKey) -> str:
    return f"{key.stack} {key.label} @{key.level_value:g}"


def _figure(metric: str, value: float) -> str:
    return f"{value:,.0f} req/s" if metric == THROUGHPUT else f"{value / 1000:.3g} ms"


def _what(metric: str) -> str:
    return "req/s" if metric == THROUGHPUT else metric


def summary_line(comparison: RunComparison) -> str:
    """'3 slower, 12 equivalent, 3 undecided (18 figures)'."""
    counts = Counter(m.verdict.outcome for c in comparison.cases for m in c.metrics)
    parts = [f"{counts[o]} {SHORT[o]}" for o in Outcome if counts[o]]
    total = sum(counts.values())
    same = "; the same run twice" if comparison.same_run else ""
    return (
        f"{', '.join(parts) or 'nothing compared'} ({total} figure{'s' * (total != 1)}, "
        f"run {comparison.b_run} against run {comparison.a_run}{same})"
    )


def gate_summary(gated: Sequence[GatedCase]) -> list[str]:
    """Per gate: what it found, each regressed or undecided case named."""
    lines = []
    for g in dict.fromkeys(c.gate for c in gated):
        cases = [c for c in gated if c.gate == g]
        counts = Counter(c.outcome for c in cases)
        lines.append(
            f"gate '{g.describe()}': "
            + ", ".join(f"{counts[o]} {o.value}" for o in GateOutcome if counts[o])
        )
        for c in cases:
            if c.outcome is GateOutcome.REGRESSED:
                m = c.change
                lines.append(
                    f"  regressed: {_case(c.key)}: {_figure(m.metric, m.a_value)} -> "
                    f"{_figure(m.metric, m.b_value)}, {cell(m.verdict)}"
                )
            elif c.outcome is GateOutcome.UNDECIDED:
                v = c.change.verdict
                lines.append(
                    f"  undecided: {_case(c.key)}: {cell(v)}"
                    + (f"; {v.decide}" if v.decide else "")
                )
    return lines


def same_run_warning(comparison: RunComparison) -> list[str]:
    """First, before any verdict: a run compared with itself says nothing about a change."""
    if not comparison.same_run:
        return []
    return [
        f"warning: A and B are the same run ({comparison.a_run}): every figure is compared "
        "with itself, which says nothing about a change"
    ]


def _left_out(comparison: RunComparison) -> list[str]:
    return [f"run {run}: {_case(key)}: {detail}" for run, key, detail in comparison.left_out]


def _notes(comparison: RunComparison) -> list[str]:
    lines = []
    if not comparison.comparable:
        lines.append(
            f"runs {comparison.a_run} and {comparison.b_run} are not comparable: no "
            "(stack, workload, level) with a valid figure in both"
        )
    lines += [f"only in run {comparison.a_run}: {_case(k)}" for k in comparison.only_in_a]
    lines += [f"only in run {comparison.b_run}: {_case(k)}" for k in comparison.only_in_b]
    lines += [f"disturbed repetitions left out: {text}" for text in _left_out(comparison)]
    if comparison.spread.assumed:
        lines.append(comparison.spread.source)
    return lines


def sources(store: Store | None, run_a: str, run_b: str) -> str:
    """Where A and B come from, when one is a file: two runs numbered 1 may be two runs."""
    if not (is_path(run_a) or is_path(run_b)):
        return ""

    def where(ref: str) -> str:
        return (
            str(results_file(ref))
            if is_path(ref) or store is None
            else f"run {ref} of {store.path}"
        )

    return f"A = {where(run_a)}; B = {where(run_b)}"


def terminal_lines(
    comparison: RunComparison, gated: Sequence[GatedCase], width: int, source_line: str = ""
) -> list[str]:
    """Verdicts first, one block per case, every line wrapped at word boundaries to `width`
    (never below 60); the last line is the summary. `source_line`: where A and B come from."""
    width = max(60, width)
    out = [
        f"run {comparison.b_run} against run {comparison.a_run} (ratio = B / A; "
        "req/s > 1 is faster, latency > 1 is slower)"
    ]
    if source_line:
        out += _wrap(source_line, width, 4)
    for line in same_run_warning(comparison):
        out += _wrap(line, width, 4)
    for case in comparison.cases:
        out.append("")
        out.append(_case(case.key))
        for m in case.metrics:
            row = (
                f"  {SHORT[m.verdict.outcome]:<16} {m.metric:<10} "
                f"{_figure(m.metric, m.a_value)} -> {_figure(m.metric, m.b_value)}  "
                f"{cell(m.verdict).removeprefix(SHORT[m.verdict.outcome]).strip()}"
            )
            out += _wrap(row, width, 19)
            if m.verdict.outcome is Outcome.UNDECIDED and m.verdict.decide:
                out += _wrap(f"  {'':<16} {m.verdict.decide}", width, 19)
    for change in comparison.changes:
        out += _wrap(
            f"changed ({change.section}): {change.key}: {change.a} -> {change.b}", width, 2
        )
    for line in _notes(comparison) + gate_summary(gated):
        out += _wrap(line, width, 4)
    out.append(summary_line(comparison))
    return _wrap_all(out, width)


def _wrap(text: str, width: int, indent: int) -> list[str]:
    """Break only between words (a long word stays whole on its own line)."""
    return textwrap.wrap(
        text,
        width,
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
        drop_whitespace=True,
    ) or [""]


def _wrap_all(lines: list[str], width: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        out += [line] if len(line) <= width else _wrap(line, width, 4)
    return out


def markdown(comparison: RunComparison, gated: Sequence[GatedCase]) -> str:
    lines = [
        f"# run {comparison.b_run} against run {comparison.a_run}",
        "",
        "Ratio = B / A. Throughput > 1 is faster; latency > 1 is slower.",
        "",
        "| verdict | case | metric | A | B | ratio [95%] |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {SHORT[m.verdict.outcome]} | {_case(c.key)} | {m.metric} | "
        f"{_figure(m.metric, m.a_value)} | {_figure(m.metric, m.b_value)} | "
        f"{cell(m.verdict).removeprefix(SHORT[m.verdict.outcome]).strip()} |"
        for c in comparison.cases
        for m in c.metrics
    ]
    undecided = [
        (c, m)
        for c in comparison.cases
        for m in c.metrics
        if m.verdict.outcome is Outcome.UNDECIDED and m.verdict.decide
    ]
    if undecided:
        lines += ["", "## What would decide the undecided", ""]
        lines += [f"- {_case(c.key)} {m.metric}: {m.verdict.decide}" for c, m in undecided]
    if comparison.changes:
        lines += ["", "## What changed", "", "| section | key | A | B |", "|---|---|---|---|"]
        lines += [f"| {c.section} | {c.key} | {c.a} | {c.b} |" for c in comparison.changes]
    notes = same_run_warning(comparison) + _notes(comparison) + gate_summary(gated)
    if notes:
        lines += [""] + [f"- {line.strip()}" for line in notes]
    return "\n".join([*lines, "", summary_line(comparison)])


def as_json(comparison: RunComparison, gated: Sequence[GatedCase]) -> dict[str, Any]:
    return {
        "a_run": comparison.a_run,
        "b_run": comparison.b_run,
        "comparable": comparison.comparable,
        "same_run": comparison.same_run,
        "run_spread": {
            "sigma": comparison.spread.sigma,
            "assumed": comparison.spread.assumed,
            "source": comparison.spread.source,
        },
        "cases": [
            {
                "stack": c.key.stack,
                "workload": c.key.label,
                "level": c.key.level_value,
                "metrics": [_metric_json(m, c.key) for m in c.metrics],
            }
            for c in comparison.cases
        ],
        "left_out": _left_out(comparison),
        "only_in_a": [_case(k) for k in comparison.only_in_a],
        "only_in_b": [_case(k) for k in comparison.only_in_b],
        "changes": [
            {"section": c.section, "key": c.key, "a": c.a, "b": c.b} for c in comparison.changes
        ],
        "gates": [
            {
                "gate": g.gate.describe(),
                "case": _case(g.key),
                "metric": g.change.metric,
                "outcome": g.outcome.value,
                "p_regressed": g.result.p_regressed,
                "p_cleared": g.result.p_cleared,
            }
            for g in gated
        ],
        "summary": summary_line(comparison),
    }


def _metric_json(m: MetricChange, key: CaseKey) -> dict[str, Any]:
    v = m.verdict
    return {
        "metric": m.metric,
        "a": m.a_value,
        "b": m.b_value,
        "verdict": v.outcome.value,
        "ratio": v.ratio,
        "low": v.low,
        "high": v.high,
        "p_value": v.p_value,
        "threshold": v.threshold,
        "n_a": v.n_a,
        "n_b": v.n_b,
        "unit": v.unit,
        "resolvable": v.resolvable,
        "decide": v.decide,
        "text": sentence(v, "B", "A", _what(m.metric)),
    }
