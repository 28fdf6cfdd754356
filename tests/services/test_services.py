"""Backing services: real servers start, answer, stop, and leave nothing behind."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psutil
import pymysql
import pytest

from stackbench.errors import ServiceError
from stackbench.services import RunningService, ServiceKind, ServiceSet, reset_data, start_service
from stackbench.services.resp import memcached_get, memcached_set, redis_command
from stackbench.services.seed import FORTUNES, SEED_SQL_PATH, report_rows, seed_sql, world_rows


def _connect(service: RunningService) -> pymysql.connections.Connection:
    env = service.endpoint.env
    return pymysql.connect(host=env["DB_HOST"], port=int(env["DB_PORT"]), user=env["DB_USER"],
                           password=env["DB_PASSWORD"], database=env["DB_NAME"],
                           charset="utf8mb4")


def _query(service: RunningService, sql: str) -> list[tuple]:
    with _connect(service) as db, db.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes still in the service's process group."""
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc.pid)
        except (psutil.Error, ProcessLookupError):
            continue
    return members


def _assert_gone(service: RunningService) -> None:
    pid = service.root_pid()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert _group_members(pid) == [], f"{service.kind.value} left processes behind"


# ------------------------------------------------------------------ seed (no servers)


def test_seed_sql_file_matches_generator() -> None:
    assert SEED_SQL_PATH.read_text(encoding="utf-8") == seed_sql(), (
        "workloads/sql/seed.sql is stale: run python -m stackbench.services seed --write"
    )


def test_seed_is_deterministic_and_in_range() -> None:
    assert report_rows("a") == report_rows("a")
    assert report_rows("a") != report_rows("b")
    assert [r.id for r in report_rows("b")] == list(range(1, 301))
    numbers = [n for _, n in world_rows()]
    assert len(numbers) == 10_000 and min(numbers) >= 1 and max(numbers) <= 10_000
    assert len(set(numbers)) > 5000  # really spread, not a constant
    assert len(FORTUNES) == 12 and FORTUNES[10][1].startswith("<script>")


# ------------------------------------------------------------------ real servers


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> RunningService:
    service = start_service(ServiceKind.MARIADB, tmp_path_factory.mktemp("svc-mariadb"))
    yield service
    service.stop()
    _assert_gone(service)


@pytest.mark.integration
def test_mariadb_is_seeded_and_reachable_over_tcp_and_socket(mariadb: RunningService) -> None:
    assert mariadb.version().startswith("10.")
    assert _query(mariadb, "SELECT COUNT(*) FROM a") == [(300,)]
    assert _query(mariadb, "SELECT COUNT(*) FROM World") == [(10_000,)]
    assert _query(mariadb, "SELECT name FROM test") == [("test",)]
    assert _query(mariadb, "SELECT id, message FROM Fortune ORDER BY id") == list(FORTUNES)
    first = report_rows("b")[0]
    assert _query(mariadb, "SELECT id, name, value, created FROM b WHERE id = 1") == [
        (first.id, first.name, first.value, first.created)
    ]
    env = mariadb.endpoint.env
    via_socket = pymysql.connect(unix_socket=env["DB_SOCKET"], user=env["DB_USER"],
                                 password=env["DB_PASSWORD"], database=env["DB_NAME"])
    with via_socket, via_socket.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
    assert (mariadb.log_path.parent / "data").is_dir()
    assert mariadb.endpoint.host == "127.0.0.1"


@pytest.mark.integration
def test_mariadb_listens_on_loopback_only(mariadb: RunningService) -> None:
    listening = {
        conn.laddr.ip
        for conn in psutil.Process(mariadb.root_pid()).net_connections(kind="tcp")
        if conn.status == psutil.CONN_LISTEN
    }
    assert listening == {"127.0.0.1"}


@pytest.mark.integration
def test_reset_data_restores_world(mariadb: RunningService) -> None:
    with _connect(mariadb) as db, db.cursor() as cursor:
        cursor.execute("UPDATE World SET randomNumber = 0 WHERE id <= 10")
        db.commit()
    reset_data([mariadb])
    rows = _query(mariadb, "SELECT id, randomNumber FROM World WHERE id <= 10 ORDER BY id")
    assert rows == list(world_rows()[:10])


