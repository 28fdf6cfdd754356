"""Which levels a case gets: a fixed sweep (stopped early on repeated SLO failures) or an
open-loop search for the highest rate that meets the SLO.

A strategy only decides; `measure` runs one level (and stores it) and returns its record.
Each returns a note for the case ("" when there is nothing to say).
"""

from collections.abc import Callable, Sequence
from itertools import groupby

from stackbench.config.plan import Level
from stackbench.config.slo import Probe, next_rate, sustainable_bounds
from stackbench.config.suite import RateSearch, Slo
from stackbench.engine.judge import slo_failed, sustained
from stackbench.store.records import LevelRecord

Measure = Callable[[Level], LevelRecord]


def fixed_sweep(levels: Sequence[Level], slo: Slo | None, measure: Measure) -> str:
    """Every planned level in order, all repetitions of a level together. With
    `slo.stop_after_failures = k`, stop once k consecutive levels failed the SLO."""
    stop_after = slo.stop_after_failures if slo is not None else 0
    level_count = len({lv.index for lv in levels})
    failed_in_a_row = 0
    for index, group in groupby(levels, key=lambda lv: lv.index):
        records = [measure(level) for level in group]
        if slo is None or not stop_after:
            continue
        failed_in_a_row = failed_in_a_row + 1 if slo_failed(records, slo) else 0
        if failed_in_a_row >= stop_after and index < level_count - 1:
            return (
                f"sweep stopped early: SLO failed at {failed_in_a_row} consecutive levels "
                f"(stop_after_failures = {stop_after})"
            )
    return ""


def rate_search(search: RateSearch, slo: Slo, repeat: int, measure: Measure) -> str:
    """Probe rates (bisection between lo and hi, see `next_rate`) until the bounds meet
    within the tolerance or the probe budget is spent; returns the finding."""
    history: list[Probe] = []
    while (
        rate := next_rate(history, search.lo, search.hi, search.probes, search.tolerance)
    ) is not None:
        index = len(history)
        records = [measure(Level(index, rate, rep)) for rep in range(repeat)]
        history.append(Probe(rate, all(sustained(r, slo) for r in records)))
    best, failed_at = sustainable_bounds(history)
    if best is None:
        return f"max sustainable rate: below {search.lo:g} req/s (the lowest probe broke the SLO)"
    above = f", {failed_at:g} req/s did not" if failed_at else ""
    return f"max sustainable rate: {best:g} req/s met the SLO{above} ({len(history)} probes)"
