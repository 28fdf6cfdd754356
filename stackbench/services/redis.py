"""Redis: a private, non-persistent redis-server on loopback and a unix socket.

Loopback only, protected mode on, and a random password per start (`requirepass`): any local
process can reach 127.0.0.1, so without a password any of them could read or change the cache
the stacks are measured against. Stacks get the password as REDIS_PASSWORD. On a services host
of its own (multi-host runs) it listens on that host's address, behind the same password.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from stackbench.errors import ServiceError
from stackbench.lab import fs
from stackbench.services.base import (
    ServiceEndpoint,
    ServiceKind,
    ServiceLaunch,
    find_command,
    wait_until_ready,
)
from stackbench.services.resp import redis_command
from stackbench.services.running import RunningService
from stackbench.services.seed import CACHE_KEY, CACHE_VALUE

STOP_GRACE_S = 10.0


def _config_text(bind: str, port: int, socket_path: Path, run_dir: Path, password: str) -> str:
    # No RDB snapshots and no AOF: a benchmark cache must not stall on disk writes, and
    # nothing here is worth keeping. Logs go to stdout, which spawn() sends to the log file.
    return "\n".join(
        [
            f"port {port}",
            f"bind {bind}",
            f"unixsocket {socket_path}",
            "unixsocketperm 700",
            'save ""',
            "appendonly no",
            "daemonize no",
            f"dir {run_dir}",
            'logfile ""',
            "protected-mode yes",
            f"requirepass {password}",
            "",
        ]
    )


def start_redis(launch: ServiceLaunch) -> RunningService:
    temp_dirs: list[Path] = []
    run_dir = launch.service_dir
    port = launch.port
    socket_path = launch.socket_path("redis.sock", temp_dirs)
    # token_urlsafe: letters, digits, '-' and '_' only, so it needs no quoting in redis.conf.
    password = secrets.token_urlsafe(24)
    config = _config_text(launch.bind, port, socket_path, run_dir, password)
    config_path = fs.write_new_file(run_dir / "redis.conf", run_dir, config, 0o600)
    if launch.run_as is not None:  # the password is in there: readable by the server only
        os.chown(config_path, *launch.run_as.owner)
    log_path = run_dir / "redis.log"
    command = [find_command("redis-server", ServiceKind.REDIS), str(config_path)]
    process = launch.spawn(command, log_path)
    host = launch.bind
    endpoint = _endpoint(host, port, socket_path, password)

    def probe() -> str:
        if redis_command(host, port, "PING", password=password) != b"PONG":
            raise ServiceError("redis: PING did not answer PONG")
        return _server_version(host, port, password)

    try:
        version = wait_until_ready(
            ServiceKind.REDIS,
            process,
            command,
            log_path,
            probe,
            lambda log: "Address already in use" in log,
            port,
            launch.start_timeout_s,
        )
        redis_command(host, port, "SET", CACHE_KEY, CACHE_VALUE, password=password)
    except BaseException:
        RunningService(endpoint, process, log_path, "", STOP_GRACE_S, tuple(temp_dirs)).stop()
        raise
    return RunningService(endpoint, process, log_path, version, STOP_GRACE_S, tuple(temp_dirs))


def _server_version(host: str, port: int, password: str) -> str:
    info = redis_command(host, port, "INFO", "server", password=password)
    assert isinstance(info, bytes)
    for line in info.decode().splitlines():
        if line.startswith("redis_version:"):
            return line.split(":", 1)[1].strip()
    raise ServiceError("redis: INFO server has no redis_version")


def _endpoint(host: str, port: int, socket_path: Path, password: str) -> ServiceEndpoint:
    env = {
        "REDIS_HOST": host,
        "REDIS_PORT": str(port),
        "REDIS_SOCKET": str(socket_path),
        "REDIS_PASSWORD": password,
    }
    return ServiceEndpoint(ServiceKind.REDIS, host, port, socket_path, env)
