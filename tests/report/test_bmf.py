"""Bencher Metric Format: one benchmark per stack, workload and level, its figures and their
95% intervals exactly as the analysis has them, and never an interval it does not have."""

import json
from pathlib import Path

import pytest
from jsonschema import Draft7Validator
from synthetic_run import fill

from stackbench.analysis.analysis import analyse
from stackbench.report import DEFAULT_FORMATS, FORMATS, write_all
from stackbench.report.bmf import benchmark_name, bmf_document
from stackbench.store.records import LevelFlag
from stackbench.store.store import Store


@pytest.fixture(scope="module")
def analysis():
    store = Store(":memory:")
    a = analyse(store.load_run(fill(store)))
    yield a
    store.close()


def test_every_valid_level_is_a_benchmark_with_its_interval(analysis) -> None:
    doc = bmf_document(analysis)
    levels = [(w.label, case, agg) for w, case, agg in analysis.valid_levels()]
    assert levels and len(doc) == len(levels)
    for label, case, agg in levels:
        measures = doc[benchmark_name(case.stack, label, agg.level_value, "connections")]
        assert measures["throughput"]["value"] == agg.throughput.value
        if agg.throughput.low is None:
            assert set(measures["throughput"]) == {"value"}
        else:
            assert measures["throughput"]["lower_value"] == agg.throughput.low
            assert measures["throughput"]["upper_value"] == agg.throughput.high
        p99 = agg.latency_us["p99"]
        assert measures["latency-p99"]["value"] == pytest.approx(p99.value / 1000)


def test_names_say_the_level_and_its_unit() -> None:
    assert benchmark_name("node", "sha256?n=10", 300, "connections") == "node/sha256?n=10@300c"
    assert benchmark_name("go", "hello", 5000, "rate") == "go/hello@5000rps"


def test_bmf_is_written_on_request_only(analysis, tmp_path) -> None:
    assert "bmf" in FORMATS and "bmf" not in DEFAULT_FORMATS
    out = write_all(analysis.data, tmp_path, ["bmf"], analysis=analysis)
    assert [p.name for p in out.iterdir()] == ["results.bmf.json"]
    assert json.loads((out / "results.bmf.json").read_text()) == json.loads(
        json.dumps(bmf_document(analysis))
    )


def test_a_level_flagged_invalid_is_left_out(analysis) -> None:
    """A dashboard would show its figure without the flag that says it decides nothing."""
    import dataclasses

    w = analysis.workloads[0]
    case = w.cases[0]
    agg = case.aggregates[0]
    invalid = dataclasses.replace(agg, status="invalid")
    aggregates = [invalid, *case.aggregates[1:]]
    cases = [dataclasses.replace(case, aggregates=aggregates), *w.cases[1:]]
    changed = dataclasses.replace(
        analysis, workloads=[dataclasses.replace(w, cases=cases), *analysis.workloads[1:]]
    )
    name = benchmark_name(case.stack, w.label, agg.level_value, "connections")
    assert name in bmf_document(analysis) and name not in bmf_document(changed)


def test_a_level_flagged_disturbed_is_left_out(analysis) -> None:
    """A disturbed level keeps its status (the comparisons show it, deciding nothing on it),
    but a dashboard would show its figure without the flag: left out, as an invalid one."""
    import dataclasses

    w = analysis.workloads[0]
    case = w.cases[0]
    agg = case.aggregates[0]
    flagged = dataclasses.replace(
        agg, flags=(*agg.flags, LevelFlag.DISTURBED.detail("other processes used 20% of core 0"))
    )
    cases = [dataclasses.replace(case, aggregates=[flagged, *case.aggregates[1:]]), *w.cases[1:]]
    changed = dataclasses.replace(
        analysis, workloads=[dataclasses.replace(w, cases=cases), *analysis.workloads[1:]]
    )
    name = benchmark_name(case.stack, w.label, agg.level_value, "connections")
    assert flagged.status == "ok"
    assert name in bmf_document(analysis) and name not in bmf_document(changed)


# Bencher's documented JSON schema of BMF (bencher.dev/docs/reference/bencher-metric-format),
# kept beside this test, and the limits the same page states: a benchmark name of at most 1024
# characters, a measure slug of at most 64.
BMF_SCHEMA = Path(__file__).with_name("bmf.schema.json")


def test_the_document_is_valid_bmf_by_bencher_s_schema(analysis, tmp_path) -> None:
    out = write_all(analysis.data, tmp_path, ["bmf"], analysis=analysis)
    doc = json.loads((out / "results.bmf.json").read_text())
    validator = Draft7Validator(json.loads(BMF_SCHEMA.read_text()))
    assert not list(validator.iter_errors(doc))
    assert doc  # the synthetic run has valid levels: an empty object would prove nothing
    for name, measures in doc.items():
        assert 0 < len(name) <= 1024
        for slug, metric in measures.items():
            assert 0 < len(slug) <= 64 and slug == slug.lower() and " " not in slug
            if "lower_value" in metric:
                assert metric["lower_value"] <= metric["value"] <= metric["upper_value"]


def test_the_schema_check_can_fail() -> None:
    validator = Draft7Validator(json.loads(BMF_SCHEMA.read_text()))
    assert list(validator.iter_errors({"node/hello@50c": {"throughput": {"lower_value": 1.0}}}))
    assert list(validator.iter_errors({"node/hello@50c": {"throughput": {"value": "fast"}}}))
