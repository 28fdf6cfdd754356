"""Is a stack runnable here? Resolve each requirement of its manifest to a command path.

A stack whose requirement is missing is reported unavailable with the reason and the install
hint, never silently skipped.
"""

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

from stackbench.config.manifest import Manifest, Requirement
from stackbench.config.status import Availability, StackStatus

# php-fpm, apache2 and mariadbd live in sbin, which a normal user's PATH may not include.
_EXTRA_DIRS = ("/usr/sbin", "/usr/local/sbin", "/sbin")
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Debian's mvn -v colours its output even in a pipe


def find_command(candidate: str) -> str | None:
    """A command name, an absolute path, or an absolute glob (newest match first)."""
    if candidate.startswith("/"):
        matches = sorted(glob.glob(candidate), reverse=True)
        return next((m for m in matches if os.access(m, os.X_OK)), None)
    found = shutil.which(candidate)
    if found:
        return found
    for directory in _EXTRA_DIRS:
        path = Path(directory) / candidate
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def version_tuple(text: str) -> tuple[int, ...] | None:
    match = _VERSION.search(text)
    if not match:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


def command_version(path: str, args: tuple[str, ...]) -> str:
    try:
        out = subprocess.run([path, *args], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    text = _ANSI.sub("", out.stdout + out.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


def _check_requirement(req: Requirement) -> tuple[str | None, str | None, str]:
    """(path, version, problem) — problem is empty when the requirement holds."""
    if req.check:
        exe = find_command(req.check[0])
        if exe is None:
            return None, None, f"'{req.check[0]}' (needed to check {req.name}) not found"
        try:
            done = subprocess.run(
                [exe, *req.check[1:]], capture_output=True, timeout=20, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, None, f"check for {req.name} could not run: {exc}"
        if done.returncode != 0:
            return None, None, f"{req.name} not present (check '{' '.join(req.check)}' failed)"
        if not req.commands:
            return exe, None, ""
    path = next((p for p in map(find_command, req.commands) if p), None)
    if path is None:
        return None, None, f"{req.name} not found (looked for {', '.join(req.commands)})"
    version = command_version(path, req.version_args) if req.version_args else None
    if req.min_version:
        have = version_tuple(version or "")
        need = version_tuple(req.min_version)
        if have is None or need is None or have < need:
            return path, version, f"{req.name} {version} is older than {req.min_version}"
    return path, version, ""


def check_stack(manifest: Manifest) -> StackStatus:
    commands: dict[str, str] = {}
    versions: dict[str, str] = {}
    for req in manifest.requires:
        path, version, problem = _check_requirement(req)
        if problem:
            return StackStatus(
                manifest.name, Availability.UNAVAILABLE, problem, req.hint, commands, versions
            )
        if path:
            commands[req.name] = path
        if version:
            versions[req.name] = version
    return StackStatus(manifest.name, Availability.AVAILABLE, "", "", commands, versions)
