"""Verifiers for the data workloads and the TechEmpower test types.

They compare each response with what the backing services really hold (queried through
PyMySQL / the cache protocols), following TechEmpower's published verification rules for
json, plaintext, db, queries, fortunes and updates. Every failure names the rule broken,
prefixed by the workload ("fortunes: rows not sorted by message").
"""

from __future__ import annotations

import email.utils
import html
import http.client
import json
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser

import pymysql

from stackbench.errors import ServiceError, VerifyAbort
from stackbench.lab.httpget import Response, get
from stackbench.services.resp import memcached_set, redis_command
from stackbench.services.seed import (
    ADDITIONAL_FORTUNE,
    CACHE_KEY,
    CACHE_VALUE,
    FORTUNES,
    REPORT_TABLES,
    TEST_ROW_NAME,
    report_rows,
)
from stackbench.verify.outcome import VerifyOutcome

HTTP_TIMEOUT_S = 30.0
WORLD_MAX_ID = 10_000
MAX_QUERIES = 500
DB_REQUESTS = 10  # /db is asked several times to see that the row really is random
MAX_LISTED_MISMATCHES = 5
# (query string value or None for "absent", rows expected): TechEmpower's cases plus absent.
QUERY_CASES: tuple[tuple[str | None, int], ...] = (
    ("2", 2),
    ("20", 20),
    ("0", 1),
    ("foo", 1),
    ("501", 500),
    ("", 1),
    (None, 1),
)
_TFB_CONTENT_TYPES = {
    "json": r"^application/json(; ?charset=(UTF|utf)-8)?$",
    "html": r"^text/html; ?charset=(UTF|utf)-8$",
    "plaintext": r"^text/plain(; ?charset=(UTF|utf)-8)?$",
}


@dataclass(frozen=True)
class DataVerifyContext:
    """Where the verifiers find the services' truth; built from the service env."""

    db_host: str | None = None
    db_port: int | None = None
    db_user: str | None = None
    db_password: str | None = None
    db_name: str | None = None
    redis_host: str | None = None
    redis_port: int | None = None
    redis_password: str | None = None
    memcached_host: str | None = None
    memcached_port: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DataVerifyContext:
        def port(name: str) -> int | None:
            return int(env[name]) if name in env else None

        return cls(
            db_host=env.get("DB_HOST"),
            db_port=port("DB_PORT"),
            db_user=env.get("DB_USER"),
            db_password=env.get("DB_PASSWORD"),
            db_name=env.get("DB_NAME"),
            redis_host=env.get("REDIS_HOST"),
            redis_port=port("REDIS_PORT"),
            redis_password=env.get("REDIS_PASSWORD"),
            memcached_host=env.get("MEMCACHED_HOST"),
            memcached_port=port("MEMCACHED_PORT"),
        )

    def connect_db(self) -> pymysql.connections.Connection:
        if self.db_host is None or self.db_port is None:
            raise VerifyAbort("no MariaDB connection parameters (DB_HOST/DB_PORT) in the context")
        return pymysql.connect(
            host=self.db_host,
            port=self.db_port,
            user=self.db_user,
            password=self.db_password or "",
            database=self.db_name,
            charset="utf8mb4",
            autocommit=True,
            connect_timeout=10,
        )


class _Findings:
    """Failures of one workload, each prefixed with the workload name."""

    def __init__(self, workload: str) -> None:
        self.workload = workload
        self.failures: list[str] = []
        self.checked = 0

    def fail(self, rule: str) -> None:
        self.failures.append(f"{self.workload}: {rule}")

    def outcome(self) -> VerifyOutcome:
        return VerifyOutcome(self.workload, not self.failures, tuple(self.failures), self.checked)


