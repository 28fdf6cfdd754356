"""A suite's own endpoint: what counts as the same answer on every stack (JSON: the same
document whatever the key order, whitespace or a number's spelling; the ignored fields left
out), which answer is the reference, and the one sentence that names the field that differs."""

import hashlib
import json
from decimal import Decimal

import pytest

from stackbench.config.endpoints import Endpoint, JsonSchema, parse_json_path
from stackbench.lab.httpget import Response
from stackbench.verify.endpoint import (
    Answer,
    Reference,
    agreed,
    answer_of,
    check_answer,
    difference,
    drop,
    first_difference,
    parse_document,
    schema_problem,
)

SAME = Endpoint(
    "items",
    "/items",
    "POST",
    body="{}",
    same_across_stacks=True,
    ignore=(parse_json_path("$.now", "t"), parse_json_path("$.rows[*].at", "t")),
)


def answer(stack: str, body: bytes, endpoint: Endpoint = SAME, status: int = 200) -> Answer:
    return answer_of(endpoint, stack, Response(status, {}, body))


def doc(text: str) -> object:
    return parse_document(text.encode())[1]


def test_key_order_whitespace_and_number_spelling_do_not_count() -> None:
    a = answer("a", b'{"id": 7, "price": 2.50, "tags": ["x", "y"]}')
    b = answer("b", b'{\n  "tags": ["x","y"],\n  "price": 2.5,\n  "id": 7.0\n}')
    assert a.key == b.key
    assert first_difference(a.document, b.document) is None


def test_an_array_in_another_order_is_another_document() -> None:
    assert first_difference(doc('{"t": [1, 2]}'), doc('{"t": [2, 1]}')) == ("$.t[0]", "1", "2")


def test_true_is_not_one_and_null_is_not_absent() -> None:
    assert first_difference(doc('{"a": true}'), doc('{"a": 1}')) == ("$.a", "true", "1")
    assert first_difference(doc('{"a": null}'), doc("{}")) == ("$.a", "null", "absent")
    assert first_difference(doc('"1"'), doc("1")) == ("$", '"1"', "1")


def test_the_first_difference_is_named_by_its_path_and_both_values() -> None:
    mine = doc('{"id": 7, "rows": [{"n": 1}, {"n": 2, "name": "x y"}], "total": 84}')
    theirs = doc('{"id": 7, "rows": [{"n": 1}, {"n": 2, "name": "x z"}], "total": 42}')
    assert first_difference(mine, theirs) == ("$.rows[1].name", '"x y"', '"x z"')
    assert first_difference(doc('{"a b": 1}'), doc('{"a b": 2}')) == ('$["a b"]', "1", "2")
    assert first_difference(doc("[1, 2, 3]"), doc("[1, 2]")) == ("$", "3 items", "2 items")


def test_long_values_are_cut() -> None:
    _, shown, _ = first_difference(doc('{"a": "' + "x" * 200 + '"}'), doc('{"a": ""}')) or ("",) * 3
    assert len(shown) == 60 and shown.endswith("...")


def test_ignored_fields_are_dropped_before_comparing() -> None:
    a = answer("a", b'{"now": 1, "id": 7, "rows": [{"at": 5, "n": 1}, {"at": 6, "n": 2}]}')
    b = answer("b", b'{"now": 2, "id": 7, "rows": [{"at": 9, "n": 1}, {"at": 1, "n": 2}]}')
    assert a.key == b.key
    assert a.document == {"id": Decimal(7), "rows": [{"n": Decimal(1)}, {"n": Decimal(2)}]}


@pytest.mark.parametrize(
    ("document", "path", "left"),
    [
        ({"a": 1, "b": 2}, "$.a", {"b": 2}),
        ({"a": {"b": 1, "c": 2}}, "$.a.b", {"a": {"c": 2}}),
        ([1, 2, 3], "$[1]", [1, 3]),
        ([1, 2], "$[5]", [1, 2]),
        ({"a": 1}, "$.missing.deeper", {"a": 1}),
        ({"a": [{"x": 1, "y": 2}, {"x": 3}]}, "$.a[*].x", {"a": [{"y": 2}, {}]}),
        ({"a": 1, "b": 2}, "$[*]", {}),
        ("text", "$.a", "text"),
    ],
)
def test_drop(document, path, left) -> None:
    assert drop(document, parse_json_path(path, "t").steps) == left


def test_the_reference_is_what_most_stacks_answer() -> None:
    a = answer("a", b'{"total": 42}')
    b = answer("b", b'{"total": 43}')
    c = answer("c", b'{ "total" : 43 }')
    reference = agreed([a, b, c])
    assert reference is not None and reference.stacks == ("b", "c")
    assert difference(a, reference) == (
        "answers a different document than b, c: $.total is 42 here, 43 on b, c"
    )
    assert difference(b, reference) is None


def test_on_a_tie_the_stack_listed_first_is_the_reference() -> None:
    reference = agreed([answer("a", b"[1]"), answer("b", b"[2]")])
    assert reference is not None and reference.stacks == ("a",)
    assert agreed([]) is None


