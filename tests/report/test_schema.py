"""results.json follows its published schema (docs/schema/results.schema.json), which is
generated from the document's types (`make schema`)."""

import json
from pathlib import Path

import jsonschema
import pytest
from synthetic_run import add_case, fill, start_run, supersede_some

from stackbench.analysis.analysis import analyse
from stackbench.analysis.figures import BY_CLAIM_METRIC, LEVEL_FIGURES
from stackbench.config.claims import LEVEL_METRICS
from stackbench.report import tables, write_all
from stackbench.report.exports import CSV_COLUMNS
from stackbench.report.schema import results_schema
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
    return json.loads(
        (write_all(store.load_run(run), tmp_path, ["json"]) / "results.json").read_text()
    )


def test_the_committed_schema_is_generated_from_the_types():
    assert SCHEMA.read_text() == results_schema(), "stale: run `make schema` and commit it"


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


def test_a_run_with_superseded_measurements_validates_without_them(validator, tmp_path):
    """The document's levels all stand: a superseded measurement is not among them, and the
    schema has neither the mark nor its definition."""

    def disturbed(store):
        run = fill(store)
        supersede_some(store, run)
        return run

    doc = _results(tmp_path, disturbed)
    assert list(validator.iter_errors(doc)) == []
    assert len(doc["levels"]) == len(_results(tmp_path / "plain", fill)["levels"])
    schema = json.loads(SCHEMA.read_text())["$defs"]
    assert "superseded" not in schema["LevelExport"]["properties"]
    assert "Superseded" not in schema


def test_the_schema_rejects_a_wrong_document(validator, tmp_path):
    doc = _results(tmp_path, fill)
    doc["levels"][0]["requests_per_s"] = "fast"
    doc["unexpected"] = 1
    messages = [e.message for e in validator.iter_errors(doc)]
    assert any("'fast' is not of type 'number'" in m for m in messages)
    assert any("unexpected" in m for m in messages)


def test_a_multi_host_level_validates(validator, tmp_path):
    """Hosts per role, the loaders' start skew, each loader's part and the placement's hosts."""
    doc = _results(tmp_path, fill)
    doc["run"]["settings"]["placement"].update(server_host="h1", loader_hosts=["h2", "h3"])
    doc["levels"][0].update(
        hosts={"server": "h1", "loader@h2": "h2", "loader@h3": "h3"},
        start_skew_s=0.004,
        loader_parts=[
            {
                "host": h,
                "connections": 10,
                "rate": None,
                "completed": 100,
                "errors": 0,
                "requests_per_s": 50.0,
                "started_at": 1.7e9,
                "histogram": None,
            }
            for h in ("h2", "h3")
        ],
    )
    assert list(validator.iter_errors(doc)) == []
    doc["levels"][0]["loader_parts"][0]["connections"] = "ten"
    doc["run"]["settings"]["placement"]["loader_hosts"] = [2]
    assert len(list(validator.iter_errors(doc))) == 2


def test_every_level_figure_reaches_every_output_from_its_one_definition(tmp_path):
    """A figure of analysis/figures.py is a field of each level and each aggregate in
    results.json (described in the schema by its meaning and unit), a results.csv column and a
    column of the detail table, with nothing else to edit."""
    doc = _results(tmp_path, fill)
    schema = json.loads(SCHEMA.read_text())["$defs"]
    names = [f.name for f in LEVEL_FIGURES]
    assert len(names) >= 6 and len(set(names)) == len(names)
    aggregate = doc["workloads"][0]["cases"][0]["aggregates"][0]
    for figure in LEVEL_FIGURES:
        assert figure.name in doc["levels"][0] and figure.name in aggregate
        for record in ("LevelExport", "LevelAggregate"):
            prop = schema[record]["properties"][figure.name]
            assert prop["description"] == figure.described
            assert figure.name in schema[record]["required"]
        assert figure.name in CSV_COLUMNS
    store = Store(":memory:")
    analysis = analyse(store.load_run(fill(store)))
    header = tables.detail(analysis, analysis.workloads[0]).header
    assert [f.header for f in LEVEL_FIGURES] == [
        h for h in header if h in {f.header for f in LEVEL_FIGURES}
    ]
    # A claim may test the figures that name a claims metric, under that metric's name.
    assert set(BY_CLAIM_METRIC) <= set(LEVEL_METRICS)
