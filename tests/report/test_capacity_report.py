"""Capacity at the SLO in every output of an open-loop search run: the terminal, summary.md,
report.html, results.csv and results.json, with and without a target and a price."""

import csv
import io
import json

import pytest
from rich.console import Console

from stackbench.analysis.analysis import analyse
from stackbench.analysis.capacity import CapacityAsk
from stackbench.report import write_all
from stackbench.report.terminal import print_run
from stackbench.store.store import Store
from tests.report.test_report import ENV, _add_case, _add_level, _level, _settings, _start_run

SLO = {"percentile": 99, "latency_ms": 1, "max_error_rate": 0.01, "stop_after_failures": 0}
# (offered rate, p99 in us) per probe: go holds 1500 and breaks at 2000 (p99 5 ms > 1 ms);
# node holds every probe: a lower bound only
PROBES = {"go": [(1000, 500), (2000, 5000), (1500, 800)], "node": [(1000, 400), (2000, 900)]}
ASK = CapacityAsk(target_rps=100_000, price_per_core_hour=0.04)


@pytest.fixture
def store():
    s = Store(":memory:")
    yield s
    s.close()


def _search_run(store, closed=False, flags=None):
    settings = {**_settings({**SLO, "gate": False}), "mode": "open", "level_kind": "rate"}
    settings["search"] = {"lo": 1000, "hi": 8000, "probes": 8, "tolerance": 0.05}
    if closed:
        settings = _settings({**SLO, "gate": False})
    run = _start_run(store, "capacity", "suites/capacity.toml", "", settings, ENV)
    for stack, probes in PROBES.items():
        case = _add_case(store, run, stack, "hello", "hello", "/hello", {}, "ok")
        for i, (rate, p99) in enumerate(probes):
            latency = {"p50": 100, "p99": p99}
            flagged = (flags or {}).get((stack, rate), [])
            _add_level(store, case, _level(i, rate, 0, rate, latency, ["server"], flagged))
    return store.load_run(run)


def test_every_export_has_the_capacity_with_cores_and_cost(store, tmp_path):
    out = write_all(_search_run(store), tmp_path, ask=ASK)
    doc = json.loads((out / "results.json").read_text())
    go, node = doc["workloads"][0]["cases"]
    assert go["capacity"]["rps_per_core"] == {"low": 1500.0, "high": 2000.0}
    assert go["capacity"]["cores_needed"] == {"low": 50.0, "high": pytest.approx(66.6667)}
    # 0.04 per core-hour / (3600 s x 2000 req/s) x 1e6 = 0.005556
    assert go["capacity"]["cost_per_million"]["low"] == pytest.approx(0.0055556, rel=1e-4)
    assert node["capacity"]["rps_per_core"] == {"low": 2000.0, "high": None}
    assert node["capacity"]["cores_needed"] == {"low": None, "high": 50.0}
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    go_row = next(r for r in rows if r["stack"] == "go")
    assert (go_row["server_cores"], go_row["capacity_rps_per_core_low"]) == ("1", "1500")
    assert go_row["cores_needed_high"].startswith("66.666")
    node_row = next(r for r in rows if r["stack"] == "node")
    assert node_row["capacity_rps_per_core_high"] == ""  # open: no evidence of an upper end
    md = (out / "summary.md").read_text()
    assert "## Capacity at the SLO" in md
    assert "| hello | go | 1,500–2,000 | 1,500–2,000 | 50.0–66.7 | 0.00556–0.00741 |" in md
    assert "| hello | node | at least 2,000 | at least 2,000 | at most 50.0 |" in md
    assert "measured on 1 server core only" in md
    html = (out / "report.html").read_text()
    assert 'id="capacity"' in html and "<td>at least 2,000</td>" in html


def test_terminal_shows_capacity_and_the_scaling_caveat(store):
    console = Console(width=80, record=True, color_system=None)
    print_run(console, _search_run(store, flags={("go", 2000): ["loader-bound"]}), ask=ASK)
    text = console.export_text()
    assert "capacity at the SLO" in text
    assert "1,500–2,000" in text and "0.00556–0.00741" in text
    assert "at most 50.0" in text
    assert "rarely does" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "- go hello: the loader could not offer 2,000 req/s" in text


def test_without_a_target_no_cores_and_no_caveat(store, tmp_path):
    out = write_all(_search_run(store), tmp_path, formats=("md", "json"))
    md = (out / "summary.md").read_text()
    assert "## Capacity at the SLO" in md and "cores for" not in md
    assert "rarely" not in md
    doc = json.loads((out / "results.json").read_text())
    assert doc["workloads"][0]["cases"][0]["capacity"]["cores_needed"] is None


def test_closed_loop_has_no_capacity(store, tmp_path):
    data = _search_run(store, closed=True)
    a = analyse(data)
    out = write_all(data, tmp_path, formats=("md", "json"), analysis=a, ask=ASK)
    assert "Capacity at the SLO" not in (out / "summary.md").read_text()
    doc = json.loads((out / "results.json").read_text())
    assert all(c["capacity"] is None for c in doc["workloads"][0]["cases"])


