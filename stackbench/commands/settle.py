"""run --settle: the analysis' judgement of a level's warm-up, in the form the engine asks for
(engine/settle.py; the engine sits below analysis and cannot call it itself)."""

from collections.abc import Sequence

from stackbench.analysis.settle import settle_time
from stackbench.analysis.steady import detect_steady_state
from stackbench.engine.settle import SettleAdvice


def settle_advice(per_second: Sequence[float]) -> SettleAdvice:
    """Whether a level's steadiness is shown and, if not, the extra warm-up its series asks
    for (analysis/settle.py)."""
    state = detect_steady_state(per_second)
    if state.steady_shown:
        return SettleAdvice(True, 0, state.message)
    settle = settle_time(per_second, state)
    return SettleAdvice(False, settle.warmup_more_s, settle.sentence())
