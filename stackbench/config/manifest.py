"""Parse `stacks/<name>/stack.toml` into frozen objects (docs/contracts.md section 2).

Parsing is strict: an unknown key, a wrong type or a missing field is an InputError naming the
file and the key, because a silently ignored typo in a manifest would benchmark something else
than what the user thinks. Every parameter declares its type (int with bounds, enum, size, bool
or a string with a pattern), and every value a suite or `--param` gives is checked against it
before anything starts: parameter values end up in php.ini, nginx and Apache configuration.
"""

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from msgspec import Meta, Struct, structs

from stackbench.config.names import check_name
from stackbench.config.toml import convert, location, read_toml
from stackbench.config.workloads import CATALOG
from stackbench.errors import InputError

NonEmptyText = Annotated[str, Meta(min_length=1)]
Command = Annotated[tuple[NonEmptyText, ...], Meta(min_length=1)]
# Template sources and destinations are plain file names: a destination is written inside the
# run directory and must not climb out of it.
FileName = Annotated[
    str,
    Meta(
        pattern=r"\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z",
        description="a file name in the stack folder (letters, digits, '.', '_', '-'; no '/')",
    ),
]
# Requirement names become template variables {{cmd.NAME}}.
RequirementName = Annotated[
    str,
    Meta(
        pattern=r"\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\Z",
        description="a name of letters, digits, '.', '_' and '-' (at most 64)",
    ),
]
# Parameter names become template variables {{name}} and environment variables NAME.
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
# Names the orchestrator already gives a stack (docs/contracts.md sections 2 to 4): a parameter
# of the same name would silently replace the run directory, the port ...
RESERVED_PARAM_NAMES = frozenset(
    {
        "host",
        "port",
        "run_dir",
        "stack_dir",
        "stacks_dir",
        "build_dir",
        "fixtures_dir",
        "server_core_count",
        "server_cpus",
        "db_host",
        "db_port",
        "db_socket",
        "db_user",
        "db_password",
        "db_name",
        "redis_host",
        "redis_port",
        "memcached_host",
        "memcached_port",
        "path",
        "home",
        "ld_preload",
        "ld_library_path",
    }
)
MAX_INT_PARAM = 1_000_000_000
# Characters no parameter value may hold, whatever its type: C0 and C1 control characters
# (newline, carriage return, tab, escape ...), DEL and the Unicode line separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Enum values must be safe as they are in every configuration format (no quoting needed).
_ENUM_VALUE = re.compile(r"[A-Za-z0-9._:+/-]{0,64}")
_INT = re.compile(r"-?[0-9]{1,10}")  # ASCII digits only
_SIZE = re.compile(r"([0-9]{1,12})([KMGkmg]?)")
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
BoundedInt = Annotated[int, Meta(ge=-MAX_INT_PARAM, le=MAX_INT_PARAM)]
MAX_PORTS = 16  # extra loopback ports per stack; one is what a proxy in front of an app needs


def has_template(text: str) -> bool:
    """A default like "{{server_core_count}}" is checked after substitution, when rendered."""
    return "{{" in text


def control_free(text: str) -> bool:
    return _CONTROL.search(text) is None


class _ParamType(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, tag_field="type"):
    """One [params] entry: NAME = { type = "...", default = ..., help = "...", bounds }."""

    default: str | int | bool
    help: str = ""

    # Each type also has allowed() -> str (what it accepts, in words) and canonical(text) ->
    # str | None (the value as stackbench passes it on, or None if the type refuses it).

    def check_spec(self) -> str | None:
        """What is wrong with the declaration itself, or None."""
        return None


class IntParam(_ParamType, frozen=True, tag="int"):
    min: BoundedInt
    max: BoundedInt

    def allowed(self) -> str:
        return f"a whole number from {self.min} to {self.max}"

    def canonical(self, text: str) -> str | None:
        if not _INT.fullmatch(text) or not self.min <= int(text) <= self.max:
            return None
        return str(int(text))

    def check_spec(self) -> str | None:
        return "min must not exceed max" if self.min > self.max else None


class EnumParam(_ParamType, frozen=True, tag="enum"):
    values: Annotated[tuple[str, ...], Meta(min_length=1)]

    def allowed(self) -> str:
        return "one of: " + ", ".join(v or repr(v) for v in self.values)

    def canonical(self, text: str) -> str | None:
        return text if text in self.values else None

    def check_spec(self) -> str | None:
        bad = [v for v in self.values if not _ENUM_VALUE.fullmatch(v)]
        if bad:
            return f"value {bad[0]!r} may only hold letters, digits and . _ : + / - (at most 64)"
        return None


