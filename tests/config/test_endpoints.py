"""A suite's own workloads, [endpoints.NAME]: parsed into one typed record, every bad value
refused with one message naming the file and the key, listed in `workloads` like catalog ones,
planned only on the stacks whose manifest lists them."""

import json
from pathlib import Path

import pytest
from rich.console import Console

from stackbench.commands.new_stack import new_stack
from stackbench.config.endpoints import WILDCARD, parse_json_path
from stackbench.config.estimate import plan_timeline
from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite
from stackbench.config.workloads import BodyStability, Group
from stackbench.errors import InputError
from stackbench.lab.inventory import load_inventory

QUIET = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - lives as long as the tests

ITEMS = """
[endpoints.items]
path = "/items?id=7"
method = "POST"
body = '{"name": "widget"}'
headers = { content-type = "application/json" }
expect = { status = 201, same_across_stacks = true }
ignore = ["$.now", "$.rows[*].at"]
"""


def suite(folder: Path, tail: str, workloads: str = '["items"]', stacks: str = '["node"]') -> Path:
    path = folder / "mine.toml"
    path.write_text(
        f'name = "mine"\nstacks = {stacks}\nworkloads = {workloads}\n{tail}\n'
        "[load]\nconnections = [5]\nduration_s = 2\n"
    )
    return path


def own_stack(folder: Path, name: str, workloads: str) -> None:
    manifest = new_stack(QUIET, folder / name, "node")
    text = manifest.read_text().replace('workloads = ["hello"]', f"workloads = {workloads}")
    manifest.write_text(text)


def test_an_endpoint_is_parsed_into_one_record(tmp_path) -> None:
    parsed = parse_suite(suite(tmp_path, ITEMS, '["items", "hello"]'))
    spec = parsed.workloads[0]
    endpoint = parsed.endpoints["items"]
    assert spec.workload.endpoint is endpoint
    assert (spec.label, spec.path, spec.workload.group) == ("items", "/items?id=7", Group.OWN)
    assert (endpoint.method, endpoint.status, endpoint.same_across_stacks) == ("POST", 201, True)
    assert endpoint.header_lines == ("content-type: application/json",)
    assert endpoint.body == '{"name": "widget"}'
    assert [p.steps for p in endpoint.ignore] == [("now",), ("rows", WILDCARD, "at")]
    # fields that legitimately differ make the bytes vary: the loader cannot hash them
    assert spec.workload.stability is BodyStability.VARIES
    assert parsed.workloads[1].label == "hello"


def test_a_get_with_no_expectations_defaults_to_status_200(tmp_path) -> None:
    endpoint = parse_suite(suite(tmp_path, '[endpoints.items]\npath = "/items"')).endpoints["items"]
    assert (endpoint.method, endpoint.status, endpoint.body, endpoint.plain_get) == (
        "GET",
        200,
        None,
        True,
    )


def test_body_file_is_read_from_the_suites_folder(tmp_path) -> None:
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "item.json").write_text('{"a": 1}')
    tail = '[endpoints.items]\npath = "/items"\nmethod = "PUT"\nbody_file = "bodies/item.json"'
    assert parse_suite(suite(tmp_path, tail)).endpoints["items"].body == '{"a": 1}'


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ('[endpoints.items]\nmethod = "GET"', "endpoints.items.*path"),
        ('[endpoints.items]\npath = "items"', "key 'path'.*start with '/'"),
        ('[endpoints.items]\npath = "/a b"', "key 'path'"),
        ('[endpoints.items]\npath = "/i"\nmethod = "DELETE"', "method"),
        ('[endpoints.items]\npath = "/i"\nbody = "x"', 'a body needs method = "POST"'),
        (
            '[endpoints.items]\npath = "/i"\nmethod = "POST"\nbody = "x"\nbody_file = "f"',
            "body or body_file, not both",
        ),
        (
            '[endpoints.items]\npath = "/i"\nmethod = "POST"\nbody_file = "../secret"',
            "leads out of the suite's folder",
        ),
        (
            '[endpoints.items]\npath = "/i"\nmethod = "POST"\nbody_file = "/etc/passwd"',
            "leads out of the suite's folder",
        ),
        ('[endpoints.items]\npath = "/i"\nmethod = "POST"\nbody_file = "nope"', "is not a file"),
        ('[endpoints.items]\npath = "/i"\nheaders = { "a b" = "x" }', "not a header name"),
        ('[endpoints.items]\npath = "/i"\nheaders = { x = "a\\nb" }', "control characters"),
        ('[endpoints.items]\npath = "/i"\nheaders = { Host = "x" }', "set by the load tool"),
        ('[endpoints.items]\npath = "/i"\nexpect = { status = 42 }', "status"),
        ('[endpoints.items]\npath = "/i"\nexpect = { body_sha256 = "abc" }', "64 lowercase hex"),
        ('[endpoints.items]\npath = "/i"\nignore = ["$.now"]', "needs expect.same_across"),
        (
            '[endpoints.items]\npath = "/i"\nignore = ["now"]\n'
            "expect = { same_across_stacks = true }",
            "not a JSON path",
        ),
        ('[endpoints.items]\npath = "/i"\nsurprise = 1', "surprise"),
        ('[endpoints.hello]\npath = "/i"', "'hello' is a catalog workload"),
        ('[endpoints."Bad Name"]\npath = "/i"', "not a valid name"),
    ],
)
def test_bad_endpoints_name_the_file_and_key(tmp_path, tail, message) -> None:
    with pytest.raises(InputError, match=message) as caught:
        parse_suite(suite(tmp_path, tail))
    assert str(tmp_path / "mine.toml") in str(caught.value)


