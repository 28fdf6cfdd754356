"""Verify a suite's own workload ([endpoints.NAME]) on a stack, and whether its stacks agree.

`same_across_stacks` asks every stack of the suite for the same answer: the same bytes, or,
for JSON, the same document (key order, whitespace and a number's spelling, 1 or 1.0, do not
count; the `ignore` fields are dropped first). Before any load, every stack that serves the
endpoint is asked once and the answer most of them give (on a tie, that of the stack listed
first) is the reference; a stack answering otherwise fails its verification with the first
field that differs and both values.

`json_schema` checks each stack's body on its own against the suite's schema; a body that
does not meet it fails with the JSON path of the field and the schema's complaint.
"""

import hashlib
import http.client
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable

from stackbench.config.endpoints import WILDCARD, Endpoint, JsonSchema, PathStep
from stackbench.lab.httpget import Response, request
from stackbench.verify.outcome import VerifyOutcome

SHOWN_CHARS = 60
# A schema's complaint quotes the value it rejects: cut, so that one line stays one line.
COMPLAINT_CHARS = 200
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Answer:
    """One stack's answer to an endpoint, as compared: its body, and its document when the
    body is JSON (numbers as Decimal, the ignored fields dropped)."""

    stack: str
    status: int
    body: bytes
    is_json: bool
    document: object = None

    @property
    def key(self) -> str:
        """Equal for answers that count as the same."""
        return "json:" + canonical_text(self.document) if self.is_json else "raw:" + self.body.hex()


@dataclass(frozen=True)
class Reference:
    """The answer the stacks agree on, and the stacks that gave it."""

    answer: Answer
    stacks: tuple[str, ...]


def parse_document(body: bytes) -> tuple[bool, object]:
    """(True, the document) for a JSON body, (False, None) otherwise."""
    try:
        return True, json.loads(body, parse_float=Decimal, parse_int=Decimal)
    except (ValueError, RecursionError):
        return False, None


def drop(doc: object, steps: Sequence[PathStep]) -> object:
    """The document without the field at `steps` (every item for a WILDCARD step); fields
    that are not there are left alone."""
    if not steps:
        return doc
    head, rest = steps[0], steps[1:]
    if isinstance(doc, dict):
        keys = list(doc) if head == WILDCARD else [head] if head in doc else []
        out = dict(doc)
        for key in keys:
            if rest:
                out[key] = drop(doc[key], rest)
            else:
                del out[key]
        return out
    if isinstance(doc, list):
        if head == WILDCARD:
            chosen = set(range(len(doc)))
        else:
            chosen = {head} if isinstance(head, int) and head < len(doc) else set()
        if not rest:
            return [item for i, item in enumerate(doc) if i not in chosen]
        return [drop(item, rest) if i in chosen else item for i, item in enumerate(doc)]
    return doc


def canonical_text(doc: object) -> str:
    """One text per document: keys sorted, numbers by value (1 and 1.0 alike)."""
    if isinstance(doc, dict):
        items = (json.dumps(k) + ":" + canonical_text(v) for k, v in sorted(doc.items()))
        return "{" + ",".join(items) + "}"
    if isinstance(doc, list):
        return "[" + ",".join(canonical_text(v) for v in doc) + "]"
    if isinstance(doc, Decimal):
        return _number(doc)
    return json.dumps(doc)


def _number(value: Decimal) -> str:
    if not value.is_finite():
        return str(value)
    normal = value.normalize()
    return "0" if normal.is_zero() else str(normal)


def _kind(value: object) -> str:
    # bool before numbers: True == 1 in Python, never in JSON
    for kind, types in (("bool", bool), ("number", Decimal), ("text", str), ("object", dict)):
        if isinstance(value, types):
            return kind
    return "array" if isinstance(value, list) else "null"


