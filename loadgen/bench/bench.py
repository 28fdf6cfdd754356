#!/usr/bin/env python3
"""Benchmark stackbench-load against wrk and ab (a script, not a test).

nginx (master + one worker) serves a small static body from a private temp prefix on a free
loopback port, pinned to core 0; each loader runs in turn pinned to core 1 with the same
connections and duration. For every cell it prints requests/s, the loader's CPU seconds
(getrusage of the child), requests per loader CPU-second, and p50/p99 as each tool reports them.

    python3 loadgen/bench/bench.py [--seconds 5] [--server-core 0] [--loader-core 1]

Needs nginx, wrk, ab (apache2-utils), taskset and a release build of stackbench-load
(built with cargo if missing, or $STACKBENCH_LOAD).
"""

import argparse
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CRATE = Path(__file__).resolve().parent.parent
BODY = b"Hello World"
KEEPALIVE_CELLS = [25, 100, 1000]
CLOSE_CELLS = [25, 100]

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
worker_rlimit_nofile 65536;
events {{ worker_connections 16384; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    root {prefix}/html;
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loader_binary() -> str:
    if os.environ.get("STACKBENCH_LOAD"):
        return os.environ["STACKBENCH_LOAD"]
    binary = CRATE / "target" / "release" / "stackbench-load"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=CRATE, check=True)
    return str(binary)


def fetch(port: int) -> bytes:
    """GET /hello directly (no proxy from the environment)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", "/hello")
        return conn.getresponse().read()
    finally:
        conn.close()


def start_nginx(prefix: Path, port: int, core: int) -> subprocess.Popen:
    # Run as root, nginx's worker drops to an unprivileged user that must read the prefix.
    prefix.chmod(0o755)
    (prefix / "html").mkdir(parents=True)
    (prefix / "html" / "hello").write_bytes(BODY)
    conf = prefix / "nginx.conf"
    conf.write_text(NGINX_CONF.format(prefix=prefix, port=port))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen(
        [
            "taskset",
            "-c",
            str(core),
            nginx,
            "-p",
            str(prefix),
            "-c",
            str(conf),
            "-e",
            str(prefix / "error.log"),
        ],
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/hello"
    for _ in range(100):
        try:
            if fetch(port) == BODY:
                return proc
        except OSError:
            time.sleep(0.05)
    stop(proc)
    log = (prefix / "error.log").read_text() if (prefix / "error.log").exists() else ""
    raise SystemExit(f"nginx did not answer on {url}:\n{log}")


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def run_measured(cmd: list[str], core: int, limit_s: float) -> tuple[str, float]:
    """Runs cmd pinned to `core`; returns (stdout, user+sys CPU seconds of the child)."""
    proc = subprocess.Popen(
        ["taskset", "-c", str(core), *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + limit_s
    output = b""
    os.set_blocking(proc.stdout.fileno(), False)
    while True:
        chunk = proc.stdout.read()
        if chunk:
            output += chunk
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            rest = proc.stdout.read()
            output += rest or b""
            proc.returncode = os.waitstatus_to_exitcode(status)
            return output.decode(errors="replace"), usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(0.02)


def ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def parse_wrk(out: str) -> tuple[float, float, float]:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    pct = {
        m[0]: ms(m[1], m[2]) for m in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    }
    return rps, pct.get("50", float("nan")), pct.get("99", float("nan"))


def parse_ab(out: str) -> tuple[float, float, float]:
    rps = float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1))
    pct = dict(re.findall(r"^\s+(50|99)%\s+(\d+)", out, re.M))
    return rps, float(pct.get("50", "nan")), float(pct.get("99", "nan"))


def parse_stackbench(out: str) -> tuple[float, float, float]:
    doc = json.loads(out[out.index("{") :])
    lat = doc["latency_us"]
    return doc["throughput"]["requests_per_s"], lat["p50"] / 1000, lat["p99"] / 1000


def commands(
    tool: str, url: str, conns: int, keepalive: bool, seconds: int, loader: str
) -> list[str]:
    if tool == "wrk":
        close = [] if keepalive else ["-H", "Connection: close"]
        return ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", *close, url]
    if tool == "ab":
        return [
            "ab",
            "-q",
            "-r",
            *(["-k"] if keepalive else []),
            "-c",
            str(conns),
            "-t",
            str(seconds),
            "-n",
            "100000000",
            url,
        ]
    close = [] if keepalive else ["--no-keepalive"]
    return [loader, "-t", "1", "-c", str(conns), "-d", f"{seconds}s", "--json", *close, url]


PARSERS = {"wrk": parse_wrk, "ab": parse_ab, "stackbench-load": parse_stackbench}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5, help="duration of each cell (default 5)")
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--loader-core", type=int, default=1)
    args = parser.parse_args()
    for tool in ("nginx", "wrk", "ab", "taskset"):
        if not (shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists()):
            raise SystemExit(f"{tool} not found: install it (scripts/install-system.sh)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by the loaders
    loader = loader_binary()
    cells = [(True, c) for c in KEEPALIVE_CELLS] + [(False, c) for c in CLOSE_CELLS]
    rows = []
    with tempfile.TemporaryDirectory(prefix="stackbench-bench-") as tmp:
        port = free_port()
        nginx = start_nginx(Path(tmp), port, args.server_core)
        url = f"http://127.0.0.1:{port}/hello"
        try:
            for keepalive, conns in cells:
                for tool in ("wrk", "ab", "stackbench-load"):
                    cmd = commands(tool, url, conns, keepalive, args.seconds, loader)
                    out, cpu = run_measured(cmd, args.loader_core, args.seconds + 30)
                    try:
                        rps, p50, p99 = PARSERS[tool](out)
                    except (AttributeError, ValueError, KeyError):
                        print(f"could not parse {tool} output:\n{out}", file=sys.stderr)
                        rps, p50, p99 = float("nan"), float("nan"), float("nan")
                    rows.append(
                        (
                            "on" if keepalive else "off",
                            conns,
                            tool,
                            rps,
                            cpu,
                            rps * args.seconds / cpu if cpu else float("nan"),
                            p50,
                            p99,
                        )
                    )
                    print(
                        f"  keepalive={rows[-1][0]} c={conns} {tool}: {rps:.0f} req/s, "
                        f"cpu {cpu:.2f}s",
                        file=sys.stderr,
                    )
        finally:
            stop(nginx)
    print(
        "| keep-alive | c | loader | requests/s | loader CPU s | requests per loader CPU-s "
        "| p50 ms | p99 ms |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for ka, conns, tool, rps, cpu, per_cpu, p50, p99 in rows:
        print(
            f"| {ka} | {conns} | {tool} | {rps:,.0f} | {cpu:.2f} | {per_cpu:,.0f} "
            f"| {p50:.2f} | {p99:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
