"""Backing services: real servers start, answer, stop, and leave nothing behind."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psutil
import pymysql
import pytest

from stackbench.errors import InputError, ServiceError
from stackbench.lab import fs
from stackbench.lab.privilege import stack_user
from stackbench.lab.procs import tree
from stackbench.services import RunningService, ServiceKind, ServiceSet, reset_data, start_service
from stackbench.services.lifecycle import MARKER
from stackbench.services.mariadb import accounts_to_remove, user_hosts
from stackbench.services.resp import memcached_get, memcached_set, redis_command
from stackbench.services.seed import FORTUNES, SEED_SQL_PATH, report_rows, seed_sql, world_rows


def _connect(service: RunningService) -> pymysql.connections.Connection:
    env = service.endpoint.env
    return pymysql.connect(
        host=env["DB_HOST"],
        port=int(env["DB_PORT"]),
        user=env["DB_USER"],
        password=env["DB_PASSWORD"],
        database=env["DB_NAME"],
        charset="utf8mb4",
    )


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
@pytest.mark.concurrent
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
    via_socket = pymysql.connect(
        unix_socket=env["DB_SOCKET"],
        user=env["DB_USER"],
        password=env["DB_PASSWORD"],
        database=env["DB_NAME"],
    )
    with via_socket, via_socket.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
    assert (mariadb.log_path.parent / "data").is_dir()
    assert mariadb.endpoint.host == "127.0.0.1"


@pytest.mark.integration
@pytest.mark.concurrent
def test_mariadb_listens_on_loopback_only(mariadb: RunningService) -> None:
    listening = {
        conn.laddr.ip
        for conn in psutil.Process(mariadb.root_pid()).net_connections(kind="tcp")
        if conn.status == psutil.CONN_LISTEN
    }
    assert listening == {"127.0.0.1"}


@pytest.mark.integration
@pytest.mark.concurrent
def test_reset_data_restores_world(mariadb: RunningService) -> None:
    with _connect(mariadb) as db, db.cursor() as cursor:
        cursor.execute("UPDATE World SET randomNumber = 0 WHERE id <= 10")
        db.commit()
    reset_data([mariadb])
    rows = _query(mariadb, "SELECT id, randomNumber FROM World WHERE id <= 10 ORDER BY id")
    assert rows == list(world_rows()[:10])


@pytest.mark.integration
@pytest.mark.concurrent
@pytest.mark.parametrize("kind", [ServiceKind.REDIS, ServiceKind.MEMCACHED])
def test_cache_service_starts_answers_and_stops_cleanly(kind: ServiceKind, tmp_path: Path) -> None:
    service = start_service(kind, tmp_path, cpus=frozenset({0}))
    try:
        host, port = service.endpoint.host, service.endpoint.port
        assert psutil.Process(service.root_pid()).cpu_affinity() == [0]
        if kind is ServiceKind.REDIS:
            password = service.endpoint.env["REDIS_PASSWORD"]
            assert redis_command(host, port, "GET", "test", password=password) == b"test"
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
@pytest.mark.concurrent
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
@pytest.mark.concurrent
def test_restart_in_same_dir_starts_from_scratch(tmp_path: Path) -> None:
    first = start_service(ServiceKind.REDIS, tmp_path)
    (first.log_path.parent / "stale-file").write_text("old")
    first.stop()
    second = start_service(ServiceKind.REDIS, tmp_path)
    second.stop()
    assert not (second.log_path.parent / "stale-file").exists()


@pytest.mark.integration
@pytest.mark.concurrent
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
@pytest.mark.concurrent
def test_bind_failure_detected_from_the_server_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the port is taken between our check and the server's bind, the log tells."""
    from stackbench.services import lifecycle

    monkeypatch.setattr(lifecycle, "ensure_port_free", lambda kind, port, bind: None)
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
@pytest.mark.concurrent
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


# ------------------------------------------------------------------ least privilege


def _server_uid() -> int:
    """The uid every server must have: the stack user's when we are root, else ours."""
    run_as = stack_user()
    return run_as.uid if run_as else os.geteuid()


