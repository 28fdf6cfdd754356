"""The one strict reader for stackbench's TOML files (suites and stack manifests).

A file is read with a size limit (so `run /dev/zero` is refused at once), decoded as UTF-8,
parsed by tomllib and converted by msgspec into frozen Structs that forbid unknown keys and
reject wrong types and out-of-range numbers (NaN and infinity fail every range). A conversion
error becomes an InputError naming the file, the key (`[load] key 'connections'`) and what
the key allows, worked out from the target type itself so the message cannot drift from it.
"""

import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

import msgspec
from msgspec import inspect as mi

from stackbench.errors import InputError

T = TypeVar("T")
Segment = str | int
MAX_FILE_BYTES = 1024 * 1024  # suites and manifests are a few KiB; anything larger is a mistake

_AT = re.compile(r"(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?", re.S)
_SEGMENT = re.compile(r"\.([A-Za-z0-9_-]+)|\[(\d+)\]")
_FIELD = re.compile(r"Object (?P<kind>contains unknown|missing required) field `(?P<key>[^`]*)`")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def read_toml(path: Path, what: str) -> tuple[str, dict[str, Any]]:
    """The text and the parsed tables of a TOML file; every failure is an InputError."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError as exc:
        raise InputError(f"{path}: cannot read the {what}: no such file") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise InputError(
            f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB; a {what} is a small TOML text file"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not UTF-8 text (invalid byte at offset {exc.start}); save the {what} as UTF-8"
        ) from exc
    try:
        return text, tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, and integers too long to convert
        raise InputError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError as exc:
        raise InputError(f"{path}: not valid TOML: arrays or tables nested too deeply") from exc


@overload
def convert(data: object, kind: type[T], path: Path, at: Sequence[Segment] = ()) -> T: ...


@overload
def convert(data: object, kind: object, path: Path, at: Sequence[Segment] = ()) -> Any: ...


def convert(data: object, kind: object, path: Path, at: Sequence[Segment] = ()) -> Any:
    """`data` (a table of `path`, found at `at`) as `kind`, or an InputError saying why not.
    `kind` is a Struct or any type msgspec converts to (a union, an Annotated number ...)."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise InputError(f"{path}: {explain(str(exc), data, kind, tuple(at))}") from exc


def location(segments: Sequence[Segment]) -> str:
    """('load', 'connections') -> "[load] key 'connections'"; ('process', 0, 'role') ->
    "[[process]] #1 key 'role'"; a list item -> "[load] key 'connections' (item 2)"."""
    parts = list(segments)
    if len(parts) > 2 and isinstance(parts[1], int):  # an array of tables: [[process]] #1
        header, rest = f"[[{parts[0]}]] #{parts[1] + 1}", parts[2:]
    else:
        tables = 0
        while tables < len(parts) and isinstance(parts[tables], str):
            tables += 1
        tables = max(0, tables - 1)  # the last name before an item or the end is the key
        header = f"[{'.'.join(_toml_key(str(p)) for p in parts[:tables])}]" if tables else ""
        rest = parts[tables:]
    words = [f"item {p + 1}" if isinstance(p, int) else f"key {_quote(p)}" for p in rest]
    text = " ".join(f"({w})" if w.startswith("item") and i else w for i, w in enumerate(words))
    return " ".join(t for t in (header, text) if t) or "the file"


def _toml_key(key: str) -> str:
    """A key as it is written in a TOML table header: bare if it can be, quoted otherwise."""
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key[:60], ensure_ascii=False)


def _quote(key: str) -> str:
    return repr(key) if len(key) <= 60 else repr(key[:57] + "...")


def explain(message: str, data: object, kind: object, at: tuple[Segment, ...]) -> str:
    """A msgspec ValidationError message in stackbench's words: where, and what is allowed."""
    match = _AT.fullmatch(message)
    assert match is not None  # the pattern matches any text
    segments = _segments(match.group("path") or "")
    info = mi.type_info(kind)
    field = _FIELD.fullmatch(match.group("message"))
    if field is not None:
        key = field.group("key")
        table = _resolve(info, data, segments)
        where = location(at + segments + (key,))
        if field.group("kind") == "missing required":
            wanted = _describe(_resolve(info, data, (*segments, key)))
            return f"{where}: missing (required: {wanted})"
        allowed = ", ".join(_field_names(table)) or "none"
        return f"{where}: unknown key (allowed: {allowed})"
    target = _resolve(info, data, segments)
    got = _value_at(data, segments)
    where = location(at + segments)
    if isinstance(target, mi.EnumType | mi.LiteralType) and isinstance(got, str):
        return f"{where}: {_show(got)} is not one of: {_choices(target)}"
    return f"{where}: expected {_describe(target)}, got {_show(got)}"


def _segments(path: str) -> tuple[Segment, ...]:
    out: list[Segment] = []
    for key, index in _SEGMENT.findall(path):
        out.append(key if key else int(index))
    return tuple(out)


def _value_at(data: object, segments: Sequence[Segment]) -> object:
    for s in segments:
        found = (
            isinstance(s, str)
            and isinstance(data, dict)
            and s in data
            or isinstance(s, int)
            and isinstance(data, list)
            and s < len(data)
        )
        if not found:
            return None
        data = data[s]  # type: ignore[index]
    return data


