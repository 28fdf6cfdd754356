"""Parse `stacks/<name>/stack.toml` into frozen objects (docs/contracts.md section 2).

Parsing is strict: an unknown key, a wrong type or a missing field is an InputError naming the
file and the key, because a silently ignored typo in a manifest would benchmark something else
than what the user thinks.
"""

import enum
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stackbench.errors import InputError


class IoModel(enum.Enum):
    PROCESS_PER_REQUEST = "process-per-request"
    PROCESS_POOL = "process-pool"
    THREAD_PER_REQUEST = "thread-per-request"
    THREAD_POOL = "thread-pool"
    EVENT_LOOP = "event-loop"
    MULTI_EVENT_LOOP = "multi-event-loop"
    GOROUTINES = "goroutines"
    VIRTUAL_THREADS = "virtual-threads"
    ASYNC_TASKS = "async-tasks"


@dataclass(frozen=True)
class Requirement:
    name: str
    commands: tuple[str, ...] = ()
    check: tuple[str, ...] = ()
    version_args: tuple[str, ...] = ()
    min_version: str | None = None
    hint: str = ""


@dataclass(frozen=True)
class Param:
    name: str
    default: str
    help: str


@dataclass(frozen=True)
class Build:
    command: tuple[str, ...]
    inputs: tuple[str, ...]


@dataclass(frozen=True)
class Template:
    src: str
    dest: str


@dataclass(frozen=True)
class Process:
    role: str
    command: tuple[str, ...]
    ready_unix: str | None = None
    ready_tcp: str | None = None


@dataclass(frozen=True)
class Ready:
    path: str = "/hello"
    timeout_s: float = 30.0


@dataclass(frozen=True)
class Manifest:
    name: str
    path: Path
    description: str
    language: str
    io_model: IoModel
    workloads: tuple[str, ...]
    requires: tuple[Requirement, ...]
    params: tuple[Param, ...]
    build: Build | None
    templates: tuple[Template, ...]
    processes: tuple[Process, ...]
    ready: Ready
    script: tuple[str, ...] | None

    @property
    def stack_dir(self) -> Path:
        return self.path.parent

    def param_defaults(self) -> dict[str, str]:
        return {p.name: p.default for p in self.params}


class _Table:
    """Typed access to one TOML table that remembers which keys were read."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self.data = data
        self.where = where
        self.used: set[str] = set()

    def _get(self, key: str, kind: type | tuple[type, ...], required: bool) -> Any:
        self.used.add(key)
        if key not in self.data:
            if required:
                raise InputError(f"{self.where}: missing key '{key}'")
            return None
        value = self.data[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise InputError(
                f"{self.where}: key '{key}' has the wrong type ({type(value).__name__})")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value = self._get(key, str, default is None)
        return default if value is None else value

    def opt_str(self, key: str) -> str | None:
        return self._get(key, str, False)

    def number(self, key: str, default: float) -> float:
        value = self._get(key, (int, float), False)
        return default if value is None else float(value)

    def str_list(self, key: str, required: bool = False) -> tuple[str, ...]:
        value = self._get(key, list, required)
        if value is None:
            return ()
        if not all(isinstance(v, str) for v in value):
            raise InputError(f"{self.where}: key '{key}' must be a list of strings")
        return tuple(value)

    def table(self, key: str) -> "_Table | None":
        value = self._get(key, dict, False)
        return None if value is None else _Table(value, f"{self.where} [{key}]")

    def tables(self, key: str) -> list["_Table"]:
        value = self._get(key, list, False) or []
        if not all(isinstance(v, dict) for v in value):
            raise InputError(f"{self.where}: '{key}' must be an array of tables ([[{key}]])")
        return [_Table(v, f"{self.where} [[{key}]] #{i + 1}") for i, v in enumerate(value)]

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            allowed = ", ".join(sorted(self.used))
            raise InputError(f"{self.where}: unknown key '{unknown[0]}' (allowed: {allowed})")


def _requirement(t: _Table) -> Requirement:
    req = Requirement(
        name=t.text("name"),
        commands=t.str_list("commands"),
        check=t.str_list("check"),
        version_args=t.str_list("version_args"),
        min_version=t.opt_str("min_version"),
        hint=t.text("hint", ""),
    )
    t.finish()
    if not req.commands and not req.check:
        raise InputError(f"{t.where}: needs 'commands' or 'check'")
    return req


def _params(t: _Table | None) -> tuple[Param, ...]:
    if t is None:
        return ()
    params = []
    for name in list(t.data):
        spec = t.table(name)
        assert spec is not None
        default = spec.data.get("default")
        if isinstance(default, int | float) and not isinstance(default, bool):
            spec.data = {**spec.data, "default": str(default)}
        params.append(Param(name=name, default=spec.text("default"), help=spec.text("help", "")))
        spec.finish()
    t.finish()
    return tuple(params)


def _process(t: _Table) -> Process:
    proc = Process(
        role=t.text("role"),
        command=t.str_list("command", required=True),
        ready_unix=t.opt_str("ready_unix"),
        ready_tcp=t.opt_str("ready_tcp"),
    )
    t.finish()
    return proc


def parse_manifest(path: Path) -> Manifest:
    where = str(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError as exc:
        raise InputError(f"{where}: no such manifest") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: not valid TOML: {exc}") from exc
    root = _Table(data, where)
    name = root.text("name")
    if name != path.parent.name:
        raise InputError(f"{where}: name '{name}' must equal the folder name '{path.parent.name}'")
    io_text = root.text("io_model")
    try:
        io_model = IoModel(io_text)
    except ValueError as exc:
        allowed = ", ".join(m.value for m in IoModel)
        raise InputError(f"{where}: io_model '{io_text}' is not one of: {allowed}") from exc
    build_t = root.table("build")
    build = None
    if build_t is not None:
        build = Build(build_t.str_list("command", required=True), build_t.str_list("inputs"))
        build_t.finish()
    ready_t = root.table("ready")
    ready = Ready()
    if ready_t is not None:
        ready = Ready(ready_t.text("path", "/hello"), ready_t.number("timeout_s", 30.0))
        ready_t.finish()
    script_t = root.table("script")
    script = None
    if script_t is not None:
        script = script_t.str_list("command", required=True)
        script_t.finish()
    templates = []
    for t in root.tables("template"):
        templates.append(Template(t.text("src"), t.text("dest")))
        t.finish()
    manifest = Manifest(
        name=name,
        path=path,
        description=root.text("description"),
        language=root.text("language"),
        io_model=io_model,
        workloads=root.str_list("workloads", required=True),
        requires=tuple(_requirement(t) for t in root.tables("requires")),
        params=_params(root.table("params")),
        build=build,
        templates=tuple(templates),
        processes=tuple(_process(t) for t in root.tables("process")),
        ready=ready,
        script=script,
    )
    root.finish()
    if not manifest.processes:
        raise InputError(f"{where}: needs at least one [[process]]")
    return manifest


def discover(stacks_dir: Path) -> dict[str, Path]:
    """Every folder with a stack.toml, by name, sorted."""
    return {p.parent.name: p for p in sorted(stacks_dir.glob("*/stack.toml"))}
