"""Environment snapshot stored with every run: hardware, kernel, tunables, tool versions."""

import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path

from stackbench import __version__
from stackbench.config.paths import REPO_ROOT, loadgen_binary
from stackbench.lab.availability import command_version, find_command
from stackbench.lab.cpufeatures import crypto_flags, this_cpu_flags

# (label, command candidates, version arguments)
TOOLS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("php", ("php",), ("-v",)),
    ("php-fpm", ("php-fpm8.3", "php-fpm8.2", "php-fpm"), ("-v",)),
    ("nginx", ("nginx",), ("-v",)),
    ("apache2", ("apache2", "httpd"), ("-v",)),
    ("node", ("node",), ("--version",)),
    ("go", ("go",), ("version",)),
    ("java", ("java",), ("-version",)),
    ("java-newest", ("/usr/lib/jvm/*/bin/java",), ("-version",)),
    ("rustc", ("rustc",), ("--version",)),
    ("g++", ("g++",), ("--version",)),
    ("mariadb", ("mariadbd", "mysqld"), ("--version",)),
    ("redis", ("redis-server",), ("--version",)),
    ("memcached", ("memcached",), ("-V",)),
    ("wrk", ("wrk",), ("-v",)),
    ("ab", ("ab",), ("-V",)),
)


def read_text(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_model() -> str:
    for line in (read_text("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def governor() -> str | None:
    return read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")


def git_revision() -> str | None:
    """stackbench's own checkout: `git describe --always --dirty`."""
    return _git(REPO_ROOT, "describe", "--always", "--dirty") or None


def _git(folder: Path, *args: str) -> str | None:
    """A git command's output in `folder` (None: git missing, failed or not a work tree)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def folder_revision(folder: Path) -> str | None:
    """The commit a stack folder's git work tree is at (12 hex digits), with "-dirty" when a
    file under the folder differs from it or is untracked; None outside a work tree."""
    commit = _git(folder, "rev-parse", "--short=12", "HEAD")
    if not commit:
        return None
    changed = _git(folder, "status", "--porcelain", "--", ".")
    return commit + ("-dirty" if changed else "")


def stack_revisions(folders: Mapping[str, Path]) -> dict[str, str]:
    """The revision of each stack folder that is in a git work tree."""
    found = {name: folder_revision(folder) for name, folder in folders.items()}
    return {name: rev for name, rev in found.items() if rev}


def tool_versions() -> dict[str, str]:
    versions = {}
    for label, candidates, args in TOOLS:
        path = next((p for p in map(find_command, candidates) if p), None)
        if path:
            versions[label] = command_version(path, args)
    binary = loadgen_binary()
    if binary.exists():
        versions["stackbench-load"] = command_version(str(binary), ("--version",))
    return versions


def snapshot() -> dict[str, object]:
    uname = platform.uname()
    return {
        "hostname": uname.node,
        "cpu_model": cpu_model(),
        "cpu_crypto": crypto_flags(this_cpu_flags()),
        "cores": os.cpu_count(),
        "cores_allowed": sorted(os.sched_getaffinity(0)),
        "memory_total_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
        "kernel": uname.release,
        "os": read_text("/etc/debian_version")
        and f"Debian {read_text('/etc/debian_version')}"
        or platform.platform(),
        "governor": governor(),
        "somaxconn": read_text("/proc/sys/net/core/somaxconn"),
        "ip_local_port_range": read_text("/proc/sys/net/ipv4/ip_local_port_range"),
        "tcp_tw_reuse": read_text("/proc/sys/net/ipv4/tcp_tw_reuse"),
        "python": platform.python_version(),
        "stackbench": __version__,
        "git_rev": git_revision(),
        "versions": tool_versions(),
    }
