"""The article's claims of a suite: evaluated on a run, or checked against a plan (--dry-run).

The claims live in suites/claims/<article>.toml (suites/claims/README.md); the evaluation is
pure (the analysis/claims package). This module reads the files and prints the tables.
"""

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.text import Text

from stackbench.analysis import claimtable
from stackbench.analysis.calibration import spread_of
from stackbench.analysis.claims import (
    ClaimResult,
    Readiness,
    cores_note,
    evaluate,
    facts_from_plan,
    facts_from_run,
)
from stackbench.analysis.claims.design import design_lines, readiness_by_design
from stackbench.analysis.pastspread import past_spreads
from stackbench.commands.resultsdir import STORE_NAME, results_dir
from stackbench.config.claims import ClaimsFile, load_claims_for, parse_claims
from stackbench.config.estimate import Timeline, plan_timeline, setup_key
from stackbench.config.paths import CLAIMS_DIR, SUITES_DIR
from stackbench.config.plan import Plan, build_plan
from stackbench.config.status import StackEntry
from stackbench.config.suite import Suite, parse_suite
from stackbench.config.todecide import rounds_room
from stackbench.engine.pastruns import PastRuns, past_runs
from stackbench.lab.inventory import load_inventory
from stackbench.lab.stack import PlannedParams, planned_params
from stackbench.report.termtable import print_wrapped
from stackbench.store.store import RunData


def suite_claims(suite_name: str) -> ClaimsFile | None:
    return load_claims_for(CLAIMS_DIR, suite_name)


def suite_columns(suite_name: str) -> tuple[str, ...]:
    """The figures the suite's article showed besides req/s, as extra terminal columns."""
    claims = suite_claims(suite_name)
    return () if claims is None else claims.columns


def run_claims(data: RunData, inventory: Mapping[str, StackEntry]) -> tuple[ClaimResult, ...]:
    """The claims of the run's suite evaluated on its stored results (() for other suites)."""
    claims = suite_claims(data.run.suite_name)
    if claims is None:
        return ()
    defaults = {name: entry.manifest.param_defaults() for name, entry in inventory.items()}
    return evaluate(claims.claims, data, facts_from_run(data, defaults))


def plan_readiness(
    plan: Plan,
    inventory: Mapping[str, StackEntry],
    params: Sequence[PlannedParams] = (),
    timeline: Timeline | None = None,
    past: PastRuns | None = None,
) -> tuple[Readiness, ...]:
    """Which claims the plan can test and decide; `params`: the stacks' parameters as they
    will start (lab.stack.planned_params), for the claims that require a parameter;
    `timeline`: the plan's time estimate, whose load the suite's load budget less is what
    until-decided rounds may spend (None: estimated without this machine's rates); `past`:
    what this machine measured before: the design check's run-to-run spread is, at the
    levels a claim reads, the one between the fresh starts of the suite's earlier runs where
    they cover them, else the machine's calibrated one, else the assumed one (None: assumed)."""
    claims = suite_claims(plan.suite.name)
    if claims is None:
        return ()
    resolved = {p.stack: p.values for p in params if not p.problem}
    facts = facts_from_plan(plan, inventory, resolved)
    room = rounds_room(timeline or plan_timeline(plan), plan.suite.load_budget_s)
    past = past or PastRuns()
    earlier = past_spreads(past.levels, plan.suite.name, setup_key(plan.suite.load))
    machine = spread_of(past.calibration)
    return readiness_by_design(claims.claims, facts, machine, room, earlier)


def print_claims(console: Console, results: Sequence[ClaimResult]) -> None:
    """One block per claim: status and sentence, the article's figures, ours, why."""
    if not results:
        return
    console.print()
    console.print(
        Text("The article's claims, tested here (ratios: the hardware differs)", style="bold")
    )
    for claim, article, ours, status, why in claimtable.claim_rows(results):
        print_wrapped(console, claim, first=f"[{status}] ", indent=4)
        print_wrapped(console, article, first="    article: ", indent=13)
        print_wrapped(console, ours, first="    ours:    ", indent=13)
        print_wrapped(console, why, first="    why:     ", indent=13)
    console.print(Text(claimtable.counts_sentence(results)))


def suite_cores_note(suite: Suite, readiness: Sequence[Readiness]) -> str:
    """The sentence the plan and the start of a run give when the server has fewer cores than
    the suite's article had ([placement] article_server_cores) or than some claims need."""
    return cores_note(suite.article_server_cores, suite.server_cores, readiness)


