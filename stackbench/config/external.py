"""A server the user runs: a suite's `[external.NAME]` table, parsed into a frozen record.

stackbench never starts, stops, restarts or signals such a server: it verifies it, loads it
and reports it like any stack, and samples its CPU and memory only where the table says which
processes it is (`pids`, or a systemd `unit`). What could not be measured is part of the
record (`not_measured`), so every output can say it row by row.

Parsing is pure (config/): the url's form and address, the names, the workloads. Whether the
url answers and the pids are there is checked on the machine before any load
(lab/external.py).
"""

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from msgspec import Meta, Struct

from stackbench.config.names import check_name
from stackbench.config.toml import convert, location
from stackbench.config.workloads import CATALOG
from stackbench.errors import InputError

MAX_PIDS = 64
PID_MAX = 4_194_304  # the kernel's largest pid_max (2**22)
# http://ADDRESS:PORT, nothing after the port but an optional "/": a base URL the workloads'
# paths are appended to, as a started stack's is.
_URL = re.compile(r"http://(?P<host>[0-9.]{7,15}):(?P<port>[0-9]{1,5})/?")
_UNIT = re.compile(r"[A-Za-z0-9:_.@-]{1,200}\.service")

Pid = Annotated[int, Meta(ge=2, le=PID_MAX)]  # 1 is init: its tree is the whole machine


