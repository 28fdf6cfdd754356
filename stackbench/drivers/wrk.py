"""Adapter for wrk 4: run it as the original articles did and parse its text output.

wrk reports p50/p75/p90/p99 (with --latency), mean, stdev and max; nothing else is filled in.
The bytes read come from its summary line ("405200 requests in 1.00m, 77.65MB read"), in
wrk's 1024-based units and at its two decimals.
Without keep-alive wrk only sends `Connection: close` and relies on the server closing,
which is how the articles used it; the level record says so in its command.
"""

import math
import re

from stackbench.config.loadspec import DriverKind, KeepAlive, LoadRequest, LoadResult
from stackbench.drivers.precision import precise_duration

_UNITS_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
_DURATION = re.compile(r"([\d.]+)(us|ms|s|m|h)\b")
_PCT = re.compile(r"^\s*(50|75|90|99)(?:\.000)?%\s+([\d.]+\w+)", re.M)
_SUMMARY = re.compile(r"(\d+) requests in ([\d.]+\w+),")
_READ = re.compile(r"requests in [\d.]+\w+, ([\d.]+)(B|KB|MB|GB|TB|PB) read")
_BINARY_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4, "PB": 1024**5}
_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
_NON2XX = re.compile(r"Non-2xx or 3xx responses: (\d+)")
_RPS = re.compile(r"Requests/sec:\s+([\d.]+)")
_LAT = re.compile(r"^\s*Latency\s+([\d.]+\w+)\s+([\d.]+\w+)\s+([\d.]+\w+)", re.M)


def to_us(text: str) -> float:
    m = _DURATION.fullmatch(text.strip())
    if not m:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(m.group(1)) * _UNITS_US[m.group(2)]


class WrkDriver:
    kind = DriverKind.WRK

    def command(self, req: LoadRequest) -> list[str]:
        return self._command(req, max(1, round(req.settings.duration_s or 1)))

    def warmup_command(self, req: LoadRequest) -> list[str] | None:
        """The same load for warmup_s (at least 1 s, wrk's resolution), run and discarded
        before the measured pass: wrk has no warm-up of its own."""
        warmup = req.settings.warmup_s
        return self._command(req, max(1, math.ceil(warmup))) if warmup > 0 else None

    def _command(self, req: LoadRequest, seconds: int) -> list[str]:
        s = req.settings
        cmd = [
            "wrk",
            "-t",
            str(req.threads),
            "-c",
            str(req.connections),
            "-d",
            f"{seconds}s",
            "--timeout",
            f"{s.timeout_s:g}s",
            "--latency",
        ]
        if s.keepalive is KeepAlive.OFF:
            cmd += ["-H", "Connection: close"]
        return [*cmd, req.url]

    def parse(
        self,
        req: LoadRequest,
        command: list[str],
        stdout: str,
        stderr: str,
        wall_s: float,
        cpu_s: tuple[float, float],
    ) -> LoadResult:
        return parse_wrk(stdout, command, cpu_s)


def _half_last_digit(printed: str) -> float:
    """Half the last printed digit of a wrk duration ("2.01s" -> 0.005 s, "1.00m" -> 0.3 s)."""
    number = re.match(r"[\d.]+", printed)
    assert number is not None  # _SUMMARY matched digits
    decimals = len(number.group().partition(".")[2])
    return 0.5 * 10.0**-decimals * to_us("1" + printed[number.end() :]) / 1e6


def parse_wrk(text: str, command: list[str], cpu_s: tuple[float, float] | None) -> LoadResult:
    summary = _SUMMARY.search(text)
    if not summary:
        raise ValueError("wrk output has no 'N requests in T' line")
    completed = int(summary.group(1))
    printed_s = to_us(summary.group(2)) / 1e6
    if printed_s <= 0:
        raise ValueError(f"wrk output gives a duration of {summary.group(2)}")
    latency: dict[str, float] = {}
    lat = _LAT.search(text) if completed else None  # with no response wrk prints zeros
    if lat:
        latency["mean"] = to_us(lat.group(1))
        latency["stdev"] = to_us(lat.group(2))
        latency["max"] = to_us(lat.group(3))
    for pct, value in _PCT.findall(text) if completed else ():
        latency[f"p{pct}"] = to_us(value)
    errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0}
    if m := _ERRORS.search(text):
        errors.update(
            connect=int(m.group(1)),
            read=int(m.group(2)),
            write=int(m.group(3)),
            timeout=int(m.group(4)),
        )
    if m := _NON2XX.search(text):
        errors["status"] = int(m.group(1))
    rps = float(m.group(1)) if (m := _RPS.search(text)) else completed / printed_s
    # "in 1.00m" is ±0.3 s; the rate wrk printed from the unrounded time gives it exactly.
    duration_s = precise_duration(printed_s, _half_last_digit(summary.group(2)), completed, rps)
    read = _READ.search(text)
    return LoadResult(
        driver=DriverKind.WRK,
        command=tuple(command),
        duration_s=duration_s,
        completed=completed,
        ok=completed - errors["status"],
        errors=errors,
        requests_per_s=rps,
        latency_us=latency,
        loader_cpu_s=cpu_s,
        bytes_read=None
        if read is None
        else round(float(read.group(1)) * _BINARY_UNITS[read.group(2)]),
        raw_output=text,
    )