def test_the_body_file_escape_message_names_the_key(tmp_path) -> None:
    (tmp_path / "inner").mkdir()
    path = tmp_path / "inner" / "mine.toml"
    (tmp_path / "secret.json").write_text("{}")
    path.write_text(
        'stacks = ["node"]\nworkloads = ["items"]\n[endpoints.items]\npath = "/i"\n'
        'method = "POST"\nbody_file = "../secret.json"\n'
    )
    with pytest.raises(InputError, match=r"\[endpoints.items\] key 'body_file': '../secret"):
        parse_suite(path)


SCHEMA_KEY = r"\[endpoints.items\] key 'expect.json_schema': "


def schema_suite(folder: Path, name: str = "schemas/item.json") -> Path:
    return suite(folder, f'[endpoints.items]\npath = "/i"\nexpect = {{ json_schema = "{name}" }}')


def test_a_json_schema_is_read_from_the_suites_folder_and_checked(tmp_path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "item.json").write_text(
        '{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",\n'
        ' "properties": {"id": {"$ref": "#/definitions/id"}},\n'
        ' "definitions": {"id": {"type": "integer"}}}'
    )
    endpoint = parse_suite(schema_suite(tmp_path)).endpoints["items"]
    assert endpoint.json_schema is not None
    assert endpoint.json_schema.file == "schemas/item.json"
    assert json.loads(endpoint.json_schema.text)["definitions"] == {"id": {"type": "integer"}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{nope", "is not JSON: "),
        ('["type"]', "is not a JSON Schema: give an object"),
        ('{"type": "objec"}', "is not a valid JSON Schema: at \\$.type: 'objec' is not valid"),
        ('{"minimum": "3"}', "is not a valid JSON Schema: at \\$.minimum: '3' is not of type"),
        ('{"$schema": "http://example.com/mine"}', "names the dialect .* not one known here"),
        ('{"$schema": 7}', "names the dialect .*7.* not one known here"),
        (
            '{"properties": {"a": {"$ref": "https://example.com/a.json"}}}',
            "refers outside itself .*https://example.com/a.json.*nothing is fetched",
        ),
        ('{"$ref": "other.json#/a"}', "refers outside itself"),
    ],
)
def test_a_bad_schema_is_refused_when_the_suite_is_parsed(tmp_path, text, message) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "item.json").write_text(text)
    with pytest.raises(InputError, match=SCHEMA_KEY + "'schemas/item.json' " + message) as caught:
        parse_suite(schema_suite(tmp_path))
    assert caught.value.exit_code == 2


def test_a_ref_inside_data_keywords_is_data(tmp_path) -> None:
    (tmp_path / "item.json").write_text('{"const": {"$ref": "https://example.com/x"}}')
    assert parse_suite(schema_suite(tmp_path, "item.json")).endpoints["items"].json_schema


@pytest.mark.parametrize("name", ["../outside.json", "/etc/hostname", "link.json", "ln/o.json"])
def test_a_schema_outside_the_suites_folder_is_refused(tmp_path, name) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "outside.json").write_text("{}")
    (tmp_path / "o.json").write_text("{}")
    (inner / "link.json").symlink_to(tmp_path / "outside.json")
    (inner / "ln").symlink_to(tmp_path)
    with pytest.raises(InputError, match=SCHEMA_KEY + ".*leads out of the suite's folder"):
        parse_suite(schema_suite(inner, name))


def test_a_missing_schema_is_named(tmp_path) -> None:
    with pytest.raises(InputError, match=SCHEMA_KEY + "'nope.json' .* is not a file"):
        parse_suite(schema_suite(tmp_path, "nope.json"))


def test_an_endpoint_not_listed_in_workloads_is_refused(tmp_path) -> None:
    with pytest.raises(InputError, match=r'\[endpoints.items\] is not in .* add "items"'):
        parse_suite(suite(tmp_path, '[endpoints.items]\npath = "/i"', '["hello"]'))


def test_an_endpoint_takes_no_parameters(tmp_path) -> None:
    with pytest.raises(InputError, match="no parameters"):
        parse_suite(suite(tmp_path, '[endpoints.items]\npath = "/i"', '["items?n=3"]'))


