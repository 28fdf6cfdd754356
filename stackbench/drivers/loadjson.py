"""The `stackbench-load --json` document as typed structures (loadgen/schema/, contracts §6).

Decoding checks types and required fields; fields this side does not know are ignored, so the
loader may add fields (an additive schema revision) without breaking older orchestrators.
tests/drivers/test_loadjson.py checks that every field here is one the published schema
promises, and that a real document validates against the schema and decodes.
"""

import re
from typing import Literal

import msgspec

# the stored records are the document's
from stackbench.config.measured import OpenLoop, Second
from stackbench.errors import DriverError

# "stackbench-load/N": revisions are additive (new fields only), so any N decodes; a document
# that lost a field this side needs fails the decoding with that field's name.
SCHEMA_PATTERN = re.compile(r"stackbench-load/[1-9][0-9]*")


class Doc(msgspec.Struct, frozen=True):
    """Base of the document's objects."""


class Tool(Doc, frozen=True):
    name: str
    version: str
    # stackbench-load/3: the I/O engine that ran, "uring" or "epoll" ("" before /3)
    engine: str = ""


class Expect(Doc, frozen=True):
    status: int | None
    body_length: int | None
    body_sha256: str | None
    check_every: int


class Config(Doc, frozen=True):
    url: str
    method: str
    mode: Literal["closed", "open"]
    connections: int
    threads: int
    duration_s: float | None
    requests: int | None
    rate: float | None
    keepalive: Literal["on", "off"]
    pipeline: int
    timeout_ms: int
    warmup_s: float
    headers: tuple[str, ...]
    expect: Expect


class Requests(Doc, frozen=True):
    sent: int
    completed: int
    ok: int
    errors: int
    unanswered_at_end: int
    oldest_unanswered_us: int


class Throughput(Doc, frozen=True):
    requests_per_s: float
    ok_per_s: float
    bytes_read: int
    bytes_per_s: float


class Summary(Doc, frozen=True):
    """A histogram summary in microseconds; all zero when count is 0."""

    count: int
    min: float
    mean: float
    stdev: float
    max: float
    p50: float
    p75: float
    p90: float
    p99: float
    p99_9: float
    p99_99: float

    def figures(self) -> dict[str, float]:
        """Every figure but the count, by the names the store uses (p50, p99_9, max ...)."""
        return {
            name: float(getattr(self, name)) for name in self.__struct_fields__ if name != "count"
        }


class Histogram(Doc, frozen=True):
    encoding: str
    unit: str
    lowest: int
    highest: int
    significant_digits: int
    data: str  # HdrHistogram V2 compressed, base64


class LoaderCpu(Doc, frozen=True):
    user_s: float
    sys_s: float


class Limits(Doc, frozen=True):
    nofile_soft: int
    nofile_hard: int
    connections_opened: int
    warnings: tuple[str, ...]
    # stackbench-load/4: the hard limit found at start (the loader raises it where it may)
    # and the source addresses its connections spread over (0: not reported, before /4)
    nofile_hard_before: int = 0
    source_addresses: int = 0


class LoadDocument(Doc, frozen=True):
    schema: str
    tool: Tool
    config: Config
    duration_s: float
    requests: Requests
    errors: dict[str, int]  # per error class; new classes are data, not a schema break
    throughput: Throughput
    latency_us: Summary
    connect_us: Summary
    open_loop: OpenLoop | None
    histogram: Histogram
    timeseries: tuple[Second, ...]
    loader_cpu: LoaderCpu
    limits: Limits


_DECODER = msgspec.json.Decoder(LoadDocument)


def decode(text: str, stderr: str = "") -> LoadDocument:
    """The loader's stdout as a typed document, or a DriverError saying what is wrong."""
    try:
        doc = _DECODER.decode(text)
    except msgspec.ValidationError as exc:
        raise DriverError(
            f"stackbench-load printed a document this stackbench cannot read "
            f"({exc}); rebuild the loader (cargo build --release in loadgen/)"
        ) from exc
    except msgspec.DecodeError as exc:
        raise DriverError(
            f"stackbench-load printed no JSON document ({exc}); stderr: {stderr[-500:]}"
        ) from exc
    if not SCHEMA_PATTERN.fullmatch(doc.schema):
        raise DriverError(f"stackbench-load schema {doc.schema!r}, expected stackbench-load/N")
    return doc
