"""python -m stackbench.services up [--dir D]: run all services for manual stack testing."""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import tempfile
import threading
from pathlib import Path

from stackbench.errors import ServiceError
from stackbench.services.base import ServiceKind
from stackbench.services.lifecycle import ServiceSet
from stackbench.services.seed import SEED_SQL_PATH, seed_sql, write_seed_sql


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stackbench.services")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start MariaDB, Redis and memcached until Ctrl-C")
    up.add_argument("--dir", type=Path, help="run directory (default: a new temp dir)")
    seed = commands.add_parser("seed", help="print the seed SQL (or --write it)")
    seed.add_argument("--write", action="store_true", help=f"write {SEED_SQL_PATH}")
    args = parser.parse_args(argv)
    if args.command == "seed":
        return _seed(args.write)
    run_dir = args.dir or Path(tempfile.mkdtemp(prefix="stackbench-services-"))
    return _up(run_dir.resolve())


def _seed(write: bool) -> int:
    if write:
        print(f"wrote {write_seed_sql()}")
    else:
        sys.stdout.write(seed_sql())
    return 0


def _up(run_dir: Path) -> int:
    stop_requested = threading.Event()
    # Ctrl-C, SIGTERM and SIGHUP all end the wait, so the finally always stops the servers.
    # SIGINT gets an explicit handler because a shell starting us in the background sets it
    # to "ignore", which would make Ctrl-C (kill -INT) do nothing.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop_requested.set())
    services = ServiceSet(run_dir)
    try:
        print(f"# starting services in {run_dir} ...", file=sys.stderr, flush=True)
        services.ensure(ServiceKind)
        for service in services.running():
            print(
                f"# {service.kind.value} {service.version()} pid {service.root_pid()} "
                f"log {service.log_path}",
                file=sys.stderr,
            )
        for name, value in sorted(services.env().items()):
            print(f"export {name}={shlex.quote(value)}")
        print("# ready; press Ctrl-C to stop", file=sys.stderr, flush=True)
        sys.stdout.flush()
        while not stop_requested.wait(timeout=1.0):
            pass
    except ServiceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        print("# stopping services ...", file=sys.stderr, flush=True)
        services.stop_all()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
