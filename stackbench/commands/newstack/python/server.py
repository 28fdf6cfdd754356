"""A hello endpoint for stackbench: it answers GET /hello with "Hello World" on HOST:PORT,
which stackbench sets (docs/contracts.md sections 1 and 3). Standard library only."""

import os
import socketserver
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the load generators expect

    def do_GET(self) -> None:
        found = self.path == "/hello"
        body = b"Hello World" if found else b"not found"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # no access log: it would cost more than the work measured


class Server(ThreadingHTTPServer):
    """HTTPServer names itself after binding by a reverse DNS lookup of its address
    (socket.getfqdn): on a host with no DNS server reachable, the start waits about 10 s for
    the resolver. Nothing here reads that name."""

    daemon_threads = True

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]


Server((os.environ["HOST"], int(os.environ["PORT"])), Handler).serve_forever()
