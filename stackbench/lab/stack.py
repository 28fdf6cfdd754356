"""A running stack: run directory, rendered templates, its processes, readiness, cleanup.

`StackInstance` is a context manager; leaving it (normally, on error or on Ctrl-C) stops
every process it started. Nothing outside this module starts stack processes.

Least privilege: when stackbench is root, every stack process is started directly as the
unprivileged stack user (privilege.py); the run directory is created for that user (mode
0700) and is the only place it can write. The run directory must lie inside its run root (the
run's scratch directory) and is resolved and checked before anything is removed or created.
"""

import ipaddress
import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from stackbench.config.manifest import Manifest, Process, Warmup, has_template
from stackbench.config.paths import FIXTURES_DIR, STACKS_DIR
from stackbench.config.placement import format_cpus
from stackbench.config.plan import Plan
from stackbench.config.status import StackEntry, StackStatus
from stackbench.errors import InputError, StackError
from stackbench.lab import build, cgroups, fs
from stackbench.lab.cgroups import CpuGroup
from stackbench.lab.httpget import get
from stackbench.lab.privilege import RunAs, can_enter, server_environment, stack_user, unreadable
from stackbench.lab.procs import (
    exit_status,
    free_port,
    free_ports,
    spawn,
    stop,
    tail,
    wait_for_tcp,
    wait_for_unix_socket,
)
from stackbench.lab.templating import render, resolve_params, syntax_for

# Marks a run dir stackbench made, so a later start may empty it without risking user data.
RUN_DIR_MARKER = ".stackbench-run"
# Where a manifest's extra `ports` are: only the stack's own processes reach them (nginx ->
# Node), so they stay on loopback even when the stack listens on a host's address.
LOOPBACK = "127.0.0.1"


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
    # The directory run_dir must lie in (the run's scratch dir); None: run_dir's own parent.
    run_root: Path | None = None


def core_variables(server_cpus: frozenset[int]) -> dict[str, str]:
    """The variables a stack sizes itself from: its cores' count and list."""
    return {"server_core_count": str(len(server_cpus)), "server_cpus": format_cpus(server_cpus)}


def params_for_cores(
    manifest: Manifest, overrides: Mapping[str, str], server_cpus: frozenset[int]
) -> dict[str, str]:
    """Every parameter as a start of the stack on these cores resolves it (variables_for does
    the same at start), known before anything starts: what the plan prints. A default that
    refers to a variable known only at start (the port, the run directory) is an InputError
    naming it."""
    return resolve_params(manifest, overrides, core_variables(server_cpus))


@dataclass(frozen=True)
class PlannedParams:
    """The parameters one planned stack will start with on the plan's server cores."""

    stack: str  # as the plan names it (a variant's name included)
    values: Mapping[str, str]  # every parameter, resolved (empty when `problem`)
    derived: tuple[str, ...] = ()  # those whose default is computed from the cores
    problem: str = ""  # why they cannot be resolved before the start


def planned_params(plan: Plan, inventory: Mapping[str, StackEntry]) -> tuple[PlannedParams, ...]:
    """Every planned stack's parameters (manifest defaults, the suite's and variant's values,
    the cores the placement gives the server), resolved as its start will; stacks whose
    manifest does not parse are left out (the plan shows them unavailable, with the error)."""
    out = []
    for ps in plan.stacks:
        cpus = plan.placement_of(ps).server
        entry = inventory.get(ps.stack)
        if entry is None or entry.parsed is None:
            continue
        manifest = entry.parsed
        derived = tuple(
            p.name for p in manifest.params if p.name not in ps.params and has_template(p.default)
        )
        try:
            out.append(PlannedParams(ps.name, params_for_cores(manifest, ps.params, cpus), derived))
        except InputError as exc:
            out.append(PlannedParams(ps.name, {}, problem=str(exc)))
    return tuple(out)


def variables_for(
    cfg: StackConfig, port: int, extra_ports: Mapping[str, int] | None = None
) -> dict[str, str]:
    """Every template variable of a start on `port`; `extra_ports` gives the manifest's
    `ports` by name (a name missing here is an unknown variable when rendered)."""
    m = cfg.manifest
    base = {
        "host": cfg.host,
        "port": str(port),
        **{name: str(number) for name, number in (extra_ports or {}).items()},
        "run_dir": str(cfg.run_dir),
        "stack_dir": str(m.stack_dir),
        "stacks_dir": str(STACKS_DIR),
        "build_dir": str(build.build_dir_for(m)),
        "fixtures_dir": str(FIXTURES_DIR),
        **core_variables(cfg.server_cpus),
    }
    base.update({f"cmd.{k}": v for k, v in cfg.status.commands.items()})
    base.update({k.lower(): v for k, v in cfg.service_env.items()})
    params = resolve_params(m, cfg.params, base)
    return {**base, **params}


