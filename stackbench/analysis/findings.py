"""The short generated "findings": rankings with their evidence, breakpoints and warnings.

Every claim carries its interval; without one (a single repetition) the text says so instead
of declaring a winner.
"""

from collections.abc import Callable
from dataclasses import dataclass

from msgspec import UNSET

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import (
    Analysis,
    CaseView,
    LevelRanking,
    RankEntry,
    WorkloadView,
)
from stackbench.analysis.figures import LOADER_CPU, SERVER_CPU
from stackbench.analysis.levelsteady import SOURCE_WINDOW
from stackbench.analysis.settle import Settle
from stackbench.analysis.stats import LevelAggregate
from stackbench.analysis.steady import SteadyClass
from stackbench.analysis.wording import RULE, SYMBOL, assumed, sentence
from stackbench.config.slo import percentile_key, slo_words
from stackbench.store.records import Flag, LevelErrorClass, LevelFlag, has_flag

WARNING_WHY: dict[str, str] = {
    LevelFlag.LOADER_BOUND: "the loader, not the server, was saturated: the server's capacity "
    "is higher than measured",
    LevelFlag.NO_COMPLETED: "no request completed during the level: no throughput or latency "
    "to report",
    LevelFlag.STARVED: "the server left connections unanswered for longer than any answered "
    "request; the latency of those queued requests is not in the histogram",
    LevelFlag.DISTURBED: "other processes or the hypervisor took the level's cores (in runs "
    "of 2026-11-27, also: the host ran them slower than they had run): its figures are partly "
    "the machine's, and no verdict rests on it",
    LevelFlag.LEFT_OUT: "a repetition was still disturbed after it was measured again: the "
    "level's figures and verdicts rest on its other repetitions (the flag comes from the "
    "cores' account, not from the figure, so leaving it out chooses no result)",
    LevelFlag.HELD_BACK: "the server's cores went idle for some seconds while the loader held "
    "its clients, and its throughput fell with them, with no other process and no steal seen "
    "there: the server waited (on its clients' connections, a data store, a quota) or was held "
    "back unseen; the figure includes those seconds (a fall that recurs in the repetitions is "
    "the stack's own)",
    LevelFlag.UNSTEADY: "the level saw start-up, not a steady state, and is not ranked",
    LevelFlag.INVALID: "the level broke a validity limit and is not ranked",
}
# Why a failed level failed, by the error class its flag's detail starts with (the judge
# writes `failed: <error class>: <error>`, see engine/judge.py's LevelFailure).
FAILURE_WHY: dict[LevelErrorClass, str] = {
    "server-exited": "a server process exited during the level: its figures are not the stack's",
    "loader-failed": "the load tool failed: the level has no figures of the stack",
    "host-lost": "a host of the run was lost during the level: its figures are incomplete",
}
# Flags that make a level unusable: reported as errors.
ERROR_FLAGS = frozenset(
    {LevelFlag.INVALID, LevelFlag.UNSTEADY, LevelFlag.FAILED, LevelFlag.NO_COMPLETED}
)


@dataclass(frozen=True)
class Finding:
    severity: str  # info | warn | error
    workload: str | None  # workload label, None for run-wide findings
    text: str


def findings(a: Analysis) -> list[Finding]:
    out: list[Finding] = []
    for v in a.failed_verifications:
        out.append(
            Finding(
                "error",
                None,
                f"{v.stack} failed verification of {v.workload} "
                f"({v.checked} checked): {'; '.join(v.failures) or 'no detail'} "
                "— not ranked",
            )
        )
    warned = a.data.run.environment.machine_warnings
    for text in () if warned is UNSET else warned:
        out.append(Finding("warn", None, f"the machine was busy when the run started: {text}"))
    for w in a.workloads:
        out += _ranking_findings(a, w)
        out += _slo_findings(a, w)
        out += _warning_findings(a, w)
        out += _not_measured(w)
        out += _case_notes(w)
        out += measured_again(a, w)
        out += [f for c in w.cases if (f := jit_warmup_finding(a, w, c)) is not None]
    return out


def jit_warmup_finding(a: Analysis, w: WorkloadView, c: CaseView) -> Finding | None:
    """The JIT warm-up pass before the case's first level: its cold figures beside the warm
    headline of the level at the same load, so a reader sees what warming up changed."""
    j = c.case.jit_warmup
    if j is None:
        return None
    at = _level_name(a, j.level_value)
    text = (
        f"{c.stack}: a JIT warm-up pass of {j.seconds:g} s at {at} ran before the first "
        f"level and is not in any figure ({j.why})"
    )
    if j.failure:
        return Finding("warn", w.label, f"{text}; it did not run to its end: {j.failure}")
    cold = [f"{fmt.rate(j.requests_per_s)} req/s over the pass"]
    if j.first_second_rps is not None and j.last_second_rps is not None:
        cold = [
            f"{fmt.rate(j.first_second_rps)} req/s in its first second",
            f"{fmt.rate(j.last_second_rps)} in its last",
            *cold,
        ]
    warm = c.aggregate_at(j.level_value)
    warm_text = (
        ""
        if warm is None or warm.throughput.value is None
        else f"; warm, the level at the same load: {fmt.rate(warm.throughput.value)} req/s"
    )
    return Finding("info", w.label, f"{text}. Cold: {', '.join(cold)}{warm_text}")