def _resolve(info: mi.Type, data: object, segments: Sequence[Segment]) -> mi.Type | None:
    """The type expected at `segments` inside `info`, following the data through unions."""
    for i, s in enumerate(segments):
        here = _value_at(data, segments[:i])
        info = _strip(_pick(info, here))
        tags = _tags(info, s)
        if tags:
            return mi.LiteralType(values=tags)
        if isinstance(info, mi.StructType) and isinstance(s, str):
            found = [f.type for f in info.fields if f.encode_name == s]
            if not found:
                return None
            info = found[0]
        elif isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType) and isinstance(s, int):
            info = info.item_type
        elif isinstance(info, mi.DictType) and isinstance(s, str):
            info = info.value_type
        else:
            return None
    return _pick(info, _value_at(data, segments))


def _tags(info: mi.Type, key: Segment) -> tuple[str | int, ...]:
    """The tags a tagged union (or one of its members) accepts when `key` is its tag field."""
    members = info.types if isinstance(info, mi.UnionType) else (info,)
    return tuple(
        t.tag
        for t in members
        if isinstance(t, mi.StructType)
        and t.tag is not None
        and t.tag_field is not None
        and t.tag_field == key
    )


def _pick(info: mi.Type, value: object) -> mi.Type:
    """The member of a union that fits `value` (a table picks the table type)."""
    if not isinstance(_strip(info), mi.UnionType):
        return info  # with its Metadata: a description may say more than the type
    info = _strip(info)
    assert isinstance(info, mi.UnionType)
    structs = [t for t in info.types if isinstance(t, mi.StructType)]
    if isinstance(value, dict) and structs:
        tagged = [t for t in structs if t.tag_field and value.get(t.tag_field) == t.tag]
        if tagged:
            return tagged[0]
        if len(structs) == 1:
            return structs[0]
    if isinstance(value, list):
        lists = [t for t in info.types if isinstance(t, mi.ListType | mi.VarTupleType)]
        if len(lists) == 1:
            return lists[0]
    return info


def _strip(info: mi.Type) -> mi.Type:
    while isinstance(info, mi.Metadata):
        info = info.type
    return info


def _field_names(info: mi.Type | None) -> list[str]:
    if isinstance(info, mi.UnionType):
        return sorted({n for t in info.types for n in _field_names(t)})
    if not isinstance(info, mi.StructType):
        return []
    names = [f.encode_name for f in info.fields]
    return sorted(names + ([info.tag_field] if info.tag_field else []))


def _choices(info: mi.EnumType | mi.LiteralType) -> str:
    values = [m.value for m in info.cls] if isinstance(info, mi.EnumType) else info.values
    return ", ".join(str(v) for v in values)


def _describe(info: mi.Type | None) -> str:
    """Plain words for what a type accepts: 'a whole number from 1 to 100', 'one of: a, b'."""
    if info is None:
        return "nothing (no such key)"
    if isinstance(info, mi.Metadata):  # Meta(description=...) says it better than the type
        described = (info.extra_json_schema or {}).get("description")
        return str(described) if described else _describe(info.type)
    if isinstance(info, mi.IntType):
        return "a whole number" + _range(info.ge, info.gt, info.le, info.lt)
    if isinstance(info, mi.FloatType):
        return "a number" + _range(info.ge, info.gt, info.le, info.lt)
    if isinstance(info, mi.StrType):
        text = "a non-empty string" if info.min_length else "a string"
        # a text over its bound was told only "a non-empty string", which it is
        longest = "" if info.max_length is None else f" of at most {info.max_length:,} characters"
        return text + longest
    if isinstance(info, mi.BoolType):
        return "true or false"
    if isinstance(info, mi.EnumType | mi.LiteralType):
        return f"one of: {_choices(info)}"
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType):
        size = "a non-empty list" if info.min_length else "a list"
        return f"{size} of {_plural(_describe(info.item_type))}"
    if isinstance(info, mi.DictType):
        return f"a table of NAME = {_describe(info.value_type)}"
    if isinstance(info, mi.StructType):
        return f"a table with keys {', '.join(_field_names(info))}"
    if isinstance(info, mi.UnionType):
        return " or ".join(_describe(t) for t in info.types if not isinstance(t, mi.NoneType))
    return "a value"


def _plural(text: str) -> str:
    for single, many in (
        ("a whole number", "whole numbers"),
        ("a number", "numbers"),
        ("a non-empty string", "non-empty strings"),
        ("a string", "strings"),
        ("a table", "tables"),
    ):
        text = text.replace(single, many)
    return text


def _range(ge: float | None, gt: float | None, le: float | None, lt: float | None) -> str:
    if ge is not None and le is not None:
        return f" from {_number(ge)} to {_number(le)}"
    bounds = [
        f"{word} {_number(v)}"
        for word, v in (("of at least", ge), ("above", gt), ("of at most", le), ("below", lt))
        if v is not None
    ]
    if not bounds:
        return ""
    return " " + " and ".join([bounds[0]] + [b.removeprefix("of ") for b in bounds[1:]])


def _number(value: float) -> str:
    return f"{value:.10g}"


def _show(value: object) -> str:
    """A value as the user wrote it, short and with control characters escaped."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