def _refused_as_root(**where: object) -> pymysql.err.OperationalError:
    with pytest.raises(pymysql.err.OperationalError) as info:
        pymysql.connect(user="root", connect_timeout=5, **where)
    return info.value


@pytest.mark.integration
@pytest.mark.concurrent
@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
@pytest.mark.parametrize("password", [None, ""], ids=["no-password", "empty-password"])
def test_mariadb_refuses_root_over_tcp(
    mariadb: RunningService, host: str, password: str | None
) -> None:
    extra = {} if password is None else {"password": password}
    error = _refused_as_root(host=host, port=mariadb.endpoint.port, **extra)
    # 1045: access denied (root@127.0.0.1 is gone); 2003: refused (nothing listens on ::1).
    assert error.args[0] == (1045 if host == "127.0.0.1" else 2003), error.args


@pytest.mark.integration
@pytest.mark.concurrent
def test_mariadb_root_is_locked_on_the_socket_too(mariadb: RunningService) -> None:
    error = _refused_as_root(unix_socket=mariadb.endpoint.env["DB_SOCKET"], password="")
    assert error.args[0] == 1045, error.args


@pytest.mark.integration
@pytest.mark.concurrent
def test_mariadb_user_has_privileges_on_its_own_database_only(mariadb: RunningService) -> None:
    grants = [row[0] for row in _query(mariadb, "SHOW GRANTS")]
    assert len(grants) == 2, grants
    assert grants[0].startswith("GRANT USAGE ON *.* TO `stackbench`@`127.0.0.1`")
    assert grants[1] == "GRANT ALL PRIVILEGES ON `stackbench`.* TO `stackbench`@`127.0.0.1`"
    for statement in (
        "CREATE DATABASE other",
        "SELECT User FROM mysql.user",
        "SELECT * FROM mysql.global_priv",
    ):
        with pytest.raises(pymysql.err.OperationalError) as info:
            _query(mariadb, statement)
        assert info.value.args[0] in (1044, 1142), (statement, info.value.args)


@pytest.mark.integration
@pytest.mark.concurrent
def test_mariadb_password_is_random_per_start(mariadb: RunningService, tmp_path: Path) -> None:
    other = start_service(ServiceKind.MARIADB, tmp_path)
    try:
        assert other.endpoint.env["DB_PASSWORD"] != mariadb.endpoint.env["DB_PASSWORD"]
        assert len(other.endpoint.env["DB_PASSWORD"]) >= 20
    finally:
        other.stop()


def test_lockdown_removes_every_account_but_ours() -> None:
    after_install = [
        ("root", "127.0.0.1"),
        ("stackbench", "127.0.0.1"),
        ("root", "::1"),
        ("mariadb.sys", "localhost"),
        ("root", "localhost"),
        ("", "localhost"),
        ("stackbench", "localhost"),
        ("root", "vm"),
        ("mysql", "localhost"),
        ("root", "%"),
        ("stackbench", "%"),
    ]
    assert accounts_to_remove(after_install) == [
        ("root", "127.0.0.1"),
        ("root", "::1"),
        ("", "localhost"),
        ("root", "vm"),
        ("mysql", "localhost"),
        ("root", "%"),
        ("stackbench", "%"),
    ]


def test_the_account_exists_for_the_socket_and_the_hosts_let_in_only() -> None:
    assert user_hosts("127.0.0.1", ()) == ("localhost", "127.0.0.1")
    # On a services host of its own: its address (the agent restoring the seed) and the
    # server host's, never a wildcard.
    assert user_hosts("10.0.0.3", ("10.0.0.1",)) == ("localhost", "10.0.0.3", "10.0.0.1")
    hosts = user_hosts("10.0.0.3", ("10.0.0.1",))
    found = [("stackbench", "10.0.0.1"), ("stackbench", "127.0.0.1"), ("stackbench", "%")]
    assert accounts_to_remove(found, hosts) == [("stackbench", "127.0.0.1"), ("stackbench", "%")]


