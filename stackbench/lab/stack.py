"""A running stack: run directory, rendered templates, its processes, readiness, cleanup.

`StackInstance` is a context manager; leaving it (normally, on error or on Ctrl-C) stops
every process it started. Nothing outside this module starts stack processes.
"""

import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from stackbench.config.manifest import Manifest
from stackbench.config.paths import FIXTURES_DIR, STACKS_DIR
from stackbench.config.placement import format_cpus
from stackbench.config.status import StackStatus
from stackbench.errors import InputError, StackError
from stackbench.lab import build
from stackbench.lab.procs import free_port, spawn, stop, tail, wait_for_tcp, wait_for_unix_socket
from stackbench.lab.templating import render, resolve_params, syntax_for
from stackbench.verify.httpget import get


@dataclass(frozen=True)
class StackConfig:
    """Everything chosen for one start of a stack."""

    manifest: Manifest
    status: StackStatus
    run_dir: Path
    server_cpus: frozenset[int]
    params: Mapping[str, str]  # overrides of the manifest's defaults
    service_env: Mapping[str, str]
    host: str = "127.0.0.1"
    port: int | None = None


def variables_for(cfg: StackConfig, port: int) -> dict[str, str]:
    m = cfg.manifest
    base = {
        "host": cfg.host,
        "port": str(port),
        "run_dir": str(cfg.run_dir),
        "stack_dir": str(m.stack_dir),
        "stacks_dir": str(STACKS_DIR),
        "build_dir": str(build.build_dir_for(m)),
        "fixtures_dir": str(FIXTURES_DIR),
        "server_core_count": str(len(cfg.server_cpus)),
        "server_cpus": format_cpus(cfg.server_cpus),
    }
    base.update({f"cmd.{k}": v for k, v in cfg.status.commands.items()})
    base.update({k.lower(): v for k, v in cfg.service_env.items()})
    params = resolve_params(m, cfg.params, base)
    return {**base, **params}


def environment_for(variables: Mapping[str, str], cfg: StackConfig) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "HOST": variables["host"],
        "PORT": variables["port"],
        "FIXTURES_DIR": variables["fixtures_dir"],
        "RUN_DIR": variables["run_dir"],
        "STACK_DIR": variables["stack_dir"],
        "BUILD_DIR": variables["build_dir"],
    })
    env.update(cfg.service_env)
    for p in cfg.manifest.params:
        env[p.name.upper()] = variables[p.name]
    env.setdefault("WORKERS", variables["server_core_count"])
    return env


class StackInstance:
    def __init__(self, cfg: StackConfig) -> None:
        self.cfg = cfg
        self.port = cfg.port or free_port(cfg.host)
        self.variables = variables_for(cfg, self.port)
        self.env = environment_for(self.variables, cfg)
        self.processes: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.log_path = cfg.run_dir / "server.log"

    @property
    def base_url(self) -> str:
        return f"http://{self.cfg.host}:{self.port}"

    @property
    def name(self) -> str:
        return self.cfg.manifest.name

    def roles(self) -> dict[str, int]:
        """Role name -> root pid, for the monitor."""
        return {role: proc.pid for role, proc in self.processes}

    def build(self) -> Path:
        return build.ensure_built(self.cfg.manifest, self.variables, self.env)

    def _render_templates(self) -> None:
        m = self.cfg.manifest
        for t in m.templates:
            src = m.stack_dir / t.src
            try:
                text = src.read_text()
            except OSError as exc:
                raise InputError(f"{m.path} [[template]]: cannot read {src}: {exc}") from exc
            rendered = render(text, self.variables, str(src), syntax_for(t.dest))
            (self.cfg.run_dir / t.dest).write_text(rendered)

    def start(self) -> None:
        m = self.cfg.manifest
        if self.cfg.run_dir.exists():
            shutil.rmtree(self.cfg.run_dir)
        self.cfg.run_dir.mkdir(parents=True)
        self._render_templates()
        deadline = time.monotonic() + m.ready.timeout_s
        for proc in m.processes:
            where = f"{m.path} [[process]] {proc.role}"
            command = [render(arg, self.variables, where) for arg in proc.command]
            try:
                popen = spawn(command, m.stack_dir, self.env, self.log_path, self.cfg.server_cpus)
            except OSError as exc:
                raise StackError(f"{m.name}: cannot start {proc.role} ({command[0]}): {exc}") \
                    from exc
            self.processes.append((proc.role, popen))
            self._wait_process_ready(proc, where, deadline)
        self._wait_http_ready(deadline)

    def _fail(self, what: str) -> StackError:
        return StackError(f"{self.name}: {what}\n--- last lines of {self.log_path}:\n"
                          f"{tail(self.log_path)}")

    def _check_alive(self) -> None:
        for role, popen in self.processes:
            code = popen.poll()
            if code is not None:
                raise self._fail(f"process '{role}' exited with code {code} during start-up")

    def _wait_process_ready(self, proc, where: str, deadline: float) -> None:
        if proc.ready_unix:
            path = Path(render(proc.ready_unix, self.variables, where))
            if not wait_for_unix_socket(path, deadline):
                self._check_alive()
                raise self._fail(f"{proc.role} did not open {path} in time")
        if proc.ready_tcp:
            port = int(render(proc.ready_tcp, self.variables, where))
            if not wait_for_tcp(self.cfg.host, port, deadline):
                self._check_alive()
                raise self._fail(f"{proc.role} did not listen on port {port} in time")

    def _wait_http_ready(self, deadline: float) -> None:
        path = self.cfg.manifest.ready.path
        last = "no answer"
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                resp = get(self.base_url, path, timeout_s=2)
                if resp.status == 200:
                    return
                last = f"status {resp.status}"
            except OSError as exc:
                last = str(exc)
            except Exception as exc:  # noqa: BLE001 - a half-started server may answer garbage
                last = repr(exc)
            time.sleep(0.1)
        timeout = self.cfg.manifest.ready.timeout_s
        raise self._fail(f"not ready after {timeout:.0f} s: GET {path} on port {self.port}: {last}")

    def stop(self) -> None:
        for _role, popen in reversed(self.processes):
            stop(popen)
        self.processes.clear()

    def __enter__(self) -> "StackInstance":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