@contextmanager
def _findings(workload: str) -> Iterator[_Findings]:
    """Collect failures; an abort or a database error ends the checks as one failure."""
    findings = _Findings(workload)
    try:
        yield findings
    except VerifyAbort as abort:
        findings.fail(str(abort))
    except pymysql.MySQLError as err:
        findings.fail(f"cannot query MariaDB to compare with: {err}")
    except ServiceError as err:
        findings.fail(f"cannot reach the cache service to compare with: {err}")
    except (OSError, http.client.HTTPException) as err:
        findings.fail(f"request failed: {err!r}")


def _fetch(findings: _Findings, base_url: str, path: str) -> Response:
    findings.checked += 1
    return get(base_url, path, timeout_s=HTTP_TIMEOUT_S)


# ---------------------------------------------------------------- shared response rules


def _require_ok(response: Response, path: str) -> None:
    if response.status != 200:
        raise VerifyAbort(f"GET {path} answered status {response.status}, expected 200")


def _check_framing(findings: _Findings, response: Response, path: str) -> None:
    chunked = "chunked" in response.headers.get("transfer-encoding", "").lower()
    if "content-length" not in response.headers and not chunked:
        findings.fail(f"GET {path}: neither Content-Length nor chunked Transfer-Encoding")


def _check_tfb_headers(findings: _Findings, response: Response, path: str, kind: str) -> None:
    """TechEmpower's header rules: Server, Date, Content-Type, Content-Length or chunked."""
    if not response.headers.get("server"):
        findings.fail(f"GET {path}: header Server missing")
    date = response.headers.get("date")
    if not date:
        findings.fail(f"GET {path}: header Date missing")
    elif not _is_http_date(date):
        findings.fail(f"GET {path}: header Date {date!r} is not an HTTP date")
    pattern = _TFB_CONTENT_TYPES[kind]
    if not re.match(pattern, response.content_type):
        findings.fail(
            f"GET {path}: Content-Type {response.content_type!r} does not match {pattern}"
        )
    _check_framing(findings, response, path)


def _is_http_date(value: str) -> bool:
    try:
        return email.utils.parsedate_to_datetime(value) is not None
    except (TypeError, ValueError):
        return False


def _check_plain_body(findings: _Findings, response: Response, path: str, expected: str) -> None:
    if not response.content_type.startswith("text/plain"):
        findings.fail(f"GET {path}: Content-Type {response.content_type!r}, expected text/plain")
    _check_framing(findings, response, path)
    if response.body != expected.encode():
        findings.fail(f"GET {path}: body {response.body[:60]!r}, expected {expected!r}")