@pytest.mark.integration
@pytest.mark.concurrent
def test_redis_requires_its_per_start_password(tmp_path: Path) -> None:
    service = start_service(ServiceKind.REDIS, tmp_path)
    host, port = service.endpoint.host, service.endpoint.port
    password = service.endpoint.env["REDIS_PASSWORD"]
    try:
        with pytest.raises(ServiceError, match="NOAUTH"):
            redis_command(host, port, "GET", "test")
        with pytest.raises(ServiceError, match="WRONGPASS|invalid password"):
            redis_command(host, port, "GET", "test", password=password + "x")
        assert redis_command(host, port, "GET", "test", password=password) == b"test"
        config = service.log_path.parent / "redis.conf"
        lines = config.read_text().splitlines()
        assert {"bind 127.0.0.1", "protected-mode yes", f"requirepass {password}"} <= set(lines)
        assert config.stat().st_mode & 0o077 == 0  # the password is in there
    finally:
        service.stop()


@pytest.mark.integration
@pytest.mark.concurrent
def test_every_service_runs_as_the_stack_user_on_loopback_only(tmp_path: Path) -> None:
    uid = _server_uid()
    with ServiceSet(tmp_path) as services:
        services.ensure(ServiceKind)
        for service in services.running():
            procs = tree(service.root_pid())
            assert procs
            for proc in procs:
                assert set(proc.uids()) == {uid}, (service.kind, proc.cmdline(), proc.uids())
                assert 0 not in proc.gids()
            listening = {
                c.laddr.ip
                for p in procs
                for c in p.net_connections(kind="inet")
                if c.status == psutil.CONN_LISTEN or not c.raddr
            }
            assert listening == {"127.0.0.1"}, (service.kind, listening)
            service_dir = service.log_path.parent
            assert service_dir.stat().st_uid == uid
            assert service_dir.stat().st_mode & 0o077 == 0
    logs = services.logs()  # still known after stop
    assert set(logs) == {"mariadb", "mariadb-install", "redis", "memcached"}
    assert all(path.is_file() for path in logs.values())
    assert "ready for connections" in logs["mariadb"].read_text()


@pytest.mark.integration
@pytest.mark.concurrent
def test_logs_of_a_failed_start_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackbench.services import lifecycle

    monkeypatch.setattr(lifecycle, "ensure_port_free", lambda kind, port, bind: None)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        monkeypatch.setattr(lifecycle, "free_port", lambda bind: port)
        services = ServiceSet(tmp_path)
        with pytest.raises(ServiceError):
            services.ensure([ServiceKind.REDIS])
    assert "Address already in use" in services.logs()["redis"].read_text()


def test_symlinked_service_dir_is_neither_emptied_nor_followed(tmp_path: Path) -> None:
    run_dir, outside = tmp_path / "run", tmp_path / "outside"
    run_dir.mkdir()
    outside.mkdir()
    (outside / MARKER).write_text("redis\n")  # looks like ours, but lies outside
    (outside / "precious.txt").write_text("user data")
    (run_dir / "redis").symlink_to(outside)
    with pytest.raises(InputError, match="symlink"):
        start_service(ServiceKind.REDIS, run_dir)
    assert (outside / "precious.txt").read_text() == "user data"
    empty = tmp_path / "empty-outside"
    empty.mkdir()
    (run_dir / "memcached").symlink_to(empty)
    with pytest.raises(InputError, match="outside"):
        start_service(ServiceKind.MEMCACHED, run_dir)
    assert list(empty.iterdir()) == []


def test_planted_log_symlink_is_not_reported_as_a_log(tmp_path: Path) -> None:
    services = ServiceSet(tmp_path)
    services._started.append(ServiceKind.REDIS)  # as if a start had been attempted
    (tmp_path / "redis").mkdir()
    (tmp_path / "redis" / "redis.log").write_text("real\n")
    (tmp_path / "redis" / "shadow.log").symlink_to("/etc/passwd")
    assert services.logs() == {"redis": tmp_path / "redis" / "redis.log"}
    assert fs.copy_log(tmp_path / "redis" / "shadow.log", tmp_path / "copy") is None
