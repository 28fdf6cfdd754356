"""Capacity as the outputs show it: one table (terminal, summary.md, report.html) and the
notes that say what it rests on (analysis/capacity.py computes it)."""

from collections.abc import Sequence
from dataclasses import dataclass

from stackbench.analysis.analysis import Analysis
from stackbench.analysis.capacity import (
    Capacity,
    CapacityAsk,
    Scaling,
    capacities,
    cores_needed,
    cores_words,
    cost_per_million,
    inverted_words,
    planning_capacity,
    scaling_note,
    scalings,
    span_words,
)
from stackbench.config.slo import slo_words
from stackbench.report.tables import TextTable

PER_CORE = "req/s per core"
SERVER_CORES = "cores"
RATIO_CELL = "{:.2f}x"
EFFICIENCY_CELL = "{:.0%}"
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


SCALING_MEANING = (
    "Scaling: req/s at the SLO on k server cores over that on the fewest cores measured, "
    "its interval from the two brackets' opposite ends (the lowest ratio is k's lower end "
    "over the base's upper end); per-core efficiency is that ratio over the ratio of cores "
    "(100% = linear)."
)


@dataclass(frozen=True)
class CapacityView:
    table: TextTable
    notes: list[str]
    # Several server core counts ([placement] server_cores): the measured scaling, else None
    scaling: TextTable | None = None


def capacity_view(a: Analysis, ask: CapacityAsk | None = None) -> CapacityView | None:
    """None when the run has no capacity (closed loop or no SLO)."""
    caps = capacities(a)
    if not caps or a.slo is None:
        return None
    ask = ask or CapacityAsk()
    scaled = scalings(caps)
    counted = len({c.server_cores for c in caps}) > 1
    header = ["workload", "stack", *([SERVER_CORES] if counted else []), PER_CORE, BRACKET]
    if ask.target_rps is not None:
        header.append(f"cores for {ask.target_rps:,.0f} req/s")
    if ask.price_per_core_hour is not None:
        header.append(f"per M requests at {ask.price_per_core_hour:g}/core-h")
    rows = [_row(c, ask, caps, counted) for c in caps]
    caveats = [_caveats(c) for c in caps]
    if any(caveats):
        header.append(CAVEATS)
        rows = [[*row, text] for row, text in zip(rows, caveats, strict=True)]
    notes = [f"SLO: {slo_words(a.slo)}. {MEANING}"]
    notes += _core_notes(caps, ask, scaled)
    notes += shared_notes(a)
    return CapacityView(TextTable(header, rows), notes, scaling_table(scaled))


def _caveats(c: Capacity) -> str:
    held = []
    if c.failed_rps is not None and c.repetitions > 1 and c.held_at_failed:
        held = [f"{c.held_at_failed} of {c.repetitions} repetitions held at the upper end"]
    return "; ".join([*held, *c.caveats])


def _row(c: Capacity, ask: CapacityAsk, caps: Sequence[Capacity], counted: bool) -> list[str]:
    cores = [str(c.server_cores)] if counted else []
    row = [c.label, c.stack, *cores, span_words(c.per_core), span_words(c.rps)]
    if ask.target_rps is not None:
        # planned from the most cores measured for the stack: one figure, on that row
        planned = planning_capacity(caps, c)
        row.append(
            inverted_words(cores_needed(c, ask.target_rps), CORES_CELL)
            if planned.server_cores == c.server_cores
            else f"see {planned.server_cores}"
        )
    if ask.price_per_core_hour is not None:
        row.append(inverted_words(cost_per_million(c, ask.price_per_core_hour), COST_CELL))
    return row


def scaling_table(scaled: Sequence[Scaling]) -> TextTable | None:
    """Per stack and workload: req/s at the SLO on each core count, its ratio to the fewest
    cores and the per-core efficiency; None when the run measured one count."""
    if not scaled:
        return None
    rows = []
    for s in scaled:
        for c in s.points:
            base = c is s.base
            rows.append(
                [
                    s.label,
                    s.stack,
                    str(c.server_cores),
                    span_words(c.rps),
                    "base" if base else span_words(s.ratio(c), RATIO_CELL),
                    "base" if base else span_words(s.efficiency(c), EFFICIENCY_CELL),
                ]
            )
    header = ["workload", "stack", SERVER_CORES, "req/s at the SLO", "x base", "per-core eff."]
    return TextTable(header, rows)


def shared_notes(a: Analysis) -> list[str]:
    """A core count whose server has no core left for the loader (2 server cores on a 2-core
    machine): the loader's work is in that count's figures."""
    shared = sorted(
        {
            len(cc.server)
            for cc in a.settings.core_counts.values()
            if set(cc.server) & set(cc.loader)
        }
    )
    if not shared:
        return []
    counts = " and ".join(cores_words(n) for n in shared)
    return [
        f"On {counts} the loader shared the server's cores (the machine has no other core "
        "for it): the loader's CPU is taken from the server there, so the rate and the "
        "scaling measured at that count are understated."
    ]


def _core_notes(caps: Sequence[Capacity], ask: CapacityAsk, scaled: Sequence[Scaling]) -> list[str]:
    notes = []
    core_counts = sorted({c.server_cores for c in caps})
    if ask.target_rps is not None and len(core_counts) == 1:
        notes.append(f"Cores for a target: {scaling_note(core_counts[0])}.")
    if ask.target_rps is not None and scaled:
        most = max(s.largest.server_cores for s in scaled)
        notes.append(f"Cores for a target: {scaling_note(most, len(core_counts))}.")
    if scaled:
        notes.append(SCALING_MEANING)
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
