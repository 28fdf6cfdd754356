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


def _probe(argv: tuple[str, ...]) -> subprocess.CompletedProcess[str] | Exception:
    """A version or check command's result, or why it could not run."""
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return exc


class Probes:
    """The version and check commands of one look at the stacks, each run once: stacks share
    their tools (three run Node, three PHP, two Java and Maven), and `mvn -v` alone starts a
    JVM. A new look (a new Probes) runs them again, so a tool installed since is seen."""

    def __init__(self) -> None:
        self._done: dict[tuple[str, ...], subprocess.CompletedProcess[str] | Exception] = {}

    def run(self, argv: tuple[str, ...]) -> subprocess.CompletedProcess[str] | Exception:
        if argv not in self._done:
            self._done[argv] = _probe(argv)
        return self._done[argv]


def _version_text(done: subprocess.CompletedProcess[str] | Exception) -> str:
    if isinstance(done, Exception):
        return f"unknown ({done})"
    text = _ANSI.sub("", done.stdout + done.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


def command_version(path: str, args: tuple[str, ...]) -> str:
    return _version_text(_probe((path, *args)))


def _check_requirement(req: Requirement, probes: Probes) -> tuple[str | None, str | None, str]:
    """(path, version, problem) — problem is empty when the requirement holds."""
    if req.check:
        exe = find_command(req.check[0])
        if exe is None:
            return None, None, f"'{req.check[0]}' (needed to check {req.name}) not found"
        done = probes.run((exe, *req.check[1:]))
        if isinstance(done, Exception):
            return None, None, f"check for {req.name} could not run: {done}"
        if done.returncode != 0:
            return None, None, f"{req.name} not present (check '{' '.join(req.check)}' failed)"
        if not req.commands:
            return exe, None, ""
    path = next((p for p in map(find_command, req.commands) if p), None)
    if path is None:
        return None, None, f"{req.name} not found (looked for {', '.join(req.commands)})"
    version = _version_text(probes.run((path, *req.version_args))) if req.version_args else None
    if req.min_version:
        have = version_tuple(version or "")
        need = version_tuple(req.min_version)
        if have is None or need is None or have < need:
            return path, version, f"{req.name} {version} is older than {req.min_version}"
    return path, version, ""


def check_stack(manifest: Manifest, probes: Probes | None = None) -> StackStatus:
    """Whether the stack runs here; `probes` shares the tools' answers between the stacks of
    one look (a new one by default)."""
    probes = probes or Probes()
    commands: dict[str, str] = {}
    versions: dict[str, str] = {}
    for req in manifest.requires:
        path, version, problem = _check_requirement(req, probes)
        if problem:
            return StackStatus(
                manifest.name, Availability.UNAVAILABLE, problem, req.hint, commands, versions
            )
        if path:
            commands[req.name] = path
        if version:
            versions[req.name] = version
    return StackStatus(manifest.name, Availability.AVAILABLE, "", "", commands, versions)
