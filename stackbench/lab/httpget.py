"""A tiny HTTP/1.1 GET for verification and readiness checks (not for load)."""

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
    host_port = base_url.split("://", 1)[-1].rstrip("/")
    host, _, port = host_port.rpartition(":")
    conn = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=timeout_s)
    try:
        conn.request("GET", path, headers={"Accept": "*/*"})
        raw = conn.getresponse()
        body = raw.read()
        headers = {k.lower(): v for k, v in raw.getheaders()}
        return Response(raw.status, headers, body)
    finally:
        conn.close()
