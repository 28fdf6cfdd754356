"""Report files and terminal views from synthetic runs in an in-memory store."""

import csv
import fnmatch
import io
import json
import re

import msgspec
import pytest
from hdrh.histogram import HdrHistogram
from rich.console import Console

from stackbench.analysis.analysis import analyse
from stackbench.analysis.findings import findings
from stackbench.report import EXPORTERS, FORMATS, write_all
from stackbench.report.terminal import level_line, print_run, print_runs
from stackbench.store.records import (
    CaseRecord,
    Environment,
    LevelRecord,
    RunRecord,
    RunSettings,
    ScriptRecord,
    VerificationRecord,
    dec_hook,
)
from stackbench.store.store import Store
from tests.measured import second, usage

CONNECTIONS = [1, 10, 100]
# req/s per (stack, level index); node's p99 crosses the 5 ms SLO at 100 connections
CAPACITY = {"go": [9_000, 40_000, 41_000], "node": [8_000, 20_000, 20_500]}
P99_US = {"go": [300, 900, 3_000], "node": [400, 2_000, 9_000]}
USAGE_ROLES = {"go": ["server"], "node": ["node"]}


def _settings(slo, driver="native", repeat=3):
    return {
        "mode": "closed",
        "level_kind": "connections",
        "keepalive": "on",
        "driver": driver,
        "duration_s": 3.0,
        "requests": None,
        "requests_per_connection": None,
        "warmup_s": 0.0,
        "timeout_s": 3.0,
        "pause_s": 0.0,
        "repeat": repeat,
        "threads": 0,
        "pipeline": 1,
        "jit_warmup": True,
        "levels": CONNECTIONS,
        "max_error_rate": 0.01,
        "variant": "",
        "description": "",
        "slo": slo,
        "search": None,
        "script_iterations": 0,
        "variants": {},
        "workload_levels": {},
        "workload_durations": {},
        "placement": {"server": [0], "loader": [1], "services": [0]},
    }


# The store takes typed records; these build them from the plain values the tests write.
def _start_run(store, name, path, text, settings, environment):
    return store.start_run(
        RunRecord(
            suite_name=name,
            suite_path=path,
            suite_text=text,
            settings=msgspec.convert(settings, RunSettings),
            environment=msgspec.convert(environment, Environment),
            started_at=1_700_000_000.0,
        )
    )


def _add_case(store, run, stack, workload, label, path, params, status="pending", reason=""):
    return store.add_case(
        CaseRecord(
            run_id=run,
            stack=stack,
            workload=workload,
            label=label,
            path=path,
            params=params,
            status=status,
            reason=reason,
        )
    )


def _add_verification(store, run, stack, workload, ok, checked, failures):
    store.add_verification(
        VerificationRecord(
            run_id=run,
            stack=stack,
            workload=workload,
            ok=ok,
            checked=checked,
            failures=tuple(failures),
            at=0.0,
        )
    )


def _add_script(store, run, stack, label, iterations, times, outcome):
    wall, user, sys = times or (None, None, None)
    store.add_script(
        ScriptRecord(
            run_id=run,
            stack=stack,
            label=label,
            iterations=iterations,
            wall_s=wall,
            user_s=user,
            sys_s=sys,
            outcome=outcome,
        )
    )


def _add_level(store, case, values):
    return store.add_level(
        msgspec.convert({**values, "case_id": case}, LevelRecord, dec_hook=dec_hook)
    )


ENV = {
    "cpu_model": "Test CPU",
    "cores": 2,
    "kernel": "6.1",
    "governor": "performance",
    "versions": {"go": "1.26", "node": "20.1"},
    "git_rev": "abc123",
    "hostname": "bench",
}


def _histogram(latency):
    """A loader histogram with the level's p50 and p99 (98 requests at p50, 2 at p99)."""
    h = HdrHistogram(1, 60_000_000, 3)
    h.record_value(int(latency["p50"]), 98)
    h.record_value(int(latency.get("p99", latency["p50"])), 2)
    return h.encode().decode("ascii")


