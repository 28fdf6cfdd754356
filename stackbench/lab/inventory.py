"""All stacks on disk with their availability, parsed once."""

from pathlib import Path

from stackbench.config.manifest import Manifest, discover, parse_manifest
from stackbench.config.paths import STACKS_DIR
from stackbench.config.status import StackEntry
from stackbench.errors import InputError
from stackbench.lab.availability import check_stack


def load_manifests(stacks_dir: Path = STACKS_DIR) -> dict[str, Manifest]:
    return {name: parse_manifest(path) for name, path in discover(stacks_dir).items()}


def load_inventory(names: list[str] | None = None,
                   stacks_dir: Path = STACKS_DIR) -> dict[str, StackEntry]:
    manifests = load_manifests(stacks_dir)
    if names is not None:
        unknown = [n for n in names if n not in manifests]
        if unknown:
            raise InputError(f"unknown stack '{unknown[0]}' (stacks: {', '.join(manifests)})")
        manifests = {n: manifests[n] for n in names}
    return {n: StackEntry(m, check_stack(m)) for n, m in manifests.items()}