def _case_notes(w: WorkloadView) -> list[Finding]:
    """What the runner noted on a measured case: a rate search's result, an early stop."""
    return [
        Finding("info", w.label, f"{c.stack}: {c.case.reason}")
        for c in w.cases
        if c.case.status not in ("failed", "unavailable") and c.case.reason
    ]


def measured_again(a: Analysis, w: WorkloadView) -> list[Finding]:
    """Each level of the workload measured again because its first measurement was
    disturbed: that measurement's rate and what disturbed it. No figure counts it (the store
    keeps it superseded, `RunData.superseded`); this sentence is all the report shows of it."""
    stacks = {c.case.id: c.stack for c in (*w.cases, *w.not_measured)}
    out: list[Finding] = []
    for lv in a.data.superseded:
        stack, mark = stacks.get(lv.case_id), lv.superseded
        if stack is None or mark is None:
            continue
        where = f"{stack} at {_level_name(a, lv.level_value)}"
        if a.repeat > 1 or lv.repetition:
            where += f", repetition {lv.repetition + 1}"
        first = (
            f"the first measurement ({fmt.rate(lv.requests_per_s)} req/s) was disturbed: {mark.why}"
        )
        if mark.by is None:  # the run stopped before the level's next measurement
            text = f"{where}: {first}; the run stopped before measuring it again"
        else:
            text = f"{where}: measured again: {first}"
        out.append(Finding("info", w.label, text))
    return out


def _level_name(a: Analysis, value: float) -> str:
    return fmt.level_name(a.level_kind, value)


def _note(e: RankEntry) -> str:
    return " (loader-bound: a lower bound)" if has_flag(e.flags, LevelFlag.LOADER_BOUND) else ""


def ranking_text(a: Analysis, r: LevelRanking) -> str:
    """'at 50 connections: go 57,791 [...] > node 20,100 [...] ? php 10,700 [...]. go is faster
    than node: ...'. The mark before a stack is the verdict of the stack above it against it
    (wording.SYMBOL); every verdict shown is then said in words."""
    entries = r.entries
    chain = ""
    for e in entries:
        above = e.vs_above or e.vs_best
        chain += "" if above is None else f" {SYMBOL[above.outcome]} "
        chain += f"{e.stack} {fmt.estimate(e.throughput)}{_note(e)}"
    said = []
    for i, e in enumerate(entries):
        if e.vs_best is not None:
            said.append(sentence(e.vs_best, entries[0].stack, e.stack, "req/s", False))
        if e.vs_above is not None:
            said.append(sentence(e.vs_above, entries[i - 1].stack, e.stack, "req/s", False))
    note = next(
        (assumed(e.vs_best) for e in entries if e.vs_best is not None and assumed(e.vs_best)), ""
    )
    excluded = "; ".join(f"{stack}: {why}" for stack, why in r.excluded)
    text = f"at {_level_name(a, r.level_value)}: {chain or 'no valid result'}"
    text += f". {'; '.join(said)}{note}" if said else ""
    return text + (f" [not ranked — {excluded}]" if excluded else "")


RANKING_LEGEND = (
    "Rankings by steady-state req/s [95% interval], best first; the mark before "
    "a stack is the verdict of the stack above it against it: '>' faster, '≈' "
    "equivalent, '≳' real but within the threshold, '?' not enough evidence. "
    "Each stack is also compared with the best. " + RULE
)


def _ranking_findings(a: Analysis, w: WorkloadView) -> list[Finding]:
    return [
        Finding("info", w.label, ranking_text(a, r))
        for r in w.rankings
        if len(r.entries) + len(r.excluded) > 1 or r.excluded
    ]


def slo_text(a: Analysis) -> str:
    return "no SLO" if a.slo is None else slo_words(a.slo)