def _level(
    index, value, rep, rps, latency, roles, flags=(), status="ok", errors=None, driver="native"
):
    return {
        "level_index": index,
        "level_value": value,
        "repetition": rep,
        "driver": driver,
        "mode": "closed",
        "keepalive": "on",
        "started_at": 1_700_000_000.0 + index,
        "duration_s": 3.0,
        "completed": int(rps * 3),
        "ok": int(rps * 3),
        "errors": errors or {},
        "requests_per_s": rps,
        "latency_us": latency,
        "timeseries": [
            second(
                t,
                rps * (0.4 if t in (1, 4) else 1.0),
                p50_us=latency["p50"],
                p99_us=latency.get("p99", 0),
            )
            for t in range(1, 5)
        ]
        if driver == "native"
        else None,
        "histogram": _histogram(latency) if driver == "native" and latency.get("p50") else None,
        "loader_cpu_s": (0.5, 0.4),
        "usage": {
            **{r: usage(150.0, rss_max_bytes=1e7) for r in roles},
            "loader": usage(60.0),
            "redis": usage(12.0),
        },
        "flags": list(flags),
        "status": status,
        "command": "stackbench-load ...",
    }


def _closed_loop_run(store):
    run = _start_run(
        store,
        "quick",
        "suites/quick.toml",
        "name = 'quick'\n",
        _settings(
            {
                "percentile": 99,
                "latency_ms": 5,
                "max_error_rate": 0.01,
                "stop_after_failures": 0,
                "gate": True,
            }
        ),
        ENV,
    )
    for stack in ("go", "node"):
        _add_verification(store, run, stack, "hello", True, 5, [])
        case = _add_case(store, run, stack, "hello", "hello", "/hello", {"workers": "2"}, "ok")
        for i, conns in enumerate(CONNECTIONS):
            for rep in range(3):
                wobble = 1 + (rep - 1) * 0.01
                latency = {
                    "min": 50,
                    "p50": P99_US[stack][i] / 3,
                    "p90": P99_US[stack][i] / 2,
                    "p99": P99_US[stack][i] * wobble,
                    "max": P99_US[stack][i] * 4,
                    "mean": P99_US[stack][i] / 3,
                    "stdev": 10,
                }
                flags = ["loader-bound"] if stack == "go" and i == 2 else []
                _add_level(
                    store,
                    case,
                    _level(
                        i,
                        conns,
                        rep,
                        CAPACITY[stack][i] * wobble,
                        latency,
                        USAGE_ROLES[stack],
                        flags,
                    ),
                )
    store.finish_run(run, "complete")
    return run


def _failures_run(store):
    run = _start_run(store, "php", "suites/php.toml", "", _settings(None, "wrk", 1), ENV)
    _add_verification(
        store, run, "php-fpm-nginx", "hello", False, 3, ["/hello: body 'Hello' != 'Hello World'"]
    )
    _add_case(
        store, run, "php-fpm-nginx", "hello", "hello", "/hello", {}, "failed", "verification failed"
    )
    _add_case(
        store,
        run,
        "swoole",
        "hello",
        "hello",
        "/hello",
        {},
        "unavailable",
        "swoole extension missing — pecl install swoole",
    )
    case = _add_case(store, run, "go", "hello", "hello", "/hello", {}, "ok")
    _add_verification(store, run, "go", "hello", True, 3, [])
    wrk_latency = {
        "p50": 250.0,
        "p75": 300.0,
        "p99": 1200.0,
        "max": 5000.0,
        "mean": 260.0,
        "stdev": 40.0,
    }
    _add_level(
        store,
        case,
        _level(
            0,
            50,
            0,
            30_000,
            wrk_latency,
            ["server"],
            driver="wrk",
            errors={"status": 600, "timeout": 10},
            flags=["invalid: error rate 2.2% > 1.0%"],
            status="invalid",
        ),
    )
    _add_level(store, case, _level(1, 100, 0, 31_000, wrk_latency, ["server"], driver="wrk"))
    store.finish_run(run, "complete")
    return run


@pytest.fixture()
def store():
    s = Store(":memory:")
    yield s
    s.close()