class SizeParam(_ParamType, frozen=True, tag="size"):
    """A byte size as PHP and the JVM write it: digits and an optional unit K, M or G."""

    min: str = "0"
    max: str = "1024G"

    def allowed(self) -> str:
        return f"a size like 64M or 2G (digits and K, M or G) from {self.min} to {self.max}"

    def canonical(self, text: str) -> str | None:
        size = size_bytes(text)
        low, high = size_bytes(self.min), size_bytes(self.max)
        if size is None or low is None or high is None or not low <= size <= high:
            return None
        return text

    def check_spec(self) -> str | None:
        low, high = size_bytes(self.min), size_bytes(self.max)
        if low is None or high is None:
            return "min and max must be sizes like 16M or 4G"
        return "min must not exceed max" if low > high else None


class BoolParam(_ParamType, frozen=True, tag="bool"):
    """Rendered as on / off: the spelling php.ini, php-fpm, nginx and Apache all accept."""

    TRUE: ClassVar[frozenset[str]] = frozenset({"true", "on", "yes", "1"})
    FALSE: ClassVar[frozenset[str]] = frozenset({"false", "off", "no", "0"})

    def allowed(self) -> str:
        return "true or false (also on/off, yes/no, 1/0)"

    def canonical(self, text: str) -> str | None:
        word = text.lower()
        return "on" if word in self.TRUE else "off" if word in self.FALSE else None


class StringParam(_ParamType, frozen=True, tag="string"):
    """Free text restricted by a regular expression that must match the whole value."""

    pattern: NonEmptyText
    max_length: Annotated[int, Meta(ge=1, le=4096)] = 256

    def allowed(self) -> str:
        return f"text matching {self.pattern} (at most {self.max_length} characters)"

    def canonical(self, text: str) -> str | None:
        if len(text) > self.max_length or not control_free(text):
            return None
        return text if re.fullmatch(self.pattern, text) else None

    def check_spec(self) -> str | None:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            return f"pattern is not a regular expression: {exc}"
        return None


ParamType = IntParam | EnumParam | SizeParam | BoolParam | StringParam


def size_bytes(text: str) -> int | None:
    match = _SIZE.fullmatch(text)
    if match is None:
        return None
    return int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]


@dataclass(frozen=True)
class Param:
    name: str
    type: ParamType

    @property
    def default(self) -> str:
        return param_text(self.type.default)

    @property
    def help(self) -> str:
        return self.type.help

    def allowed(self) -> str:
        return self.type.allowed()

    def check(self, value: str, where: str) -> str:
        """The value in canonical form, or an InputError naming `where` and what is allowed."""
        canonical = self.type.canonical(value) if control_free(value) else None
        if canonical is None:
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise InputError(
                f"{where}: {shown!r} is not allowed for parameter '{self.name}'; "
                f"expected {self.allowed()}"
            )
        return canonical


def param_text(value: str | int | bool) -> str:
    """A TOML parameter value as the text a stack receives."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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


class Requirement(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    name: RequirementName
    commands: tuple[NonEmptyText, ...] = ()
    check: tuple[NonEmptyText, ...] = ()
    version_args: tuple[str, ...] = ()
    min_version: str | None = None
    hint: str = ""


class Build(Struct, frozen=True, forbid_unknown_fields=True):
    command: Command
    inputs: tuple[NonEmptyText, ...] = ()
    # What the build writes beside the sources instead of into {{build_dir}} (npm's
    # node_modules), relative to the stack folder: a cached build one of them is missing from
    # (deleted, or a new checkout) is built again instead of starting without it.
    outputs: tuple[NonEmptyText, ...] = ()


class Template(Struct, frozen=True, forbid_unknown_fields=True):
    src: FileName
    dest: FileName


class Process(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    role: NonEmptyText
    command: Command
    ready_unix: str | None = None
    ready_tcp: str | None = None  # "PORT" on the stack's host, or "HOST:PORT"
    # Started only when every parameter named here resolves to one of its values: how a stack
    # runs a process one way or another (Node on a unix socket or on a TCP port), since
    # templates have no conditions. Values are in canonical form once parsed.
    when: dict[str, Annotated[tuple[str, ...], Meta(min_length=1)]] = {}

    def starts_with(self, params: Mapping[str, str]) -> bool:
        return all(params.get(name) in values for name, values in self.when.items())


class Ready(Struct, frozen=True, forbid_unknown_fields=True):
    path: Annotated[
        str, Meta(pattern=r"\A/[\x21-\x7e]*\Z", description="a URL path starting with '/'")
    ] = "/hello"
    timeout_s: Annotated[float, Meta(gt=0.0, le=3600.0)] = 30.0


class Warmup(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A JIT runtime's warm-up: a discarded load pass of `seconds` before a case's first
    level, long enough for the runtime to compile what the workload runs (docs/methods.md)."""

    seconds: Annotated[float, Meta(gt=0.0, le=600.0)]
    why: NonEmptyText
    # Skipped when every parameter named here resolves to one of its values (the JIT is off).
    unless: dict[str, tuple[str, ...]] = {}

    def applies(self, params: Mapping[str, str]) -> bool:
        return not self.unless or any(
            params.get(k) not in values for k, values in self.unless.items()
        )


