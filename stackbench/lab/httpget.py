"""A tiny HTTP/1.1 client for verification and readiness checks (not for load)."""

import http.client
from dataclasses import dataclass


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def get(base_url: str, path: str, timeout_s: float = 10.0) -> Response:
    """GET base_url + path. Raises OSError / http.client.HTTPException on transport failure."""
    return request(base_url, "GET", path, timeout_s=timeout_s)


def request(
    base_url: str,
    method: str,
    path: str,
    headers: tuple[tuple[str, str], ...] = (),
    body: str | None = None,
    timeout_s: float = 10.0,
) -> Response:
    """One request to base_url + path (a suite's own endpoint sends its method, headers and
    body). Raises OSError / http.client.HTTPException on transport failure."""
    host_port = base_url.split("://", 1)[-1].rstrip("/")
    host, _, port = host_port.rpartition(":")
    conn = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=timeout_s)
    given = dict(headers)
    sent = given if any(k.lower() == "accept" for k in given) else {"Accept": "*/*", **given}
    try:
        conn.request(method, path, body=None if body is None else body.encode(), headers=sent)
        raw = conn.getresponse()
        answer = raw.read()
        return Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, answer)
    finally:
        conn.close()
