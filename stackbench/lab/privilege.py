"""Who the servers run as: never root.

stackbench itself runs as root (it installs packages, raises limits, pins CPUs), but no stack
or service process needs a privilege: every port is above 1024 and every file they write lies
in their own run directory. So when stackbench is root, each stack process (nginx, php-fpm,
Apache, Node, Java, Go, C++, Rust, Swoole) and each service (mariadbd, redis-server,
memcached) is started directly as the unprivileged system user `stackbench` (created by
scripts/install-system.sh), with no supplementary groups; nothing is started as root and
dropped later. When stackbench runs as a normal user, the processes simply run as that user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from stackbench.errors import EnvironmentProblem

STACK_USER = "stackbench"
# Another unprivileged account may be chosen (e.g. nobody) where adding one is not wanted.
STACK_USER_ENV = "STACKBENCH_USER"
_CHECK_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class RunAs:
    """The unprivileged account a child process switches to before exec."""

    name: str
    uid: int
    gid: int

    @property
    def owner(self) -> tuple[int, int]:
        return (self.uid, self.gid)


def stack_user() -> RunAs | None:
    """The account servers run as, or None when stackbench is not root (they run as us)."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get(STACK_USER_ENV) or STACK_USER
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise EnvironmentProblem(
            f"stackbench runs as root but the unprivileged user '{name}' that servers run as "
            "does not exist; create it with scripts/install-system.sh (or: make setup), i.e. "
            f"useradd --system --user-group --no-create-home --shell /usr/sbin/nologin {name}"
        ) from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise EnvironmentProblem(
            f"user '{name}' has uid {entry.pw_uid} / gid {entry.pw_gid}: servers must not run "
            f"with root's ids; give it its own ids or set {STACK_USER_ENV} to another account"
        )
    return RunAs(name, entry.pw_uid, entry.pw_gid)


def drop_to(run_as: RunAs) -> None:
    """In a child between fork and exec: become run_as for good (real, effective, saved).

    The order matters: groups and gid first, while we still may change them.
    """
    os.setgroups([])
    os.setgid(run_as.gid)
    os.setuid(run_as.uid)


def can_enter(info: os.stat_result, run_as: RunAs) -> bool:
    """Whether run_as may search a directory with this stat (owner, group, other bits).

    POSIX ACLs are not consulted; a directory that an ACL opens still counts as closed.
    """
    if info.st_uid == run_as.uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == run_as.gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def unreadable(
    run_as: RunAs, paths: Iterable[Path], executables: Iterable[Path] = ()
) -> list[Path]:
    """The paths run_as cannot read (directories: read and enter) or, for executables, run;
    asked as that user.

    Each check runs `test` as run_as, so permissions, ACLs and every parent directory count
    exactly as they will for the server.
    """
    test = shutil.which("test") or "/usr/bin/test"
    checks = [
        (path, ["-r", str(path), "-a", "-x", str(path)] if path.is_dir() else ["-r", str(path)])
        for path in paths
    ]
    checks += [(path, ["-x", str(path)]) for path in executables]
    missing: list[Path] = []
    for path, condition in checks:
        done = subprocess.run(
            [test, *condition],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lambda: drop_to(run_as),
            timeout=_CHECK_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            missing.append(path)
    return missing


def server_environment(
    env: Mapping[str, str], run_as: RunAs | None, run_dir: Path
) -> dict[str, str]:
    """env for a server running as run_as: HOME and TMPDIR in its run dir, its own names.

    Root's HOME (/root) is neither readable nor writable for the stack user; runtimes that
    look for a home or a temp dir (npm, the JVM, Go) find one they own, inside the run dir.
    """
    result = dict(env)
    if run_as is not None:
        result.update(
            {
                "HOME": str(run_dir / "home"),
                "TMPDIR": str(run_dir / "tmp"),
                "USER": run_as.name,
                "LOGNAME": run_as.name,
            }
        )
    return result
