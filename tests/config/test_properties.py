"""Property tests: whatever a suite, a manifest or a workload spec holds, parsing either gives a
valid record or raises InputError (exit 2, one message) — never another exception."""

import contextlib
import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackbench.config.manifest import Manifest, parse_manifest
from stackbench.config.names import is_name
from stackbench.config.plan import build_plan
from stackbench.config.suite import (
    MAX_LEVEL_VALUE,
    MAX_LEVELS,
    MAX_SCRIPT_TIMINGS,
    Suite,
    parse_suite,
)
from stackbench.config.workloads import CATALOG, WorkloadSpec, parse_spec
from stackbench.errors import InputError
from stackbench.lab.inventory import load_inventory
from stackbench.lab.templating import resolve_params
from tests.conftest import FAKE_STACKS

BOUNDED = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
INVENTORY = load_inventory(stacks_dir=FAKE_STACKS)

# ---- a small TOML writer, so generated data reaches the parser as real TOML text ----------
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
SCALARS = st.one_of(
    TEXT,
    st.integers(),
    st.integers(-3, 3000),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


def toml_key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_document(data: dict[str, Any]) -> str:
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for key, table in data.items():
        if isinstance(table, dict):
            lines.append(f"[{toml_key(key)}]")
            lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a plausible value, sometimes (1 in 10) anything at all."""
    return st.sampled_from(range(10)).flatmap(lambda i: VALUES if i == 0 else strategy)


def mostly(*good: Any) -> st.SearchStrategy[Any]:
    """One of the good values most of the time (6 in 7), otherwise any text."""
    return st.sampled_from(range(7)).flatmap(lambda i: TEXT if i == 0 else st.sampled_from(good))


# ---- suites ---------------------------------------------------------------------------------
# A valid suite, changed in up to four places: near-valid input reaches the deep rules (open
# loop needs rates, a search needs an SLO ...) instead of stopping at the first missing key.
DELETE = object()
NAMES = mostly("refserver", "crashing", "missing", "v1", "../x/victim", "Node", "", "a b")
SPECS = mostly(
    "hello",
    "sha256",
    "sha256?n=10",
    "data/64",
    "add?n=3",
    "sha256?n=²",
    "data?n=",
    "concat?n=1&n=2",
    "helo",
    "sha256?x=1",
)
NUMBERS = st.sampled_from(range(8)).flatmap(
    lambda i: (
        st.integers(-5, 20000)
        if i == 0
        else st.floats(allow_nan=True, allow_infinity=True)
        if i == 1
        else st.floats(0.5, 100)
        if i == 2
        else st.integers(1, 2000)
    )
)
RANGES = st.fixed_dictionaries({"start": NUMBERS, "step": NUMBERS, "stop": NUMBERS})
SWEEPS = st.lists(st.one_of(NUMBERS, RANGES), max_size=4)
PARAMS = st.dictionaries(
    mostly("fault", "colour"), maybe(mostly("", "constant", "crash", "x\ny", "2")), max_size=2
)
BASE_SUITE = {
    "name": "t",
    "stacks": ["refserver"],
    "workloads": ["hello", "sha256?n=10"],
    "load": {
        "driver": "native",
        "connections": [1, {"start": 100, "step": 100, "stop": 300}],
        "duration_s": 2,
        "repeat": 2,
    },
    "placement": {"server_cpus": "0", "loader_cpus": "0"},
    "slo": {"percentile": 99, "latency_ms": 3000},
}
SUITE_EDITS: list[tuple[tuple[str, ...], st.SearchStrategy[Any]]] = [
    (("name",), NAMES),
    (("description",), TEXT),
    (("variant",), NAMES),
    (("stacks",), st.lists(NAMES, max_size=3)),
    (("workloads",), st.lists(SPECS, max_size=3)),
    (("load", "driver"), mostly("native", "wrk", "ab", "siege")),
    (("load", "mode"), mostly("closed", "open")),
    (("load", "keepalive"), mostly("on", "off")),
    (("load", "connections"), SWEEPS),
    (("load", "rates"), SWEEPS),
    (("load", "duration_s"), NUMBERS),
    (("load", "requests"), NUMBERS),
    (("load", "requests_per_connection"), NUMBERS),
    (("load", "warmup_s"), NUMBERS),
    (("load", "timeout_s"), NUMBERS),
    (("load", "pause_s"), NUMBERS),
    (("load", "repeat"), NUMBERS),
    (("load", "threads"), NUMBERS),
    (("load", "pipeline"), NUMBERS),
    (("load", "conections"), VALUES),
    (("slo", "percentile"), NUMBERS),
    (("slo", "latency_ms"), NUMBERS),
    (("slo", "max_error_rate"), NUMBERS),
    (("slo", "stop_after_failures"), NUMBERS),
    (
        ("search",),
        st.fixed_dictionaries(
            {"lo": NUMBERS, "hi": NUMBERS}, optional={"probes": NUMBERS, "tolerance": NUMBERS}
        ),
    ),
    (("limits",), st.fixed_dictionaries({"max_error_rate": NUMBERS})),
    (("placement", "server_cpus"), mostly("0", "0-1", "zero", "4096", "")),
    (("placement", "loader_cpus"), mostly("0", "1", "1-0")),
    (("params",), st.dictionaries(NAMES, maybe(PARAMS), max_size=2)),
    (
        ("variants",),
        st.dictionaries(
            NAMES,
            maybe(st.fixed_dictionaries({"stack": NAMES}, optional={"params": maybe(PARAMS)})),
            max_size=2,
        ),
    ),
    (("levels",), st.dictionaries(SPECS, maybe(SWEEPS), max_size=2)),
    (("durations",), st.dictionaries(SPECS, maybe(NUMBERS), max_size=2)),
    (("script_iterations",), NUMBERS),
    (("script_timings",), NUMBERS),
    (("colour",), VALUES),
]


def edits(
    choices: list[tuple[tuple[str, ...], st.SearchStrategy[Any]]],
) -> st.SearchStrategy[list[tuple[tuple[str, ...], Any]]]:
    """Up to four (path, new value) changes; a value is sometimes anything, or a deletion."""
    one = st.sampled_from(choices).flatmap(
        lambda c: st.tuples(
            st.just(c[0]),
            st.sampled_from(range(8)).flatmap(
                lambda i: st.just(DELETE) if i == 0 else VALUES if i == 1 else c[1]
            ),
        )
    )
    return st.lists(one, max_size=4)


def edited(base: dict[str, Any], changes: list[tuple[tuple[str, ...], Any]]) -> dict[str, Any]:
    data = copy.deepcopy(base)
    for path, value in changes:
        table = data
        for key in path[:-1]:
            if not isinstance(table.get(key), dict):
                table[key] = {}
            table = table[key]
        if value is DELETE:
            table.pop(path[-1], None)
        else:
            table[path[-1]] = value
    return data


SUITES = edits(SUITE_EDITS).map(lambda changes: edited(BASE_SUITE, changes))


def check_suite(suite: Suite) -> None:
    assert is_name(suite.name) and all(is_name(s) for s in suite.stacks)
    assert all(is_name(v) for v in suite.variants)
    for levels in (suite.levels, *suite.workload_levels.values()):
        assert len(levels) <= MAX_LEVELS
        assert all(0 < v <= MAX_LEVEL_VALUE for v in levels)
    assert 0 <= suite.max_error_rate <= 1
    assert 1 <= suite.script_timings <= MAX_SCRIPT_TIMINGS
    try:
        plan = build_plan(suite, INVENTORY, None, None)
    except InputError:
        return
    for stack in plan.stacks:
        assert all("\n" not in v for v in stack.params.values())


@BOUNDED
@given(data=SUITES)
def test_any_suite_parses_or_is_an_input_error(tmp_path_factory, data):
    path = tmp_path_factory.getbasetemp() / "suite.toml"
    path.write_text(toml_document(data))
    try:
        suite = parse_suite(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)), exc
        return
    check_suite(suite)


@BOUNDED
@given(raw=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_any_bytes_as_a_suite_parse_or_are_an_input_error(tmp_path_factory, raw):
    path = tmp_path_factory.getbasetemp() / "raw.toml"
    path.write_bytes(raw)
    with contextlib.suppress(InputError):
        check_suite(parse_suite(path))


# ---- manifests ------------------------------------------------------------------------------
PARAM_SPECS = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("int"),
            "min": NUMBERS,
            "max": NUMBERS,
            "default": mostly("1", "{{server_core_count}}", "x", 3),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("enum"),
            "values": st.lists(mostly("a", "b", "", "a b"), max_size=3),
            "default": mostly("a", "b", ""),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("size"), "default": mostly("64M", "2g", "1T", "-1", "0")},
        optional={"min": mostly("1M", "x"), "max": mostly("8G", "1")},
    ),
    st.fixed_dictionaries({"type": st.just("bool"), "default": st.booleans()}),
    st.fixed_dictionaries(
        {
            "type": st.just("string"),
            "default": mostly("abc", "a\nb"),
            "pattern": mostly("[a-z]+", "[a-z", ".*", ""),
        }
    ),
)
BASE_MANIFEST = {
    "name": "demo",
    "description": "a demo",
    "language": "python",
    "io_model": "event-loop",
    "workloads": ["hello"],
    "params": {
        "workers": {"type": "int", "min": 1, "max": 8, "default": "{{server_core_count}}"},
        "mode": {"type": "enum", "values": ["fast", "safe"], "default": "fast"},
    },
    "process": [{"role": "server", "command": ["{{cmd.python}}", "{{port}}"]}],
    "template": [{"src": "a.conf.in", "dest": "a.conf"}],
    "requires": [{"name": "python", "commands": ["python3"]}],
    "ready": {"path": "/hello", "timeout_s": 5},
}
MANIFEST_EDITS: list[tuple[tuple[str, ...], st.SearchStrategy[Any]]] = [
    (("name",), mostly("demo", "Demo", "other")),
    (("description",), TEXT),
    (("language",), mostly("go", "")),
    (("io_model",), mostly("event-loop", "goroutines", "callbacks")),
    (("workloads",), st.lists(mostly(*CATALOG), max_size=3)),
    (("params", "workers"), PARAM_SPECS),
    (("params", "mode"), PARAM_SPECS),
    (("params", "port"), PARAM_SPECS),
    (("params", "Bad"), PARAM_SPECS),
    (
        ("process",),
        st.lists(
            st.fixed_dictionaries(
                {
                    "role": mostly("server", ""),
                    "command": st.lists(mostly("x", "{{port}}"), max_size=2),
                },
                optional={"ready_tcp": TEXT},
            ),
            max_size=2,
        ),
    ),
    (
        ("template",),
        st.lists(
            st.fixed_dictionaries(
                {"src": mostly("a.in", "../x"), "dest": mostly("a.conf", "../../etc/x", "")}
            ),
            max_size=2,
        ),
    ),
    (
        ("requires",),
        st.lists(
            st.fixed_dictionaries(
                {"name": mostly("go", "a b")},
                optional={
                    "commands": st.lists(TEXT, max_size=2),
                    "check": st.lists(TEXT, max_size=2),
                },
            ),
            max_size=2,
        ),
    ),
    (("ready", "path"), mostly("/", "/hello", "hello", "/a b")),
    (("ready", "timeout_s"), NUMBERS),
    (("build",), st.fixed_dictionaries({"command": st.lists(mostly("go", ""), max_size=2)})),
    (("script",), st.fixed_dictionaries({"command": st.lists(mostly("x"), max_size=2)})),
    (("colour",), VALUES),
]
MANIFESTS = edits(MANIFEST_EDITS).map(lambda changes: edited(BASE_MANIFEST, changes))


def check_manifest(manifest: Manifest, overrides: dict[str, str]) -> None:
    assert manifest.name == "demo" and manifest.processes
    assert all(p.command for p in manifest.processes)
    assert all("/" not in t.dest and t.dest not in (".", "..") for t in manifest.templates)
    try:
        values = resolve_params(manifest, overrides, {"server_core_count": "2"})
    except InputError:
        return
    assert all(not any(c in v for c in "\n\r\x00") for v in values.values())


@BOUNDED
@given(
    data=MANIFESTS,
    overrides=st.dictionaries(
        mostly("workers", "mode", "nope"), mostly("1", "2", "safe", "x\ny", "{{port}}"), max_size=2
    ),
)
def test_any_manifest_parses_or_is_an_input_error(tmp_path_factory, data, overrides):
    folder = tmp_path_factory.getbasetemp() / "demo"
    folder.mkdir(exist_ok=True)
    path = folder / "stack.toml"
    path.write_text(toml_document(data))
    try:
        manifest = parse_manifest(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)), exc
        return
    check_manifest(manifest, overrides)


# ---- workload specs -------------------------------------------------------------------------
QUERIES = st.builds(
    lambda name, key, value: f"{name}?{key}={value}",
    st.sampled_from(list(CATALOG)),
    st.sampled_from(["n", "queries", "x", ""]),
    st.one_of(
        st.integers(-10, 10**7).map(str),
        TEXT,
        st.sampled_from(["²", "٣", "1e3", " 5", "0x10", "%32", "9" * 5000]),
    ),
)


def check_spec(spec: WorkloadSpec) -> None:
    w = spec.workload
    if w.param is not None and spec.value is not None:
        assert w.minimum <= spec.value <= w.maximum
    assert parse_spec(spec.label, "again") == spec


@BOUNDED
@given(text=st.one_of(QUERIES, TEXT, st.text(max_size=40)))
def test_any_workload_spec_parses_or_is_an_input_error(text):
    try:
        spec = parse_spec(text, "suite.toml: key 'workloads'")
    except InputError as exc:
        assert str(exc).startswith("suite.toml: key 'workloads'")
        return
    check_spec(spec)


@pytest.mark.parametrize("path", sorted(Path(__file__).parents[2].glob("suites/*.toml")))
def test_shipped_suites_round_trip_through_the_writer(path):
    """The writer above produces TOML the parser reads back the same (so the properties test
    the parser, not the writer)."""
    import tomllib

    data = tomllib.loads(path.read_text())
    assert tomllib.loads(toml_document(data)) == data
