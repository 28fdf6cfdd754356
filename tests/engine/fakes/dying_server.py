"""The reference server (tests/fakes/refserver.py), exiting with status 7 after DIE_AFTER
requests: a stack that crashes under load, for the crash watch."""

import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fakes"))

import refserver  # noqa: E402 - found through the path above

DIE_AFTER = int(os.environ.get("DIE_AFTER", "20"))
_lock = threading.Lock()
_answered = 0


class DyingHandler(refserver.Handler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        global _answered
        with _lock:
            _answered += 1
            if _answered > DIE_AFTER:
                print(
                    f"dying: exiting on purpose after {DIE_AFTER} requests",
                    file=sys.stderr,
                    flush=True,
                )
                os._exit(7)
        super().do_GET()


if __name__ == "__main__":
    refserver.Handler = DyingHandler  # type: ignore[misc]
    refserver.main()
