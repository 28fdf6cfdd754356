"""Data verifiers against an in-process reference server backed by the real services.

The server implements every data/TechEmpower endpoint correctly, and can be switched to
one deliberate mistake at a time; each mistake must fail with the rule it breaks.
"""

from __future__ import annotations

import enum
import html
import json
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pymysql
import pytest

from stackbench.services import ServiceKind, ServiceSet, reset_data
from stackbench.services.resp import memcached_get, redis_command
from stackbench.verify.data import DataVerifyContext, verify

pytestmark = [pytest.mark.integration, pytest.mark.concurrent]


class Fault(enum.Enum):
    NONE = "none"
    UNSORTED_FORTUNES = "unsorted-fortunes"
    UNESCAPED_FORTUNES = "unescaped-fortunes"
    UPDATES_NOT_WRITTEN = "updates-not-written"
    QUERIES_NOT_CLAMPED = "queries-not-clamped"
    QUERIES_CACHED = "queries-cached"
    CONSTANT_CACHE_VALUE = "constant-cache-value"
    UNESCAPED_REPORT = "unescaped-report"
    NO_SERVER_HEADER = "no-server-header"
    DB_ROW_WRONG = "db-row-wrong"


class ReferenceServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, env: dict[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), ReferenceHandler)
        self.env = env
        self.fault = Fault.NONE
        self.world_cache: dict[int, int] = {}

    def db(self) -> pymysql.connections.Connection:
        env = self.env
        return pymysql.connect(
            host=env["DB_HOST"],
            port=int(env["DB_PORT"]),
            user=env["DB_USER"],
            password=env["DB_PASSWORD"],
            database=env["DB_NAME"],
            charset="utf8mb4",
            autocommit=True,
        )


def _query_count(query: str, fault: Fault) -> int:
    values = parse_qs(query, keep_blank_values=True).get("queries", [""])
    try:
        count = int(values[0])
    except ValueError:
        # The deliberate mistake: garbage becomes 0 rows instead of 1.
        return 0 if fault is Fault.QUERIES_NOT_CLAMPED else 1
    return max(1, min(500, count))


class ReferenceHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ReferenceServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass

    def send_header(self, keyword: str, value: str) -> None:
        if keyword == "Server" and self.server.fault is Fault.NO_SERVER_HEADER:
            return
        super().send_header(keyword, value)

    def _reply(self, body: bytes | str, content_type: str = "text/plain") -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        url = urlsplit(self.path)
        handler = getattr(self, "_" + url.path.strip("/").replace("-", "_"), None)
        if handler is None:
            self.send_error(404)
            return
        handler(url.query)

    def _json(self, _query: str) -> None:
        self._reply(json.dumps({"message": "Hello, World!"}), "application/json")

    def _plaintext(self, _query: str) -> None:
        self._reply("Hello, World!")

    def _mysql_row(self, _query: str) -> None:
        with self.server.db() as db, db.cursor() as cursor:
            cursor.execute("SELECT name FROM test")
            self._reply(cursor.fetchone()[0])

    def _redis_get(self, _query: str) -> None:
        if self.server.fault is Fault.CONSTANT_CACHE_VALUE:
            self._reply("test")
            return
        env = self.server.env
        self._reply(
            redis_command(
                env["REDIS_HOST"],
                int(env["REDIS_PORT"]),
                "GET",
                "test",
                password=env["REDIS_PASSWORD"],
            )
        )

    def _memcache_get(self, _query: str) -> None:
        env = self.server.env
        self._reply(memcached_get(env["MEMCACHED_HOST"], int(env["MEMCACHED_PORT"]), "test"))

    def _random_rows(self, cursor: pymysql.cursors.Cursor, count: int) -> list[dict[str, int]]:
        rows = []
        for _ in range(count):
            row_id = random.randint(1, 10_000)
            if self.server.fault is Fault.QUERIES_CACHED and row_id in self.server.world_cache:
                number = self.server.world_cache[row_id]
            else:
                cursor.execute("SELECT id, randomNumber FROM World WHERE id = %s", (row_id,))
                number = cursor.fetchone()[1]
            rows.append({"id": row_id, "randomNumber": number})
        return rows

    def _db(self, _query: str) -> None:
        with self.server.db() as db, db.cursor() as cursor:
            row = self._random_rows(cursor, 1)[0]
        if self.server.fault is Fault.DB_ROW_WRONG:
            row["randomNumber"] = row["randomNumber"] % 10_000 + 1
        self._reply(json.dumps(row), "application/json")

    def _queries(self, query: str) -> None:
        if self.server.fault is Fault.QUERIES_CACHED:
            with self.server.db() as db, db.cursor() as cursor:
                cursor.execute("SELECT id, randomNumber FROM World")
                self.server.world_cache = dict(cursor.fetchall())
        with self.server.db() as db, db.cursor() as cursor:
            rows = self._random_rows(cursor, _query_count(query, self.server.fault))
        self._reply(json.dumps(rows), "application/json")

    def _updates(self, query: str) -> None:
        with self.server.db() as db, db.cursor() as cursor:
            rows = self._random_rows(cursor, _query_count(query, self.server.fault))
            for row in rows:
                row["randomNumber"] = random.randint(1, 10_000)
            if self.server.fault is not Fault.UPDATES_NOT_WRITTEN:
                cursor.executemany(
                    "UPDATE World SET randomNumber = %s WHERE id = %s",
                    [(row["randomNumber"], row["id"]) for row in rows],
                )
        self._reply(json.dumps(rows), "application/json")

    def _fortunes(self, _query: str) -> None:
        with self.server.db() as db, db.cursor() as cursor:
            cursor.execute("SELECT id, message FROM Fortune")
            fortunes = list(cursor.fetchall())
        fortunes.append((0, "Additional fortune added at request time."))
        if self.server.fault is not Fault.UNSORTED_FORTUNES:
            fortunes.sort(key=lambda row: row[1])
        escape = (
            (lambda text: text) if self.server.fault is Fault.UNESCAPED_FORTUNES else html.escape
        )
        rows = "".join(f"<tr><td>{fid}</td><td>{escape(msg)}</td></tr>" for fid, msg in fortunes)
        page = (
            "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
            f"<tr><th>id</th><th>message</th></tr>{rows}</table></body></html>"
        )
        self._reply(page, "text/html; charset=utf-8")

    def _db_report(self, _query: str) -> None:
        escape = (lambda text: text) if self.server.fault is Fault.UNESCAPED_REPORT else html.escape
        parts = ["<!DOCTYPE html><html><head><title>Report</title></head><body>"]
        with self.server.db() as db, db.cursor() as cursor:
            for table in ("a", "b"):
                cursor.execute(f"SELECT id, name, value, created FROM {table} ORDER BY id")
                parts.append(
                    f"<h1>{table}</h1>\n<table><tr><th>id</th><th>name</th>"
                    "<th>value</th><th>created</th></tr>\n"
                )
                for row_id, name, value, created in cursor.fetchall():
                    parts.append(
                        f"<tr><td>{row_id}</td><td>{escape(name)}</td><td>{value}</td>"
                        f"<td>{created:%Y-%m-%d %H:%M:%S}</td></tr>\n"
                    )
                parts.append("</table>")
        parts.append("</body></html>")
        self._reply("".join(parts), "text/html")


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceSet]:
    with ServiceSet(tmp_path_factory.mktemp("verify-services")) as service_set:
        service_set.ensure(ServiceKind)
        yield service_set


@pytest.fixture(scope="module")
def server(services: ServiceSet) -> Iterator[ReferenceServer]:
    reference = ReferenceServer(services.env())
    thread = threading.Thread(target=reference.serve_forever, daemon=True)
    thread.start()
    yield reference
    reference.shutdown()
    reference.server_close()


