"""The native driver: `stackbench-load --json` (schema stackbench-load/1 or /2)."""

import json

from stackbench.config.loadspec import DriverKind, KeepAlive, LoadRequest, LoadResult, Mode
from stackbench.config.paths import loadgen_binary
from stackbench.drivers import DriverError

# Version 2 only added per-second fields to `timeseries`: both read the same way.
SCHEMAS = ("stackbench-load/1", "stackbench-load/2")
# Percentiles the articles quote that the loader's summary lacks (ab prints 66/80/95/98), read
# from the loader's own full-resolution histogram: measured, not interpolated from p75/p90.
EXTRA_PERCENTILES = (66.0, 80.0, 95.0, 98.0)


def histogram_percentiles(encoded: str, percentiles=EXTRA_PERCENTILES) -> dict[str, float]:
    from hdrh.histogram import HdrHistogram

    histogram = HdrHistogram.decode(encoded)
    if histogram.get_total_count() == 0:
        return {}
    return {f"p{p:g}": float(histogram.get_value_at_percentile(p)) for p in percentiles}


class NativeDriver:
    kind = DriverKind.NATIVE

    def command(self, req: LoadRequest) -> list[str]:
        s = req.settings
        binary = loadgen_binary()
        if not binary.exists():
            raise DriverError(f"{binary} is not built; run scripts/setup.sh (or "
                              "cargo build --release in loadgen/), or set STACKBENCH_LOAD")
        cmd = [str(binary), req.url, "--json", "-c", str(req.connections),
               "-t", str(req.threads), "--timeout", f"{s.timeout_s}s",
               "--expect-status", str(req.expect_status)]
        if s.duration_s is not None:
            cmd += ["-d", f"{s.duration_s}s"]
        if req.request_count is not None:
            cmd += ["-n", str(req.request_count)]
        if s.warmup_s:
            cmd += ["--warmup", f"{s.warmup_s}s"]
        if req.rate is not None and s.mode is Mode.OPEN:
            cmd += ["-R", f"{req.rate:g}"]
        if s.keepalive is KeepAlive.OFF:
            cmd.append("--no-keepalive")
        if s.pipeline > 1:
            cmd += ["--pipeline", str(s.pipeline)]
        if req.expect_body_sha256:
            cmd += ["--expect-sha256", req.expect_body_sha256]
        return cmd

    def parse(self, req: LoadRequest, command: list[str], stdout: str, stderr: str,
              wall_s: float, cpu_s: tuple[float, float]) -> LoadResult:
        try:
            doc = json.loads(stdout)
        except json.JSONDecodeError as exc:
            raise DriverError(f"stackbench-load printed no JSON document ({exc}); "
                              f"stderr: {stderr[-500:]}") from exc
        if doc.get("schema") not in SCHEMAS:
            raise DriverError(f"stackbench-load schema {doc.get('schema')!r}, expected one of "
                              f"{', '.join(SCHEMAS)}")
        cpu = doc.get("loader_cpu") or {}
        limits = doc.get("limits") or {}
        latency = {k: float(v) for k, v in (doc.get("latency_us") or {}).items()
                   if k != "count" and v is not None}
        histogram = (doc.get("histogram") or {}).get("data")
        if histogram and doc["requests"]["completed"]:
            latency.update(histogram_percentiles(histogram))
        connect = doc.get("connect_us")
        return LoadResult(
            driver=self.kind,
            command=tuple(command),
            duration_s=float(doc["duration_s"]),
            completed=int(doc["requests"]["completed"]),
            ok=int(doc["requests"]["ok"]),
            errors={k: int(v) for k, v in doc["errors"].items()},
            requests_per_s=float(doc["throughput"]["requests_per_s"]),
            latency_us=latency if doc["requests"]["completed"] else {},
            connect_us={k: float(v) for k, v in connect.items() if v is not None}
            if connect and connect.get("count") else None,
            histogram=histogram,
            timeseries=doc.get("timeseries"),
            open_loop=doc.get("open_loop"),
            loader_cpu_s=(float(cpu.get("user_s", cpu_s[0])), float(cpu.get("sys_s", cpu_s[1]))),
            warnings=tuple(limits.get("warnings") or ()),
            unanswered_at_end=(int(doc["requests"].get("unanswered_at_end", 0)),
                               float(doc["requests"].get("oldest_unanswered_us", 0))),
            raw_output=stdout,
        )
