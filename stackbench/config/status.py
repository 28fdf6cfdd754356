"""What is known about a stack before it runs: its manifest and whether it can run here."""

import enum
from dataclasses import dataclass, field

from stackbench.config.manifest import Manifest
from stackbench.errors import InputError


class Availability(enum.Enum):
    AVAILABLE = "available"
    UNAVAILABLE = "unavailable"  # a requirement is missing on this machine
    INVALID = "invalid"  # its stack.toml cannot be parsed: only this stack is out


@dataclass(frozen=True)
class StackStatus:
    name: str
    availability: Availability
    reason: str = ""
    hint: str = ""
    commands: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def available(self) -> bool:
        return self.availability is Availability.AVAILABLE


@dataclass(frozen=True)
class StackEntry:
    """One stack folder. A broken stack.toml gives an INVALID entry without a manifest, so one
    broken stack does not stop every command; using that stack raises the parse error."""

    parsed: Manifest | None
    status: StackStatus

    @property
    def manifest(self) -> Manifest:
        if self.parsed is None:
            raise InputError(self.status.reason)
        return self.parsed


def unavailable_reason(entry: StackEntry) -> str:
    s = entry.status
    if s.availability is Availability.AVAILABLE:
        return ""
    return f"{s.reason}; install: {s.hint}" if s.hint else s.reason