def test_bodies_that_are_not_json_are_compared_byte_for_byte() -> None:
    plain = Endpoint("page", "/page", same_across_stacks=True)
    a, b = answer("a", b"<p>1</p>", plain), answer("b", b"<p>2</p>", plain)
    assert not a.is_json
    reference = Reference(a, ("a",))
    assert difference(b, reference) == (
        "answers a different document than a: the body is '<p>2</p>' here, '<p>1</p>' on a"
    )
    assert difference(answer("c", b"[1]", plain), reference) == (
        "answers a different document than a: JSON on this stack, not on the other"
    )


def test_check_answer_names_status_hash_and_sameness() -> None:
    reference = Reference(answer("a", b'{"now": 1, "total": 42}'), ("a",))
    assert check_answer(SAME, answer("b", b'{"now": 9, "total": 42}'), reference) == []
    assert check_answer(SAME, answer("b", b"oops", status=500), reference) == [
        "POST /items: status 500, expected 200 ('oops')"
    ]
    assert check_answer(SAME, answer("b", b'{"total": 41}'), reference) == [
        "POST /items: answers a different document than a: $.total is 41 here, 42 on a"
    ]
    assert check_answer(SAME, answer("b", b"total"), reference)[0].startswith(
        "POST /items: the body is not JSON, so its ignore fields cannot be left out"
    )
    hashed = Endpoint("h", "/h", body_sha256=hashlib.sha256(b"ok").hexdigest())
    assert check_answer(hashed, answer("b", b"ok", hashed), None) == []
    [problem] = check_answer(hashed, answer("b", b"no", hashed), None)
    assert problem.startswith("GET /h: body SHA-256 ") and "expected 2689367b205c..." in problem


ITEM_SCHEMA = JsonSchema(
    "item.schema.json",
    json.dumps(
        {
            "type": "object",
            "required": ["id", "total", "rows"],
            "properties": {
                "id": {"type": "integer"},
                "total": {"type": "integer", "minimum": 0},
                "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}},
            },
            "$defs": {"row": {"type": "object", "required": ["at"]}},
        }
    ),
)
SCHEMA = Endpoint("items", "/items", json_schema=ITEM_SCHEMA)


def test_a_body_that_meets_the_schema_passes() -> None:
    body = b'{"id": 7, "total": 42, "rows": [{"at": 1}], "extra": "allowed"}'
    assert schema_problem(ITEM_SCHEMA, body) is None
    assert check_answer(SCHEMA, answer("a", body, SCHEMA), None) == []


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        (b'{"id": 7, "total": "42", "rows": []}', "at $.total: '42' is not of type 'integer'"),
        (b'{"id": 7, "total": -1, "rows": []}', "at $.total: -1 is less than the minimum of 0"),
        (b'{"id": 7, "rows": []}', "at $: 'total' is a required property"),
        # a $ref within the file is followed, and the path is the instance's, not the schema's
        (
            b'{"id": 7, "total": 1, "rows": [{"at": 1}, {}]}',
            "at $.rows[1]: 'at' is a required property",
        ),
        # JSON's integers: 7.5 is not one (read as JSON defines numbers, not as Decimal)
        (b'{"id": 7.5, "total": 1, "rows": []}', "at $.id: 7.5 is not of type 'integer'"),
    ],
)
def test_a_body_that_fails_the_schema_names_the_field_and_the_complaint(body, complaint) -> None:
    assert (
        schema_problem(ITEM_SCHEMA, body) == f"the body does not meet item.schema.json: {complaint}"
    )


def test_several_failures_say_how_many_more() -> None:
    problem = schema_problem(ITEM_SCHEMA, b'{"id": "x", "total": "y", "rows": []}')
    assert problem is not None and problem.endswith("(and 1 more)")


def test_a_body_that_is_not_json_cannot_meet_a_schema() -> None:
    [problem] = check_answer(SCHEMA, answer("a", b"<p>hi</p>", SCHEMA), None)
    assert problem == (
        "GET /items: the body is not JSON, so item.schema.json cannot check it ('<p>hi</p>')"
    )


def test_a_long_complaint_is_cut_to_one_short_line() -> None:
    body = json.dumps({"id": "x" * 1000, "total": 1, "rows": []}).encode()
    problem = schema_problem(ITEM_SCHEMA, body)
    assert problem is not None and len(problem) < 300 and "..." in problem


def test_the_schema_and_sameness_are_both_checked() -> None:
    both = Endpoint("items", "/items", same_across_stacks=True, json_schema=ITEM_SCHEMA)
    reference = Reference(answer("a", b'{"id": 7, "total": 42, "rows": []}', both), ("a",))
    problems = check_answer(
        both, answer("b", b'{"id": 7, "total": "42", "rows": []}', both), reference
    )
    assert [p.split(":")[1].strip() for p in problems] == [
        "the body does not meet item.schema.json",
        "answers a different document than a",
    ]