def test_an_unknown_workload_suggests_an_endpoint(tmp_path) -> None:
    with pytest.raises(InputError, match=r"unknown workload 'items'.*\[endpoints.items\]"):
        parse_suite(suite(tmp_path, "", '["items"]'))


def test_wrk_and_ab_send_only_a_plain_get(tmp_path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(
        f'stacks = ["node"]\nworkloads = ["items"]\n{ITEMS}\n[load]\ndriver = "wrk"\n'
        "connections = [5]\nduration_s = 2\n"
    )
    with pytest.raises(InputError, match='need \\[load\\] driver = "native"'):
        parse_suite(path)
    path.write_text(
        'stacks = ["node"]\nworkloads = ["items"]\n[endpoints.items]\npath = "/i"\n'
        '[load]\ndriver = "ab"\nconnections = [5]\nrequests = 100\n'
    )
    assert parse_suite(path).endpoints["items"].plain_get


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("$.now", ("now",)),
        ("$.a.b", ("a", "b")),
        ("$.items[0].id", ("items", 0, "id")),
        ("$[*].at", (WILDCARD, "at")),
        ('$["odd key"].x', ("odd key", "x")),
    ],
)
def test_json_paths(text, steps) -> None:
    assert parse_json_path(text, "w").steps == steps


@pytest.mark.parametrize("text", ["now", "$", "$.", "$..a", "$[x]", "$.a[", '$["a]'])
def test_bad_json_paths(text) -> None:
    with pytest.raises(InputError, match="w: "):
        parse_json_path(text, "w")


def test_own_stacks_list_the_suites_endpoints_and_are_planned_only_with_what_they_serve(
    tmp_path,
) -> None:
    own_stack(tmp_path, "a", '["hello", "items"]')
    own_stack(tmp_path, "b", '["hello"]')
    parsed = parse_suite(suite(tmp_path, ITEMS, '["items", "hello"]', '["./a", "./b"]'))
    plan = build_plan(parsed, load_inventory(own=parsed.own_stacks), None, None)
    served = {st.name: [c.spec.label for c in st.cases] for st in plan.stacks}
    assert served == {"a": ["items", "hello"], "b": ["hello"]}


def test_a_workload_no_stack_serves_is_refused(tmp_path) -> None:
    own_stack(tmp_path, "a", '["hello"]')
    parsed = parse_suite(suite(tmp_path, ITEMS, '["items", "hello"]', '["./a"]'))
    with pytest.raises(InputError, match=r"\[endpoints.items\]: no stack of the suite serves it"):
        build_plan(parsed, load_inventory(own=parsed.own_stacks), None, None)


def test_a_stack_serving_none_of_the_workloads_is_refused(tmp_path) -> None:
    own_stack(tmp_path, "a", '["hello", "items"]')
    parsed = parse_suite(suite(tmp_path, ITEMS, '["items"]', '["./a", "node"]'))
    with pytest.raises(InputError, match="'node' serves none of the suite's workloads"):
        build_plan(parsed, load_inventory(own=parsed.own_stacks), None, None)


def test_a_catalog_stack_must_still_serve_every_catalog_workload(tmp_path) -> None:
    own_stack(tmp_path, "a", '["hello", "items"]')
    parsed = parse_suite(suite(tmp_path, ITEMS, '["items", "json"]', '["./a", "node"]'))
    with pytest.raises(InputError, match="stack 'a' does not implement workload 'json'"):
        build_plan(parsed, load_inventory(own=parsed.own_stacks), None, None)


def test_an_own_manifest_may_not_list_a_workload_the_suite_does_not_define(tmp_path) -> None:
    own_stack(tmp_path, "a", '["hello", "orders"]')
    with pytest.raises(InputError, match="unknown workload 'orders'.*endpoints.*items"):
        parse_suite(suite(tmp_path, ITEMS, '["items"]', '["./a"]'))


def test_the_plan_counts_one_more_start_of_each_stack_whose_answers_are_compared(
    tmp_path,
) -> None:
    own_stack(tmp_path, "a", '["hello", "items"]')
    own_stack(tmp_path, "b", '["hello"]')
    compared = parse_suite(suite(tmp_path, ITEMS, '["items", "hello"]', '["./a", "./b"]'))
    plain = parse_suite(
        suite(tmp_path, '[endpoints.items]\npath = "/i"', '["items", "hello"]', '["./a", "./b"]')
    )
    starts = {}
    for name, parsed in (("compared", compared), ("plain", plain)):
        plan = build_plan(parsed, load_inventory(own=parsed.own_stacks), None, None)
        steps = plan_timeline(plan).steps
        starts[name] = [s.stack for s in steps if s.kind == "stack start"]
    # a is asked for items before any load; b serves no compared endpoint
    assert starts == {"compared": ["a", "a", "b"], "plain": ["a", "b"]}
