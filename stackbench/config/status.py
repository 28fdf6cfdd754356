"""What is known about a stack before it runs: its manifest and whether it can run here."""

import enum
from dataclasses import dataclass, field

from stackbench.config.manifest import Manifest


class Availability(enum.Enum):
    AVAILABLE = "available"
    UNAVAILABLE = "unavailable"


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
    manifest: Manifest
    status: StackStatus


def unavailable_reason(entry: StackEntry) -> str:
    s = entry.status
    if s.availability is Availability.AVAILABLE:
        return ""
    return f"{s.reason}; install: {s.hint}" if s.hint else s.reason
