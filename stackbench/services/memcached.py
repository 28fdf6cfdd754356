"""memcached: a private instance on loopback TCP.

TCP only: memcached's -s (unix socket) switches TCP off entirely, and every stack's
memcached client speaks TCP, so the socket would serve nobody. It listens on loopback only
(-l) and without UDP; it has no password (the text protocol has none), so loopback is the
boundary. On a services host of its own (multi-host runs) it listens on that host's address,
open to anyone who reaches it: the suite must accept that in so many words
(`[placement] memcached_on_network`). Started directly as the stack user, it needs no -u.
"""

from __future__ import annotations

from stackbench.services.base import (
    ServiceEndpoint,
    ServiceKind,
    ServiceLaunch,
    find_command,
    wait_until_ready,
)
from stackbench.services.resp import memcached_set, memcached_version
from stackbench.services.running import RunningService
from stackbench.services.seed import CACHE_KEY, CACHE_VALUE

STOP_GRACE_S = 10.0
MEMORY_MB = 64
MAX_CONNECTIONS = 4096


def start_memcached(launch: ServiceLaunch) -> RunningService:
    host, port = launch.bind, launch.port
    log_path = launch.service_dir / "memcached.log"
    command = [
        find_command("memcached", ServiceKind.MEMCACHED),
        "-l",
        host,
        "-p",
        str(port),
        "-U",
        "0",  # no UDP: it would listen on a second, unmanaged port
        "-m",
        str(MEMORY_MB),
        "-c",
        str(MAX_CONNECTIONS),
    ]
    process = launch.spawn(command, log_path)
    endpoint = _endpoint(host, port)
    try:
        version = wait_until_ready(
            ServiceKind.MEMCACHED,
            process,
            command,
            log_path,
            lambda: memcached_version(host, port),
            lambda log: "Address already in use" in log,
            port,
            launch.start_timeout_s,
        )
        memcached_set(host, port, CACHE_KEY, CACHE_VALUE)
    except BaseException:
        RunningService(endpoint, process, log_path, "", STOP_GRACE_S).stop()
        raise
    return RunningService(endpoint, process, log_path, version, STOP_GRACE_S)


def _endpoint(host: str, port: int) -> ServiceEndpoint:
    env = {"MEMCACHED_HOST": host, "MEMCACHED_PORT": str(port)}
    return ServiceEndpoint(ServiceKind.MEMCACHED, host, port, None, env)
