"""CPU placement: which cores the server, its services and the loader may use.

On a 2-core machine the default puts the server (and its services) on one core and the
loader on the other, so the loader never steals the server's CPU. With one core both share
it, and the report says so.
"""

import os
from dataclasses import dataclass

from stackbench.errors import InputError

# The usage pseudo-role of everything else that ran on a level's cores (lab.monitor measures
# it; the judge flags a level it disturbed; the reports show it beside the stack's roles).
OTHER_ROLE = "other processes"


@dataclass(frozen=True)
class Placement:
    server: frozenset[int]
    loader: frozenset[int]
    services: frozenset[int]
    # Other hosts (names of the suite's [hosts] or --hosts FILE): the server and its services
    # on `server_host`, one loader on each of `loader_hosts`. None / empty: this machine.
    server_host: str | None = None
    loader_hosts: tuple[str, ...] = ()
    # The data services on a host of their own (None: with the server), reached by the stack
    # over the network; memcached, which has no authentication, only if the suite accepts that.
    services_host: str | None = None
    memcached_on_network: bool = False

    @property
    def shared(self) -> bool:
        """The server and the loader compete for the same cores."""
        if self.server_host is not None or self.loader_hosts:
            return self.server_host in self.loader_hosts and bool(self.server & self.loader)
        return bool(self.server & self.loader)

    @property
    def remote(self) -> bool:
        return self.server_host is not None or bool(self.loader_hosts)

    @property
    def separate_services_host(self) -> str | None:
        """The services' host when it is not the server's; None: they run with the server."""
        return None if self.services_host == self.server_host else self.services_host

    @property
    def services_apart(self) -> bool:
        """The services run on a host other than the server's."""
        return self.separate_services_host is not None

    def hosts(self) -> tuple[str, ...]:
        """Every host the run reaches over SSH, the server's first."""
        first = (self.server_host,) if self.server_host else ()
        services = (self.services_host,) if self.services_host else ()
        return tuple(dict.fromkeys((*first, *services, *self.loader_hosts)))


LOADER_ON_SERVER = "server"


def allowed_cpus() -> frozenset[int]:
    return frozenset(os.sched_getaffinity(0))


def parse_cpu_list(text: str, where: str) -> frozenset[int]:
    """'0', '0,2', '0-3', '0-1,4'."""
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = part.split("-", 1)
                cpus.update(range(int(lo), int(hi) + 1))
            elif part:
                cpus.add(int(part))
    except ValueError as exc:
        raise InputError(f"{where}: '{text}' is not a CPU list like '0', '0,2' or '0-3'") from exc
    if not cpus:
        raise InputError(f"{where}: empty CPU list")
    return frozenset(cpus)


