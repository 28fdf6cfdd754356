"""Adapter for ApacheBench (ab), as used by the concurrency-sweep and db-report articles.

ab gives percentiles 50/66/75/80/90/95/98/99/100 in whole milliseconds and a mean; those are
stored (converted to microseconds, at ab's millisecond resolution) and nothing else. Its
"Total transferred" (bytes received, headers included) is stored as the level's bytes read.

The level's duration is the precise one ab's figures imply (drivers/precision.py), so our
times per request equal ab's three-decimal "Time per request" lines (1.383 ms, where the
connection-times mean says 1).
"""

import math
import re

from stackbench.config.loadspec import DriverKind, KeepAlive, LoadRequest, LoadResult
from stackbench.drivers.precision import precise_duration

_PCTS = {
    "50": "p50",
    "66": "p66",
    "75": "p75",
    "80": "p80",
    "90": "p90",
    "95": "p95",
    "98": "p98",
    "99": "p99",
    "100": "max",
}
_PCT = re.compile(r"^\s*(\d+)%\s+(\d+)", re.M)
_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9 -]*):\s+(\d+(?:\.\d+)?)(?:\s|$)", re.M)
_FAILED_DETAIL = re.compile(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)")
_ROW = r"^{}:\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)"
_CONNECT_ROW = re.compile(_ROW.format("Connect"), re.M)
_TOTAL_ROW = re.compile(_ROW.format("Total"), re.M)


class AbDriver:
    kind = DriverKind.AB

    def command(self, req: LoadRequest) -> list[str]:
        s = req.settings
        cmd = ["ab", "-c", str(req.connections), "-s", f"{max(1, round(s.timeout_s))}", "-r"]
        if req.request_count is not None:
            cmd += ["-n", str(req.request_count)]
        else:
            # -t caps the time; -n is raised so the time limit is what ends the run.
            cmd += ["-t", f"{max(1, round(s.duration_s or 1))}", "-n", "50000000"]
        if s.keepalive is KeepAlive.ON:
            cmd.append("-k")
        return [*cmd, req.url]

    def warmup_command(self, req: LoadRequest) -> list[str] | None:
        """The same load for warmup_s (whole seconds, at least 1: ab's -t resolution), run
        and discarded before the measured pass; time-bounded even when the measured pass
        counts requests, so that the warm-up never eats into a request budget."""
        s = req.settings
        if s.warmup_s <= 0:
            return None
        cmd = [
            "ab",
            "-c",
            str(req.connections),
            "-s",
            f"{max(1, round(s.timeout_s))}",
            "-r",
            "-t",
            f"{max(1, math.ceil(s.warmup_s))}",
            "-n",
            "50000000",
        ]
        if s.keepalive is KeepAlive.ON:
            cmd.append("-k")
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
        return parse_ab(stdout, command, cpu_s)


def parse_ab(text: str, command: list[str], cpu_s: tuple[float, float] | None) -> LoadResult:
    fields: dict[str, float] = {}
    for key, value in _FIELD.findall(text):
        fields.setdefault(key.strip(), float(value))
    if "Complete requests" not in fields:
        raise ValueError("ab output has no 'Complete requests' line")
    completed = int(fields["Complete requests"])
    failed = int(fields.get("Failed requests", 0))
    non2xx = int(fields.get("Non-2xx responses", 0))
    errors = {"connect": 0, "read": 0, "body_mismatch": 0, "exceptions": 0, "status": non2xx}
    if m := _FAILED_DETAIL.search(text):
        errors.update(
            connect=int(m.group(1)),
            read=int(m.group(2)),
            body_mismatch=int(m.group(3)),
            exceptions=int(m.group(4)),
        )
    elif failed:
        errors["read"] = failed
    latency = {_PCTS[p]: float(v) * 1000.0 for p, v in _PCT.findall(text) if p in _PCTS}
    if m := _TOTAL_ROW.search(text):
        # 'Time per request' is concurrency x elapsed / requests, not a latency; the mean of
        # the 'Total' connection-times row is.
        latency["mean"] = float(m.group(2)) * 1000.0
        latency["min"] = float(m.group(1)) * 1000.0
    connect = None
    if m := _CONNECT_ROW.search(text):
        connect = {
            "min": float(m.group(1)) * 1e3,
            "mean": float(m.group(2)) * 1e3,
            "p50": float(m.group(4)) * 1e3,
            "max": float(m.group(5)) * 1e3,
        }
    printed = fields.get("Time taken for tests", 0.0)
    rps = fields.get("Requests per second", completed / printed if printed else 0.0)
    duration = precise_duration(printed, 0.0005, completed, rps)
    ok = max(0, completed - failed - non2xx)
    transferred = fields.get("Total transferred")
    return LoadResult(
        driver=DriverKind.AB,
        command=tuple(command),
        duration_s=duration,
        completed=completed,
        ok=ok,
        errors=errors,
        requests_per_s=rps,
        latency_us=latency,
        connect_us=connect,
        loader_cpu_s=cpu_s,
        bytes_read=None if transferred is None else int(transferred),
        raw_output=text,
    )