def show(value: object) -> str:
    """A value of a document as JSON text, cut to SHOWN_CHARS."""
    text = canonical_text(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _step(at: str, key: str) -> str:
    return f"{at}.{key}" if _IDENTIFIER.fullmatch(key) else f"{at}[{json.dumps(key)}]"


def first_difference(mine: object, theirs: object, at: str = "$") -> tuple[str, str, str] | None:
    """The first field (keys in sorted order) where two documents differ: its JSON path and
    both values as shown; None when they are the same document."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs)):
            where = _step(at, key)
            if key not in mine or key not in theirs:
                return (
                    where,
                    show(mine[key]) if key in mine else "absent",
                    show(theirs[key]) if key in theirs else "absent",
                )
            found = first_difference(mine[key], theirs[key], where)
            if found is not None:
                return found
        return None
    if isinstance(mine, list) and isinstance(theirs, list):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
            found = first_difference(a, b, f"{at}[{i}]")
            if found is not None:
                return found
        if len(mine) != len(theirs):
            return at, f"{len(mine)} items", f"{len(theirs)} items"
        return None
    if _kind(mine) != _kind(theirs) or canonical_text(mine) != canonical_text(theirs):
        return at, show(mine), show(theirs)
    return None


def snippet(body: bytes, limit: int = SHOWN_CHARS) -> str:
    text = body[:limit].decode("utf-8", "replace")
    more = f"... ({len(body)} bytes)" if len(body) > limit else ""
    return repr(text) + more


def difference(mine: Answer, reference: Reference) -> str | None:
    """How `mine` differs from the reference, in one sentence; None when it does not."""
    theirs = reference.answer
    if mine.key == theirs.key:
        return None
    by = ", ".join(reference.stacks)
    lead = f"answers a different document than {by}"
    if mine.is_json and theirs.is_json:
        found = first_difference(mine.document, theirs.document)
        assert found is not None  # different keys are different documents
        where, here, there = found
        return f"{lead}: {where} is {here} here, {there} on {by}"
    if mine.is_json != theirs.is_json:
        return f"{lead}: JSON on {'this stack' if mine.is_json else by}, not on the other"
    return f"{lead}: the body is {snippet(mine.body)} here, {snippet(theirs.body)} on {by}"


def agreed(answers: Sequence[Answer]) -> Reference | None:
    """The answer most stacks give (on a tie, the one of the stack listed first); None when
    there is none to compare with."""
    groups: dict[str, list[Answer]] = {}
    for answer in answers:
        groups.setdefault(answer.key, []).append(answer)
    if not groups:
        return None
    best = max(groups.values(), key=len)  # max keeps the first of equal lengths
    return Reference(best[0], tuple(a.stack for a in best))


def fetch(endpoint: Endpoint, base_url: str) -> Response:
    return request(
        base_url, endpoint.method, endpoint.path, endpoint.headers, endpoint.body, timeout_s=30
    )


def answer_of(endpoint: Endpoint, stack: str, response: Response) -> Answer:
    is_json, doc = parse_document(response.body)
    for field in endpoint.ignore if is_json else ():
        doc = drop(doc, field.steps)
    return Answer(stack, response.status, response.body, is_json, doc)


@lru_cache(maxsize=64)
def _validator(schema: JsonSchema) -> Any:
    """The schema's validator (its dialect was checked when the suite was parsed)."""
    document = json.loads(schema.text)
    return validator_for(document)(document)


def schema_problem(schema: JsonSchema, body: bytes) -> str | None:
    """How the body fails the schema, in one sentence: the JSON path of the field and the
    schema's complaint (the most relevant one when there are several); None when it meets
    it. Numbers are read as JSON defines them (7 is an integer, 7.5 is not)."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return f"the body is not JSON, so {schema.file} cannot check it ({snippet(body)})"
    try:
        errors = list(_validator(schema).iter_errors(document))
    except (Unresolvable, RecursionError) as exc:
        return f"{schema.file} could not be applied: {exc}"
    if not errors:
        return None
    error = best_match(errors)
    complaint = error.message
    if len(complaint) > COMPLAINT_CHARS:
        complaint = complaint[: COMPLAINT_CHARS - 3] + "..."
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"the body does not meet {schema.file}: at {error.json_path}: {complaint}{more}"


def check_answer(endpoint: Endpoint, answer: Answer, reference: Reference | None) -> list[str]:
    """What is wrong with a stack's answer: its status, its hash, its schema, its sameness."""
    where = f"{endpoint.method} {endpoint.path}"
    if answer.status != endpoint.status:
        return [
            f"{where}: status {answer.status}, expected {endpoint.status} ({snippet(answer.body)})"
        ]
    problems = []
    if endpoint.body_sha256 is not None:
        got = hashlib.sha256(answer.body).hexdigest()
        if got != endpoint.body_sha256:
            problems.append(
                f"{where}: body SHA-256 {got[:12]}..., expected {endpoint.body_sha256[:12]}... "
                f"({snippet(answer.body)})"
            )
    if endpoint.json_schema is not None:
        failed = schema_problem(endpoint.json_schema, answer.body)
        if failed is not None:
            problems.append(f"{where}: {failed}")
    if endpoint.ignore and not answer.is_json:
        problems.append(
            f"{where}: the body is not JSON, so its ignore fields cannot be left out "
            f"({snippet(answer.body)})"
        )
    if endpoint.same_across_stacks and reference is not None:
        different = difference(answer, reference)
        if different is not None:
            problems.append(f"{where}: {different}")
    return problems


def verify_endpoint(
    endpoint: Endpoint, stack: str, base_url: str, reference: Reference | None
) -> VerifyOutcome:
    """Ask the stack once and check its answer; never raises on a bad server."""
    try:
        answer = answer_of(endpoint, stack, fetch(endpoint, base_url))
    except (OSError, http.client.HTTPException) as exc:
        return VerifyOutcome(endpoint.name, False, (f"request failed: {exc!r}",), 0)
    problems = check_answer(endpoint, answer, reference)
    return VerifyOutcome(endpoint.name, not problems, tuple(problems), 1)
