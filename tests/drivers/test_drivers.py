import json
from pathlib import Path

import msgspec
from hdrh.histogram import HdrHistogram

from stackbench.config.loadspec import KeepAlive, LoadRequest, LoadSettings
from stackbench.drivers.ab import AbDriver, parse_ab
from stackbench.drivers.native import NativeDriver
from stackbench.drivers.wrk import WrkDriver, parse_wrk, to_us

DATA = Path(__file__).parent / "data"


def test_wrk_units():
    assert to_us("250.00us") == 250 and to_us("3.83ms") == 3830 and to_us("1.5s") == 1.5e6


def test_wrk_keepalive_output():
    r = parse_wrk((DATA / "wrk-keepalive.txt").read_text(), ["wrk"], (0.5, 0.7))
    assert r.completed > 0 and r.errors_total == 0
    assert set(r.latency_us) == {"mean", "stdev", "max", "p50", "p75", "p90", "p99"}
    assert "p99_9" not in r.latency_us  # wrk does not give it; never invented


def test_wrk_errors_output():
    r = parse_wrk((DATA / "wrk-errors.txt").read_text(), ["wrk"], None)
    assert r.completed == 1946 and r.errors["status"] == 1946 and r.errors["read"] == 1944
    assert r.ok == 0 and r.requests_per_s == 967.03 and r.latency_us["p90"] == 19620


def test_ab_output():
    r = parse_ab((DATA / "ab-close.txt").read_text(), ["ab"], None)
    assert r.completed == 500 and r.ok == 500 and r.errors_total == 0
    assert r.latency_us["p50"] == 3000 and r.latency_us["p99"] == 9000
    assert r.latency_us["max"] == 10000 and r.latency_us["mean"] == 3000
    assert r.requests_per_s == 1844.98 and "p99_9" not in r.latency_us


def test_bytes_read_as_each_tool_prints_them():
    # ab: "Total transferred: 74500 bytes" (headers included)
    assert parse_ab((DATA / "ab-close.txt").read_text(), ["ab"], None).bytes_read == 74_500
    # wrk: "336 requests in 2.01s, 50.24KB read", 1024-based: 50.24 x 1024 = 51,445.76
    wrk = parse_wrk((DATA / "wrk-keepalive.txt").read_text(), ["wrk"], None)
    assert wrk.bytes_read == 51_446
    article = "  405200 requests in 1.00m, 77.65MB read\nRequests/sec:   6752.42\n"
    assert parse_wrk(article, ["wrk"], None).bytes_read == round(77.65 * 1024 * 1024)
    # a tool that does not print it: None, never a guess
    without = (DATA / "ab-close.txt").read_text().replace("Total transferred", "Total sent")
    assert parse_ab(without, ["ab"], None).bytes_read is None


def test_ab_non2xx_are_status_errors():
    r = parse_ab((DATA / "ab-non2xx.txt").read_text(), ["ab"], None)
    assert r.errors["status"] == 200 and r.ok == 0


def test_command_lines_match_the_articles():
    s = LoadSettings(duration_s=30, keepalive=KeepAlive.OFF, timeout_s=3)
    req = LoadRequest("http://127.0.0.1:1/hello", s, 25, None, frozenset({1}))
    assert WrkDriver().command(req) == [
        "wrk",
        "-t",
        "1",
        "-c",
        "25",
        "-d",
        "30s",
        "--timeout",
        "3s",
        "--latency",
        "-H",
        "Connection: close",
        "http://127.0.0.1:1/hello",
    ]
    s = LoadSettings(duration_s=None, requests=2000, keepalive=KeepAlive.ON)
    req = LoadRequest("http://127.0.0.1:1/x", s, 300, None, frozenset({1}))
    assert AbDriver().command(req)[:8] == ["ab", "-c", "300", "-s", "3", "-r", "-n", "2000"]