@pytest.mark.integration
@pytest.mark.parametrize("kind", [ServiceKind.REDIS, ServiceKind.MEMCACHED])
def test_cache_service_starts_answers_and_stops_cleanly(kind: ServiceKind, tmp_path: Path) -> None:
    service = start_service(kind, tmp_path, cpus=frozenset({0}))
    try:
        host, port = service.endpoint.host, service.endpoint.port
        assert psutil.Process(service.root_pid()).cpu_affinity() == [0]
        if kind is ServiceKind.REDIS:
            assert redis_command(host, port, "GET", "test") == b"test"
            assert service.endpoint.env["REDIS_PORT"] == str(port)
        else:
            assert memcached_get(host, port, "test") == "test"
            assert service.endpoint.env["MEMCACHED_PORT"] == str(port)
        assert service.version()[0].isdigit()
        assert service.log_path.exists()
    finally:
        service.stop()
        service.stop()  # idempotent
    _assert_gone(service)


@pytest.mark.integration
def test_second_start_in_fresh_dir_reuses_nothing(tmp_path: Path) -> None:
    first = start_service(ServiceKind.MEMCACHED, tmp_path / "one")
    memcached_set(first.endpoint.host, first.endpoint.port, "leftover", "x")
    first.stop()
    second = start_service(ServiceKind.MEMCACHED, tmp_path / "two")
    try:
        assert second.root_pid() != first.root_pid()
        assert memcached_get(second.endpoint.host, second.endpoint.port, "leftover") is None
    finally:
        second.stop()
    _assert_gone(second)


@pytest.mark.integration
def test_restart_in_same_dir_starts_from_scratch(tmp_path: Path) -> None:
    first = start_service(ServiceKind.REDIS, tmp_path)
    (first.log_path.parent / "stale-file").write_text("old")
    first.stop()
    second = start_service(ServiceKind.REDIS, tmp_path)
    second.stop()
    assert not (second.log_path.parent / "stale-file").exists()


@pytest.mark.integration
def test_long_run_dir_gets_a_short_socket_path(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    service = start_service(ServiceKind.REDIS, deep)
    socket_path = service.endpoint.socket
    try:
        assert socket_path is not None and socket_path.is_socket()
        assert len(str(socket_path)) <= 100
        assert service.endpoint.env["REDIS_SOCKET"] == str(socket_path)
    finally:
        service.stop()
    assert not socket_path.parent.exists()  # the private temp dir is removed on stop


def test_refuses_to_wipe_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "redis").mkdir()
    (tmp_path / "redis" / "precious.txt").write_text("user data")
    with pytest.raises(ServiceError, match="refusing to delete"):
        start_service(ServiceKind.REDIS, tmp_path)
    assert (tmp_path / "redis" / "precious.txt").exists()


@pytest.mark.parametrize("kind", list(ServiceKind))
def test_port_already_taken_gives_clear_error(kind: ServiceKind, tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ServiceError, match=f"{kind.value}: port {port} .* already in use"):
            start_service(kind, tmp_path, port=port)


@pytest.mark.integration
def test_bind_failure_detected_from_the_server_log(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """If the port is taken between our check and the server's bind, the log tells."""
    from stackbench.services import lifecycle

    monkeypatch.setattr(lifecycle, "ensure_port_free", lambda kind, port: None)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ServiceError) as info:
            start_service(ServiceKind.REDIS, tmp_path, port=port, start_timeout_s=20)
    message = str(info.value)
    assert f"port {port} already in use" in message
    assert "command:" in message and "redis-server" in message
    assert "Address already in use" in message  # the log tail


@pytest.mark.integration
def test_service_set_stops_everything_even_on_error(tmp_path: Path) -> None:
    started: list[RunningService] = []
    with pytest.raises(KeyboardInterrupt), ServiceSet(tmp_path) as services:
        services.ensure([ServiceKind.REDIS, ServiceKind.MEMCACHED])
        services.ensure([ServiceKind.REDIS])  # already running: nothing new
        started = services.running()
        env = services.env()
        assert {"REDIS_HOST", "REDIS_PORT", "MEMCACHED_HOST", "MEMCACHED_PORT"} <= set(env)
        raise KeyboardInterrupt
    assert len(started) == 2
    for service in started:
        _assert_gone(service)
