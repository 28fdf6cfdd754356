"""All stacks on disk with their availability, parsed once.

A stack whose stack.toml is broken is listed as INVALID with the parse error as its reason:
the other stacks stay usable, and `stackbench stacks` shows what to fix.
"""

from collections.abc import Mapping
from pathlib import Path

from stackbench.config.manifest import Manifest, discover, parse_manifest
from stackbench.config.paths import STACKS_DIR
from stackbench.config.status import Availability, StackEntry, StackStatus
from stackbench.errors import InputError
from stackbench.lab.availability import Probes, check_stack


def load_manifests(stacks_dir: Path = STACKS_DIR) -> dict[str, Manifest | InputError]:
    """Each stack's manifest, or the InputError that says why it cannot be read."""
    out: dict[str, Manifest | InputError] = {}
    for name, path in discover(stacks_dir).items():
        try:
            out[name] = parse_manifest(path)
        except InputError as exc:
            out[name] = exc
    return out


def _entry(name: str, manifest: Manifest | InputError, probes: Probes) -> StackEntry:
    if isinstance(manifest, InputError):
        return StackEntry(None, StackStatus(name, Availability.INVALID, str(manifest)))
    return StackEntry(manifest, check_stack(manifest, probes))


def load_inventory(
    names: list[str] | None = None,
    stacks_dir: Path = STACKS_DIR,
    own: Mapping[str, Manifest] | None = None,
) -> dict[str, StackEntry]:
    """The catalog's stacks, and `own`: the user's stacks, as a suite read them."""
    manifests: dict[str, Manifest | InputError] = {**load_manifests(stacks_dir), **(own or {})}
    if names is not None:
        unknown = [n for n in names if n not in manifests]
        if unknown:
            raise InputError(f"unknown stack {unknown[0]!r} (stacks: {', '.join(manifests)})")
        manifests = {n: manifests[n] for n in names}
    probes = Probes()  # each tool's version asked once, not once per stack that uses it
    return {n: _entry(n, m, probes) for n, m in manifests.items()}
