"""The python-uvicorn stack's server: a plain ASGI application (no framework, so the figures
are uvicorn's and CPython's, not a framework's routing), served by uvicorn on uvloop and
httptools. Routes: the compute workloads of compute.py, /data/{n} and TechEmpower's /json."""

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

import compute

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

TEXT = b"text/plain; charset=utf-8"
SERVER = b"python-uvicorn"


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    status, content_type, body = respond(scope["path"], scope["query_string"].decode("latin-1"))
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                (b"server", SERVER),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def respond(path: str, query_string: str) -> tuple[int, bytes, bytes]:
    """(status, content type, body) of one request."""
    query = dict(parse_qsl(query_string, keep_blank_values=True))
    name = path.lstrip("/")
    try:
        if name in compute.TEXT_WORKLOADS:
            return 200, TEXT, compute.TEXT_WORKLOADS[name](query).encode()
        if name.startswith("data/"):
            n = compute.int_param({"n": name[5:]}, "n", 0, 0, 1_048_576)
            return 200, TEXT, compute.data(n).encode()
        if name == "json":
            # serialised per request, as TechEmpower's rules ask
            body = json.dumps({"message": "Hello, World!"}, separators=(",", ":"))
            return 200, b"application/json", body.encode()
    except compute.BadParameter as exc:
        return 400, TEXT, str(exc).encode()
    return 404, TEXT, b"not found"


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