def print_readiness(console: Console, readiness: Sequence[Readiness]) -> None:
    """--dry-run: which of the article's claims this machine and plan cannot test, and why;
    claims blocked for the same reasons share one line."""
    if not readiness:
        return
    blocked = [r for r in readiness if not r.testable]
    stood = [r for r in readiness if r.testable and r.stand_in]
    console.print(
        Text(
            f"article claims: {len(readiness) - len(blocked)} of {len(readiness)} "
            "testable with this plan on this machine"
            + (f", {len(stood)} of them with a stand-in" if stood else "")
        )
    )
    by_reason: dict[str, list[str]] = {}
    for r in blocked:
        by_reason.setdefault("; ".join(r.reasons), []).append(r.claim.id)
    for reason, ids in by_reason.items():
        print_wrapped(console, ", ".join(ids) + ":", first="  untestable ", indent=4)
        print_wrapped(console, reason, first="      ", indent=6)
    by_words: dict[str, list[str]] = {}
    for r in stood:
        by_words.setdefault(r.stand_in, []).append(r.claim.id)
    for words, ids in by_words.items():
        print_wrapped(console, ", ".join(ids) + ":", first="  with a stand-in ", indent=4)
        print_wrapped(console, words, first="      ", indent=6)
    for line in design_lines(readiness):
        print_wrapped(console, line, first="  ", indent=6)


def print_claims_overview(console: Console) -> None:
    """`stackbench claims`: per article, how many of its claims this machine can test with the
    article's full suite, and what machine (server cores, another stack, hosts) the rest
    need."""
    inventory = load_inventory()
    past = past_runs(results_dir(None) / STORE_NAME)  # as a dry run estimates and checks
    for path in sorted(CLAIMS_DIR.glob("*.toml")):
        claims = parse_claims(path)
        suite = parse_suite(SUITES_DIR / f"{path.stem}.toml")
        plan = build_plan(suite, inventory, None, None)
        timeline = plan_timeline(plan, past.levels)
        readiness = plan_readiness(plan, inventory, planned_params(plan, inventory), timeline, past)
        testable = sum(r.testable for r in readiness)
        stood = sum(r.testable and bool(r.stand_in) for r in readiness)
        by_plan = sum(bool(r.decidable) and not r.rounds for r in readiness)
        with_rounds = sum(bool(r.decidable) and bool(r.rounds) for r in readiness)
        console.print(
            Text.assemble(
                (f"{path.stem}", "bold"),
                f" ({claims.article}): {testable} of {len(readiness)} claims testable here"
                + (f" ({stood} with a stand-in)" if stood else "")
                + ", "
                f"{by_plan} decidable with this plan, {with_rounds} more with until-decided "
                "rounds within its load budget, "
                f"{testable - by_plan - with_rounds} testable but not decidable",
            )
        )
        for line in machine_needs(readiness, suite.server_cores):
            print_wrapped(console, line, first="  - ", indent=4)


def machine_needs(readiness: Sequence[Readiness], server_cores: int) -> list[str]:
    """What would test the claims this machine cannot, grouped: more server cores (with the
    machines that give them), an unavailable stack, anything else with its reason."""
    blocked = [r for r in readiness if not r.testable]
    cores = [r for r in blocked if r.claim.requires.server_cores > server_cores]
    lines = []
    if cores:
        need = max(r.claim.requires.server_cores for r in cores)
        verb = "needs" if len(cores) == 1 else "need"
        lines.append(
            f"{len(cores)} {verb} a server with up to {need} cores (this machine gives it "
            f"{server_cores}): a machine of {2 * need} cores with the default placement, one "
            f'of {need + 1} with [placement] server_cpus = "0-{need - 1}" and the loader on '
            f"the rest, or a server host of {need} cores and a loader host ([placement] "
            "server_host and loader_hosts, docs/multi-host.md)"
        )
    rest: dict[str, int] = {}
    for r in blocked:
        if r in cores:
            continue
        reason = next((x for x in r.reasons if "unavailable here" in x), r.reasons[0])
        rest[reason] = rest.get(reason, 0) + 1
    for reason, count in rest.items():
        lines.append(f"{count} {'is' if count == 1 else 'are'} untestable: {reason}")
    return lines
