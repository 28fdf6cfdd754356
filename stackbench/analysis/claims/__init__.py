"""An article's claims against our numbers: confirmed, refuted or untestable here, and why.

Pure functions over frozen records. `requirements_unmet` needs only the plan's facts (it is
what `--dry-run` prints); `evaluate` reads a stored run. Each claim gets one status:

- untestable: a requirement is unmet (cores, keep-alive, a stack, a parameter, a level), a case
  it reads failed or was unavailable, or a level it reads is invalid for a measurement reason.
  Missing data never refutes a claim.
- not enough evidence: the interval of our figure or ratio straddles the claim's bound (or a
  figure has no evidence at all: one repetition of a driver without a per-second series, or it
  rests on a level flagged disturbed, which decides nothing as in the comparisons); the
  reason says what would decide it.
- refuted / confirmed: the whole interval lies outside / inside the claim's band.

Intervals come from the verdicts procedure (analysis.verdicts): each figure's evidence (the
steady window's seconds with one repetition, the repetitions with several), the run-to-run
spread added for every single repetition, logs added and subtracted for ratios and ratios of
ratios, Student t at the run's confidence: 95%, or alpha / looks for a run --until-decided
(analysis.decision_confidence, as the comparisons). The tolerance of each test kind is documented in
suites/claims/README.md.

The package, by concern: facts (what the plan or run gives a claim), readiness (its
requirements), standin (the stacks read in place of those a claim names, per core), reading
(the run's figures with their evidence), bands, decisions (points to a status), kinds (each
test kind's judgment), wording, results. This module evaluates the
claims and is the package's API.
"""

import dataclasses
from collections.abc import Iterable, Sequence

from stackbench.analysis import stats
from stackbench.analysis.claims.decisions import _Context
from stackbench.analysis.claims.facts import Facts, StackFacts, facts_from_plan, facts_from_run
from stackbench.analysis.claims.kinds import _evaluate_test, scatter
from stackbench.analysis.claims.readiness import Readiness, cores_note, requirements_unmet
from stackbench.analysis.claims.reading import _Run, level_metric, level_problem
from stackbench.analysis.claims.results import ClaimResult, ClaimStatus, Measured
from stackbench.analysis.claims.standin import NONE, stand_ins
from stackbench.analysis.claims.wording import expectation
from stackbench.config.claims import Claim
from stackbench.config.todecide import UndecidedClaim
from stackbench.store.store import RunData

__all__ = [
    "ClaimResult",
    "ClaimStatus",
    "Facts",
    "Measured",
    "Readiness",
    "StackFacts",
    "cores_note",
    "evaluate",
    "facts_from_plan",
    "facts_from_run",
    "level_metric",
    "level_problem",
    "requirements_unmet",
    "scatter",
    "undecided_claims",
]


def evaluate(
    claims: Iterable[Claim],
    data: RunData,
    facts: Facts,
    resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    paired: bool = True,
    pair_priors: bool = True,
) -> tuple[ClaimResult, ...]:
    """Each claim on the run (a stored one, or the design check's synthetic one);
    `paired`: a ratio of figures measured in the same repetitions is read from its pairs
    (False: as independent sides, to show what pairing changes); `pair_priors`: a pair's
    variance is moderated by the run's pairs of its kind (False: req/s pairs by twice the
    levels' prior, other figures' by nothing: the design check, whose synthetic runs model
    the noise of the points a claim reads, not of every pair of the run)."""
    run = _Run(data, pair_priors)
    out = []
    for ready in requirements_unmet(claims, facts):
        claim = ready.claim
        if not ready.testable:
            result = ClaimResult(
                claim,
                ClaimStatus.UNTESTABLE,
                expectation(claim.test),
                (),
                _join_reasons(ready.reasons),
            )
            out.append(_with_stand_in(result, ready.stand_in))
            continue
        run.loader_bound.clear()
        run.left_out.clear()
        run.minimum = (claim.requires.min_requests, claim.requires.min_seconds)
        run.stand_ins = stand_ins(claim, facts.server_cores) or NONE
        result = _evaluate_test(claim, _Context(run, facts, resamples, seed, paired))
        result = _with_left_out(_with_caveat(result, sorted(run.loader_bound)), run.left_out)
        out.append(_with_stand_in(result, ready.stand_in))
    return tuple(out)


def _with_stand_in(result: ClaimResult, words: str) -> ClaimResult:
    """A claim read with stand-ins says so first, whatever its status: the reader must know
    that one process per core stood in for what the article ran."""
    if not words:
        return result
    return dataclasses.replace(result, why=f"{words}; {result.why}", stand_in=words)


def _with_caveat(result: ClaimResult, loader_bound: list[str]) -> ClaimResult:
    """A level the loader could not drive harder measured the loader, not the server: the
    claim keeps its status, and its reason says which figures may be the loader's."""
    if not loader_bound or result.status is ClaimStatus.UNTESTABLE:
        return result
    shown = ", ".join(loader_bound[:3]) + (" …" if len(loader_bound) > 3 else "")
    why = f"{result.why} (loader-bound, so possibly the loader's limit: {shown})"
    return dataclasses.replace(result, why=why)


def _with_left_out(result: ClaimResult, left_out: set[str]) -> ClaimResult:
    """Disturbed repetitions the claim's figures leave out are named in its reason."""
    if not left_out or result.status is ClaimStatus.UNTESTABLE:
        return result
    shown = "; ".join(sorted(left_out)[:3]) + (" …" if len(left_out) > 3 else "")
    why = f"{result.why} (disturbed repetitions left out: {shown})"
    return dataclasses.replace(result, why=why)


def _join_reasons(reasons: Sequence[str]) -> str:
    first = reasons[0]
    more = len(reasons) - 1
    return first + (f" (and {more} more: {'; '.join(reasons[1:])})" if more else "")


def undecided_claims(results: Iterable[ClaimResult]) -> tuple[UndecidedClaim, ...]:
    """The claims that read "not enough evidence", each with what would decide its undecided
    points (run --until-decided chases them). An untestable claim is not among them: a
    missing, failed or invalid level is not mended by another repetition of it."""
    return tuple(
        UndecidedClaim(r.claim.id, r.to_decide)
        for r in results
        if r.status is ClaimStatus.UNDECIDED
    )
