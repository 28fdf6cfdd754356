"""Where an article suite departs from its article: one line each (the setting, the article's
value, ours, why), declared in the suite file (`[[deviation]]`) or derived from its placement
(where the article's loader ran against where ours runs). The plan prints them, the run
stores them, the reports show them.
"""

from collections.abc import Iterable
from typing import Annotated, Literal

import msgspec

from stackbench.config.placement import Placement

Line = Annotated[str, msgspec.Meta(min_length=1, max_length=400)]
# Where the article's load tool ran: on the server's own cores (article 000's wrk on its one
# core), on other cores of the same machine, or on a second machine.
ArticleLoader = Literal["server-cores", "other-cores", "other-host"]


class Deviation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    setting: Annotated[str, msgspec.Meta(min_length=1, max_length=80)]
    article: Line
    ours: Line
    why: Line

    def sentence(self) -> str:
        return deviation_sentence(self.setting, self.article, self.ours, self.why)


def deviation_sentence(setting: str, article: str, ours: str, why: str) -> str:
    """One line: 'loader placement: the article ran ...; here ... (why)'."""
    return f"{setting}: the article {article}; here {ours} ({why})"


def loader_deviation(article: ArticleLoader | None, placement: Placement) -> Deviation | None:
    """The loader's placement against the article's (None: the same, or the article does not
    say)."""
    if article is None:
        return None
    ours = _loader_place(placement)
    if ours == article:
        return None
    said = {
        "server-cores": "ran its load tool on the server's own cores",
        "other-cores": "ran its load tool on other cores of the server's machine",
        "other-host": "ran its load tool on a second machine",
    }[article]
    where = {
        "server-cores": "the loader shares the server's cores",
        "other-cores": "the loader runs on cores of its own on this machine",
        "other-host": "the loader runs on another host",
    }[ours]
    if article == "other-host":
        why = (
            "one machine by default, on separate cores so that the loader takes no CPU from "
            "the server; the multi-host placement ([placement] server_host and "
            "loader_hosts, docs/multi-host.md) reproduces the article's two machines"
        )
    elif article == "server-cores":
        why = (
            'the suite\'s placement; [placement] loader_cpus = "server" reproduces the '
            "article, where the loader competes with the server for its core"
        )
    else:
        why = "the suite's placement"
    return Deviation("loader placement", said, where, why)


def _loader_place(placement: Placement) -> ArticleLoader:
    if placement.loader_hosts and placement.server_host not in placement.loader_hosts:
        return "other-host"
    return "server-cores" if placement.shared else "other-cores"


# The CPU flags (Linux's /proc/cpuinfo names) of the instructions that hash SHA-256 in
# hardware: x86's SHA extensions and ARMv8's SHA2 instructions.
SHA_FLAGS = frozenset({"sha_ni", "sha2"})
# The workloads whose cost is mostly SHA-256 hashing.
HASHING_WORKLOADS = frozenset({"sha256"})


def hashing_deviation(workload_names: Iterable[str], cpu_flags: frozenset[str]) -> Deviation | None:
    """A line when this CPU hashes SHA-256 in hardware and the suite hashes: then the runtimes
    that use those instructions (Go, Node's OpenSSL, Java's intrinsics) gain on the one that
    does not (PHP 8.2's hash() is portable C), whatever the I/O model. None otherwise."""
    hashing = sorted(HASHING_WORKLOADS.intersection(workload_names))
    present = sorted(SHA_FLAGS & cpu_flags)
    if not hashing or not present:
        return None
    return Deviation(
        "CPU SHA-256 instructions",
        "does not name its CPU; most CPUs of its time had no SHA instructions",
        f"this CPU has them ({', '.join(present)}): Go, Node (OpenSSL) and Java (intrinsics) "
        "hash with them, PHP 8.2's hash() is portable C and does not",
        f"the machine's hardware; it can decide a ranking on {', '.join(hashing)} by the "
        "instructions each runtime uses rather than by the I/O model the article argues from",
    )
