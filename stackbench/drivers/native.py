"""The native driver: `stackbench-load --json`, decoded by `loadjson` (loadgen/schema/)."""

from collections.abc import Sequence

from hdrh.histogram import HdrHistogram

from stackbench.config.loadspec import DriverKind, KeepAlive, LoadRequest, LoadResult, Mode
from stackbench.config.paths import loadgen_binary
from stackbench.drivers import loadjson
from stackbench.errors import DriverError

# Percentiles the articles quote that the loader's summary lacks (ab prints 66/80/95/98), read
# from the loader's own full-resolution histogram: measured, not interpolated from p75/p90.
EXTRA_PERCENTILES = (66.0, 80.0, 95.0, 98.0)


def histogram_percentiles(
    encoded: str, percentiles: Sequence[float] = EXTRA_PERCENTILES
) -> dict[str, float]:
    histogram = HdrHistogram.decode(encoded)
    if histogram.get_total_count() == 0:
        return {}
    # One walk of the counts for all of them (get_value_at_percentile walks them once each).
    values = histogram.get_percentile_to_value_dict(list(percentiles))
    return {f"p{p:g}": float(values[p]) for p in percentiles}


class NativeDriver:
    kind = DriverKind.NATIVE

    def warmup_command(self, req: LoadRequest) -> list[str] | None:
        return None  # the loader warms up in-process (--warmup) and discards those seconds

    def command(self, req: LoadRequest) -> list[str]:
        s = req.settings
        binary = loadgen_binary()
        if not binary.exists():
            raise DriverError(
                f"{binary} is not built; run scripts/setup.sh (or "
                "cargo build --release in loadgen/), or set STACKBENCH_LOAD"
            )
        cmd = [
            str(binary),
            req.url,
            "--json",
            "-c",
            str(req.connections),
            "-t",
            str(req.threads),
            "--timeout",
            f"{s.timeout_s}s",
            "--expect-status",
            str(req.expect_status),
        ]
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
        if req.method != "GET":
            cmd += ["--method", req.method]
        # name=value forms: a header or a body that begins with '-' is not read as a flag
        cmd += [f"--header={line}" for line in req.headers]
        if req.body is not None:
            cmd.append(f"--body={req.body}")
        return cmd

    def parse(
        self,
        req: LoadRequest,
        command: list[str],
        stdout: str,
        stderr: str,
        wall_s: float,
        cpu_s: tuple[float, float],
    ) -> LoadResult:
        doc = loadjson.decode(stdout, stderr)
        completed = doc.requests.completed
        latency: dict[str, float] = {}
        if completed:  # with nothing completed the summary is zeros, not latencies
            latency = doc.latency_us.figures()
            latency.update(histogram_percentiles(doc.histogram.data))
        return LoadResult(
            driver=self.kind,
            command=tuple(command),
            duration_s=doc.duration_s,
            completed=completed,
            ok=doc.requests.ok,
            errors=dict(doc.errors),
            requests_per_s=doc.throughput.requests_per_s,
            latency_us=latency,
            connect_us=doc.connect_us.figures() if doc.connect_us.count else None,
            histogram=doc.histogram.data,
            timeseries=doc.timeseries,
            open_loop=doc.open_loop,
            loader_cpu_s=(doc.loader_cpu.user_s, doc.loader_cpu.sys_s),
            warnings=doc.limits.warnings,
            unanswered_at_end=(
                doc.requests.unanswered_at_end,
                float(doc.requests.oldest_unanswered_us),
            ),
            bytes_read=doc.throughput.bytes_read,
            loader_engine=doc.tool.engine or None,
            raw_output=stdout,
        )
