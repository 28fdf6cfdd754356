"""`run --until-decided` after the plan: which loop runs (an article suite's claims, else the
comparisons) and what it may spend. The loops are the engine's (engine/until_decided.py,
engine/claim_rounds.py); this joins them to the analysis they must not import."""

from collections.abc import Sequence

from stackbench.analysis.analysis import analyse
from stackbench.analysis.claims import undecided_claims
from stackbench.analysis.undecided import Undecided, undecided
from stackbench.commands.claims import run_claims, suite_claims
from stackbench.config.plan import Plan
from stackbench.config.suite import Suite
from stackbench.config.todecide import UndecidedClaim
from stackbench.engine.claim_rounds import Allowance, UntilClaimsDecided, until_claims_decided
from stackbench.engine.pastruns import this_machine
from stackbench.engine.runner import RunSetup
from stackbench.engine.until_decided import UntilDecided, until_decided
from stackbench.store.store import RunData


def keep_deciding(
    plan: Plan,
    setup: RunSetup,
    run_id: int,
    rounds_s: float,
    budget_s: float | None,
    elapsed_s: float,
) -> None:
    """An article suite: rounds for its undecided claims; any other: for its undecided
    comparisons. `rounds_s`: --until-decided's budget; `budget_s`: --budget (None: not
    given); `elapsed_s`: what the run has taken so far."""
    if suite_claims(plan.suite.name) is not None:
        allowance = claims_allowance(plan.suite, rounds_s, budget_s, elapsed_s)

        def read(data: RunData) -> Sequence[UndecidedClaim]:
            return undecided_claims(run_claims(data, setup.inventory))

        how = UntilClaimsDecided(allowance, read, this_machine())
        until_claims_decided(plan, setup, run_id, how)
        return
    left = rounds_s if budget_s is None else budget_s - elapsed_s
    until_decided(plan, setup, run_id, UntilDecided(left, _judge, this_machine()))


def claims_allowance(
    suite: Suite, rounds_s: float, budget_s: float | None, elapsed_s: float
) -> Allowance:
    """What the claims' rounds may spend: what --budget leaves of the run's time; without
    it, the suite's load budget (load_budget_min), of which the run's measured load is
    spent; a suite without one, --until-decided's own budget."""
    if budget_s is not None:
        return Allowance(max(0.0, budget_s - elapsed_s))
    if suite.load_budget_s is not None:
        return Allowance(suite.load_budget_s, load_only=True)
    return Allowance(rounds_s)


def _judge(data: RunData) -> Undecided:
    return undecided(analyse(data))