def test_a_loader_bound_upper_end_is_said(store, tmp_path):
    data = _search_run(store, flags={("go", 2000): ["loader-bound"]})
    md = (write_all(data, tmp_path, formats=("md",)) / "summary.md").read_text()
    assert "| caveats |" in md
    assert "the loader could not offer 2,000 req/s: the upper end may be the loader's" in md


def test_the_capacity_chart_draws_the_bracket_and_its_table(store, tmp_path):
    out = write_all(_search_run(store), tmp_path, formats=("png", "html"))
    assert (out / "charts" / "hello-capacity.png").stat().st_size > 0
    html = (out / "report.html").read_text()
    assert 'data-chart="hello-capacity"' in html
    # its text alternative, the highest capacity first
    assert html.index("at least 2,000 req/s per core</td>") < html.index(
        "1,500–2,000 req/s per core</td>", html.index('data-chart="hello-capacity"')
    )


def test_no_capacity_chart_in_a_closed_loop(store, tmp_path):
    out = write_all(_search_run(store, closed=True), tmp_path, formats=("png",))
    assert not (out / "charts" / "hello-capacity.png").exists()


# [placement] server_cores = [1, 2] on a 2-core machine: go at 1 core holds 1,000 and breaks at
# 1,250; at 2 cores (the loader on the server's cores) holds 1,800 and breaks at 2,000
COUNTED = {"go.1c": [(1000, 500), (1250, 5000)], "go.2c": [(1800, 600), (2000, 5000)]}
CORE_COUNTS = {
    "go.1c": {"stack": "go", "server": [0], "loader": [1], "services": [0]},
    "go.2c": {"stack": "go", "server": [0, 1], "loader": [0, 1], "services": [0]},
}


def _counted_run(store, flags=None):
    settings = {**_settings({**SLO, "gate": False}), "mode": "open", "level_kind": "rate"}
    settings["search"] = {"lo": 1000, "hi": 8000, "probes": 8, "tolerance": 0.05}
    settings["core_counts"] = CORE_COUNTS
    run = _start_run(store, "capacity", "suites/capacity.toml", "", settings, ENV)
    for stack, probes in COUNTED.items():
        case = _add_case(store, run, stack, "hello", "hello", "/hello", {}, "ok")
        for i, (rate, p99) in enumerate(probes):
            flagged = (flags or {}).get((stack, rate), [])
            level = _level(i, rate, 0, rate, {"p50": 100, "p99": p99}, ["server"], flagged)
            _add_level(store, case, level)
    return store.load_run(run)


def test_core_counts_show_the_measured_scaling_in_every_export(store, tmp_path):
    out = write_all(_counted_run(store), tmp_path, ask=ASK)
    doc = json.loads((out / "results.json").read_text())
    one, two = (c["capacity"] for c in doc["workloads"][0]["cases"])
    assert (one["bracket"]["stack"], one["bracket"]["server_cores"]) == ("go", 1)
    assert one["scaling_ratio"] is None and not one["loader_shared"]
    # 1,800 / 1,250 = 1.44 to 2,000 / 1,000 = 2.0; per core against linear: 0.72 to 1.0
    assert two["scaling_ratio"] == {"low": 1.44, "high": 2.0}
    assert two["per_core_efficiency"] == {"low": 0.72, "high": 1.0}
    assert (two["scaling_base_cores"], two["loader_shared"]) == (1, True)
    # cores for 100,000 from 2 cores' 900–1,000 a core, on both rows: 100–111.1
    for cap in (one, two):
        assert cap["cores_needed_from"] == 2
        assert cap["cores_needed"]["low"] == pytest.approx(100.0)
        assert cap["cores_needed"]["high"] == pytest.approx(111.111, rel=1e-4)
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    row = next(r for r in rows if r["stack"] == "go.2c")
    assert (row["server_cores"], row["scaling_ratio_low"], row["scaling_ratio_high"]) == (
        "2",
        "1.44",
        "2",
    )
    assert (row["cores_needed_from"], row["loader_shared"]) == ("2", "true")
    md = (out / "summary.md").read_text()
    assert "### Scaling over server cores" in md
    assert "| hello | go | 2 | 1,800–2,000 | 1.44x–2.00x | 72%–100% |" in md
    assert "| hello | go | 1 | 1,000–1,250 | 1,000–1,250 | see 2 |" in md
    assert "On 2 server cores the loader shared the server's cores" in md
    assert "measured on 2 server cores, the most of the 2 core counts" in md
    assert "rarely" not in md
    html = (out / "report.html").read_text()
    assert 'data-table="capacity-scaling"' in html and "<td>1.44x–2.00x</td>" in html
    # the chart's text alternative names each bar's core count
    assert "<td>go (2 cores)</td>" in html and "<td>go (1 core)</td>" in html


def test_terminal_shows_the_scaling_table(store):
    console = Console(width=80, record=True, color_system=None)
    print_run(console, _counted_run(store, {("go.2c", 2000): ["loader-bound"]}), ask=ASK)
    text = console.export_text()
    assert "scaling over server cores" in text and "1.44x–2.00x" in text
    assert "- go hello on 2 cores: the loader could not offer 2,000 req/s" in text
    assert all(len(line) <= 80 for line in text.splitlines())
