"""A small reference server implementing the micro workloads, for orchestration tests.

It is a fake *stack* (the real stacks live in stacks/), written plainly from the contract so
tests of the verifier, the runner and the store do not depend on any runtime being installed.
FAULT selects a deliberately wrong behaviour: constant, status500, wrongtype, no400, slowstart.
"""

import hashlib
import os
import socketserver
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(
    os.environ.get("FIXTURES_DIR", Path(__file__).resolve().parents[2] / "workloads" / "fixtures")
)
FAULT = os.environ.get("FAULT", "")
DEFAULTS = {"concat": 1000, "add": 1000, "array": 1000, "assoc": 1000, "readfile": 100, "sha256": 1}


def work(name: str, n: int) -> bytes:
    if name == "concat":
        s = ""
        for _ in range(n):
            s += "s"
        return s.encode()
    if name == "add":
        total = 0
        for _ in range(n):
            total += 1
        return str(total).encode()
    if name == "array":
        items = []
        for _ in range(n):
            items.append("s")
        return str(len(items)).encode()
    if name == "assoc":
        mapping = {}
        for i in range(n):
            mapping[f"s{i}"] = "s"
        return str(len(mapping)).encode()
    if name == "readfile":
        total = 0
        for _ in range(n):
            with open(FIXTURES / "demo.txt", "rb") as f:
                total += len(f.read())
        return str(total).encode()
    if name == "sha256":
        data = (FIXTURES / "random-64k.bin").read_bytes()
        digest = hashlib.sha256(data).digest()
        for _ in range(n - 1):
            digest = hashlib.sha256(digest + data).digest()
        return digest.hex().encode()
    raise KeyError(name)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def reply(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
        if FAULT == "status500":
            status = 500
        if FAULT == "wrongtype":
            ctype = "application/octet-stream"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        name = parts[0]
        if FAULT == "constant":
            return self.reply(200, b"1000")
        if name == "hello":
            return self.reply(200, b"Hello World")
        if name == "data" and len(parts) == 2:
            if not parts[1].isdigit() and FAULT != "no400":
                return self.reply(400, b"bad n")
            return self.reply(200, b"." * int(parts[1] if parts[1].isdigit() else 0))
        if name in DEFAULTS:
            raw = parse_qs(url.query).get("n", [str(DEFAULTS[name])])[0]
            if not raw.isdigit():
                if FAULT == "no400":
                    raw = str(DEFAULTS[name])
                else:
                    return self.reply(400, b"bad n")
            return self.reply(200, work(name, int(raw)))
        return self.reply(404, b"not found")


class QuickBindServer(ThreadingHTTPServer):
    """HTTPServer names itself after binding by a reverse DNS lookup of its address
    (socket.getfqdn), which in a test host's network namespace, with no DNS server reachable,
    waits 10 s for the resolver to time out. Nothing here reads that name."""

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]


def main() -> None:
    if FAULT == "slowstart":
        time.sleep(3600)
    if FAULT == "crash":
        print("refserver: crashing on purpose", file=sys.stderr)
        sys.exit(3)
    server = QuickBindServer(
        (os.environ.get("HOST", "127.0.0.1"), int(os.environ["PORT"])), Handler
    )
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
