"""docs/schema/results.schema.json, generated from the document's types (`make schema`, that
is `python -m stackbench.report.schema docs/schema/results.schema.json`; a test fails when
the committed file is stale).

msgspec describes the types; three rules of the export (`exports.jsonable`) are added here,
since the types alone do not say them: every field of a record is written (required, no
defaults), but one it did not record (UNSET), and nothing else (closed records); a run's
bookkeeping, a level's raw tool output and its `superseded` mark (the document's levels all
stand) are left out (NOT_IN_JSON), with the definitions only they referred to; a float that
is not finite is written as null.
"""

import json
import sys
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from stackbench.report.document import RESULTS_SCHEMA, ResultsDocument
from stackbench.store.records import NOT_IN_JSON, Flag

DRAFT = "https://json-schema.org/draft/2020-12/schema"
NULLABLE_NUMBER = ["number", "null"]


def results_schema() -> str:
    """The schema as the committed file holds it (indented, ending in a newline)."""
    generated = msgspec.json.schema(ResultsDocument, schema_hook=_schema_hook)
    defs = generated["$defs"]
    for record in defs.values():
        if "properties" in record:
            _as_exported(record)
    _nullable_numbers(defs)
    root = generated["$ref"].rsplit("/", 1)[-1]
    reached = _reachable(defs, root)
    defs = {name: record for name, record in defs.items() if name in reached}
    schema = {
        "$schema": DRAFT,
        "$id": RESULTS_SCHEMA,
        "title": "stackbench results.json",
        "description": defs["ResultsDocument"].get("description", ""),
        "$ref": generated["$ref"],
        "$defs": defs,
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _schema_hook(kind: type) -> dict[str, Any]:
    """A level's flag is written as its text (`Flag.text`)."""
    if kind is Flag:
        return {"type": "string"}
    raise NotImplementedError(kind)


# JSON Schema is itself a JSON document: its nodes are plain dicts of any JSON value.
def _as_exported(record: dict[str, Any]) -> None:
    """A record as jsonable writes it: every field but NOT_IN_JSON, and only those; a field
    with a default is written too, unless that default is UNSET (msgspec shows none)."""
    required = set(record.get("required", ()))
    props = {name: prop for name, prop in record["properties"].items() if name not in NOT_IN_JSON}
    record["properties"] = props
    record["required"] = [
        name
        for name, prop in props.items()
        if name in required or prop.pop("default", UNSET) is not UNSET
    ]
    record["additionalProperties"] = False


def _reachable(defs: dict[str, Any], root: str) -> set[str]:
    """The definitions the document reaches from `root`: one that only a field left out of
    the export refers to (a level's `superseded` mark, NOT_IN_JSON) is not in it."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += _refs(defs[name])
    return seen


def _refs(node: object) -> list[str]:
    """The names of the definitions a schema node refers to ($ref), at any depth."""
    if isinstance(node, list):
        return [name for item in node for name in _refs(item)]
    if not isinstance(node, dict):
        return []
    ref = node.get("$ref")
    own = [ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else []
    return own + [name for value in node.values() for name in _refs(value)]


def _nullable_numbers(node: object) -> None:
    """Every float may be null: jsonable writes inf and NaN so (strict JSON has neither)."""
    if isinstance(node, list):
        for item in node:
            _nullable_numbers(item)
    if not isinstance(node, dict):
        return
    for value in node.values():
        _nullable_numbers(value)
    if node.get("type") == "number":
        node["type"] = list(NULLABLE_NUMBER)
    options = node.get("anyOf")
    if (
        options
        and {"type": "null"} in options
        and any(o.get("type") == NULLABLE_NUMBER for o in options)
    ):
        options.remove({"type": "null"})
        if len(options) == 1:
            node.update(node.pop("anyOf")[0])


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(results_schema())