def environment_for(variables: Mapping[str, str], cfg: StackConfig) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "HOST": variables["host"],
            "PORT": variables["port"],
            "FIXTURES_DIR": variables["fixtures_dir"],
            "RUN_DIR": variables["run_dir"],
            "STACK_DIR": variables["stack_dir"],
            "BUILD_DIR": variables["build_dir"],
        }
    )
    env.update(cfg.service_env)
    for name in (*cfg.manifest.ports, *(p.name for p in cfg.manifest.params)):
        env[name.upper()] = variables[name]
    env.setdefault("WORKERS", variables["server_core_count"])
    return env


def tcp_address(text: str, default_host: str, where: str) -> tuple[str, int]:
    """A rendered `ready_tcp`: "PORT" (on `default_host`, the stack's) or "HOST:PORT", HOST
    an IP address ("[::1]:PORT" for IPv6)."""
    host_text, colon, port_text = text.rpartition(":")
    host = host_text.removeprefix("[").removesuffix("]") if colon else default_host
    port = int(port_text) if port_text.isascii() and port_text.isdigit() else 0
    if not 1 <= port <= 65535 or (colon and not _is_ip_address(host)):
        raise InputError(
            f"{where}: {text!r} is not a port (1..65535) or an IP address and a "
            "port like 127.0.0.1:8080"
        )
    return host, port


