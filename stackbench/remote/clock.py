"""Clock offset of a host, by the four-timestamp exchange NTP uses.

t1: the controller sends; t2: the agent receives; t3: the agent answers; t4: the controller
receives (t1, t4 on the controller's clock, t2, t3 on the agent's). With a symmetric path,

    offset = ((t2 - t1) + (t3 - t4)) / 2     (agent clock - controller clock)
    delay  = (t4 - t1) - (t3 - t2)           (the round trip minus the agent's own time)

An asymmetric path errs the offset by at most delay / 2, so of several exchanges the one with
the least delay is the best estimate.
"""

from collections.abc import Iterable
from typing import NamedTuple


class ClockSample(NamedTuple):
    offset_s: float  # agent clock minus controller clock
    delay_s: float  # round trip, the agent's processing time excluded


def clock_sample(t1: float, t2: float, t3: float, t4: float) -> ClockSample:
    return ClockSample(((t2 - t1) + (t3 - t4)) / 2, (t4 - t1) - (t3 - t2))


def best_sample(samples: Iterable[ClockSample]) -> ClockSample:
    """The sample with the least delay (ValueError when there is none)."""
    return min(samples, key=lambda s: s.delay_s)
