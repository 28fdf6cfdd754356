"""The one TOML reader: bounded reading, UTF-8, and msgspec errors in stackbench's words."""

from pathlib import Path
from typing import Annotated

import pytest
from msgspec import Meta, Struct

from stackbench.config.names import NAME_PATTERN, check_name, is_name
from stackbench.config.toml import MAX_FILE_BYTES, convert, location, read_toml
from stackbench.config.workloads import CATALOG
from stackbench.errors import InputError


class Inner(Struct, frozen=True, forbid_unknown_fields=True):
    count: Annotated[int, Meta(ge=1, le=100)] = 1
    ratio: Annotated[float, Meta(ge=0.0, le=1.0)] = 0.5


class Outer(Struct, frozen=True, forbid_unknown_fields=True):
    items: Annotated[list[str], Meta(min_length=1)]
    inner: Inner = Inner()
    label: Annotated[str, Meta(min_length=1, max_length=5)] = "x"
    rows: list[Inner] = []


@pytest.mark.parametrize(
    "segments, text",
    [
        (("name",), "key 'name'"),
        (("load", "connections"), "[load] key 'connections'"),
        (("load", "connections", 1), "[load] key 'connections' (item 2)"),
        (("process", 0, "role"), "[[process]] #1 key 'role'"),
        (("variants", "a b", "stack"), "[variants.\"a b\"] key 'stack'"),
        (("levels", "sha256?n=1"), "[levels] key 'sha256?n=1'"),
    ],
)
def test_location(segments, text):
    assert location(segments) == text


@pytest.mark.parametrize(
    "data, message",
    [
        (
            {"items": ["a"], "inner": {"count": 0}},
            "[inner] key 'count': expected a whole number from 1 to 100, got 0",
        ),
        (
            {"items": ["a"], "inner": {"count": True}},
            "expected a whole number from 1 to 100, got true",
        ),
        (
            {"items": ["a"], "inner": {"ratio": float("nan")}},
            "key 'ratio': expected a number from 0 to 1, got nan",
        ),
        ({"items": ["a"], "inner": {"ratio": float("inf")}}, "got inf"),
        (
            {"items": ["a"], "inner": {"colour": 1}},
            "[inner] key 'colour': unknown key (allowed: count, ratio)",
        ),
        ({"items": []}, "key 'items': expected a non-empty list of strings, got a list"),
        ({"items": ["a", 3]}, "key 'items' (item 2): expected a string, got 3"),
        (
            {"items": ["a"], "label": "longer"},
            "key 'label': expected a non-empty string of at most 5 characters, got 'longer'",
        ),
        ({}, "key 'items': missing (required: a non-empty list of strings)"),
        (
            {"items": ["a"], "rows": [{}, {"count": "x"}]},
            "[[rows]] #2 key 'count': expected a whole number from 1 to 100, got 'x'",
        ),
        (
            {"items": ["a"], "inner": 3},
            "key 'inner': expected a table with keys count, ratio, got 3",
        ),
    ],
)
def test_conversion_errors_name_the_key_and_what_is_allowed(data, message):
    with pytest.raises(InputError) as err:
        convert(data, Outer, Path("suite.toml"))
    assert str(err.value).startswith("suite.toml: ")
    assert message in str(err.value)


def test_conversion_prefixes_the_table_it_was_given():
    with pytest.raises(InputError, match=r"s.toml: \[params.node\] key 'count'"):
        convert({"count": 0}, Inner, Path("s.toml"), ("params", "node"))


def test_read_toml_refuses_big_binary_and_broken_files(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * MAX_FILE_BYTES)
    with pytest.raises(InputError, match="larger than 1024 KiB"):
        read_toml(big, "suite file")
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(InputError, match="not UTF-8 text .*offset 11"):
        read_toml(latin1, "suite file")
    broken = tmp_path / "broken.toml"
    broken.write_text("name = [")
    with pytest.raises(InputError, match="not valid TOML"):
        read_toml(broken, "suite file")
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000)
    with pytest.raises(InputError, match="not valid TOML"):
        read_toml(deep, "suite file")
    with pytest.raises(InputError, match="cannot read the suite file: no such file"):
        read_toml(tmp_path / "nope.toml", "suite file")
    with pytest.raises(InputError, match="cannot read the suite file"):
        read_toml(tmp_path, "suite file")


def test_read_toml_stops_reading_an_endless_file():
    # /dev/zero never ends: the reader takes 1 MiB + 1 byte and refuses, memory stays flat.
    with pytest.raises(InputError, match="larger than"):
        read_toml(Path("/dev/zero"), "suite file")


@pytest.mark.parametrize("name", ["node", "php-fpm-nginx", "a", "x1.2_3", "9" * 64])
def test_valid_names(name):
    assert is_name(name) and check_name(name, "w") == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "../x/victim",
        "..",
        ".hidden",
        "-flag",
        "Node",
        "a b",
        "a/b",
        "a\nb",
        "node\n",
        "é",
        "x" * 65,
        "_x",
    ],
)
def test_invalid_names_are_refused_with_the_rule(name):
    assert not is_name(name)
    with pytest.raises(
        InputError,
        match=r"suite.toml: key 'stacks': .* is not a valid name: "
        r"use lowercase letters",
    ):
        check_name(name, "suite.toml: key 'stacks'")


def test_every_workload_name_follows_the_name_pattern():
    assert NAME_PATTERN == "[a-z0-9][a-z0-9._-]{0,63}"
    assert all(is_name(name) for name in CATALOG)
