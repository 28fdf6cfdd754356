"""A server run by hand, for the [external.NAME] tests: the catalog's `hello` workload exactly
as the verifier expects it (200, text/plain, "Hello World"), HTTP/1.1 with keep-alive, on the
port given as its first argument, on 127.0.0.1 or the address given as its second (a test
host's, for a multi-host run). Started and stopped by the test, never by stackbench."""

import socketserver
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY = b"Hello World"


class Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without TCP_NODELAY the second waits for the
    # client's delayed ACK (40 ms a request).
    disable_nagle_algorithm = True

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        found = self.path == "/hello"
        body = BODY if found else b"not found"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return  # one line per request would fill the test's output


class QuickBindServer(ThreadingHTTPServer):
    """HTTPServer names itself after binding by a reverse DNS lookup of its address
    (socket.getfqdn), which in a test host's network namespace, with no DNS server reachable,
    waits 10 s for the resolver to time out. Nothing here reads that name."""

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]


if __name__ == "__main__":
    address = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    server = QuickBindServer((address, int(sys.argv[1])), Hello)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()
