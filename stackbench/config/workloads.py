"""The workload catalog (DESIGN.md "Workloads", docs/contracts.md section 1).

A workload is an endpoint with the same work on every stack. Suites name a workload with
optional parameters, `sha256?n=1000` or `data?n=128`; this module parses those specs and knows
each workload's path, defaults, the services it needs and the expected body when the body is
a pure function of the parameters.
"""

import enum
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from stackbench.config.endpoints import Endpoint
from stackbench.config.names import is_name
from stackbench.config.paths import FIXTURES_DIR
from stackbench.errors import InputError


class Group(enum.Enum):
    MICRO = "micro"
    DATA = "data"
    TECHEMPOWER = "techempower"
    OWN = "own"  # a suite's [endpoints.NAME]


class BodyStability(enum.Enum):
    """FIXED: the same request always gets the same bytes, so load can check every body hash."""

    FIXED = "fixed"
    VARIES = "varies"


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    group: Group
    param: str | None = None
    default: int | None = None
    minimum: int = 0
    maximum: int = 0
    services: tuple[str, ...] = ()
    content_type: str = "text/plain"
    stability: BodyStability = BodyStability.FIXED
    expected: Callable[[int], bytes] | None = None
    path_param: bool = False  # /data/{n} rather than /data?n=
    endpoint: Endpoint | None = None  # a suite's own workload: its request and expectations

    def path(self, value: int | None) -> str:
        if self.endpoint is not None:
            return self.endpoint.path
        if self.param is None or value is None:
            return f"/{self.name}"
        if self.path_param:
            return f"/{self.name}/{value}"
        return f"/{self.name}?{urlencode({self.param: value})}"


def _demo_size() -> int:
    return (FIXTURES_DIR / "demo.txt").stat().st_size


def sha256_chain(n: int) -> bytes:
    data = (FIXTURES_DIR / "random-64k.bin").read_bytes()
    digest = hashlib.sha256(data).digest()
    for _ in range(n - 1):
        digest = hashlib.sha256(digest + data).digest()
    return digest.hex().encode()


_MICRO = [
    Workload(
        "hello",
        "nothing: the fixed cost of a request",
        Group.MICRO,
        expected=lambda _n: b"Hello World",
    ),
    Workload(
        "data",
        "n bytes of payload (n dots)",
        Group.MICRO,
        "n",
        128,
        0,
        1048576,
        expected=lambda n: b"." * n,
        path_param=True,
    ),
    Workload(
        "concat",
        "append 's' to a string n times",
        Group.MICRO,
        "n",
        1000,
        0,
        10_000_000,
        expected=lambda n: b"s" * n,
    ),
    Workload(
        "add",
        "increment an integer n times",
        Group.MICRO,
        "n",
        1000,
        0,
        100_000_000,
        expected=lambda n: str(n).encode(),
    ),
    Workload(
        "array",
        "push 's' onto an array n times",
        Group.MICRO,
        "n",
        1000,
        0,
        10_000_000,
        expected=lambda n: str(n).encode(),
    ),
    Workload(
        "assoc",
        "set map['s'+i] = 's' for i < n",
        Group.MICRO,
        "n",
        1000,
        0,
        10_000_000,
        expected=lambda n: str(n).encode(),
    ),
    Workload(
        "readfile",
        "open, read and close demo.txt n times (blocking)",
        Group.MICRO,
        "n",
        100,
        0,
        100_000,
        expected=lambda n: str(n * _demo_size()).encode(),
    ),
    Workload(
        "sha256",
        "chained SHA-256 over a 64 KiB file, n rounds",
        Group.MICRO,
        "n",
        1,
        1,
        100_000,
        expected=sha256_chain,
    ),
]

_DATA = [
    Workload(
        "db-report",
        "two SELECTs (2 x 300 rows) rendered as HTML tables",
        Group.DATA,
        services=("mariadb",),
        content_type="text/html",
    ),
    Workload(
        "mysql-row",
        "one-row SELECT",
        Group.DATA,
        services=("mariadb",),
        expected=lambda _n: b"test",
    ),
    Workload(
        "redis-get", "Redis GET", Group.DATA, services=("redis",), expected=lambda _n: b"test"
    ),
    Workload(
        "memcache-get",
        "memcached get",
        Group.DATA,
        services=("memcached",),
        expected=lambda _n: b"test",
    ),
]

