"""The hosts of a multi-host run: a hosts file (`--hosts FILE`) or a suite's `[hosts]` table.

    [hosts.h1]
    address = "10.231.0.11"      # an IPv4/IPv6 literal or a DNS name (or a ~/.ssh/config alias)
    user = "root"                # default root
    port = 22                    # default 22
    identity = "/root/.ssh/id_ed25519"   # optional: only this key (IdentitiesOnly)
    known_hosts = "/root/.ssh/known_hosts_bench"   # optional: else ssh's own files
    checkout = "/opt/stackbench"   # optional: the checkout there (default: this path)
    stackbench = "/opt/stackbench/.venv/bin/stackbench"   # optional: the command there

`stackbench` is one program (a string) or a program with its arguments (a list); by default it
is `<checkout>/.venv/bin/stackbench`, what `make setup` creates in a checkout. Every value
reaches an `ssh` command line, so each is checked here: names follow config/names.py, the
address and user cannot start an option, paths are absolute and free of the characters ssh
expands or splits on (whitespace, quotes, '%', '~' is not absolute anyway).
"""

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Annotated, Any

from msgspec import Meta, Struct

from stackbench.config.names import check_name
from stackbench.config.paths import REPO_ROOT
from stackbench.config.toml import Segment, convert, location, read_toml
from stackbench.errors import InputError

MAX_HOSTS = 64
DEFAULT_USER = "root"
DEFAULT_PORT = 22
_DNS_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
# Whitespace splits an ssh option value into several files; quotes, '%' (ssh's tokens) and
# backslashes are expanded or unquoted by ssh; control characters have no place in a path.
_PATH_FORBIDDEN = re.compile(r"[\s\"'%\\\x00-\x1f\x7f]")
_ARG_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f]")

Port = Annotated[int, Meta(ge=1, le=65535)]
Text = Annotated[str, Meta(min_length=1, max_length=1024)]
CommandWords = Annotated[list[Text], Meta(min_length=1, max_length=32)]


@dataclass(frozen=True)
class Host:
    """One host of a run, as ssh reaches it."""

    name: str
    address: str
    user: str = DEFAULT_USER
    port: int = DEFAULT_PORT
    identity: Path | None = None  # only this key is offered (IdentitiesOnly)
    known_hosts: Path | None = None  # None: ssh's own files (~/.ssh/known_hosts ...)
    checkout: Path = REPO_ROOT  # the stackbench checkout on that host
    stackbench: tuple[str, ...] = (str(REPO_ROOT / ".venv" / "bin" / "stackbench"),)

    @property
    def label(self) -> str:
        """`h1 (root@10.231.0.11:22)`: how messages name the host."""
        return f"{self.name} ({self.user}@{self.address}:{self.port})"


@dataclass(frozen=True)
class HostsFile:
    """The hosts by name, and where they were read (for messages)."""

    hosts: Mapping[str, Host]
    source: str  # a hosts file's path, or "<suite>: [hosts]"