def _slo_findings(a: Analysis, w: WorkloadView) -> list[Finding]:
    if a.slo is None or a.search:  # a search's answer is its case note (_case_notes)
        return []
    out = []
    for c in w.cases:
        bp = c.breakpoint
        if bp is not None:
            last = (
                f"; last level within it: {fmt.level(bp.last_passing)}"
                if bp.last_passing is not None
                else "; no measured level met it"
            )
            out.append(
                Finding(
                    "warn",
                    w.label,
                    f"{c.stack} breaks the SLO ({slo_text(a)}) at "
                    f"{_level_name(a, bp.level_value)}: {bp.reason}{last}",
                )
            )
        elif all(g.slo is not None and g.slo.status.value == "unknown" for g in c.aggregates):
            out.append(
                Finding(
                    "warn",
                    w.label,
                    f"{c.stack}: SLO unknown — "
                    f"{percentile_key(a.slo.percentile)} not measured by the driver",
                )
            )
        else:
            top = max(g.level_value for g in c.aggregates)
            unknown = _levels_with(
                c, lambda g: g.slo is not None and g.slo.status.value == "unknown"
            )
            out.append(
                Finding(
                    "info",
                    w.label,
                    f"{c.stack} met the SLO at every level where it "
                    f"could be judged (up to {_level_name(a, top)})"
                    + (f"; unknown at {', '.join(unknown)}" if unknown else ""),
                )
            )
    return out


def _levels_with(c: CaseView, predicate: Callable[[LevelAggregate], bool]) -> list[str]:
    return [fmt.level(g.level_value) for g in c.aggregates if predicate(g)]


def _finding_key(flag: Flag) -> str:
    """What one finding gathers: a kind of flag, or one load tool warning (in its words)."""
    return flag.text if flag.kind is None else flag.kind.value


def _reason(flag: Flag) -> str | None:
    return flag.detail or None if flag.kind is not None else None


def _warning_findings(a: Analysis, w: WorkloadView) -> list[Finding]:
    """Every flag of every level, one finding per (stack, kind of flag), with each level's
    own reason and numbers: nothing is truncated or dropped, unknown flags included."""
    out = []
    for c in w.cases:
        by_kind: dict[str, list[tuple[LevelAggregate, str | None]]] = {}
        for g in c.aggregates:
            for flag in g.flags:
                by_kind.setdefault(_finding_key(flag), []).append((g, _reason(flag)))
        for kind, hits in by_kind.items():
            out.append(Finding(_severity(kind), w.label, _flag_text(a, c, kind, hits)))
        bad = [g for g in c.aggregates if g.status != "ok"]
        if bad and not any(f.kind in ERROR_FLAGS for g in bad for f in g.flags):
            out.append(
                Finding(
                    "error",
                    w.label,
                    f"{c.stack}: {len(bad)} level(s) not valid "
                    f"({', '.join(fmt.level(g.level_value) for g in bad)}) — "
                    "not ranked",
                )
            )
        out += _steady_findings(a, w, c)
    return out


def _severity(kind: str) -> str:
    return "error" if kind in ERROR_FLAGS else "warn"


def _flag_text(
    a: Analysis, c: CaseView, kind: str, hits: list[tuple[LevelAggregate, str | None]]
) -> str:
    levels = ", ".join(dict.fromkeys(fmt.level(g.level_value) for g, _ in hits))
    why = _why(kind) or _failure_why(kind, hits)
    text = f"{c.stack}: {kind} at level(s) {levels}" + (f" — {why}" if why else "")
    details = [
        f"at {_level_name(a, g.level_value)}: {detail}"
        for g, reason in hits
        if (detail := _detail(kind, g, reason))
    ]
    return text + (f" ({'; '.join(details)})" if details else "")


def _why(kind: str) -> str | None:
    if kind == LevelFlag.NOISY:
        return noisy_why()
    return WARNING_WHY.get(kind)


def noisy_why() -> str:
    """Why a level is noisy, with the threshold stats.py applies (its NOISY_CV)."""
    return f"repetitions vary by more than {stats.NOISY_CV:.0%} (CV)"


def _failure_why(kind: str, hits: list[tuple[LevelAggregate, str | None]]) -> str | None:
    """A failed level's why, from the error classes its levels' details start with."""
    if kind != LevelFlag.FAILED:
        return None
    whys = [
        why
        for error_class, why in FAILURE_WHY.items()
        if any((reason or "").startswith(f"{error_class}:") for _, reason in hits)
    ]
    return "; ".join(whys) or None


def _detail(kind: str, g: LevelAggregate, reason: str | None) -> str | None:
    if kind == LevelFlag.NOISY:
        return f"throughput CV {g.throughput_cv:.1%} over {g.repetitions} repetitions" + (
            f"; {reason}" if reason else ""
        )
    loader, server = g.value(LOADER_CPU), g.value(SERVER_CPU)
    if kind == LevelFlag.LOADER_BOUND and loader is not None:
        return f"loader CPU {loader:.0f}%" + (
            "" if server is None else f", server CPU {server:.0f}%"
        )
    return reason


