"""RunningService: the handle the orchestrator holds for one started server."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from stackbench.lab import fs
from stackbench.services.base import ServiceEndpoint, ServiceKind, stop_process_group


class RunningService:
    """A started, ready server. stop() is idempotent and safe to call from a finally."""

    def __init__(
        self,
        endpoint: ServiceEndpoint,
        process: subprocess.Popen[bytes],
        log_path: Path,
        server_version: str,
        stop_grace_s: float,
        temp_dirs: tuple[Path, ...] = (),
    ) -> None:
        self.kind: ServiceKind = endpoint.kind
        self.endpoint = endpoint
        self.log_path = log_path
        self._process = process
        self._version = server_version
        self._stop_grace_s = stop_grace_s
        self._temp_dirs = temp_dirs
        self._stop_lock = threading.Lock()
        self._stopped = False

    def root_pid(self) -> int:
        return self._process.pid

    def version(self) -> str:
        return self._version

    def is_alive(self) -> bool:
        return self._process.poll() is None

    def stop(self) -> None:
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
            try:
                stop_process_group(self._process, self._stop_grace_s)
            finally:
                for temp_dir in self._temp_dirs:
                    fs.remove_temp_dir(temp_dir)

    def __repr__(self) -> str:
        return (
            f"RunningService({self.kind.value}, pid={self._process.pid}, "
            f"{self.endpoint.host}:{self.endpoint.port})"
        )