class _HostTable(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    address: Annotated[str, Meta(min_length=1, max_length=253)]
    user: Annotated[str, Meta(min_length=1, max_length=32)] = DEFAULT_USER
    port: Port = DEFAULT_PORT
    identity: Text | None = None
    known_hosts: Text | None = None
    checkout: Text | None = None
    stackbench: Text | CommandWords | None = None


class _HostsFileTable(Struct, frozen=True, forbid_unknown_fields=True):
    hosts: dict[str, Any]


def parse_hosts_file(path: Path) -> HostsFile:
    """A hosts file (`--hosts FILE`): only `[hosts.NAME]` tables."""
    _text, data = read_toml(path, "hosts file")
    table = convert(data, _HostsFileTable, path)
    return hosts_from_table(table.hosts, path, ("hosts",), source=str(path))


def hosts_from_table(
    table: object, path: Path, at: Sequence[Segment] = ("hosts",), source: str | None = None
) -> HostsFile:
    """The `[hosts]` table of `path` found at `at` (already parsed by config.toml.read_toml),
    e.g. a suite's. Every host is checked; the first problem is an InputError."""
    where = f"{path}: [{'.'.join(str(s) for s in at)}]"
    if not isinstance(table, dict):
        raise InputError(f'{where}: expected tables [hosts.NAME] with address = "..."')
    if not table:
        raise InputError(
            f'{where}: no host; add at least one [hosts.NAME] table with address = "..."'
        )
    if len(table) > MAX_HOSTS:
        raise InputError(f"{where}: {len(table)} hosts, at most {MAX_HOSTS}")
    hosts = {}
    for name, spec in table.items():
        check_name(name, f"{path}: {location((*at, name))} (a host name)")
        hosts[name] = _host(name, convert(spec, _HostTable, path, (*at, name)), path, (*at, name))
    return HostsFile(MappingProxyType(hosts), source or where)


def load_hosts(hosts_file: Path | None, suite: Path | None) -> HostsFile:
    """The hosts of `--hosts FILE` or else of SUITE's `[hosts]` table."""
    if hosts_file is not None:
        return parse_hosts_file(hosts_file)
    if suite is None:
        raise InputError(
            "no hosts given: pass --hosts FILE (scripts/testhosts.sh up N writes "
            "/run/stackbench-testhosts/hosts.toml) or a SUITE with a [hosts] table"
        )
    _text, data = read_toml(suite, "suite file")
    if "hosts" not in data:
        raise InputError(
            f"{suite}: no [hosts] table; add [hosts.NAME] tables with address = "
            '"...", or pass --hosts FILE'
        )
    return hosts_from_table(data["hosts"], suite, ("hosts",))


def _host(name: str, table: _HostTable, path: Path, at: tuple[Segment, ...]) -> Host:
    def where(key: str) -> str:
        return f"{path}: {location((*at, key))}"

    checkout = (
        _absolute(table.checkout, where("checkout")) if table.checkout is not None else REPO_ROOT
    )
    return Host(
        name=name,
        address=check_address(table.address, where("address")),
        user=_user(table.user, where("user")),
        port=table.port,
        identity=_optional_path(table.identity, where("identity")),
        known_hosts=_optional_path(table.known_hosts, where("known_hosts")),
        checkout=checkout,
        stackbench=_command(table.stackbench, checkout, where("stackbench")),
    )


def check_address(text: str, where: str) -> str:
    """An IPv4 or IPv6 literal, or a DNS name (letters, digits, '-' and dots)."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    labels = text.split(".")
    # A name's last label is never all digits: that is a mistyped IPv4 address (10.0.0.256).
    if (
        len(text) <= 253
        and all(_DNS_LABEL.fullmatch(label) for label in labels)
        and not labels[-1].isdigit()
    ):
        return text
    raise InputError(
        f"{where}: {text!r} is not an IP address or a host name: write an IPv4 "
        "or IPv6 address (10.0.0.2, fd00::2) or a DNS name (bench-1.example.org; "
        "letters, digits and '-' between dots)"
    )


def _user(text: str, where: str) -> str:
    if not _USER.fullmatch(text):
        raise InputError(
            f"{where}: {text!r} is not a user name: lowercase letters, digits, '_' "
            "and '-', starting with a letter or '_', at most 32 characters"
        )
    return text


def _absolute(text: str, where: str) -> Path:
    if not PurePosixPath(text).is_absolute():
        raise InputError(
            f"{where}: {text!r} is not an absolute path: write the full path (starting with '/')"
        )
    if _PATH_FORBIDDEN.search(text):
        raise InputError(
            f"{where}: {text!r} contains whitespace, a quote, '%', '\\' or a "
            "control character, which ssh would split or expand: move the file "
            "to a plain path"
        )
    return Path(text)


def _optional_path(text: str | None, where: str) -> Path | None:
    return None if text is None else _absolute(text, where)


def _command(value: str | list[str] | None, checkout: Path, where: str) -> tuple[str, ...]:
    """The remote stackbench command as argv: a string is one program, a list a program and
    its arguments; the default is the checkout's launcher."""
    if value is None:
        return (str(checkout / ".venv" / "bin" / "stackbench"),)
    words = [value] if isinstance(value, str) else value
    for word in words:
        if _ARG_FORBIDDEN.search(word):
            raise InputError(f"{where}: {word[:60]!r} contains a control character")
    if words[0].startswith("-"):
        raise InputError(
            f"{where}: {words[0][:60]!r} is an option, not a program: start with the program's path"
        )
    return tuple(words)
