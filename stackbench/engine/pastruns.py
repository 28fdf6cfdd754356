"""What this machine measured before, read from a results store: the levels and standalone
timings the plan's time estimate starts from, and the latest calibration (whether an article
suite calibrates first). Nothing is created: a store that is not there has no past."""

import datetime
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

from stackbench.config.estimate import PastLevel
from stackbench.lab.environment import cpu_model
from stackbench.store.records import CalibrationRow, Environment, machine_key
from stackbench.store.store import Store


def this_machine() -> str:
    """This machine as the store names it (records.machine_key of a run's environment)."""
    return machine_key(
        Environment(hostname=platform.uname().node, cpu_model=cpu_model(), cores=os.cpu_count())
    )


@dataclass(frozen=True)
class PastRuns:
    levels: list[PastLevel] = field(default_factory=list)
    scripts: dict[tuple[str, str], float] = field(default_factory=dict)  # s per iteration
    calibration: CalibrationRow | None = None

    @property
    def calibrated_on(self) -> str | None:
        """The latest calibration's date (None: this machine was never calibrated here)."""
        if self.calibration is None:
            return None
        at = datetime.datetime.fromtimestamp(self.calibration.at, datetime.UTC)
        return at.strftime("%Y-%m-%d")


def past_runs(store_path: Path) -> PastRuns:
    """This machine's earlier levels, standalone timings and calibration in the store."""
    if not store_path.is_file():
        return PastRuns()
    store = Store(store_path, create=False)
    try:
        machine = this_machine()
        return PastRuns(
            store.past_levels(machine),
            store.script_iteration_s(machine),
            store.calibration(machine),
        )
    finally:
        store.close()
