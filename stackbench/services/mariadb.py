"""MariaDB: a private mariadbd with its own data directory, seeded for the data workloads.

Never reads /etc/mysql (--no-defaults everywhere), never touches the system instance:
data dir, socket, pid file and log all live in the service's run directory.

Locked down for the time a run lasts: mariadbd runs as the stack user and listens on
127.0.0.1 only; once the `stackbench` account (privileges on its own database only, a random
password per start) is created and the data seeded, every other account is removed and
root@localhost, the one setup used, gets a random unstored password and is locked.

On a services host of its own (multi-host runs) it listens on that host's address instead, and
the `stackbench` account exists for that address (the agent restoring the seed) and for the
server host's address only: a login from anywhere else is refused whatever the password.
"""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

import pymysql

from stackbench.errors import ServiceError
from stackbench.lab import fs
from stackbench.lab.procs import child_setup
from stackbench.services.base import (
    HOST,
    ServiceEndpoint,
    ServiceKind,
    ServiceLaunch,
    find_command,
    log_tail,
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
# The stacks connect over TCP to 127.0.0.1 (the server listens there only); "localhost" is
# the unix socket in the service dir.
_LOOPBACK_USER_HOSTS = ("localhost", HOST)
# Setup connects as root@localhost over the socket; this account is locked, not dropped.
_SETUP_ACCOUNT = ("root", "localhost")
# The definer of MariaDB's system views (mysql.user ...): locked by the installer, kept.
_SYSTEM_ACCOUNTS = {("mariadb.sys", "localhost")}


def start_mariadb(launch: ServiceLaunch) -> RunningService:
    temp_dirs: list[Path] = []
    run_dir = launch.service_dir
    data_dir = run_dir / "data"
    socket_path = launch.socket_path("mariadbd.sock", temp_dirs)
    log_path = run_dir / "mariadb.log"
    _install_data_dir(data_dir, launch)
    command = _server_command(data_dir, socket_path, launch.bind, launch.port, run_dir)
    process = launch.spawn(command, log_path)
    password = secrets.token_urlsafe(18)
    endpoint = _endpoint(launch.bind, launch.port, socket_path, password)
    hosts = user_hosts(launch.bind, launch.clients)
    try:
        version = wait_until_ready(
            ServiceKind.MARIADB,
            process,
            command,
            log_path,
            lambda: _root_query(socket_path, "SELECT VERSION()"),
            _bind_failed,
            launch.port,
            launch.start_timeout_s,
        )
        _create_user_and_seed(socket_path, password, hosts)
        _lock_down(socket_path, hosts)
    except BaseException:
        RunningService(endpoint, process, log_path, "", STOP_GRACE_S, tuple(temp_dirs)).stop()
        raise
    return RunningService(endpoint, process, log_path, version, STOP_GRACE_S, tuple(temp_dirs))


def _install_data_dir(data_dir: Path, launch: ServiceLaunch) -> None:
    run_dir = launch.service_dir
    command = [
        find_command("mariadb-install-db", ServiceKind.MARIADB),
        "--no-defaults",
        f"--datadir={data_dir}",
        # Root starts password-less on the private socket only long enough to set us up
        # (then it is locked): the socket sits in the stack user's own service dir.
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        "--skip-name-resolve",
    ]
    install_log = run_dir / "mariadb-install.log"
    with open(fs.open_log(install_log), "wb") as log:
        try:
            # As the stack user, so the data directory it creates is that user's.
            result = subprocess.run(
                command,
                cwd=run_dir,
                env=launch.environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=INSTALL_TIMEOUT_S,
                check=False,
                preexec_fn=child_setup(launch.cpus, launch.run_as),
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


def _server_command(
    data_dir: Path, socket_path: Path, bind: str, port: int, run_dir: Path
) -> list[str]:
    command = [
        find_command("mariadbd", ServiceKind.MARIADB),
        "--no-defaults",
        f"--datadir={data_dir}",
        f"--socket={socket_path}",
        f"--port={port}",
        f"--bind-address={bind}",
        f"--pid-file={run_dir / 'mariadbd.pid'}",
        f"--tmpdir={run_dir}",
        "--skip-name-resolve",
        f"--max-connections={MAX_CONNECTIONS}",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci",
    ]
    return command


def _bind_failed(log: str) -> bool:
    return "Address already in use" in log or "Do you already have another" in log


def _root_query(socket_path: Path, sql: str) -> str:
    try:
        connection = pymysql.connect(
            unix_socket=str(socket_path), user="root", password="", connect_timeout=5
        )
    except pymysql.err.OperationalError as err:
        raise ServiceError(f"mariadb: cannot connect to {socket_path}: {err}") from err
    with connection, connection.cursor() as cursor:
        cursor.execute(sql)
        return str(cursor.fetchone()[0])


def user_hosts(bind: str, clients: tuple[str, ...]) -> tuple[str, ...]:
    """The host parts of the `stackbench` account: the socket, the address the server listens
    on and the client hosts allowed in (IP literals: the server runs --skip-name-resolve)."""
    if bind == HOST:
        return (*_LOOPBACK_USER_HOSTS, *(c for c in clients if c != HOST))
    return tuple(dict.fromkeys(("localhost", bind, *clients)))


def _create_user_and_seed(socket_path: Path, password: str, hosts: tuple[str, ...]) -> None:
    connection = pymysql.connect(
        unix_socket=str(socket_path), user="root", password="", charset="utf8mb4", autocommit=True
    )
    with connection, connection.cursor() as cursor:
        for statement in database_statements():
            cursor.execute(statement)
        for host in hosts:
            cursor.execute("CREATE USER %s@%s IDENTIFIED BY %s", (DB_USER, host, password))
            # On its own database only (reset_data drops and recreates the tables there).
            cursor.execute(f"GRANT ALL PRIVILEGES ON `{DATABASE}`.* TO %s@%s", (DB_USER, host))
        for statement in table_statements():
            cursor.execute(statement)


def accounts_to_remove(
    accounts: list[tuple[str, str]], hosts: tuple[str, ...] = _LOOPBACK_USER_HOSTS
) -> list[tuple[str, str]]:
    """Every account but ours, the setup account (locked instead) and the system definer."""
    keep = {(DB_USER, host) for host in hosts} | _SYSTEM_ACCOUNTS | {_SETUP_ACCOUNT}
    return [account for account in accounts if account not in keep]


def _lock_down(socket_path: Path, hosts: tuple[str, ...]) -> None:
    """Remove root@127.0.0.1, root@::1, root@<host name>, the installer's OS-user and
    anonymous accounts; lock root@localhost with a password nobody knows."""
    connection = pymysql.connect(
        unix_socket=str(socket_path), user="root", password="", autocommit=True
    )
    with connection, connection.cursor() as cursor:
        cursor.execute("SELECT User, Host FROM mysql.global_priv")
        accounts = [(str(user), str(host)) for user, host in cursor.fetchall()]
        for user, host in accounts_to_remove(accounts, hosts):
            cursor.execute("DROP USER %s@%s", (user, host))
        cursor.execute(
            "ALTER USER %s@%s IDENTIFIED BY %s ACCOUNT LOCK",
            (*_SETUP_ACCOUNT, secrets.token_urlsafe(24)),
        )


def _endpoint(host: str, port: int, socket_path: Path, password: str) -> ServiceEndpoint:
    env = {
        "DB_HOST": host,
        "DB_PORT": str(port),
        "DB_SOCKET": str(socket_path),
        "DB_USER": DB_USER,
        "DB_PASSWORD": password,
        "DB_NAME": DATABASE,
    }
    return ServiceEndpoint(ServiceKind.MARIADB, host, port, socket_path, env)


def connect(endpoint: ServiceEndpoint) -> pymysql.connections.Connection:
    """A PyMySQL connection as the stackbench user, over TCP like the stacks."""
    values = endpoint.env
    return pymysql.connect(
        host=values["DB_HOST"],
        port=int(values["DB_PORT"]),
        user=values["DB_USER"],
        password=values["DB_PASSWORD"],
        database=values["DB_NAME"],
        charset="utf8mb4",
        autocommit=True,
        connect_timeout=5,
    )
