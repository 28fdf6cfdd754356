"""A suite's own workloads: `[endpoints.NAME]` tables, parsed once into frozen `Endpoint`s.

An endpoint is a request (path, method, headers, body) and what its answer must be (a status,
a body hash, the same body on every stack of the suite, a JSON Schema the body must meet).
Every value is checked here, before anything starts: the request reaches the load tool's
command line and the stacks, and a schema that is not one would fail every stack alike.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from msgspec import Meta, Struct

from stackbench.config.names import check_name
from stackbench.config.toml import convert, location
from stackbench.errors import InputError

# The body travels as one argument of the load tool's command line (Linux allows 128 KiB per
# argument), as UTF-8 text: the native loader's --body takes text.
MAX_BODY_BYTES = 64 * 1024
MAX_HEADERS = 32
MAX_IGNORE = 64
# A schema describes one answer; a file larger than this is not one written for that.
MAX_SCHEMA_BYTES = 1024 * 1024
# Keys whose values are data, not schemas: a "$ref" inside them is not a reference.
_DATA_KEYS = frozenset({"const", "enum", "default", "examples"})
# An HTTP token (RFC 9110 section 5.6.2) for header names.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}")
# A request target: origin form, printable ASCII without spaces, at most 2 KiB.
_PATH = re.compile(r"/[\x21-\x7e]{0,2047}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# One step of an `ignore` path: .key, ["key"], [N] or [*].
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[([0-9]{1,9})\]|\[\*\]|\[\"([^\"\\]{1,200})\"\]")

Method = Literal["GET", "POST", "PUT"]
# A step of a JSON path: a key, an index, or every item ("*", of an array or an object).
PathStep = str | int
WILDCARD = "*"


class _Expect(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    status: Annotated[int, Meta(ge=100, le=599)] = 200
    same_across_stacks: bool = False
    body_sha256: str | None = None
    json_schema: str | None = None


class _EndpointTable(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    path: str
    method: Method = "GET"
    headers: dict[str, str] = {}
    body: str | None = None
    body_file: str | None = None
    expect: _Expect = _Expect()
    ignore: Annotated[list[str], Meta(max_length=MAX_IGNORE)] = []


@dataclass(frozen=True)
class JsonPath:
    """A field of a JSON document, `$.a.b[0]`, as written and as steps."""

    text: str
    steps: tuple[PathStep, ...]


@dataclass(frozen=True)
class JsonSchema:
    """An endpoint's `expect.json_schema`: the file as the suite names it, and the schema as
    JSON text (a frozen record holds no mutable document; `verify/` parses it again), already
    checked against its dialect's metaschema."""

    file: str
    text: str


@dataclass(frozen=True)
class Endpoint:
    """One inline workload: the request every stack gets and what its answer must be."""

    name: str
    path: str
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    status: int = 200
    same_across_stacks: bool = False
    body_sha256: str | None = None
    ignore: tuple[JsonPath, ...] = ()
    json_schema: JsonSchema | None = None

    @property
    def header_lines(self) -> tuple[str, ...]:
        """The headers as the load tool takes them, "Name: value"."""
        return tuple(f"{name}: {value}" for name, value in self.headers)

    @property
    def plain_get(self) -> bool:
        """A GET without headers or body: what every load tool can send."""
        return self.method == "GET" and not self.headers and self.body is None


def parse_json_path(text: str, where: str) -> JsonPath:
    """`$.now`, `$.items[0].id`, `$.items[*].at`, `$["odd key"]`: a field to leave out."""
    if not text.startswith("$") or len(text) > 512:
        raise InputError(f"{where}: {text!r} is not a JSON path: start with '$', e.g. \"$.now\"")
    steps: list[PathStep] = []
    at = 1
    while at < len(text):
        m = _STEP.match(text, at)
        if m is None:
            raise InputError(
                f"{where}: {text!r} is not a JSON path (at {text[at:]!r}): use .key, "
                '["key"], [N] or [*] steps, e.g. "$.items[*].at"'
            )
        key, index, quoted = m.group(1), m.group(2), m.group(3)
        steps.append(key or quoted or (int(index) if index is not None else WILDCARD))
        at = m.end()
    if not steps:
        raise InputError(f"{where}: '$' would ignore the whole document; name a field")
    return JsonPath(text, tuple(steps))


