"""MariaDB: a private mariadbd with its own data directory, seeded for the data workloads.

Never reads /etc/mysql (--no-defaults everywhere), never touches the system instance:
data dir, socket, pid file and log all live in the service's run directory.
"""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

import pymysql

from stackbench.errors import ServiceError
from stackbench.services.base import (
    HOST,
    ServiceEndpoint,
    ServiceKind,
    find_command,
    log_tail,
    running_as_root,
    short_socket_path,
    spawn_service,
    wait_until_ready,
)
from stackbench.services.running import RunningService
from stackbench.services.seed import DATABASE, database_statements, table_statements

DB_USER = "stackbench"
# mariadbd flushes InnoDB on SIGTERM; a large buffer pool can take a while.
STOP_GRACE_S = 60.0
INSTALL_TIMEOUT_S = 180.0
# Per-request-connection stacks under high concurrency open many connections at once.
MAX_CONNECTIONS = 1000
# The stacks connect over TCP to 127.0.0.1 or over the socket ("localhost").
_USER_HOSTS = ("localhost", "127.0.0.1", "::1")


def start_mariadb(
    run_dir: Path, port: int, cpus: frozenset[int] | None, start_timeout_s: float
) -> RunningService:
    temp_dirs: list[Path] = []
    data_dir = run_dir / "data"
    socket_path = short_socket_path(run_dir / "mariadbd.sock", temp_dirs)
    log_path = run_dir / "mariadb.log"
    _install_data_dir(data_dir, run_dir)
    command = _server_command(data_dir, socket_path, port, run_dir)
    process = spawn_service(command, log_path, run_dir, cpus)
    password = secrets.token_urlsafe(18)
    endpoint = _endpoint(port, socket_path, password)
    try:
        version = wait_until_ready(
            ServiceKind.MARIADB, process, command, log_path,
            lambda: _root_query(socket_path, "SELECT VERSION()"),
            _bind_failed, port, start_timeout_s,
        )
        _create_user_and_seed(socket_path, password)
    except BaseException:
        RunningService(endpoint, process, log_path, "", STOP_GRACE_S, tuple(temp_dirs)).stop()
        raise
    return RunningService(endpoint, process, log_path, version, STOP_GRACE_S, tuple(temp_dirs))


def _install_data_dir(data_dir: Path, run_dir: Path) -> None:
    command = [
        find_command("mariadb-install-db", ServiceKind.MARIADB),
        "--no-defaults",
        f"--datadir={data_dir}",
        # Root starts password-less on the private socket only long enough to set us up;
        # the server listens on loopback and the socket sits in our own run dir.
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        "--skip-name-resolve",
    ]
    if running_as_root():
        command.append("--user=root")
    install_log = run_dir / "mariadb-install.log"
    with open(install_log, "wb") as log:
        try:
            result = subprocess.run(
                command, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S, check=False,
            )
        except subprocess.TimeoutExpired as err:
            raise _install_failure(command, install_log, "timed out") from err
    if result.returncode != 0:
        raise _install_failure(command, install_log, f"exit status {result.returncode}")


def _install_failure(command: list[str], install_log: Path, reason: str) -> ServiceError:
    return ServiceError(
        f"mariadb failed to start: mariadb-install-db {reason}\n"
        f"command: {subprocess.list2cmdline(command)}\n"
        f"log {install_log} (last lines):\n{log_tail(install_log)}"
    )


def _server_command(data_dir: Path, socket_path: Path, port: int, run_dir: Path) -> list[str]:
    command = [
        find_command("mariadbd", ServiceKind.MARIADB),
        "--no-defaults",
        f"--datadir={data_dir}",
        f"--socket={socket_path}",
        f"--port={port}",
        f"--bind-address={HOST}",
        f"--pid-file={run_dir / 'mariadbd.pid'}",
        f"--tmpdir={run_dir}",
        "--skip-name-resolve",
        f"--max-connections={MAX_CONNECTIONS}",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci",
    ]
    if running_as_root():
        command.append("--user=root")  # mariadbd refuses to run as root otherwise
    return command


def _bind_failed(log: str) -> bool:
    return "Address already in use" in log or "Do you already have another" in log


def _root_query(socket_path: Path, sql: str) -> str:
    try:
        connection = pymysql.connect(unix_socket=str(socket_path), user="root", password="",
                                     connect_timeout=5)
    except pymysql.err.OperationalError as err:
        raise ServiceError(f"mariadb: cannot connect to {socket_path}: {err}") from err
    with connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return str(cursor.fetchone()[0])


def _create_user_and_seed(socket_path: Path, password: str) -> None:
    connection = pymysql.connect(unix_socket=str(socket_path), user="root", password="",
                                 charset="utf8mb4", autocommit=True)
    with connection, connection.cursor() as cursor:
        for statement in database_statements():
            cursor.execute(statement)
        for host in _USER_HOSTS:
            cursor.execute("CREATE USER %s@%s IDENTIFIED BY %s", (DB_USER, host, password))
            cursor.execute(f"GRANT ALL PRIVILEGES ON `{DATABASE}`.* TO %s@%s", (DB_USER, host))
        for statement in table_statements():
            cursor.execute(statement)
        # Nobody needs root after this; lock it with a password that is never stored.
        cursor.execute("ALTER USER 'root'@'localhost' IDENTIFIED BY %s",
                       (secrets.token_urlsafe(24),))


def _endpoint(port: int, socket_path: Path, password: str) -> ServiceEndpoint:
    env = {
        "DB_HOST": HOST,
        "DB_PORT": str(port),
        "DB_SOCKET": str(socket_path),
        "DB_USER": DB_USER,
        "DB_PASSWORD": password,
        "DB_NAME": DATABASE,
    }
    return ServiceEndpoint(ServiceKind.MARIADB, HOST, port, socket_path, env)


def connect(endpoint: ServiceEndpoint) -> pymysql.connections.Connection:
    """A PyMySQL connection as the stackbench user, over TCP like the stacks."""
    values = endpoint.env
    return pymysql.connect(
        host=values["DB_HOST"], port=int(values["DB_PORT"]), user=values["DB_USER"],
        password=values["DB_PASSWORD"], database=values["DB_NAME"], charset="utf8mb4",
        autocommit=True, connect_timeout=5,
    )