@pytest.fixture()
def base_url(server: ReferenceServer) -> Iterator[str]:
    server.fault = Fault.NONE
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.fault = Fault.NONE


@pytest.fixture()
def ctx(services: ServiceSet) -> DataVerifyContext:
    return DataVerifyContext.from_env(services.env())


ALL_WORKLOADS = [
    "db-report",
    "mysql-row",
    "redis-get",
    "memcache-get",
    "json",
    "plaintext",
    "db",
    "queries",
    "fortunes",
    "updates",
]


@pytest.mark.parametrize("workload", ALL_WORKLOADS)
def test_correct_server_passes(workload: str, base_url: str, ctx: DataVerifyContext) -> None:
    outcome = verify(workload, base_url, ctx)
    assert outcome.failures == ()
    assert outcome.ok and outcome.checked >= 1 and outcome.workload == workload


@pytest.mark.parametrize(
    ("fault", "workload", "rule"),
    [
        (Fault.UNSORTED_FORTUNES, "fortunes", "fortunes: rows not sorted by message"),
        (Fault.UNESCAPED_FORTUNES, "fortunes", "fortunes: messages not HTML-escaped"),
        (Fault.UPDATES_NOT_WRITTEN, "updates", "updates: rows not written to the database"),
        (Fault.QUERIES_NOT_CLAMPED, "queries", "queries: queries=foo not clamped to 1"),
        (Fault.QUERIES_NOT_CLAMPED, "updates", "updates: queries=foo not clamped to 1"),
        (Fault.QUERIES_CACHED, "queries", "one query per row, no caching"),
        (Fault.CONSTANT_CACHE_VALUE, "redis-get", "redis-get: body does not follow key"),
        (Fault.UNESCAPED_REPORT, "db-report", "db-report: cells not HTML-escaped"),
        (Fault.NO_SERVER_HEADER, "json", "json: GET /json: header Server missing"),
        (Fault.DB_ROW_WRONG, "db", "rows differ from the database"),
    ],
)
def test_wrong_server_fails_with_the_rule_broken(
    fault: Fault,
    workload: str,
    rule: str,
    base_url: str,
    server: ReferenceServer,
    ctx: DataVerifyContext,
) -> None:
    server.fault = fault
    outcome = verify(workload, base_url, ctx)
    assert not outcome.ok
    assert any(rule in failure for failure in outcome.failures), outcome.failures


def test_mysql_row_and_caches_restored_after_verification(
    base_url: str, ctx: DataVerifyContext, services: ServiceSet
) -> None:
    for workload in ("mysql-row", "redis-get", "memcache-get"):
        assert verify(workload, base_url, ctx).ok
    env = services.env()
    assert (
        redis_command(
            env["REDIS_HOST"], int(env["REDIS_PORT"]), "GET", "test", password=env["REDIS_PASSWORD"]
        )
        == b"test"
    )
    assert memcached_get(env["MEMCACHED_HOST"], int(env["MEMCACHED_PORT"]), "test") == "test"
    reset_data(services.running())


def test_unreachable_database_is_a_failure_not_a_crash(base_url: str) -> None:
    outcome = verify("db", base_url, DataVerifyContext())
    assert not outcome.ok
    assert "no MariaDB connection parameters" in outcome.failures[0]


def test_verify_accepts_the_service_env_mapping(base_url: str, services: ServiceSet) -> None:
    assert verify("fortunes", base_url, services.env()).ok


def test_unknown_workload_is_rejected(base_url: str) -> None:
    with pytest.raises(KeyError, match="no data verifier"):
        verify("hello", base_url, None)


def test_reached_through_the_generic_verifier(base_url: str, ctx: DataVerifyContext) -> None:
    from stackbench.verify.http import verify_workload

    outcome = verify_workload("fortunes", base_url, ctx)
    assert outcome.ok, outcome.failures
