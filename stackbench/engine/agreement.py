"""Before any load: the answer the stacks of a suite agree on, for each of its own endpoints
that asks for `same_across_stacks` (verify/endpoint.py says what counts as the same).

Every stack serving such an endpoint is started once, asked, and stopped, in the suite's order;
the answer most of them give is the reference each stack's verification compares with, so a
stack that answers otherwise is refused before it is measured, whichever order the stacks run
in. A stack that cannot start here is left out: its own start in the run says why.
"""

import http.client
import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from stackbench.config.endpoints import Endpoint
from stackbench.config.plan import Plan, PlannedStack
from stackbench.config.status import StackEntry
from stackbench.errors import StackbenchError, StackError
from stackbench.session.stacks import ServiceAccess, running_stack
from stackbench.verify.endpoint import (
    Answer,
    Reference,
    agreed,
    answer_of,
    fetch,
    schema_problem,
)
from stackbench.verify.hashes import sha256_hex

log = logging.getLogger(__name__)


def compared_endpoints(plan: Plan) -> dict[str, Endpoint]:
    """The suite's own endpoints whose answers are compared across its stacks."""
    return {n: e for n, e in plan.suite.endpoints.items() if e.same_across_stacks}


def compared_note(plan: Plan) -> str | None:
    """What the run asks before any load, in one sentence for the plan (None: nothing)."""
    parts = []
    for name in compared_endpoints(plan):
        stacks = [st.name for st in plan.stacks if any(c.spec.name == name for c in st.cases)]
        parts.append(f"{name} ({', '.join(stacks)})")
    if not parts:
        return None
    return (
        f"same answer: {'; '.join(parts)}: each stack is started once and asked before any "
        "load; the answer most give is the reference, a stack answering otherwise is not "
        "measured"
    )


def references(
    plan: Plan,
    inventory: Mapping[str, StackEntry],
    run_dir: Path,
    access: Callable[[PlannedStack], ServiceAccess],
    say: Callable[[str, str], None],
) -> dict[str, Reference]:
    """The reference answer of each compared endpoint. `access` starts the services a stack
    needs; `say(stack, text)` tells the run what happens."""
    endpoints = compared_endpoints(plan)
    answers: dict[str, list[Answer]] = {name: [] for name in endpoints}
    for planned in plan.stacks:
        mine = [endpoints[c.spec.name] for c in planned.cases if c.spec.name in endpoints]
        if not mine or not planned.available:
            continue
        say(planned.name, f"asking for {', '.join(e.name for e in mine)}: do the stacks agree?")
        try:
            asked = (
                _ask_at(planned.external.url, planned.name, mine)  # runs already, by its user
                if planned.external is not None
                else _ask(planned, inventory[planned.stack], plan, run_dir, access, mine)
            )
            for name, answer in asked:
                answers[name].append(answer)
        except StackbenchError as exc:
            say(planned.name, f"could not be asked before the load ({exc}); left out")
    out = {}
    for name, endpoint in endpoints.items():
        reference = agreed([a for a in answers[name] if a.status == endpoint.status])
        if reference is not None:
            out[name] = reference
    return out


def _ask(
    planned: PlannedStack,
    entry: StackEntry,
    plan: Plan,
    run_dir: Path,
    access: Callable[[PlannedStack], ServiceAccess],
    endpoints: list[Endpoint],
) -> list[tuple[str, Answer]]:
    """(endpoint, answer) for each endpoint the stack answered."""
    env = access(planned).env
    with running_stack(entry, plan.placement_of(planned), run_dir, planned.params, env) as instance:
        return _ask_at(instance.base_url, planned.name, endpoints)


def _ask_at(base_url: str, stack: str, endpoints: list[Endpoint]) -> list[tuple[str, Answer]]:
    """(endpoint, answer) for each endpoint the server at base_url answered."""
    out = []
    for endpoint in endpoints:
        try:
            response = fetch(endpoint, base_url)
            out.append((endpoint.name, answer_of(endpoint, stack, response)))
        except (OSError, http.client.HTTPException) as exc:  # its verification will say
            log.info("%s: %s failed before the load: %s", stack, endpoint.name, exc)
    return out


def load_body_hash(endpoint: Endpoint, base_url: str) -> str | None:
    """The SHA-256 every answer under load must have: the suite's body_sha256, else the
    stack's own answer when it is the same bytes twice running; None when its bytes vary
    (ignored fields, or a document whose key order changes): then only the status is
    checked under load. With a json_schema, both answers asked for here are checked against
    it too: the hash then holds every answer under load to a body that meets the schema."""
    if endpoint.body_sha256 is not None:
        return endpoint.body_sha256
    if endpoint.ignore:
        return None
    schema = endpoint.json_schema
    bodies = []
    for _ in range(2):
        try:
            response = fetch(endpoint, base_url)
        except (OSError, http.client.HTTPException) as exc:
            raise StackError(f"{endpoint.name} failed after verification passed: {exc}") from exc
        if response.status != endpoint.status:
            raise StackError(
                f"{endpoint.name} answered {response.status} after verification passed"
            )
        failed = None if schema is None else schema_problem(schema, response.body)
        if failed is not None:
            raise StackError(f"{endpoint.name} after verification passed: {failed}")
        bodies.append(response.body)
    return sha256_hex(bodies[0]) if bodies[0] == bodies[1] else None
