"""Python-side checks of `stackbench-load --json`: the document validates against the published
JSON Schema, the histogram decodes with the standard `hdrhistogram` package and gives the
percentiles the document reports, and so do the per-second histograms, which merge into the
total (the way a steady-state window's percentiles are computed).

Binary: $STACKBENCH_LOAD, else loadgen/target/{release,debug}/stackbench-load, else built
with cargo.
"""

import json
import math
import os
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jsonschema
import pytest
from hdrh.histogram import HdrHistogram

CRATE = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((CRATE / "schema" / "stackbench-load.schema.json").read_text())
QUANTILES = {"p50": 0.5, "p75": 0.75, "p90": 0.9, "p99": 0.99, "p99_9": 0.999, "p99_99": 0.9999}
SECOND_QUANTILES = {"p50_us": 0.5, "p90_us": 0.9, "p99_us": 0.99}


def loader_binary() -> Path:
    if os.environ.get("STACKBENCH_LOAD"):
        return Path(os.environ["STACKBENCH_LOAD"])
    for profile in ("release", "debug"):
        candidate = CRATE / "target" / profile / "stackbench-load"
        if candidate.exists():
            return candidate
    subprocess.run(["cargo", "build", "--quiet"], cwd=CRATE, check=True)
    return CRATE / "target" / "debug" / "stackbench-load"


class Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive with Content-Length

    def setup(self):
        super().setup()
        # Head and body go out in two writes: without this, Nagle's algorithm holds the body
        # until the client's delayed ACK (40 ms per request).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        body = b"Hello World"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hello"
    server.shutdown()
    server.server_close()


def run_json(*args: str) -> dict:
    result = subprocess.run(
        [str(loader_binary()), "--json", *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def value_at_quantile(histogram: HdrHistogram, quantile: float) -> int:
    """The loader's percentile definition (Rust hdrhistogram): the highest equivalent value of
    the bucket holding the ceil(q * n)-th smallest recording. Python's hdrhistogram rounds the
    rank to nearest instead, so the two differ by a bucket when q * n has a fraction below .5."""
    rank = max(1, math.ceil(quantile * histogram.get_total_count()))
    seen = 0
    for item in histogram.get_recorded_iterator():
        seen += item.count_at_value_iterated_to
        if seen >= rank:
            return item.value_iterated_to
    raise AssertionError("rank beyond the histogram's count")


def check_histogram(doc: dict) -> None:
    encoded = doc["histogram"]["data"]
    histogram = HdrHistogram.decode(encoded)
    latency = doc["latency_us"]
    assert histogram.get_total_count() == latency["count"]
    if latency["count"] == 0:
        return
    assert histogram.get_max_value() == latency["max"]
    assert histogram.get_min_value() == latency["min"]
    for key, quantile in QUANTILES.items():
        assert value_at_quantile(histogram, quantile) == latency[key], key
    assert histogram.get_mean_value() == pytest.approx(latency["mean"], rel=1e-3)


def check_timeseries(doc: dict) -> None:
    """Each second's histogram matches its figures; only the last second may be partial; the
    seconds' histograms merged give the total histogram's count and percentiles."""
    series = doc["timeseries"]
    assert series, "a run touches at least one second"
    assert [p["t_s"] for p in series] == list(range(1, len(series) + 1))
    *full, last = series
    assert all(not p["partial"] and p["duration_s"] == 1.0 for p in full)
    assert last["partial"] == (last["duration_s"] < 1.0)
    assert sum(p["duration_s"] for p in series) == pytest.approx(doc["duration_s"], abs=1e-6)
    total = HdrHistogram.decode(doc["histogram"]["data"])
    merged = HdrHistogram(1, doc["histogram"]["highest"], doc["histogram"]["significant_digits"])
    for point in series:
        second = HdrHistogram.decode(point["histogram"])
        assert second.get_total_count() == point["completed"], point["t_s"]
        assert second.get_max_value() == point["max_us"]
        for key, quantile in SECOND_QUANTILES.items():
            if point["completed"]:
                assert value_at_quantile(second, quantile) == point[key], (point["t_s"], key)
            else:
                assert point[key] == 0
        merged.add(second)
    assert merged.get_total_count() == total.get_total_count() == doc["latency_us"]["count"]
    assert sum(p["completed"] for p in series) == doc["requests"]["completed"]
    if total.get_total_count():
        for quantile in (*QUANTILES.values(), 1.0):
            mine = merged.get_value_at_percentile(quantile * 100)
            theirs = total.get_value_at_percentile(quantile * 100)
            assert total.values_are_equivalent(mine, theirs), (quantile, mine, theirs)
            assert value_at_quantile(merged, quantile) == value_at_quantile(total, quantile)


def test_closed_loop_document(server_url):
    doc = run_json("-n", "500", "-c", "4", "-t", "2", "--expect-body", "Hello World", server_url)
    jsonschema.validate(doc, SCHEMA)
    assert doc["requests"] == {
        "sent": 500,
        "completed": 500,
        "ok": 500,
        "errors": 0,
        "unanswered_at_end": 0,
        "oldest_unanswered_us": 0,
    }
    assert doc["open_loop"] is None
    check_histogram(doc)
    check_timeseries(doc)


def test_per_second_histograms_of_a_multi_second_run(server_url):
    doc = run_json("-d", "2500ms", "-c", "4", "-t", "2", server_url)
    jsonschema.validate(doc, SCHEMA)
    series = doc["timeseries"]
    assert len(series) == math.ceil(doc["duration_s"]) >= 3, "2.5 s (or a little more) touch 3 s"
    assert series[-1]["partial"] and series[-1]["duration_s"] == pytest.approx(
        doc["duration_s"] % 1, abs=1e-6
    )
    assert all(p["completed"] > 0 for p in series[:2])
    check_histogram(doc)
    check_timeseries(doc)


def test_open_loop_document(server_url):
    doc = run_json("-R", "300", "-d", "1s", "-c", "4", "--no-keepalive", server_url)
    jsonschema.validate(doc, SCHEMA)
    assert doc["config"]["mode"] == "open"
    assert doc["open_loop"]["scheduled"] == 300
    assert doc["connect_us"]["count"] == doc["requests"]["sent"]
    check_histogram(doc)
    check_timeseries(doc)


def test_error_only_document(server_url):
    with socket.socket() as s:  # a port with nothing listening once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc = run_json("-d", "200ms", "-c", "1", f"http://127.0.0.1:{port}/")
    jsonschema.validate(doc, SCHEMA)
    assert doc["errors"]["refused"] > 0
    assert doc["latency_us"]["count"] == 0
    check_histogram(doc)
    check_timeseries(doc)
    assert all(p["completed"] == 0 and p["max_us"] == 0 for p in doc["timeseries"])