def format_cpus(cpus: frozenset[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def default_placement(cpus: frozenset[int] | None = None) -> Placement:
    cpus = cpus or allowed_cpus()
    ordered = sorted(cpus)
    if len(ordered) == 1:
        one = frozenset(ordered)
        return Placement(one, one, one)
    half = max(1, len(ordered) // 2)
    server = frozenset(ordered[:half])
    loader = frozenset(ordered[half:])
    return Placement(server, loader, server)


def make_placement(
    server: str | None,
    loader: str | None,
    services: str | None,
    where: str,
    server_host: str | None = None,
    loader_hosts: tuple[str, ...] = (),
    services_host: str | None = None,
    memcached_on_network: bool = False,
) -> Placement:
    default = default_placement()
    allowed = allowed_cpus()
    server_cpus = parse_cpu_list(server, f"{where} server_cpus") if server else default.server
    chosen = Placement(
        server_cpus,
        # "server": the loader on the server's own cores, as an article whose load tool ran
        # on its one-core server (the plan and the reports say they share).
        server_cpus
        if loader == LOADER_ON_SERVER
        else parse_cpu_list(loader, f"{where} loader_cpus")
        if loader
        else default.loader,
        parse_cpu_list(services, f"{where} services_cpus")
        if services
        else (parse_cpu_list(server, f"{where} server_cpus") if server else default.services),
        server_host,
        loader_hosts,
        services_host,
        memcached_on_network,
    )
    if loader_hosts and server_host is None:
        raise InputError(
            f"{where} loader_hosts: loaders on other hosts cannot reach a server "
            "on this machine's loopback; set server_host too"
        )
    if services_host is not None and server_host is None:
        raise InputError(
            f"{where} services_host: services on another host are reached over "
            "the network by a server on another host; set server_host too"
        )
    if memcached_on_network and not chosen.services_apart:
        raise InputError(
            f"{where} memcached_on_network: only means something with the "
            "services on a host of their own (services_host other than "
            "server_host); remove it"
        )
    if len(set(loader_hosts)) != len(loader_hosts):
        raise InputError(f"{where} loader_hosts: a host is listed twice")
    on_other_host = {
        "server": server_host is not None,
        "services": server_host is not None or services_host is not None,
        "loader": bool(loader_hosts),
    }
    for name, group in (
        ("server", chosen.server),
        ("loader", chosen.loader),
        ("services", chosen.services),
    ):
        if on_other_host[name]:
            continue  # that host's agent checks them against its own cores
        if not group <= allowed:
            raise InputError(
                f"{where} {name}_cpus: CPUs {format_cpus(group - allowed)} are not "
                f"available here (allowed: {format_cpus(allowed)})"
            )
    return chosen


# --- the server measured on several core counts ([placement] server_cores = [1, 2]) ----------
MAX_CORE_COUNTS = 8


@dataclass(frozen=True)
class CoreCount:
    """One of the suite's server core counts, and where everything runs at it."""

    cores: int
    placement: Placement


def count_name(stack: str, cores: int) -> str:
    """The name a stack is planned, stored and reported under at one core count."""
    return f"{stack}.{cores}c"


def core_counts(
    counts: list[int], loader: str | None, where: str, allowed: frozenset[int] | None = None
) -> tuple[CoreCount, ...]:
    """The placement of each count, fewest cores first: the server on the first k cores, its
    services on the fewest count's (they start once for the run), the loader on the cores
    beyond the largest count when there are any (the same loader at every count), else on
    those beyond k, else on the server's own (shared: the plan and the report say so)."""
    allowed = allowed or allowed_cpus()
    cpus = sorted(allowed)
    key = f"{where} key 'server_cores'"
    if len(set(counts)) != len(counts):
        raise InputError(f"{key}: a core count is listed twice ({counts})")
    too_many = [k for k in counts if k > len(cpus)]
    if too_many:
        raise InputError(
            f"{key}: {too_many[0]} server cores asked, but this machine allows "
            f"{len(cpus)} ({format_cpus(allowed)}); give counts of at most {len(cpus)}"
        )
    ordered = sorted(counts)
    services = frozenset(cpus[: ordered[0]])
    spare = frozenset(cpus[ordered[-1] :])
    given = _given_loader(loader, where, allowed)
    out = []
    for k in ordered:
        server = frozenset(cpus[:k])
        if loader == LOADER_ON_SERVER:
            chosen = server
        else:
            chosen = given or spare or frozenset(cpus[k:]) or server
        out.append(CoreCount(k, Placement(server, chosen, services)))
    return tuple(out)


def _given_loader(loader: str | None, where: str, allowed: frozenset[int]) -> frozenset[int]:
    """The suite's own loader_cpus (empty: none given, or "server")."""
    if not loader or loader == LOADER_ON_SERVER:
        return frozenset()
    cpus = parse_cpu_list(loader, f"{where} loader_cpus")
    if not cpus <= allowed:
        raise InputError(
            f"{where} loader_cpus: CPUs {format_cpus(cpus - allowed)} are not available "
            f"here (allowed: {format_cpus(allowed)})"
        )
    return cpus
