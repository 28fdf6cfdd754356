"""Build a stack once per change of its sources.

The cache key hashes the manifest, the build command and every input file, so editing a
source rebuilds and nothing else does. The output directory is keyed by that hash; a failed
build leaves no marker, so the next run tries again.

Builds run as the invoking user (they use its npm/Maven/Go/Cargo caches) with umask 022, so
everything they write (the build directory, node_modules) is readable by the unprivileged
user the servers run as. The output directory is checked to lie inside the build cache
before it is removed or created.
"""

import hashlib
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from stackbench.config.manifest import Manifest
from stackbench.config.paths import build_cache_dir
from stackbench.errors import BuildError
from stackbench.lab import fs
from stackbench.lab.procs import tail
from stackbench.lab.templating import render


def input_hash(manifest: Manifest) -> str:
    h = hashlib.sha256()
    h.update(manifest.path.read_bytes())
    stack_dir = manifest.stack_dir
    patterns = manifest.build.inputs if manifest.build else ()
    files: set[Path] = set()
    for pattern in patterns:
        files.update(p for p in stack_dir.glob(pattern) if p.is_file())
    for path in sorted(files):
        if "node_modules" in path.parts or "target" in path.parts:
            continue
        h.update(os.path.relpath(path, stack_dir).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def build_dir_for(manifest: Manifest) -> Path:
    return build_cache_dir() / manifest.name / input_hash(manifest)


def ensure_built(manifest: Manifest, variables: Mapping[str, str], env: Mapping[str, str]) -> Path:
    """Build if needed; returns the build directory. Raises BuildError with the log tail."""
    cache = build_cache_dir()
    out = Path(variables["build_dir"])
    fs.checked(out, cache, "build into")
    marker = out / ".stackbench-built"
    if manifest.build is None or (marker.exists() and not missing_outputs(manifest)):
        fs.safe_mkdir(out, cache)
        return out
    fs.safe_rmtree(out, cache)
    fs.safe_mkdir(out, cache)
    log = out.parent / f"{out.name}.build.log"
    fs.checked(log, cache, "write the build log")
    where = f"{manifest.path} [build]"
    command = [render(arg, variables, where) for arg in manifest.build.command]
    with open(log, "wb") as log_file:
        try:
            done = subprocess.run(
                command,
                cwd=manifest.stack_dir,
                env=dict(env),
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_readable_outputs,
                timeout=1800,
                check=False,
            )
        except FileNotFoundError as exc:
            raise BuildError(f"{manifest.name}: build command not found: {command[0]}") from exc
        except subprocess.TimeoutExpired as exc:
            raise BuildError(f"{manifest.name}: build timed out after 30 min; log {log}") from exc
    if done.returncode != 0:
        raise BuildError(
            f"{manifest.name}: build failed (exit {done.returncode}): "
            f"{' '.join(command)}\n--- last lines of {log}:\n{tail(log)}"
        )
    marker.write_text(" ".join(command))
    return out


def missing_outputs(manifest: Manifest) -> list[str]:
    """The build's outputs beside the sources ([build] outputs) that are not there."""
    outputs = manifest.build.outputs if manifest.build else ()
    return [o for o in outputs if not (manifest.stack_dir / o).exists()]


def _readable_outputs() -> None:
    """In the build process: files it creates are readable (not writable) by everyone."""
    os.umask(0o022)
