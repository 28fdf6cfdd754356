"""Just enough of the Redis and memcached text protocols for pings, seeding and checks.

Kept in the standard library on purpose: a readiness check must not depend on a client
library that could itself hide a protocol problem.
"""

from __future__ import annotations

import socket
from typing import BinaryIO

from stackbench.errors import ServiceError

IO_TIMEOUT_S = 5.0


def redis_command(
    host: str, port: int, *args: str, password: str | None = None
) -> bytes | int | None:
    """Send one command as a RESP array; return the decoded reply (errors raise).

    With a password, AUTH goes first on the same connection (the servers stackbench starts
    require one: `requirepass`).
    """
    payload = _resp_array(("AUTH", password)) if password is not None else b""
    payload += _resp_array(args)
    with socket.create_connection((host, port), timeout=IO_TIMEOUT_S) as sock:
        sock.sendall(payload)
        replies = sock.makefile("rb")
        if password is not None:
            _read_resp(replies)  # +OK, or an error reply that raises
        return _read_resp(replies)


def _resp_array(args: tuple[str, ...]) -> bytes:
    payload = f"*{len(args)}\r\n".encode()
    for arg in args:
        data = arg.encode()
        payload += b"$%d\r\n%s\r\n" % (len(data), data)
    return payload


def _read_resp(stream: BinaryIO) -> bytes | int | None:
    line = stream.readline()
    if not line.endswith(b"\r\n"):
        raise ServiceError(f"redis: truncated reply {line!r}")
    kind, body = line[:1], line[1:-2]
    if kind == b"+":
        return body
    if kind == b"-":
        raise ServiceError(f"redis: error reply {body.decode(errors='replace')}")
    if kind == b":":
        return int(body)
    if kind == b"$":
        length = int(body)
        if length < 0:
            return None
        data = stream.read(length + 2)
        return data[:-2]
    raise ServiceError(f"redis: unexpected reply {line!r}")


def memcached_exchange(host: str, port: int, request: bytes, terminator: bytes) -> bytes:
    """Send a text-protocol request and read until the reply ends with terminator."""
    with socket.create_connection((host, port), timeout=IO_TIMEOUT_S) as sock:
        sock.sendall(request)
        reply = b""
        while not reply.endswith(terminator):
            chunk = sock.recv(65536)
            if not chunk:
                raise ServiceError(f"memcached: connection closed mid-reply {reply!r}")
            reply += chunk
            if reply.startswith((b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR")):
                raise ServiceError(f"memcached: error reply {reply.strip()!r}")
        return reply


def memcached_version(host: str, port: int) -> str:
    reply = memcached_exchange(host, port, b"version\r\n", b"\r\n")
    if not reply.startswith(b"VERSION "):
        raise ServiceError(f"memcached: unexpected version reply {reply!r}")
    return reply[len(b"VERSION ") :].strip().decode()


def memcached_set(host: str, port: int, key: str, value: str) -> None:
    data = value.encode()
    request = b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(data), data)
    reply = memcached_exchange(host, port, request, b"\r\n")
    if reply != b"STORED\r\n":
        raise ServiceError(f"memcached: set {key} answered {reply!r}")


def memcached_get(host: str, port: int, key: str) -> str | None:
    reply = memcached_exchange(host, port, b"get %s\r\n" % key.encode(), b"END\r\n")
    if reply == b"END\r\n":
        return None
    header, _, rest = reply.partition(b"\r\n")
    length = int(header.split()[3])
    return rest[:length].decode()
