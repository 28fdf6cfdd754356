"""Check that a stack does the work of each workload before any load is applied.

For workloads whose body is a function of the parameter the verifier asks for several values
(the default, edge values and a value drawn at random per run), so a stack that returns a
constant cannot pass, and it checks that an invalid parameter is refused with 400. Data and
TechEmpower workloads have verifiers of their own in `verify_data`.
"""

import http.client
import random
from collections.abc import Callable

from stackbench.config.workloads import CATALOG, Workload
from stackbench.lab.httpget import Response, get
from stackbench.verify import data as verify_data
from stackbench.verify.outcome import VerifyOutcome

Fetch = Callable[[str], Response]


def _values_to_check(w: Workload, rng: random.Random) -> list[int | None]:
    if w.param is None:
        return [None]
    # Keep the random value small enough for a quick check of the heavy loops.
    cap = min(w.maximum, 5000 if w.name in ("sha256", "readfile") else 50_000)
    values = {w.default, w.minimum, min(w.minimum + 1, cap), rng.randint(w.minimum + 2, cap)}
    return [v for v in sorted(v for v in values if v is not None)]


def _check_response(w: Workload, value: int | None, resp: Response, expected: bytes) -> list[str]:
    path = w.path(value)
    problems = []
    if resp.status != 200:
        problems.append(f"{path}: status {resp.status}, expected 200 ({_snippet(resp.body)})")
        return problems
    if not resp.content_type.startswith(w.content_type):
        problems.append(f"{path}: Content-Type '{resp.content_type}', expected {w.content_type}")
    if resp.body != expected:
        problems.append(f"{path}: body {_snippet(resp.body)}, expected {_snippet(expected)}")
    return problems


def _snippet(body: bytes, limit: int = 60) -> str:
    text = body[:limit].decode("utf-8", "replace")
    more = f"... ({len(body)} bytes)" if len(body) > limit else ""
    return repr(text) + more


def verify_fixed(w: Workload, fetch: Fetch, rng: random.Random) -> VerifyOutcome:
    assert w.expected is not None
    failures: list[str] = []
    checked = 0
    for value in _values_to_check(w, rng):
        resp = fetch(w.path(value))
        checked += 1
        failures += _check_response(w, value, resp, w.expected(value if value is not None else 0))
    if w.param is not None:
        bad = f"/{w.name}?{w.param}=abc" if not w.path_param else f"/{w.name}/abc"
        resp = fetch(bad)
        checked += 1
        if resp.status != 400:
            failures.append(
                f"{bad}: status {resp.status}, expected 400 for a non-numeric {w.param}"
            )
    return VerifyOutcome(w.name, not failures, tuple(failures), checked)


def verify_workload(
    name: str, base_url: str, data_context: object | None = None, seed: int | None = None
) -> VerifyOutcome:
    """Run the verifier of one workload against a running stack; never raises on bad servers."""
    w = CATALOG[name]
    rng = random.Random(seed)

    def fetch(path: str) -> Response:
        return get(base_url, path, timeout_s=30)

    try:
        if w.services or w.group.value == "techempower":
            return verify_data.verify(name, base_url, data_context)
        return verify_fixed(w, fetch, rng)
    except (OSError, http.client.HTTPException) as exc:
        return VerifyOutcome(name, False, (f"request failed: {exc!r}",), 0)