def test_write_all_writes_every_file(store, tmp_path):
    data = store.load_run(_closed_loop_run(store))
    out = write_all(data, tmp_path / "run-1")
    for name in ("results.json", "results.csv", "summary.md", "report.html"):
        assert (out / name).stat().st_size > 0
    charts = sorted(p.name for p in (out / "charts").iterdir())
    for kind in ("throughput", "latency", "percentiles", "timeseries", "resources"):
        assert f"hello-{kind}.svg" in charts and f"hello-{kind}.png" in charts, kind
    assert "glance.png" in charts
    assert "hello-errors.svg" not in charts  # no error at all: a sentence instead of a chart
    svg = (out / "charts" / "hello-throughput.svg").read_text()
    assert svg.startswith("<?xml") and svg.count("<svg") == 1
    assert (out / "charts" / "hello-throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_formats_write_only_what_is_asked(store, tmp_path):
    data = store.load_run(_closed_loop_run(store))
    out = write_all(data, tmp_path / "md", ["md", "csv"])
    assert sorted(p.name for p in out.iterdir()) == ["results.csv", "summary.md"]
    out = write_all(data, tmp_path / "png", ["png"])
    assert sorted(p.name for p in out.iterdir()) == ["charts"]
    assert {p.suffix for p in (out / "charts").iterdir()} == {".png", ".svg"}


def test_each_exporter_writes_the_file_it_names_and_nothing_else(store, tmp_path):
    """The formats are the exporters' names; each one alone writes what its file name says
    (charts/*.png with their .svg; report.html with its charts)."""
    data = store.load_run(_closed_loop_run(store))
    names = ("html", "md", "csv", "json", "png", "bmf")
    assert FORMATS == tuple(e.name for e in EXPORTERS) == names
    for exporter in EXPORTERS:
        out = write_all(data, tmp_path / exporter.name, [exporter.name])
        written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
        main = exporter.file_name.split(" ")[0]
        assert [w for w in written if fnmatch.fnmatch(w, main)], (exporter.name, written)
        charts = [w for w in written if w.startswith("charts/")]
        assert len(written) - len(charts) == (0 if main.startswith("charts/") else 1)
        assert bool(charts) == (exporter.name in ("html", "png")), exporter.name


def test_html_is_self_contained(store, tmp_path):
    _closed_loop_run(store)
    data = store.load_run(_failures_run(store))
    html = (write_all(data, tmp_path) / "report.html").read_text()
    assert "<script src" not in html and "<link" not in html and "<img" not in html
    assert "@import" not in html
    assert set(re.findall(r"url\((.)", html)) <= {"#"}  # clip paths of the charts only
    # Every reference stays in the page: anchors and the SVG's own definitions.
    assert re.findall(r"""\b(?:src|href)\s*=\s*["'](?!#)""", html) == []
    assert html.count("<svg") >= 4


def test_html_escapes_what_the_store_holds(store, tmp_path):
    run = _start_run(
        store,
        "<b>suite</b>",
        "s.toml",
        "x = '<script>alert(1)</script>'",
        _settings(None, repeat=1),
        ENV,
    )
    case = _add_case(
        store, run, "go<i>", "hello", "hello", "/hello", {"a": "<b>"}, "ok", "note <script>"
    )
    _add_level(store, case, _level(0, 10, 0, 5000, {"p50": 100, "p99": 900}, ["server"]))
    html = (write_all(store.load_run(run), tmp_path, ["html"]) / "report.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html
    assert "<b>suite</b>" not in html and "go<i>" not in html


def test_csv_has_one_row_per_level_and_repetition(store, tmp_path):
    data = store.load_run(_closed_loop_run(store))
    rows = list(
        csv.DictReader(io.StringIO((write_all(data, tmp_path) / "results.csv").read_text()))
    )
    assert len(rows) == 2 * len(CONNECTIONS) * 3
    first = rows[0]
    assert (first["stack"], first["label"], first["level_value"], first["repetition"]) == (
        "go",
        "hello",
        "1",
        "0",
    )
    # one column per single-valued field of the level record (store/records.py)
    assert {"level_index", "started_at", "duration_s", "completed", "command"} <= set(first)
    assert "raw_output" not in first and "histogram" not in first
    assert "requests_per_s" not in first  # named for what it is: the whole level's
    assert float(first["rps_whole_level"]) == pytest.approx(9_000 * 0.99)
    assert float(first["p99_us_whole_level"]) == pytest.approx(300 * 0.99)
    assert float(first["server_cpu_percent"]) == 150.0
    assert float(first["loader_cpu_percent"]) == 60.0
    assert {r["flags"] for r in rows} == {"", "loader-bound"}


def test_absent_percentiles_are_not_invented(store, tmp_path):
    data = store.load_run(_failures_run(store))
    out = write_all(data, tmp_path)
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert len(rows) == 2 and all(r["p90_us_whole_level"] == "" for r in rows)
    assert all(r["p50_us_whole_level"] == "250" for r in rows)
    doc = json.loads((out / "results.json").read_text())
    aggs = doc["workloads"][0]["cases"][0]["aggregates"]
    assert all("p90" not in agg["latency_us"] for agg in aggs)
    summary = (out / "summary.md").read_text()
    lines = summary.splitlines()
    go_rows = [line for line in lines if line.startswith("| go | 100 |")]
    header = next(line for line in lines if line.startswith("| stack | connections | reps"))
    column = {h.strip(): i for i, h in enumerate(header.split("|"))}
    cells = [c.strip() for c in go_rows[0].split("|")]
    assert cells[column["p90"]] == "–"  # the detail table: not measured, not invented
    assert cells[column["p50"]] == "250 µs"


def test_results_json_is_strict_and_complete(store, tmp_path):
    data = store.load_run(_closed_loop_run(store))
    text = (write_all(data, tmp_path) / "results.json").read_text()

    def no_constants(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    doc = json.loads(text, parse_constant=no_constants)
    assert doc["run"]["suite_name"] == "quick"
    assert doc["run"]["environment"]["cpu_model"] == "Test CPU"
    assert len(doc["levels"]) == 18 and doc["levels"][0]["jitter"]["seconds"] == 2
    node = doc["workloads"][0]["cases"][1]
    assert node["stack"] == "node"
    assert node["breakpoint"]["level_value"] == 100
    thr = node["aggregates"][0]["throughput"]
    assert thr["low"] <= thr["value"] <= thr["high"]


def test_findings_rank_with_intervals_and_report_breakpoints(store):
    a = analyse(store.load_run(_closed_loop_run(store)))
    texts = [f.text for f in findings(a)]
    ranking = next(t for t in texts if t.startswith("at 10 connections"))
    assert (
        "go 39,999 [" in ranking
        and "(95% " in ranking
        and ranking.index("go") < ranking.index("node")
    )
    assert "go is faster than node: go's req/s is 2.00×" in ranking
    assert any("node breaks the SLO" in t and "100 connections" in t for t in texts)
    assert any(t.startswith("go met the SLO") for t in texts)
    # three repetitions within 1%: the 5% floor, taken as known (z)
    assert "go 40,999 [38,743–43,385] (loader-bound: a lower bound)" in " ".join(texts)
    assert any("go: loader-bound at level(s) 100" in t for t in texts)


def test_failures_and_unavailable_stacks_are_reported_not_ranked(store, tmp_path):
    data = store.load_run(_failures_run(store))
    a = analyse(data)
    found = findings(a)
    texts = " ".join(f.text for f in found)
    assert "php-fpm-nginx failed verification" in texts
    assert "swoole: unavailable — swoole extension missing" in texts
    assert "single repetition" not in texts  # only go is ranked, there is no comparison
    assert all(e.stack == "go" for r in a.workloads[0].rankings for e in r.entries)
    assert a.workloads[0].rankings[0].excluded == [("go", "level invalid")]
    summary = (write_all(data, tmp_path) / "summary.md").read_text()
    assert "## Verification failures" in summary and "## Unavailable stacks" in summary
    assert "pecl install swoole" in summary


def test_reports_are_deterministic(store, tmp_path):
    data = store.load_run(_closed_loop_run(store))
    first = (write_all(data, tmp_path / "a", ["html"]) / "report.html").read_text()
    second = (write_all(data, tmp_path / "b", ["html"]) / "report.html").read_text()
    assert first == second
    assert (tmp_path / "a" / "charts" / "glance.svg").read_text() == (
        tmp_path / "b" / "charts" / "glance.svg"
    ).read_text()


def test_terminal_views(store):
    _closed_loop_run(store)
    run = _failures_run(store)
    console = Console(record=True, width=200)
    print_runs(console, store)
    print_run(console, store.load_run(run))
    text = console.export_text()
    assert "quick" in text and "php" in text
    assert "swoole" in text and "unavailable" in text
    assert "findings" in text and "At a glance" in text


def test_level_line_shows_missing_figures_as_dash(store):
    data = store.load_run(_failures_run(store))
    line = level_line("go", "hello", data.levels[0])
    assert line.startswith("go hello c=50 rep 1:  30,000 req/s")
    assert "p99 1.2 ms" in line and "INVALID" in line
    no_p99 = msgspec.structs.replace(data.levels[0], latency_us={"p50": 9})
    assert "p99 –" in level_line("go", "hello", no_p99)


def test_open_loop_throughput_chart_shows_offered_rate(store):
    from stackbench.report import charts

    run = _start_run(
        store, "open", "s.toml", "", {**_settings(None), "mode": "open", "level_kind": "rate"}, ENV
    )
    case = _add_case(store, run, "go", "hello", "hello", "/hello", {}, "ok")
    for i, rate in enumerate([1000, 2000, 4000]):
        _add_level(
            store, case, _level(i, rate, 0, min(rate, 3000), {"p50": 100, "p99": 900}, ["server"])
        )
    a = analyse(store.load_run(run))
    chart = charts.throughput_chart(a, a.workloads[0], "hello")
    assert isinstance(chart, charts.Chart)
    assert ">offered rate<" in chart.svg and ">target rate (req/s)<" in chart.svg
    assert a.level_label == "target rate (req/s)"


def test_rate_search_reports_the_runner_note_not_a_breakpoint(store):
    settings = {
        **_settings(
            {
                "percentile": 99,
                "latency_ms": 1,
                "max_error_rate": 0.01,
                "stop_after_failures": 0,
                "gate": True,
            }
        ),
        "mode": "open",
        "level_kind": "rate",
        "search": {"lo": 1000, "hi": 8000, "probes": 8, "tolerance": 0.05},
    }
    run = _start_run(store, "search", "s.toml", "", settings, ENV)
    case = _add_case(store, run, "go", "hello", "hello", "/hello", {}, "ok")
    for i, (rate, p99) in enumerate([(1000, 500), (2000, 5000), (1500, 800)]):
        _add_level(store, case, _level(i, rate, 0, rate, {"p50": 100, "p99": p99}, ["server"]))
    store.set_case_status(case, "ok", "max sustainable rate: 1500 req/s met the SLO")
    a = analyse(store.load_run(run))
    texts = [f.text for f in findings(a)]
    assert "go: max sustainable rate: 1500 req/s met the SLO" in texts
    assert not any("breaks the SLO" in t for t in texts)


def test_ranking_of_indistinguishable_stacks_is_summarised(store):
    run = _start_run(store, "tie", "s.toml", "", _settings(None), ENV)
    for stack, shift in (("a", 0), ("b", 5), ("c", -5)):
        case = _add_case(store, run, stack, "hello", "hello", "/hello", {}, "ok")
        for rep, rps in enumerate((1000, 1100, 900)):
            _add_level(store, case, _level(0, 10, rep, rps + shift, {"p50": 1}, ["server"]))
    texts = [f.text for f in findings(analyse(store.load_run(run)))]
    # three stacks 1% apart with 10% spread between repetitions: not enough evidence, said
    # with what would decide it, never "within noise" or "no difference"
    assert texts[0].startswith("at 10 connections: b ")
    assert texts[0].count("not enough evidence between") == 3
    assert "within noise" not in texts[0] and "no significant difference" not in texts[0]


def test_level_without_completed_requests_shows_no_latency_and_is_not_ranked(store, tmp_path):
    run = _start_run(store, "zero", "s.toml", "", _settings(None, "wrk", 1), ENV)
    for stack in ("a", "b"):
        case = _add_case(store, run, stack, "sha256", "sha256?n=1000", "/sha256?n=1000", {}, "ok")
        row = _level(0, 25, 0, 0.0, {"p50": 0.0, "p99": 0.0, "max": 0.0}, ["server"], driver="wrk")
        _add_level(store, case, {**row, "completed": 0, "ok": 0})
    data = store.load_run(run)
    a = analyse(data)
    assert a.workloads[0].cases[0].aggregates[0].latency_us == {}
    assert a.workloads[0].rankings[0].entries == []
    rows = list(
        csv.DictReader(io.StringIO((write_all(data, tmp_path) / "results.csv").read_text()))
    )
    assert [r["p50_us_whole_level"] for r in rows] == ["", ""]
    assert "p50 –" in level_line("a", "sha256?n=1000", data.levels[0])


def test_interrupted_run_reports_what_was_measured(store, tmp_path):
    run = _start_run(store, "quick", "s.toml", "", _settings(None, repeat=1), ENV)
    done = _add_case(store, run, "go", "hello", "hello", "/hello", {}, "pending")
    _add_level(store, done, _level(0, 10, 0, 5000, {"p50": 100, "p99": 900}, ["server"]))
    _add_case(store, run, "node", "hello", "hello", "/hello", {}, "pending")
    data = store.load_run(run)  # never finished: status stays "running"
    out = write_all(data, tmp_path)
    assert "go" in (out / "summary.md").read_text()
    texts = {f.text: f.severity for f in findings(analyse(data))}
    assert texts["node: pending — no levels measured"] == "warn"


def test_script_timings_and_case_notes_are_reported(tmp_path):
    from stackbench.report import write_all
    from stackbench.store.store import Store

    store = Store(":memory:")
    run = _start_run(store, "db", "db.toml", "", _settings(None, repeat=1), {})
    _add_case(
        store,
        run,
        "node",
        "db-report",
        "db-report",
        "/db-report",
        {},
        "ok",
        "sweep stopped early: SLO failed at 2 consecutive levels",
    )
    _add_script(store, run, "node", "db-report", 1000, (2.0, 1.5, 0.25), "ok")
    _add_script(store, run, "php-apache", "db-report", 1000, None, "php-apache: script exited 1")
    store.finish_run(run, "complete")
    out = write_all(store.load_run(run), tmp_path)
    md = (out / "summary.md").read_text()
    assert "Standalone timing" in md and "2.000 ms" in md and "script exited 1" in md
    assert "stopped early" in md
    assert "Standalone timing" in (out / "report.html").read_text()


def test_percentile_distribution_merges_repetitions_and_skips_damaged(store):
    from stackbench.report.charts import distribution, merged_histogram

    run = _start_run(store, "h", "s.toml", "", _settings(None), ENV)
    case = _add_case(store, run, "go", "hello", "hello", "/hello", {}, "ok")
    for rep, hist in enumerate(
        [
            _histogram({"p50": 1000, "p99": 5000}),
            _histogram({"p50": 1000, "p99": 5000}),
            "HISTFAAA-damaged",
        ]
    ):
        _add_level(
            store,
            case,
            {**_level(0, 10, rep, 100, {"p50": 1000, "p99": 5000}, ["server"]), "histogram": hist},
        )
    merged = merged_histogram(store.load_run(run).levels)
    assert merged.get_total_count() == 200  # 2 × (98 + 2); the damaged one left out
    points = distribution(merged, steps_per_decade=1)
    # one request in N is slower: N = 1 (min), 10 (p90), 100 (p99: 4 of 200 took 5 ms),
    # then the slowest at N = count
    assert [n for n, _ in points] == [1, 10, 100, 200]
    fast, slow = (merged.get_highest_equivalent_value(v) for v in (1000, 5000))
    assert [merged.get_highest_equivalent_value(int(v)) for _, v in points] == [
        fast,
        fast,
        slow,
        slow,
    ]


def test_a_level_where_nothing_completed_draws_its_series_without_a_log_axis(store):
    """A level whose seconds have no latency at all (every request failed or timed out) once
    crashed the report: a log axis of nothing cannot be drawn."""
    from stackbench.report import charts

    run = _start_run(store, "dead", "s.toml", "", _settings(None), ENV)
    case = _add_case(store, run, "go", "hello", "hello", "/hello", {}, "ok")
    level = _level(0, 50, 0, 0.0, {"p50": 0}, ["server"], errors={"timeout": 50})
    _add_level(store, case, {**level, "latency_us": {}})
    a = analyse(store.load_run(run))
    chart = charts.timeseries_chart(a, a.workloads[0], "hello")
    assert isinstance(chart, charts.Chart)
    assert "no request completed in any second" in chart.svg
    short = {
        **level,
        "level_index": 1,
        "level_value": 100,
        "timeseries": [msgspec.structs.replace(level["timeseries"][0], p50_us=80, partial=True)],
    }
    _add_level(store, case, short)  # request-bounded, shorter than a second: only a cut second
    a = analyse(store.load_run(run))
    chart = charts.timeseries_chart(a, a.workloads[0], "hello")
    assert isinstance(chart, charts.Chart) and "no full second" in chart.svg