def _control_free(text: str) -> bool:
    return not any(ord(c) < 32 or ord(c) == 127 for c in text)


def _headers(raw: dict[str, str], where: str) -> tuple[tuple[str, str], ...]:
    if len(raw) > MAX_HEADERS:
        raise InputError(f"{where}: at most {MAX_HEADERS} headers")
    out = []
    for name, value in raw.items():
        if not _HEADER_NAME.fullmatch(name):
            raise InputError(f"{where}: {name!r} is not a header name (letters, digits, '-')")
        if name.lower() in ("host", "content-length", "transfer-encoding", "connection"):
            raise InputError(
                f"{where}: {name!r} is set by the load tool; leave it out "
                "(keep-alive is [load] keepalive)"
            )
        if not _control_free(value) or len(value) > 4096:
            raise InputError(
                f"{where} {location((name,))}: a header value is one line of at most 4096 "
                "characters, without control characters"
            )
        out.append((name, value.strip()))
    return tuple(out)


def _suite_file(folder: Path, raw: str, where: str, what: str) -> Path:
    """A file named by the suite, inside the suite's folder: a path leading out of it
    (`../`, absolute, or a symlink pointing out) is refused."""
    if not raw or not _control_free(raw) or len(raw) > 4096:
        raise InputError(f"{where}: {raw!r} is not a usable file path")
    root = folder.resolve()
    target = (root / raw).resolve()
    if not target.is_relative_to(root):
        raise InputError(
            f"{where}: {raw!r} leads out of the suite's folder ({root}); put the {what} "
            "in that folder or below it"
        )
    if not target.is_file():
        raise InputError(f"{where}: {raw!r} ({target}) is not a file")
    return target


def _body_file(folder: Path, raw: str, where: str) -> str:
    """The file's text, read from the suite's folder; a path leading out of it is refused."""
    target = _suite_file(folder, raw, where, "body file")
    data = target.read_bytes()[: MAX_BODY_BYTES + 1]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{where}: {raw!r} is not UTF-8 text (the loader sends text)") from None


def _outside_refs(node: object) -> list[str]:
    """The "$ref"/"$dynamicRef" values that point outside the file: nothing is fetched
    from the network or the disk, so only "#..." references can resolve."""
    if isinstance(node, list):
        return [ref for item in node for ref in _outside_refs(item)]
    if not isinstance(node, dict):
        return []
    out = []
    for key, value in node.items():
        if key in ("$ref", "$dynamicRef") and isinstance(value, str):
            if not value.startswith("#"):
                out.append(value)
        elif key not in _DATA_KEYS:
            out.extend(_outside_refs(value))
    return out


def _json_schema(folder: Path, raw: str, where: str) -> JsonSchema:
    """The schema file read, parsed and checked against its dialect's metaschema (the
    `$schema` it names, draft 2020-12 when it names none)."""
    target = _suite_file(folder, raw, where, "schema")
    data = target.read_bytes()
    if len(data) > MAX_SCHEMA_BYTES:
        raise InputError(f"{where}: {raw!r} is over {MAX_SCHEMA_BYTES // 1024} KiB")
    try:
        schema = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{where}: {raw!r} is not JSON: {exc}") from None
    if not isinstance(schema, dict | bool):
        raise InputError(f"{where}: {raw!r} is not a JSON Schema: give an object, e.g. {{}}")
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    cls = Draft202012Validator if dialect is None else None
    if isinstance(dialect, str):
        cls = validator_for(schema, default=None)
    if cls is None:
        raise InputError(
            f"{where}: {raw!r} names the dialect $schema = {dialect!r}, which is not one "
            "known here: use https://json-schema.org/draft/2020-12/schema (or draft-07, "
            "-06, -04, -03, 2019-09)"
        )
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise InputError(
            f"{where}: {raw!r} is not a valid JSON Schema: at {exc.json_path}: {exc.message}"
        ) from None
    outside = _outside_refs(schema)
    if outside:
        raise InputError(
            f"{where}: {raw!r} refers outside itself ($ref {outside[0]!r}); nothing is "
            'fetched: keep the definitions in the file, under "$defs", and refer to '
            '"#/$defs/NAME"'
        )
    return JsonSchema(raw, json.dumps(schema, sort_keys=True))