class _ExternalTable(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    url: Annotated[str, Meta(min_length=1, max_length=200)]
    workloads: Annotated[list[str], Meta(min_length=1, max_length=200)]
    pids: Annotated[list[Pid], Meta(max_length=MAX_PIDS)] = []
    unit: Annotated[str, Meta(min_length=1, max_length=256)] | None = None
    description: str = ""


@dataclass(frozen=True)
class ExternalStack:
    """A server stackbench does not run, at `url` (loopback: this machine)."""

    name: str
    url: str  # http://ADDRESS:PORT, no trailing slash
    address: str
    port: int
    workloads: tuple[str, ...]  # the catalog workloads it serves
    pids: tuple[int, ...] = ()  # its processes, each sampled with its descendants
    unit: str | None = None  # or the systemd unit whose main process (and tree) is sampled
    description: str = ""

    @property
    def sampled(self) -> bool:
        return bool(self.pids) or self.unit is not None

    def not_measured(self) -> tuple[str, ...]:
        """What the reports cannot give for this stack, and why: one sentence each."""
        out = []
        if not self.sampled:
            out.append(
                f"server CPU and memory: not measured, no pids or unit given for external "
                f"stack {self.name}"
            )
            out.append(
                f"disturbance: not judged, other work on the cores cannot be told from "
                f"external stack {self.name}'s own without its pids"
            )
        out.append(
            f"fresh starts: none, external stack {self.name} is never restarted by stackbench, "
            "so its repetitions are not independent starts (its intervals hold the spread "
            "within one start only)"
        )
        out.append(
            f"server cores: not placed, external stack {self.name} runs on the cores it "
            "chose, not on [placement] server_cpus"
        )
        return tuple(out)


def parse_external(
    path: Path,
    data: dict[str, Any],
    taken: dict[str, str],
    endpoints: frozenset[str],
    remote: bool = False,
) -> dict[str, "ExternalStack"]:
    """Every [external.NAME] table; `taken`: the names already in use, each with what it is
    (a catalog stack, the suite's own stack ...), which an external stack must not reuse;
    `endpoints`: the suite's own workloads, which its `workloads` may list too; `remote`: a
    multi-host run, whose external servers run on its server host."""
    out = {}
    for name, table in data.items():
        where = f"{path}: [external] {location((name,))}"
        check_name(name, where)
        if name in taken:
            raise InputError(
                f"{path}: [external.{name}]: '{name}' is already {taken[name]}; "
                "name the external stack otherwise"
            )
        raw = convert(table, _ExternalTable, path, ("external", name))
        out[name] = _external(path, name, raw, endpoints, remote)
    return out


def _external(
    path: Path, name: str, raw: _ExternalTable, endpoints: frozenset[str], remote: bool
) -> ExternalStack:
    at = f"{path}: [external.{name}]"
    workloads = _workloads(f"{at} key 'workloads'", raw.workloads, endpoints)
    return checked_external(
        name, raw.url, tuple(raw.pids), raw.unit, at, remote, workloads, raw.description
    )


def checked_external(
    name: str,
    url: str,
    pids: tuple[int, ...],
    unit: str | None,
    at: str,
    remote: bool,
    workloads: tuple[str, ...] = (),
    description: str = "",
) -> ExternalStack:
    """An external server's url and processes checked (`at` names where they come from: the
    suite's table, or the agent's request); `remote`: on the server host of a multi-host
    run, whose address the url has, rather than on this machine's loopback."""
    address, port = _url(url, f"{at} key 'url'", remote)
    if pids and unit is not None:
        raise InputError(f"{at}: give pids or unit, not both (the unit's processes are its own)")
    if len(pids) > MAX_PIDS or any(not 2 <= pid <= PID_MAX for pid in pids):
        raise InputError(f"{at} key 'pids': at most {MAX_PIDS} pids, each from 2 to {PID_MAX}")
    twice = sorted({p for p in pids if pids.count(p) > 1})
    if twice:
        raise InputError(f"{at} key 'pids': {twice[0]} is listed twice")
    if unit is not None and not _UNIT.fullmatch(unit):
        raise InputError(
            f"{at} key 'unit': {unit[:60]!r} is not a service unit name; expected "
            'letters, digits and : _ . @ - ending in .service (e.g. "myapp.service")'
        )
    return ExternalStack(
        name=name,
        url=f"http://{address}:{port}",
        address=address,
        port=port,
        workloads=workloads,
        pids=pids,
        unit=unit,
        description=description,
    )


def _url(url: str, where: str, remote: bool) -> tuple[str, int]:
    """The url's address and port: http, an IPv4 address and a port, nothing else; a
    loopback address, or on a multi-host run (`remote`) another one (the server host's,
    checked against the hosts file when the run starts: config/suite.py resolve_hosts)."""
    match = _URL.fullmatch(url)
    if match is None:
        raise InputError(
            f'{where}: {url[:80]!r} is not a base URL of the form "http://127.0.0.1:8080": '
            "http, an IPv4 address, a port, no path (the workloads' paths are added to it)"
        )
    try:
        address = ipaddress.IPv4Address(match.group("host"))
    except ValueError:
        raise InputError(f"{where}: {match.group('host')!r} is not an IPv4 address") from None
    port = int(match.group("port"))
    if not 1 <= port <= 65535:
        raise InputError(f"{where}: port {port} is not between 1 and 65535")
    if remote and address.is_loopback:
        raise InputError(
            f"{where}: {address} is a loopback address, which the loaders on other hosts "
            "cannot reach: on a multi-host run, give the address of [placement] server_host, "
            "where the server runs"
        )
    if not remote and not address.is_loopback:
        raise InputError(
            f"{where}: {address} is not a loopback address: an external server must run on "
            "this machine, where stackbench can see its processes; give its 127.0.0.1 "
            "address (or run it on the server host of a multi-host run: [placement] "
            "server_host, with its address in the url)"
        )
    return str(address), port


def _workloads(where: str, names: list[str], endpoints: frozenset[str]) -> tuple[str, ...]:
    """The suite's own endpoints, and catalog workloads without data services: those an
    external server cannot be handed (their addresses and per-start passwords belong to the
    stacks stackbench starts)."""
    for name in names:
        if name in endpoints:
            continue
        if name not in CATALOG:
            known = ", ".join([*sorted(endpoints), *CATALOG])
            raise InputError(f"{where}: unknown workload {name!r} (known: {known})")
        if CATALOG[name].services:
            raise InputError(
                f"{where}: {name!r} needs {', '.join(CATALOG[name].services)}, which "
                "stackbench starts privately for the stacks it runs; an external server "
                "serves only workloads without data services"
            )
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"{where}: {twice[0]!r} is listed twice")
    return tuple(names)
