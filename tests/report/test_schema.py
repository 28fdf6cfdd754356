"""results.json follows its published schema (docs/schema/results.schema.json)."""

import json
from pathlib import Path

import jsonschema
import pytest
from synthetic_run import add_case, fill, start_run

from stackbench.report import write_all
from stackbench.store.store import Store

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schema" / "results.schema.json"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _results(tmp_path, fill_store):
    store = Store(":memory:")
    run = fill_store(store)
    return json.loads((write_all(store.load_run(run), tmp_path, ["json"])
                       / "results.json").read_text())


def test_a_full_run_validates(validator, tmp_path):
    doc = _results(tmp_path, fill)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert errors == [], "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    assert doc["levels"] and doc["workloads"][0]["cases"][0]["aggregates"]


def test_an_interrupted_run_without_levels_validates(validator, tmp_path):
    def interrupted(store):
        run = start_run(store, "x")
        add_case(store, run, "go", "hello")
        return run
    doc = _results(tmp_path, interrupted)
    assert list(validator.iter_errors(doc)) == []
    assert doc["run"]["status"] == "running" and doc["levels"] == []


def test_the_schema_rejects_a_wrong_document(validator, tmp_path):
    doc = _results(tmp_path, fill)
    doc["levels"][0]["requests_per_s"] = "fast"
    doc["unexpected"] = 1
    messages = [e.message for e in validator.iter_errors(doc)]
    assert any("'fast' is not of type 'number'" in m for m in messages)
    assert any("unexpected" in m for m in messages)
