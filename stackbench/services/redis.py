"""Redis: a private, non-persistent redis-server on loopback and a unix socket."""

from __future__ import annotations

from pathlib import Path

from stackbench.errors import ServiceError
from stackbench.services.base import (
    HOST,
    ServiceEndpoint,
    ServiceKind,
    find_command,
    short_socket_path,
    spawn_service,
    wait_until_ready,
)
from stackbench.services.resp import redis_command
from stackbench.services.running import RunningService
from stackbench.services.seed import CACHE_KEY, CACHE_VALUE

STOP_GRACE_S = 10.0


def _config_text(port: int, socket_path: Path, run_dir: Path) -> str:
    # No RDB snapshots and no AOF: a benchmark cache must not stall on disk writes, and
    # nothing here is worth keeping. Logs go to stdout, which spawn() sends to the log file.
    return "\n".join(
        [
            f"port {port}",
            f"bind {HOST}",
            f"unixsocket {socket_path}",
            "unixsocketperm 700",
            'save ""',
            "appendonly no",
            "daemonize no",
            f"dir {run_dir}",
            'logfile ""',
            "protected-mode yes",
            "",
        ]
    )


def start_redis(
    run_dir: Path, port: int, cpus: frozenset[int] | None, start_timeout_s: float
) -> RunningService:
    temp_dirs: list[Path] = []
    socket_path = short_socket_path(run_dir / "redis.sock", temp_dirs)
    config_path = run_dir / "redis.conf"
    config_path.write_text(_config_text(port, socket_path, run_dir))
    log_path = run_dir / "redis.log"
    command = [find_command("redis-server", ServiceKind.REDIS), str(config_path)]
    process = spawn_service(command, log_path, run_dir, cpus)

    def probe() -> str:
        if redis_command(HOST, port, "PING") != b"PONG":
            raise ServiceError("redis: PING did not answer PONG")
        return _server_version(port)

    try:
        version = wait_until_ready(
            ServiceKind.REDIS, process, command, log_path, probe,
            lambda log: "Address already in use" in log, port, start_timeout_s,
        )
        redis_command(HOST, port, "SET", CACHE_KEY, CACHE_VALUE)
    except BaseException:
        RunningService(_endpoint(port, socket_path), process, log_path, "", STOP_GRACE_S,
                       tuple(temp_dirs)).stop()
        raise
    return RunningService(
        _endpoint(port, socket_path), process, log_path, version, STOP_GRACE_S, tuple(temp_dirs)
    )


def _server_version(port: int) -> str:
    info = redis_command(HOST, port, "INFO", "server")
    assert isinstance(info, bytes)
    for line in info.decode().splitlines():
        if line.startswith("redis_version:"):
            return line.split(":", 1)[1].strip()
    raise ServiceError("redis: INFO server has no redis_version")


def _endpoint(port: int, socket_path: Path) -> ServiceEndpoint:
    env = {"REDIS_HOST": HOST, "REDIS_PORT": str(port), "REDIS_SOCKET": str(socket_path)}
    return ServiceEndpoint(ServiceKind.REDIS, HOST, port, socket_path, env)