def _is_ip_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class StackInstance:
    def __init__(self, cfg: StackConfig) -> None:
        self.cfg = cfg
        self.run_root = cfg.run_root or cfg.run_dir.parent
        fs.checked(cfg.run_dir, self.run_root, "use")  # refuse a traversing name at once
        self.run_as: RunAs | None = stack_user()
        self.port = cfg.port or free_port(cfg.host)
        self.extra_ports = dict(
            zip(
                cfg.manifest.ports,
                free_ports(len(cfg.manifest.ports), LOOPBACK, {self.port}),
                strict=True,
            )
        )
        self.variables = variables_for(cfg, self.port, self.extra_ports)
        # Builds run as the invoking user, with its HOME (npm, Maven, Go and Cargo caches).
        self.build_env = environment_for(self.variables, cfg)
        self.env = server_environment(self.build_env, self.run_as, cfg.run_dir)
        self.processes: list[tuple[str, subprocess.Popen[bytes]]] = []
        # Each role's control group (the monitor counts every process of the role in it);
        # removed, with anything still in it, when the stack stops.
        self.groups: list[CpuGroup] = []
        self.log_path = cfg.run_dir / "server.log"

    @property
    def base_url(self) -> str:
        return f"http://{self.cfg.host}:{self.port}"

    @property
    def name(self) -> str:
        return self.cfg.manifest.name

    def params_in_force(self) -> dict[str, str]:
        """Every manifest parameter as resolved for this start (defaults, overrides, cores)."""
        return {p.name: self.variables[p.name] for p in self.cfg.manifest.params}

    def jit_warmup(self) -> Warmup | None:
        """The stack's JIT warm-up as it started (None: no JIT, or its JIT is off)."""
        warmup = self.cfg.manifest.warmup
        return warmup if warmup is not None and warmup.applies(self.variables) else None

    def chosen_processes(self) -> tuple[Process, ...]:
        """The [[process]] entries this start runs: those whose `when` the parameters meet."""
        chosen = tuple(p for p in self.cfg.manifest.processes if p.starts_with(self.variables))
        if not chosen:
            raise InputError(
                f"{self.cfg.manifest.path}: no [[process]] starts with the "
                f"parameters {self.params_in_force()}; check the 'when' keys"
            )
        return chosen

    def roles(self) -> dict[str, int]:
        """Role name -> root pid, for the monitor."""
        return {role: proc.pid for role, proc in self.processes}

    def exited(self) -> dict[str, int]:
        """Role -> exit status of every started process that has exited (negative: killed by
        that signal), for the crash watch; empty while all run."""
        return {
            role: code for role, proc in self.processes if (code := exit_status(proc)) is not None
        }

    def build(self) -> Path:
        return build.ensure_built(self.cfg.manifest, self.variables, self.build_env)

    def prepare_run_dir(self) -> Path:
        """An empty run dir, owned by the stack user, reachable by it; returns it resolved.

        Whatever was there before is removed first: only inside the run root, and only if it
        is empty or carries the marker of a run dir stackbench made.
        """
        run_dir, owner = self.cfg.run_dir, self.run_as.owner if self.run_as else None
        if (
            run_dir.is_dir()
            and not run_dir.is_symlink()
            and any(run_dir.iterdir())
            and not (run_dir / RUN_DIR_MARKER).is_file()
        ):
            raise InputError(
                f"{self.name}: refusing to delete {run_dir}: it is not a run "
                "directory stackbench made (choose an empty scratch directory)"
            )
        fs.safe_rmtree(run_dir, self.run_root)
        real = fs.safe_mkdir(run_dir, self.run_root, owner, mode=0o700)
        fs.write_new_file(real / RUN_DIR_MARKER, real, f"{self.name}\n")
        if self.run_as is not None:
            run_as = self.run_as
            for private in ("home", "tmp"):  # HOME and TMPDIR of the servers
                fs.safe_mkdir(run_dir / private, run_dir, owner, mode=0o700)
            fs.open_path_for(real, lambda directory: can_enter(directory.stat(), run_as))
        return real

    def _render_templates(self) -> None:
        m = self.cfg.manifest
        for t in m.templates:
            src = m.stack_dir / t.src
            try:
                text = src.read_text()
            except OSError as exc:
                raise InputError(f"{m.path} [[template]]: cannot read {src}: {exc}") from exc
            # The destination is checked before anything is rendered for it.
            dest = fs.checked(self.cfg.run_dir / t.dest, self.cfg.run_dir, "write")
            fs.write_new_file(
                dest, self.cfg.run_dir, render(text, self.variables, str(src), syntax_for(t.dest))
            )

    def _check_stack_user_can_read(self) -> None:
        """Fail now, naming the path, if the stack user cannot read the code or the fixtures
        (instead of a server that starts and then answers 500 to every request)."""
        if self.run_as is None:
            return
        v = self.variables
        wanted = [
            Path(v["stacks_dir"]),
            Path(v["stack_dir"]),
            FIXTURES_DIR / "demo.txt",
            FIXTURES_DIR / "random-64k.bin",
        ]
        if Path(v["build_dir"]).exists():
            wanted.append(Path(v["build_dir"]))
        # What each [[process]] executes (build tools such as cargo are not needed by it).
        where = f"{self.cfg.manifest.path} [[process]]"
        programs = {render(proc.command[0], v, where) for proc in self.chosen_processes()}
        missing = unreadable(
            self.run_as, wanted, sorted(Path(p) for p in programs if os.path.isabs(p))
        )
        if missing:
            raise StackError(
                f"{self.name}: the stack processes run as user '{self.run_as.name}', which "
                f"cannot read or run {', '.join(map(str, missing))}; make them readable by "
                "that user (e.g. chmod o+rx on each parent directory, chmod -R o+rX on the "
                "checkout) or install the runtime outside root's home"
            )

    def start(self) -> None:
        m = self.cfg.manifest
        chosen = self.chosen_processes()
        self.prepare_run_dir()
        self._render_templates()
        self._check_stack_user_can_read()
        deadline = time.monotonic() + m.ready.timeout_s
        for proc in chosen:
            where = f"{m.path} [[process]] {proc.role}"
            command = [render(arg, self.variables, where) for arg in proc.command]
            group = cgroups.new_group(proc.role)
            if group is not None:
                self.groups.append(group)
            try:
                popen = spawn(
                    command,
                    m.stack_dir,
                    self.env,
                    self.log_path,
                    self.cfg.server_cpus,
                    self.run_as,
                    group,
                )
            except OSError as exc:
                raise StackError(
                    f"{m.name}: cannot start {proc.role} ({command[0]}): {exc}"
                ) from exc
            self.processes.append((proc.role, popen))
            self._wait_process_ready(proc, where, deadline)
        self._wait_http_ready(deadline)

    def logs(self) -> dict[str, Path]:
        """Log name -> file, for every regular *.log file in the run dir (server.log too).

        Copy them with fs.copy_log: the stack user can write the run dir, so a "log" there
        may be a symlink, which copy_log refuses to follow.
        """
        run_dir = self.cfg.run_dir
        if not run_dir.is_dir():
            return {}
        return {
            p.stem: p for p in sorted(run_dir.glob("*.log")) if p.is_file() and not p.is_symlink()
        }

    def _fail(self, what: str) -> StackError:
        return StackError(
            f"{self.name}: {what}\n--- last lines of {self.log_path}:\n{tail(self.log_path)}"
        )

    def _check_alive(self) -> None:
        for role, popen in self.processes:
            code = popen.poll()
            if code is not None:
                raise self._fail(f"process '{role}' exited with code {code} during start-up")

    def _wait_process_ready(self, proc: Process, where: str, deadline: float) -> None:
        if proc.ready_unix:
            path = Path(render(proc.ready_unix, self.variables, where))
            if not wait_for_unix_socket(path, deadline):
                self._check_alive()
                raise self._fail(f"{proc.role} did not open {path} in time")
        if proc.ready_tcp:
            host, port = tcp_address(
                render(proc.ready_tcp, self.variables, where),
                self.cfg.host,
                f"{where} key 'ready_tcp'",
            )
            if not wait_for_tcp(host, port, deadline):
                self._check_alive()
                raise self._fail(f"{proc.role} did not listen on {host} port {port} in time")

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
        for group in self.groups:
            group.close()
        self.groups.clear()

    def __enter__(self) -> "StackInstance":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
