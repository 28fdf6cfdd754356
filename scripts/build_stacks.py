"""Builds every available stack into the build cache, starting none of them.

scripts/test.sh runs this beside the unit tests, so that the integration tests, which run
alone afterwards, find every stack built: a build compiles on one core at a time for
minutes (g++ for cpp-beast, javac, npm and Maven downloads) and would otherwise leave the
second core idle inside the serial phase. The cache is the one the tests and runs use
(STACKBENCH_BUILD_DIR, else .build/); a stack whose sources are unchanged is not rebuilt.
Prints one line per stack; exits 1 when a build failed (its log tail is printed).
"""

import sys
import tempfile
import time
from pathlib import Path

from stackbench.config.placement import default_placement
from stackbench.config.status import unavailable_reason
from stackbench.errors import StackbenchError
from stackbench.lab.inventory import load_inventory
from stackbench.lab.stack import StackConfig, StackInstance


def main() -> int:
    server_cpus = default_placement().server
    failed = []
    with tempfile.TemporaryDirectory(prefix="sb-build-") as scratch:
        for name, entry in sorted(load_inventory().items()):
            if not entry.status.available:
                print(f"{name}: not built, unavailable: {unavailable_reason(entry)}", flush=True)
                continue
            config = StackConfig(
                entry.manifest, entry.status, Path(scratch) / name, server_cpus, {}, {}
            )
            started = time.monotonic()
            try:
                out = StackInstance(config).build()
            except StackbenchError as exc:
                print(f"{name}: build failed: {exc}", flush=True)
                failed.append(name)
                continue
            print(f"{name}: built in {out} ({time.monotonic() - started:.0f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
