"""results.csv and results.json name the steady-window figures and the whole-level ones apart,
and say which one the report's headline uses (a headline of 85,319 from the steady window
beside a whole-level 85,571 once had no column saying which was which)."""

import csv
import io
import json

import msgspec
import pytest
from measured import second
from synthetic_run import add_case, add_level, settings, start_run

from stackbench.analysis.analysis import analyse
from stackbench.report import write_all
from stackbench.store.store import Store

SECONDS = 30
STEADY_RPS = 1_000.0


def _level(rep: int, steady: bool) -> dict[str, object]:
    # a ramp over the first two seconds, then flat (a steady window), or a level that keeps
    # climbing (no steady state)
    rates = (
        [300.0, 700.0] + [STEADY_RPS + (7 if t % 2 else -7) for t in range(SECONDS - 2)]
        if steady
        else [100.0 * (t + 1) for t in range(SECONDS)]
    )
    series = [
        msgspec.to_builtins(second(t + 1, r, p50_us=500.0, p99_us=900.0))
        for t, r in enumerate(rates)
    ]
    completed = sum(round(r) for r in rates)
    return {
        "level_index": 0,
        "level_value": 10.0,
        "repetition": rep,
        "driver": "native",
        "mode": "closed",
        "keepalive": "on",
        "started_at": 0.0,
        "duration_s": SECONDS,
        "completed": completed,
        "ok": completed,
        "errors": {},
        "requests_per_s": completed / SECONDS,
        "latency_us": {"p50": 500.0, "p99": 900.0},
        "timeseries": series,
        "usage": {},
        "status": "ok",
    }


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    store = Store(":memory:")
    run = start_run(store, "t", run_settings=settings(repeat=2, levels=[10], slo=None))
    for stack, steady in (("steady", True), ("climbing", False)):
        case = add_case(store, run, stack, "hello", status="ok")
        for rep in range(2):
            add_level(store, case, _level(rep, steady))
    data = store.load_run(run)
    yield write_all(data, tmp_path_factory.mktemp("exports"), ["csv", "json"]), analyse(data)
    store.close()


def test_csv_names_steady_and_whole_level_figures(out):
    path, _ = out
    rows = list(csv.DictReader(io.StringIO((path / "results.csv").read_text())))
    steady = [r for r in rows if r["stack"] == "steady"]
    climbing = [r for r in rows if r["stack"] == "climbing"]
    for r in steady:
        assert r["headline_source"] == "steady window"
        assert float(r["rps_steady"]) == pytest.approx(STEADY_RPS, rel=0.01)
        # the ramp-up pulls the whole level's figure below the steady window's
        assert float(r["rps_whole_level"]) < float(r["rps_steady"]) - 20
    for r in climbing:
        assert r["headline_source"].startswith("whole level: ")
        assert r["rps_steady"] == "" and float(r["rps_whole_level"]) > 0


def test_json_names_them_too_and_agrees_with_the_headline(out):
    path, a = out
    doc = json.loads((path / "results.json").read_text())
    assert doc["schema"] == "stackbench-results/4"
    level = next(lv for lv in doc["levels"] if lv["headline_source"] == "steady window")
    assert level["rps_whole_level"] == level["requests_per_s"]
    assert level["rps_steady"] == pytest.approx(STEADY_RPS, rel=0.01)
    cases = {c["stack"]: c for c in doc["workloads"][0]["cases"]}
    assert cases["steady"]["headline_sources"] == ["steady window"]
    assert cases["climbing"]["headline_sources"][0].startswith("whole level: ")
    # the headline (over repetitions) is built from the steady figures where there are some
    headline = cases["steady"]["aggregates"][0]["throughput"]["value"]
    assert headline == pytest.approx(STEADY_RPS, rel=0.01)
    assert a.workloads[0].cases[0].aggregates[0].throughput.value == pytest.approx(headline)
