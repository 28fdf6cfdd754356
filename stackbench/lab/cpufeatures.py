"""The CPU's instruction-set flags, and the departures from an article they cause.

A hashing workload measures the hash instructions as much as the runtime: a CPU with SHA
instructions lets Go, Node and Java hash in hardware while PHP 8.2 hashes in C. The plan and
the report say so (config/deviations.py `hashing_deviation`).
"""

import dataclasses
from pathlib import Path

from stackbench.config.deviations import hashing_deviation
from stackbench.config.suite import Suite


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The flags of the first processor in a /proc/cpuinfo text: x86's `flags`, ARM's
    `Features` (empty when neither is there)."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def this_cpu_flags() -> frozenset[str]:
    try:
        return cpu_flags(Path("/proc/cpuinfo").read_text())
    except OSError:
        return frozenset()


def crypto_flags(flags: frozenset[str]) -> str:
    """The hashing and AES flags present, for the machine facts ('sha_ni, aes' or 'none')."""
    shown = sorted(flags & {"sha_ni", "sha2", "aes", "pmull", "vaes"})
    return ", ".join(shown) or "none"


def with_machine_deviations(suite: Suite, flags: frozenset[str] | None = None) -> Suite:
    """The suite with the departures this machine's CPU causes, for an article suite whose
    server runs here (a server host of a multi-host run has CPU flags of its own, which this
    machine cannot read)."""
    if not suite.is_article_suite or suite.placement.server_host is not None:
        return suite
    found = hashing_deviation(
        (s.name for s in suite.workloads), this_cpu_flags() if flags is None else flags
    )
    if found is None:
        return suite
    return dataclasses.replace(suite, machine_deviations=(found,))
