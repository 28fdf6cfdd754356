"""Python-side checks of `stackbench-load --json`: the document validates against the published
JSON Schema, and the histogram decodes with the standard `hdrhistogram` package and gives the
percentiles the document reports.

Binary: $STACKBENCH_LOAD, else loadgen/target/{release,debug}/stackbench-load, else built
with cargo.
"""

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jsonschema
import pytest
from hdrh.histogram import HdrHistogram

CRATE = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((CRATE / "schema" / "stackbench-load.schema.json").read_text())
PERCENTILES = {"p50": 50, "p75": 75, "p90": 90, "p99": 99, "p99_9": 99.9, "p99_99": 99.99}


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


def check_histogram(doc: dict) -> None:
    encoded = doc["histogram"]["data"]
    histogram = HdrHistogram.decode(encoded)
    latency = doc["latency_us"]
    assert histogram.get_total_count() == latency["count"]
    if latency["count"] == 0:
        return
    assert histogram.get_max_value() == latency["max"]
    assert histogram.get_min_value() == latency["min"]
    for key, percentile in PERCENTILES.items():
        assert histogram.get_value_at_percentile(percentile) == latency[key], key
    assert histogram.get_mean_value() == pytest.approx(latency["mean"], rel=1e-3)


def test_closed_loop_document(server_url):
    doc = run_json("-n", "500", "-c", "4", "-t", "2", "--expect-body", "Hello World", server_url)
    jsonschema.validate(doc, SCHEMA)
    assert doc["requests"] == {"sent": 500, "completed": 500, "ok": 500, "errors": 0,
                               "unanswered_at_end": 0, "oldest_unanswered_us": 0}
    assert doc["open_loop"] is None
    check_histogram(doc)


def test_open_loop_document(server_url):
    doc = run_json("-R", "300", "-d", "1s", "-c", "4", "--no-keepalive", server_url)
    jsonschema.validate(doc, SCHEMA)
    assert doc["config"]["mode"] == "open"
    assert doc["open_loop"]["scheduled"] == 300
    assert doc["connect_us"]["count"] == doc["requests"]["sent"]
    check_histogram(doc)


def test_error_only_document(server_url):
    import socket

    with socket.socket() as s:  # a port with nothing listening once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc = run_json("-d", "200ms", "-c", "1", f"http://127.0.0.1:{port}/")
    jsonschema.validate(doc, SCHEMA)
    assert doc["errors"]["refused"] > 0
    assert doc["latency_us"]["count"] == 0
    check_histogram(doc)