class _Script(Struct, frozen=True, forbid_unknown_fields=True):
    command: Command


class _ManifestFile(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    name: str = ""  # the folder's name when left out
    description: str
    language: NonEmptyText
    io_model: IoModel
    workloads: Annotated[tuple[str, ...], Meta(min_length=1)]
    process: Annotated[tuple[Process, ...], Meta(min_length=1)]
    requires: tuple[Requirement, ...] = ()
    params: dict[str, Any] = {}  # converted entry by entry, so errors can name the parameter
    build: Build | None = None
    template: tuple[Template, ...] = ()
    ready: Ready = Ready()
    script: _Script | None = None
    warmup: Warmup | None = None
    ports: tuple[str, ...] = ()


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
    warmup: Warmup | None = None
    # Extra free TCP ports on 127.0.0.1 stackbench picks at each start besides {{port}}, for a
    # process only the stack's own processes reach (nginx -> Node): template variables {{NAME}}
    # and environment variables NAME uppercased.
    ports: tuple[str, ...] = ()

    @property
    def stack_dir(self) -> Path:
        return self.path.parent

    def param_defaults(self) -> dict[str, str]:
        return {p.name: p.default for p in self.params}

    def param(self, name: str, where: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise InputError(
            f"{where}: the stack '{self.name}' has no parameter {name!r} (parameters: {known})"
        )

    def check_params(self, values: dict[str, str], where: str) -> dict[str, str]:
        """Suite or command-line values in canonical form; `where` says where they came from."""
        return {
            key: self.param(key, f"{where} key {key!r}").check(value, f"{where} key {key!r}")
            for key, value in values.items()
        }


def _param(path: Path, name: str, table: object) -> Param:
    at = ("params", name)
    if not PARAM_NAME.fullmatch(name) or name in RESERVED_PARAM_NAMES:
        rule = (
            "is reserved for a variable stackbench sets"
            if name in RESERVED_PARAM_NAMES
            else "must be lowercase letters, digits and '_', starting with a letter"
        )
        raise InputError(f"{path}: [params] {location((name,))}: a parameter name {rule}")
    param = Param(name, convert(table, ParamType, path, at))
    problem = param.type.check_spec()
    if problem:
        raise InputError(f"{path}: [params.{name}]: {problem}")
    if not has_template(param.default):
        param.check(param.default, f"{path}: {location((*at, 'default'))}")
    elif not control_free(param.default):
        raise InputError(f"{path}: {location((*at, 'default'))}: control characters")
    return param


def _check_workloads(path: Path, workloads: tuple[str, ...], endpoints: frozenset[str]) -> None:
    unknown = [w for w in workloads if w not in CATALOG and w not in endpoints]
    if unknown:
        own = f"; the suite's [endpoints]: {', '.join(sorted(endpoints))}" if endpoints else ""
        raise InputError(
            f"{path}: key 'workloads': unknown workload {unknown[0]!r} "
            f"(known: {', '.join(CATALOG)}{own})"
        )


def parse_manifest(
    path: Path, *, catalog: bool = True, endpoints: frozenset[str] = frozenset()
) -> Manifest:
    """A stack's manifest. A catalog stack (stacks/<name>/) is named by its folder; a stack of
    the user's own (a suite's `stacks` entry that is a path) by its `name`, else its folder,
    and it may serve the suite's own workloads (`endpoints`, its [endpoints.NAME] tables)."""
    _, data = read_toml(path, "manifest")
    raw = convert(data, _ManifestFile, path)
    name = _stack_name(path, raw.name, catalog)
    _check_workloads(path, raw.workloads, frozenset() if catalog else endpoints)
    for i, req in enumerate(raw.requires):
        if not req.commands and not req.check:
            raise InputError(
                f"{path}: [[requires]] #{i + 1} ('{req.name}'): needs 'commands' or 'check'"
            )
    params = tuple(_param(path, key, table) for key, table in raw.params.items())
    return Manifest(
        name=name,
        path=path,
        description=raw.description,
        language=raw.language,
        io_model=raw.io_model,
        workloads=raw.workloads,
        requires=raw.requires,
        params=params,
        build=_build(path, raw.build),
        templates=raw.template,
        processes=tuple(_process(path, i, proc, params) for i, proc in enumerate(raw.process)),
        ready=raw.ready,
        script=None if raw.script is None else raw.script.command,
        warmup=_warmup(path, raw),
        ports=_ports(path, raw.ports, params),
    )


def _build(path: Path, build: Build | None) -> Build | None:
    """A build's outputs lie beside the stack's sources: in its folder or, for stacks that
    share one installation (node-cluster uses node's node_modules), a sibling folder."""
    root = path.parent.parent.resolve()
    for i, output in enumerate(build.outputs if build else ()):
        target = (path.parent / output).resolve()
        if not target.is_relative_to(root) or target == root:
            raise InputError(
                f"{path}: [build] key 'outputs' #{i + 1} ({output!r}) leads outside the folder "
                f"that holds the stack's own folder ({root}); name a path inside it"
            )
    return build


def _stack_name(path: Path, given: str, catalog: bool) -> str:
    folder = path.parent.name
    if given:
        check_name(given, f"{path}: key 'name'")
        if catalog and given != folder:
            raise InputError(f"{path}: key 'name': {given!r} must equal the folder name '{folder}'")
        return given
    check_name(folder, f"{path}: the folder name (the stack's name; or set key 'name')")
    return folder


def _ports(path: Path, names: tuple[str, ...], params: tuple[Param, ...]) -> tuple[str, ...]:
    """The extra port names: variable names that clash with nothing stackbench or the stack
    already defines, ending in _port so the variables say what they hold."""
    taken = {p.name for p in params}
    if len(names) > MAX_PORTS:
        raise InputError(
            f"{path}: key 'ports': {len(names)} names; a stack may ask for at "
            f"most {MAX_PORTS} extra ports"
        )
    for i, name in enumerate(names):
        where = f"{path}: key 'ports' #{i + 1} ({name!r})"
        if not PARAM_NAME.fullmatch(name) or not name.endswith("_port"):
            raise InputError(
                f"{where}: a port name is lowercase letters, digits and '_', "
                "starting with a letter and ending in '_port' (e.g. 'app_port')"
            )
        if name in RESERVED_PARAM_NAMES or name in taken:
            what = (
                "a variable stackbench sets"
                if name in RESERVED_PARAM_NAMES
                else "a parameter of this stack"
            )
            raise InputError(f"{where}: the name is already {what}; choose another")
        if name in names[:i]:
            raise InputError(f"{where}: listed twice")
    return names


def _process(path: Path, index: int, proc: Process, params: tuple[Param, ...]) -> Process:
    """The process with its `when` values checked against the parameters' types and written
    in canonical form (a bool as on/off), as resolved parameters are."""
    if not proc.when:
        return proc
    by_name = {p.name: p for p in params}
    where = f"{path}: [[process]] #{index + 1} ('{proc.role}') key"
    when = {}
    for name, values in proc.when.items():
        param = by_name.get(name)
        if param is None:
            raise InputError(
                f"{where} 'when': {name!r} is not a parameter of this stack "
                f"(parameters: {', '.join(by_name) or 'none'})"
            )
        when[name] = tuple(param.check(v, f"{where} 'when.{name}'") for v in values)
    return structs.replace(proc, when=when)


def _warmup(path: Path, raw: _ManifestFile) -> Warmup | None:
    if raw.warmup is None:
        return None
    for name in raw.warmup.unless:
        if name not in raw.params:
            raise InputError(
                f"{path}: [warmup] key 'unless': {name!r} is not a parameter of "
                f"this stack (parameters: {', '.join(raw.params) or 'none'})"
            )
    return raw.warmup


def discover(stacks_dir: Path) -> dict[str, Path]:
    """Every folder with a stack.toml, by name, sorted."""
    return {p.parent.name: p for p in sorted(stacks_dir.glob("*/stack.toml"))}
