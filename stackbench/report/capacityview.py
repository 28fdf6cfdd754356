"""Capacity as the outputs show it: one table (terminal, summary.md, report.html) and the
notes that say what it rests on (analysis/capacity.py computes it)."""

from collections.abc import Sequence
from dataclasses import dataclass

from stackbench.analysis.analysis import Analysis
from stackbench.analysis.capacity import (
    Capacity,
    CapacityAsk,
    capacities,
    cores_needed,
    cost_per_million,
    inverted_words,
    scaling_note,
    span_words,
)
from stackbench.config.slo import slo_words
from stackbench.report.tables import TextTable

PER_CORE = "req/s per core"
BRACKET = "bracket (req/s)"
CAVEATS = "caveats"
CORES_CELL = "{:,.1f}"
COST_CELL = "{:,.3g}"
MEANING = (
    "Capacity: the highest offered rate at which every repetition met the SLO, up to the "
    "lowest rate above it at which one did not, divided by the server's cores. The search "
    "measured nothing in between, so that bracket is the interval; without a failed rate "
    'above it, it is a lower bound only ("at least").'
)


@dataclass(frozen=True)
class CapacityView:
    table: TextTable
    notes: list[str]


def capacity_view(a: Analysis, ask: CapacityAsk | None = None) -> CapacityView | None:
    """None when the run has no capacity (closed loop or no SLO)."""
    caps = capacities(a)
    if not caps or a.slo is None:
        return None
    ask = ask or CapacityAsk()
    header = ["workload", "stack", PER_CORE, BRACKET]
    if ask.target_rps is not None:
        header.append(f"cores for {ask.target_rps:,.0f} req/s")
    if ask.price_per_core_hour is not None:
        header.append(f"per M requests at {ask.price_per_core_hour:g}/core-h")
    rows = [_row(c, ask) for c in caps]
    caveats = [_caveats(c) for c in caps]
    if any(caveats):
        header.append(CAVEATS)
        rows = [[*row, text] for row, text in zip(rows, caveats, strict=True)]
    notes = [f"SLO: {slo_words(a.slo)}. {MEANING}"]
    notes += _core_notes(caps, ask)
    return CapacityView(TextTable(header, rows), notes)


def _caveats(c: Capacity) -> str:
    held = []
    if c.failed_rps is not None and c.repetitions > 1 and c.held_at_failed:
        held = [f"{c.held_at_failed} of {c.repetitions} repetitions held at the upper end"]
    return "; ".join([*held, *c.caveats])


def _row(c: Capacity, ask: CapacityAsk) -> list[str]:
    row = [c.label, c.stack, span_words(c.per_core), span_words(c.rps)]
    if ask.target_rps is not None:
        row.append(inverted_words(cores_needed(c, ask.target_rps), CORES_CELL))
    if ask.price_per_core_hour is not None:
        row.append(inverted_words(cost_per_million(c, ask.price_per_core_hour), COST_CELL))
    return row


def _core_notes(caps: Sequence[Capacity], ask: CapacityAsk) -> list[str]:
    notes = []
    core_counts = sorted({c.server_cores for c in caps})
    if ask.target_rps is not None and len(core_counts) == 1:
        notes.append(f"Cores for a target: {scaling_note(core_counts[0])}.")
    if ask.price_per_core_hour is not None:
        notes.append(
            "Cost per million requests: the price of a core-hour over the requests a core "
            "serves in an hour at the sustainable rate (server cores only; no loader, no "
            "headroom)."
        )
    if any(c.services_share_cores for c in caps):
        notes.append(
            "The data services (MariaDB, Redis, memcached) ran on the server's cores: a "
            "database workload's capacity per core includes the database's share."
        )
    return notes