def test_native_document_is_parsed_and_extra_percentiles_come_from_the_histogram():
    h = HdrHistogram(1, 60_000_000, 3)
    for value in range(1, 1001):
        h.record_value(value * 10)
    doc = json.loads((DATA / "loader-closed.json").read_text())  # a real document
    doc["requests"].update(sent=1000, completed=1000, ok=999, errors=1)
    doc["errors"]["timeout"] = 1
    doc["latency_us"].update(count=1000, p50=5000, p99=9900, max=10000)
    doc["connect_us"] = {**doc["connect_us"], "count": 0}
    doc["histogram"]["data"] = h.encode().decode()
    doc["loader_cpu"] = {"user_s": 0.25, "sys_s": 0.5}
    doc["limits"]["warnings"] = ["raised RLIMIT_NOFILE to 20000"]
    doc["tool"]["engine"] = "uring"  # stackbench-load/3 names its I/O engine
    req = LoadRequest("http://127.0.0.1:1/", LoadSettings(), 4, None, frozenset({1}))
    r = NativeDriver().parse(req, ["stackbench-load"], json.dumps(doc), "", 2.0, (0, 0))
    assert r.completed == 1000 and r.ok == 999 and r.errors["timeout"] == 1
    assert r.latency_us["p50"] == 5000 and r.loader_cpu_s == (0.25, 0.5)
    assert abs(r.latency_us["p80"] - 8000) <= 8 and abs(r.latency_us["p95"] - 9500) <= 10
    assert r.connect_us is None and r.warnings == ("raised RLIMIT_NOFILE to 20000",)
    assert r.timeseries is not None
    assert [msgspec.structs.asdict(s) for s in r.timeseries] == doc["timeseries"]
    assert r.unanswered_at_end == (0, 0.0) and r.open_loop is None
    assert r.bytes_read == doc["throughput"]["bytes_read"] == 74_500
    assert r.loader_engine == doc["tool"]["engine"] == "uring"  # recorded with the level
    older = {**doc, "tool": {"name": "stackbench-load", "version": "0.1.0"}}  # /2 and before
    assert (
        NativeDriver().parse(req, ["x"], json.dumps(older), "", 2.0, (0, 0)).loader_engine is None
    )


def test_native_document_without_completed_requests_has_no_latency():
    doc = json.loads((DATA / "loader-closed.json").read_text())
    doc["requests"].update(completed=0, ok=0, errors=5)
    doc["errors"]["refused"] = 5
    req = LoadRequest("http://127.0.0.1:1/", LoadSettings(), 4, None, frozenset({1}))
    r = NativeDriver().parse(req, ["stackbench-load"], json.dumps(doc), "", 2.0, (0, 0))
    assert r.latency_us == {} and r.errors_total == 5  # zeros are not latencies


def test_ab_times_per_request_match_its_three_decimal_lines():
    # A recorded `ab -c 1 -n 200`: "Time per request: 1.383 [ms] (mean)" while the
    # connection-times mean, in whole milliseconds, says 1. Our time per request
    # (connections x duration / completed) must be ab's figure, not the rounded one.
    from stackbench.analysis.figures import ab_time_per_request as time_per_request_ms

    r = parse_ab((DATA / "ab-c1.txt").read_text(), ["ab"], None)
    assert r.latency_us["mean"] == 1000  # ab's whole-millisecond summary, kept as printed
    assert round(time_per_request_ms(1, r.duration_s, r.completed), 3) == 1.383
    # from the printed 0.277 s it would have been 1.385: off in the third decimal
    assert round(time_per_request_ms(1, 0.277, r.completed), 3) == 1.385
    close = parse_ab((DATA / "ab-close.txt").read_text(), ["ab"], None)
    assert round(time_per_request_ms(10, close.duration_s, close.completed), 3) == 5.420


def test_wrk_duration_to_the_precision_of_its_rate():
    # "1.00m" is 60 s to ±0.3 s; 405,200 requests at 6752.42/s were 60.0081 s
    article = "  405200 requests in 1.00m, 77.65MB read\nRequests/sec:   6752.42\n"
    r = parse_wrk(article, ["wrk"], None)
    assert abs(r.duration_s - 405200 / 6752.42) < 1e-9
    # a rate that disagrees with the printed time beyond its rounding is not used
    odd = "  405200 requests in 1.00m, 77.65MB read\nRequests/sec:   5000.00\n"
    assert parse_wrk(odd, ["wrk"], None).duration_s == 60.0


def test_native_sends_an_own_endpoints_method_headers_and_body():
    s = LoadSettings(duration_s=2)
    req = LoadRequest(
        "http://127.0.0.1:1/items",
        s,
        5,
        None,
        frozenset({1}),
        201,
        None,
        "POST",
        ("content-type: application/json", "-x-odd: 1"),
        '-{"name": "widget"}',
    )
    cmd = NativeDriver().command(req)
    assert cmd[cmd.index("--expect-status") + 1] == "201"
    assert cmd[cmd.index("--method") + 1] == "POST"
    # name=value forms: a value beginning with '-' cannot be read as a flag
    assert cmd[-3:] == [
        "--header=content-type: application/json",
        "--header=-x-odd: 1",
        '--body=-{"name": "widget"}',
    ]
    plain = NativeDriver().command(LoadRequest("http://127.0.0.1:1/x", s, 5, None, frozenset({1})))
    assert not any(a.startswith(("--method", "--header", "--body")) for a in plain)