_TFB = [
    Workload(
        "json",
        "TechEmpower JSON serialisation",
        Group.TECHEMPOWER,
        content_type="application/json",
        expected=lambda _n: b'{"message":"Hello, World!"}',
    ),
    Workload(
        "plaintext",
        "TechEmpower plaintext",
        Group.TECHEMPOWER,
        expected=lambda _n: b"Hello, World!",
    ),
    Workload(
        "db",
        "TechEmpower single query",
        Group.TECHEMPOWER,
        services=("mariadb",),
        content_type="application/json",
        stability=BodyStability.VARIES,
    ),
    Workload(
        "queries",
        "TechEmpower multiple queries",
        Group.TECHEMPOWER,
        "queries",
        20,
        1,
        500,
        services=("mariadb",),
        content_type="application/json",
        stability=BodyStability.VARIES,
    ),
    Workload(
        "fortunes",
        "TechEmpower fortunes (sort, escape, template)",
        Group.TECHEMPOWER,
        services=("mariadb",),
        content_type="text/html",
    ),
    Workload(
        "updates",
        "TechEmpower database updates",
        Group.TECHEMPOWER,
        "queries",
        20,
        1,
        500,
        services=("mariadb",),
        content_type="application/json",
        stability=BodyStability.VARIES,
    ),
]

CATALOG: dict[str, Workload] = {w.name: w for w in _MICRO + _DATA + _TFB}


def own_workload(endpoint: Endpoint) -> Workload:
    """A suite's [endpoints.NAME] as a workload. Its body is fixed unless fields of it are
    ignored (they legitimately differ from answer to answer)."""
    return Workload(
        endpoint.name,
        f"{endpoint.method} {endpoint.path}",
        Group.OWN,
        stability=BodyStability.VARIES if endpoint.ignore else BodyStability.FIXED,
        endpoint=endpoint,
    )


@dataclass(frozen=True)
class WorkloadSpec:
    """A workload with its parameter value as a suite asks for it."""

    workload: Workload
    value: int | None

    @property
    def name(self) -> str:
        return self.workload.name

    @property
    def label(self) -> str:
        w = self.workload
        if w.param is None or self.value is None:
            return w.name
        return f"{w.name}?{w.param}={self.value}"

    @property
    def path(self) -> str:
        return self.workload.path(self.value)

    def expected_body(self) -> bytes | None:
        if self.workload.expected is None:
            return None
        return self.workload.expected(self.value if self.value is not None else 0)


_WHOLE_NUMBER = re.compile(r"[0-9]{1,12}")  # ASCII digits only: int() would also take '²' or '٣'


def parse_spec(text: str, where: str, own: Mapping[str, Workload] | None = None) -> WorkloadSpec:
    """`sha256`, `sha256?n=1000`, `data?n=128`, `data/128`, `queries?queries=20`; or the name
    of one of the suite's `own` workloads ([endpoints.NAME]), which take no parameters."""
    if own and text in own:
        return WorkloadSpec(own[text], None)
    name, _, query = text.partition("?")
    if "/" in name:
        name, _, tail = name.partition("/")
        query = f"n={tail}"
    workload = CATALOG.get(name)
    if workload is None:
        shown = name if is_name(name) else repr(name)
        if own and name in own:
            raise InputError(f"{where}: '{shown}' is one of the suite's [endpoints]: no parameters")
        known = ", ".join([*CATALOG, *(own or {})])
        raise InputError(
            f"{where}: unknown workload '{shown}' (known: {known}; or define [endpoints.{shown}])"
            if is_name(name)
            else f"{where}: unknown workload {shown} (known: {known})"
        )
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    if not pairs:
        return WorkloadSpec(workload, workload.default)
    if workload.param is None:
        raise InputError(f"{where}: workload '{name}' takes no parameters (got {query!r})")
    keys = [key for key, _ in pairs]
    extra = sorted(set(keys) - {workload.param})
    if extra:
        raise InputError(
            f"{where}: workload '{name}' has no parameter {extra[0]!r} "
            f"(it takes '{workload.param}')"
        )
    if len(keys) > 1:
        raise InputError(f"{where}: workload '{name}' gets '{workload.param}' more than once")
    raw = pairs[0][1]
    if not _WHOLE_NUMBER.fullmatch(raw):
        raise InputError(
            f"{where}: {name} {workload.param}={raw!r} is not a whole number "
            f"(use ASCII digits, {workload.minimum}..{workload.maximum})"
        )
    value = int(raw)
    if not workload.minimum <= value <= workload.maximum:
        raise InputError(
            f"{where}: {name} {workload.param}={value} is outside "
            f"{workload.minimum}..{workload.maximum}"
        )
    return WorkloadSpec(workload, value)