def _steady_findings(a: Analysis, w: WorkloadView, c: CaseView) -> list[Finding]:
    """Where each level's headline comes from: its steady window (with the class and the
    warm-up length), or the whole level when there is no series or no steady state."""
    out = []
    no_series: list[str] = []
    flat: list[str] = []
    # The same sentence for many levels (a short suite's levels are all too short for a
    # steady window) is one finding naming the levels, not one per level and repetition.
    grouped: dict[str, list[str]] = {}
    for st in c.steady:
        for rep, r in enumerate(st.repetitions):
            tag = f" (repetition {rep + 1})" if len(st.repetitions) > 1 else ""
            state = r.state
            level = fmt.level(st.level_value) + tag
            if state is None:
                no_series.append(fmt.level(st.level_value))
            elif r.source != SOURCE_WINDOW:
                grouped.setdefault(
                    f"{state.message}; the whole-level figures are shown instead"
                    + _settle_words(c, r.settle, st.level_index, rep),
                    [],
                ).append(level)
            elif not state.steady_shown:  # the window's figures, but not a shown steady state
                words = _settle_words(c, r.settle, st.level_index, rep)
                grouped.setdefault(state.message + words, []).append(level)
            elif state.steady_class is SteadyClass.FLAT:
                flat.append(level)
            else:
                where = f"{c.stack} at {_level_name(a, st.level_value)}"
                out.append(
                    Finding(
                        "warn",
                        w.label,
                        f"{where}{tag}: {state.message}" + _cold_figure(c, st.level_index, rep),
                    )
                )
        if st.note:
            out.append(
                Finding(
                    "info", w.label, f"{c.stack} at {_level_name(a, st.level_value)}: {st.note}"
                )
            )
    for message, levels in grouped.items():
        where = (
            f"{c.stack} at {_level_name(a, c.steady[0].level_value)}"
            if len(levels) == 1 and len(c.steady) == 1
            else f"{c.stack} at level(s) {', '.join(levels)}"
        )
        out.append(Finding("warn", w.label, f"{where}: {message}"))
    if flat:
        out.append(
            Finding(
                "info",
                w.label,
                f"{c.stack}: steady from the start (flat) at "
                f"level(s) {', '.join(dict.fromkeys(flat))}; headline from the "
                "steady window",
            )
        )
    if no_series:
        out.append(
            Finding(
                "info",
                w.label,
                f"{c.stack}: level(s) "
                f"{', '.join(dict.fromkeys(no_series))} have no per-second series "
                "(driver " + (c.rows[0].driver if c.rows else "?") + "): their "
                "figures are the whole level's, warm-up included if any",
            )
        )
    return out


def _settle_words(c: CaseView, settle: Settle | None, level_index: int, repetition: int) -> str:
    """How long a warm-up would have settled an unsteady level; with the JIT warm-up pass the
    case had, the warm-up it would then need in all, and `run --settle` to get it. A disturbed
    level's series is the machine's as much as the stack's: its warm-up is not judged."""
    if settle is None:
        return ""
    rows = [r for r in c.rows_at(level_index) if r.repetition == repetition]
    if any(has_flag(r.flags, LevelFlag.DISTURBED) for r in rows):
        return ". Warm-up: not judged, the level was disturbed"
    text = f". Warm-up: {settle.sentence()}"
    more = settle.warmup_more_s
    j = c.case.jit_warmup
    if j is None or more == 0:
        return text
    if more is None:
        return text + (
            f" (after the {j.seconds:g}-s JIT warm-up pass; run --settle lengthens it within "
            "its stated bound)"
        )
    return text + (
        f" (after the {j.seconds:g}-s JIT warm-up pass: about {j.seconds + more:g} s in all; "
        "run --settle lengthens it)"
    )


def _cold_figure(c: CaseView, level_index: int, repetition: int) -> str:
    """The whole-level figure next to the steady one, when a warm-up or slowdown moved it."""
    rows = [r for r in c.rows_at(level_index) if r.repetition == repetition]
    steady = c.steady_at(level_index)
    if not rows or steady is None:
        return ""
    r = steady.repetitions[repetition] if repetition < len(steady.repetitions) else None
    if r is None or r.throughput is None:
        return ""
    return (
        f"; steady {fmt.rate(r.throughput.value)} req/s vs whole level "
        f"{fmt.rate(rows[0].requests_per_s)} req/s"
    )


def _not_measured(w: WorkloadView) -> list[Finding]:
    out = []
    for c in w.not_measured:
        reason = c.case.reason or "; ".join(c.verification_failures) or "no levels measured"
        severity = "error" if c.case.status == "failed" else "warn"  # pending: interrupted
        out.append(Finding(severity, w.label, f"{c.stack}: {c.case.status} — {reason}"))
    for c in w.cases:
        if c.case.status in ("failed", "unavailable") and c.case.reason:
            out.append(Finding("error", w.label, f"{c.stack}: {c.case.status} — {c.case.reason}"))
    return out