def _body(table: _EndpointTable, folder: Path, where: str) -> str | None:
    if table.body is not None and table.body_file is not None:
        raise InputError(f"{where}: give body or body_file, not both")
    if table.body_file is not None:
        body: str | None = _body_file(folder, table.body_file, f"{where} key 'body_file'")
    else:
        body = table.body
    if body is None:
        return None
    if table.method == "GET":
        raise InputError(f'{where}: a body needs method = "POST" or "PUT"')
    if len(body.encode()) > MAX_BODY_BYTES:
        raise InputError(f"{where}: the body is over {MAX_BODY_BYTES // 1024} KiB")
    if "\x00" in body:
        raise InputError(f"{where}: the body holds a NUL character, which the loader cannot send")
    return body


def _expect(name: str, table: _EndpointTable, where: str) -> _Expect:
    expect = table.expect
    if expect.body_sha256 is not None and not _SHA256.fullmatch(expect.body_sha256):
        raise InputError(f"{where} key 'expect.body_sha256': give 64 lowercase hex digits")
    if expect.body_sha256 is not None and table.ignore:
        raise InputError(
            f"{where} key 'ignore': a body_sha256 checks every byte; ignore fields only with "
            "same_across_stacks"
        )
    if table.ignore and not expect.same_across_stacks:
        raise InputError(f"{where} key 'ignore': needs expect.same_across_stacks = true")
    return expect


def parse_endpoint(name: str, data: object, suite_path: Path) -> Endpoint:
    where = f"{suite_path}: [endpoints.{name}]"
    table = convert(data, _EndpointTable, suite_path, ("endpoints", name))
    if not _PATH.fullmatch(table.path):
        raise InputError(
            f"{where} key 'path': {table.path!r} is not a request path: start with '/', "
            "printable ASCII without spaces (percent-encode the rest), at most 2 KiB"
        )
    expect = _expect(name, table, where)
    return Endpoint(
        name=name,
        path=table.path,
        method=table.method,
        headers=_headers(table.headers, f"{where} key 'headers'"),
        body=_body(table, suite_path.parent, where),
        status=expect.status,
        same_across_stacks=expect.same_across_stacks,
        body_sha256=expect.body_sha256,
        ignore=tuple(
            parse_json_path(text, f"{where} key 'ignore'") for text in dict.fromkeys(table.ignore)
        ),
        json_schema=None
        if expect.json_schema is None
        else _json_schema(
            suite_path.parent, expect.json_schema, f"{where} key 'expect.json_schema'"
        ),
    )


def parse_endpoints(data: dict[str, Any], suite_path: Path, taken: set[str]) -> dict[str, Endpoint]:
    """The suite's [endpoints.NAME] tables; a name may not be a catalog workload's (`taken`)."""
    out = {}
    for name, table in data.items():
        check_name(name, f"{suite_path}: [endpoints] {location((name,))}")
        if name in taken:
            raise InputError(
                f"{suite_path}: [endpoints.{name}]: '{name}' is a catalog workload; give "
                "your endpoint another name"
            )
        out[name] = parse_endpoint(name, table, suite_path)
    return out