def _json_body(response: Response, path: str) -> object:
    try:
        return json.loads(response.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise VerifyAbort(f"GET {path}: body is not valid JSON ({err})") from err


# ---------------------------------------------------------------- simple data workloads


def verify_mysql_row(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    with _findings("mysql-row") as findings:
        response = _fetch(findings, base_url, "/mysql-row")
        _require_ok(response, "/mysql-row")
        _check_plain_body(findings, response, "/mysql-row", TEST_ROW_NAME)
        # A constant "test" would pass the check above; prove the row is really read.
        token = "t" + secrets.token_hex(8)
        with ctx.connect_db() as db, db.cursor() as cursor:
            cursor.execute("UPDATE test SET name = %s", (token,))
            try:
                response = _fetch(findings, base_url, "/mysql-row")
            finally:
                cursor.execute("UPDATE test SET name = %s", (TEST_ROW_NAME,))
        if response.body != token.encode():
            findings.fail("body does not follow the test table (a constant or a cached row?)")
    return findings.outcome()


def _verify_cache_get(
    workload: str, base_url: str, set_value: Callable[[str], None] | None
) -> VerifyOutcome:
    path = f"/{workload}"
    with _findings(workload) as findings:
        response = _fetch(findings, base_url, path)
        _require_ok(response, path)
        _check_plain_body(findings, response, path, CACHE_VALUE)
        if set_value is None:
            raise VerifyAbort("no service address in the context to check the value is read")
        token = "t" + secrets.token_hex(8)
        set_value(token)
        try:
            response = _fetch(findings, base_url, path)
        finally:
            set_value(CACHE_VALUE)
        if response.body != token.encode():
            findings.fail(f"body does not follow key {CACHE_KEY!r} (a constant or a cache?)")
    return findings.outcome()


def verify_redis_get(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    setter = None
    if ctx.redis_host and ctx.redis_port:
        host, port, password = ctx.redis_host, ctx.redis_port, ctx.redis_password

        def setter(value: str) -> None:
            redis_command(host, port, "SET", CACHE_KEY, value, password=password)

    return _verify_cache_get("redis-get", base_url, setter)


def verify_memcache_get(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    setter = None
    if ctx.memcached_host and ctx.memcached_port:
        host, port = ctx.memcached_host, ctx.memcached_port

        def setter(value: str) -> None:
            memcached_set(host, port, CACHE_KEY, value)

    return _verify_cache_get("memcache-get", base_url, setter)


# ---------------------------------------------------------------- HTML tables


@dataclass
class _ParsedTable:
    heading: str | None
    rows: list[list[str]]  # every <tr>, header row included; cell text unescaped


class _TableParser(HTMLParser):
    """Collects tables (with the <h1> before each), their rows and cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[_ParsedTable] = []
        self.title = ""
        self._heading: str | None = None
        self._text: list[str] | None = None
        self._in = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("title", "h1", "td", "th"):
            self._in, self._text = tag, []
        elif tag == "table":
            self.tables.append(_ParsedTable(self._heading, []))
        elif tag == "tr" and self.tables:
            self.tables[-1].rows.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag != self._in or self._text is None:
            return
        text = "".join(self._text).strip()
        if tag == "title":
            self.title = text
        elif tag == "h1":
            self._heading = text
        elif self.tables and self.tables[-1].rows:
            self.tables[-1].rows[-1].append(text)
        self._in, self._text = "", None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def _parse_tables(response: Response, path: str) -> _TableParser:
    try:
        text = response.body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise VerifyAbort(f"GET {path}: body is not valid UTF-8 ({err})") from err
    parser = _TableParser()
    parser.feed(text)
    parser.close()
    return parser


def _unescaped_in(body: bytes, texts: list[str]) -> list[str]:
    """Texts that need escaping but appear raw in the body."""
    return [t for t in texts if html.escape(t, quote=False) != t and t.encode() in body]


# ---------------------------------------------------------------- db-report


def verify_db_report(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    del ctx  # the seed is deterministic: compare with the generator, not the live tables
    with _findings("db-report") as findings:
        response = _fetch(findings, base_url, "/db-report")
        _require_ok(response, "/db-report")
        if not response.content_type.startswith("text/html"):
            findings.fail(f"Content-Type {response.content_type!r}, expected text/html")
        _check_framing(findings, response, "/db-report")
        expected = {table: [list(r.cells()) for r in report_rows(table)] for table in REPORT_TABLES}
        names = [cells[1] for rows in expected.values() for cells in rows]
        if raw := _unescaped_in(response.body, names):
            findings.fail(f"cells not HTML-escaped (found raw {raw[0]!r})")
        tables = _parse_tables(response, "/db-report").tables
        if [t.heading for t in tables] != list(REPORT_TABLES):
            findings.fail(
                f"expected tables headed {list(REPORT_TABLES)}, found {[t.heading for t in tables]}"
            )
        for table, parsed in zip(REPORT_TABLES, tables, strict=False):
            _compare_report_table(findings, table, parsed.rows, expected[table])
    return findings.outcome()


def _compare_report_table(
    findings: _Findings, table: str, rows: list[list[str]], expected: list[list[str]]
) -> None:
    header = ["id", "name", "value", "created"]
    if not rows or rows[0] != header:
        findings.fail(f"table {table}: header row {rows[:1]}, expected {header}")
        return
    body = rows[1:]
    if len(body) != len(expected):
        findings.fail(f"table {table}: {len(body)} rows, expected {len(expected)}")
    mismatches = [
        f"row {i + 1} is {got}, expected {want}"
        for i, (got, want) in enumerate(zip(body, expected, strict=False))
        if got != want
    ]
    if mismatches:
        listed = "; ".join(mismatches[:MAX_LISTED_MISMATCHES])
        findings.fail(f"table {table}: {len(mismatches)} rows differ from the seed: {listed}")


# ---------------------------------------------------------------- json, plaintext


def verify_json(base_url: str, ctx: DataVerifyContext | None = None) -> VerifyOutcome:
    with _findings("json") as findings:
        response = _fetch(findings, base_url, "/json")
        _require_ok(response, "/json")
        _check_tfb_headers(findings, response, "/json", "json")
        body = _json_body(response, "/json")
        if body != {"message": "Hello, World!"}:
            findings.fail(f'body {response.body[:80]!r} is not {{"message":"Hello, World!"}}')
    return findings.outcome()


def verify_plaintext(base_url: str, ctx: DataVerifyContext | None = None) -> VerifyOutcome:
    with _findings("plaintext") as findings:
        response = _fetch(findings, base_url, "/plaintext")
        _require_ok(response, "/plaintext")
        _check_tfb_headers(findings, response, "/plaintext", "plaintext")
        if response.body != b"Hello, World!":
            findings.fail(f"body {response.body[:60]!r} is not 'Hello, World!'")
    return findings.outcome()


# ---------------------------------------------------------------- db, queries, updates


def _world_table(ctx: DataVerifyContext) -> dict[int, int]:
    with ctx.connect_db() as db, db.cursor() as cursor:
        cursor.execute("SELECT id, randomNumber FROM World")
        return {int(row_id): int(number) for row_id, number in cursor.fetchall()}


def _status_counter(ctx: DataVerifyContext, name: str) -> int:
    with ctx.connect_db() as db, db.cursor() as cursor:
        cursor.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
        row = cursor.fetchone()
        return int(row[1]) if row else 0


def _world_row(findings: _Findings, item: object, where: str) -> tuple[int, int] | None:
    """(id, randomNumber) of a valid World object, or None after recording why not."""
    if not isinstance(item, dict):
        findings.fail(f"{where}: {item!r} is not a JSON object")
        return None
    values = []
    for key in ("id", "randomNumber"):
        value = item.get(key)
        if key not in item:
            findings.fail(f"{where}: object {item!r} lacks key {key!r}")
            return None
        if type(value) is not int or not 1 <= value <= WORLD_MAX_ID:
            findings.fail(f"{where}: {key} {value!r} is not an integer in 1..{WORLD_MAX_ID}")
            return None
        values.append(value)
    return values[0], values[1]


def _world_rows(findings: _Findings, body: object, path: str) -> list[tuple[int, int]]:
    if not isinstance(body, list):
        findings.fail(f"GET {path}: body is not a JSON array")
        return []
    rows = [_world_row(findings, item, f"GET {path}") for item in body]
    return [row for row in rows if row is not None]


def _check_rows_match(
    findings: _Findings, rows: list[tuple[int, int]], world: dict[int, int], path: str
) -> None:
    wrong = [(row_id, number) for row_id, number in rows if world.get(row_id) != number]
    if wrong:
        row_id, number = wrong[0]
        findings.fail(
            f"GET {path}: {len(wrong)} rows differ from the database, e.g. id {row_id} "
            f"randomNumber {number} (database: {world.get(row_id)})"
        )


def verify_db(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    with _findings("db") as findings:
        world = _world_table(ctx)
        ids = []
        for _ in range(DB_REQUESTS):
            response = _fetch(findings, base_url, "/db")
            _require_ok(response, "/db")
            _check_tfb_headers(findings, response, "/db", "json")
            body = _json_body(response, "/db")
            if isinstance(body, list):
                findings.fail("body is a JSON array; /db must answer a single object")
                break
            row = _world_row(findings, body, "GET /db")
            if row is None:
                break
            _check_rows_match(findings, [row], world, "/db")
            ids.append(row[0])
        if len(ids) == DB_REQUESTS and len(set(ids)) == 1:
            findings.fail(f"same id {ids[0]} on {DB_REQUESTS} requests; the row must be random")
    return findings.outcome()


def _queries_path(workload: str, raw: str | None) -> str:
    return f"/{workload}" if raw is None else f"/{workload}?queries={raw}"


def _check_row_count(findings: _Findings, raw: str | None, got: int, expected: int) -> None:
    if got == expected:
        return
    if raw is not None and raw.isdigit() and 1 <= int(raw) <= MAX_QUERIES:
        findings.fail(f"queries={raw} returned {got} rows, expected {expected}")
    elif raw is None:
        findings.fail(f"missing queries parameter not treated as 1 (got {got} rows)")
    else:
        findings.fail(f"queries={raw} not clamped to {expected} (got {got} rows)")


def _fetch_world_rows(
    findings: _Findings, base_url: str, workload: str, raw: str | None, expected: int
) -> list[tuple[int, int]]:
    path = _queries_path(workload, raw)
    response = _fetch(findings, base_url, path)
    if response.status != 200:
        findings.fail(f"GET {path} answered status {response.status}, expected 200")
        return []
    _check_tfb_headers(findings, response, path, "json")
    rows = _world_rows(findings, _json_body(response, path), path)
    _check_row_count(findings, raw, len(rows), expected)
    return rows


def verify_queries(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    with _findings("queries") as findings:
        world = _world_table(ctx)
        for raw, expected in QUERY_CASES:
            # Handler_read_key counts index lookups at the server, whatever the protocol
            # (text, SQL or binary prepared statements), so a cache in the stack shows up.
            lookups_before = _status_counter(ctx, "Handler_read_key")
            rows = _fetch_world_rows(findings, base_url, "queries", raw, expected)
            lookups = _status_counter(ctx, "Handler_read_key") - lookups_before
            _check_rows_match(findings, rows, world, _queries_path("queries", raw))
            if len(rows) == expected and lookups < expected:
                findings.fail(
                    f"queries={raw}: the database did {lookups} index lookups for "
                    f"{expected} rows returned (one query per row, no caching)"
                )
    return findings.outcome()


def verify_updates(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    with _findings("updates") as findings:
        for raw, expected in QUERY_CASES:
            before = _world_table(ctx)
            rows = _fetch_world_rows(findings, base_url, "updates", raw, expected)
            after = _world_table(ctx)
            _check_updates_written(findings, rows, before, after, raw)
    return findings.outcome()


def _check_updates_written(
    findings: _Findings,
    rows: list[tuple[int, int]],
    before: dict[int, int],
    after: dict[int, int],
    raw: str | None,
) -> None:
    returned: dict[int, set[int]] = {}
    for row_id, number in rows:
        returned.setdefault(row_id, set()).add(number)
    # With the same id drawn twice the last write wins, so any returned value may be stored.
    unwritten = [row_id for row_id, numbers in returned.items() if after[row_id] not in numbers]
    changed = [row_id for row_id in returned if after[row_id] != before[row_id]]
    where = _queries_path("updates", raw)
    if unwritten:
        findings.fail(
            f"rows not written to the database ({where}: {len(unwritten)} of "
            f"{len(returned)} returned rows differ from the table)"
        )
    elif len(returned) >= 10 and not changed:
        # A new random value equals the old one 1 time in 10,000; all of 10+ rows never.
        findings.fail(f"rows not written to the database ({where}: no randomNumber changed)")


# ---------------------------------------------------------------- fortunes


def verify_fortunes(base_url: str, ctx: DataVerifyContext) -> VerifyOutcome:
    with _findings("fortunes") as findings:
        response = _fetch(findings, base_url, "/fortunes")
        _require_ok(response, "/fortunes")
        _check_tfb_headers(findings, response, "/fortunes", "html")
        table_rows = _fortune_table(ctx)
        if raw := _unescaped_in(response.body, [message for _, message in table_rows]):
            findings.fail(f"messages not HTML-escaped (found raw {raw[0]!r})")
        parsed = _parse_tables(response, "/fortunes")
        _check_fortunes_template(findings, parsed)
        if parsed.tables:
            _check_fortune_rows(findings, parsed.tables[0].rows[1:], table_rows)
    return findings.outcome()


def _fortune_table(ctx: DataVerifyContext) -> list[tuple[int, str]]:
    with ctx.connect_db() as db, db.cursor() as cursor:
        cursor.execute("SELECT id, message FROM Fortune")
        rows = [(int(fortune_id), str(message)) for fortune_id, message in cursor.fetchall()]
    if sorted(rows) != sorted(FORTUNES):
        raise VerifyAbort("the Fortune table does not hold TechEmpower's 12 rows; reseed it")
    return rows


def _check_fortunes_template(findings: _Findings, parsed: _TableParser) -> None:
    if parsed.title != "Fortunes":
        findings.fail(f"title {parsed.title!r}, expected 'Fortunes' (TechEmpower template)")
    if len(parsed.tables) != 1:
        findings.fail(f"{len(parsed.tables)} tables, expected 1 (TechEmpower template)")
    elif not parsed.tables[0].rows or parsed.tables[0].rows[0] != ["id", "message"]:
        findings.fail("first row is not the header <th>id</th><th>message</th>")


def _check_fortune_rows(
    findings: _Findings, rows: list[list[str]], table_rows: list[tuple[int, str]]
) -> None:
    expected = sorted([*table_rows, ADDITIONAL_FORTUNE], key=lambda row: row[1])
    got: list[tuple[str, str]] = [
        (row[0], row[1]) if len(row) == 2 else ("?", "|".join(row)) for row in rows
    ]
    want = [(str(fortune_id), message) for fortune_id, message in expected]
    messages = [message for _, message in got]
    if (str(ADDITIONAL_FORTUNE[0]), ADDITIONAL_FORTUNE[1]) not in got:
        findings.fail("the fortune added at request time (id 0) is missing")
    if sorted(got) != sorted(want):
        extra = sorted(set(got) - set(want))[:MAX_LISTED_MISMATCHES]
        missing = sorted(set(want) - set(got))[:MAX_LISTED_MISMATCHES]
        findings.fail(
            f"rows differ from the Fortune table: {len(rows)} rows, expected "
            f"{len(want)}; unexpected {extra}; missing {missing}"
        )
    if messages != sorted(messages):
        findings.fail("rows not sorted by message")


# ---------------------------------------------------------------- dispatch

VERIFIERS: dict[str, Callable[[str, DataVerifyContext], VerifyOutcome]] = {
    "db-report": verify_db_report,
    "mysql-row": verify_mysql_row,
    "redis-get": verify_redis_get,
    "memcache-get": verify_memcache_get,
    "json": verify_json,
    "plaintext": verify_plaintext,
    "db": verify_db,
    "queries": verify_queries,
    "fortunes": verify_fortunes,
    "updates": verify_updates,
}


def verify(name: str, base_url: str, ctx: object | None) -> VerifyOutcome:
    """Entry point used by stackbench.verify.http.verify_workload."""
    if name not in VERIFIERS:
        raise KeyError(f"no data verifier for workload {name!r}; known: {sorted(VERIFIERS)}")
    if ctx is None:
        ctx = DataVerifyContext()
    elif isinstance(ctx, Mapping):
        ctx = DataVerifyContext.from_env(ctx)
    if not isinstance(ctx, DataVerifyContext):
        raise TypeError(f"data verify context must be DataVerifyContext, got {type(ctx)}")
    return VERIFIERS[name](base_url, ctx)
