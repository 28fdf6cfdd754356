"""Every path stackbench creates, writes or removes goes through here, checked first.

stackbench runs as root and builds paths from names it was given (stack, variant, workload),
so a name like `../../etc` or a symlink planted in a run directory must never make it touch
anything outside the directory it owns. Each function takes the *root* the path must lie in:
the path is resolved (symlinks followed, `..` collapsed) and refused unless it is inside.

Files are created with O_NOFOLLOW and O_EXCL where stackbench writes into a directory that an
unprivileged stack process can also write: a symlink left there cannot redirect root's write.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from stackbench.errors import EnvironmentProblem, InputError

_WRITE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def inside(root: Path, path: Path) -> bool:
    """True if path, once resolved, is root itself or lies below it (root resolved too)."""
    real_root = Path(root).resolve()
    real = Path(path).resolve()
    return real == real_root or real_root in real.parents


def strictly_inside(root: Path, path: Path) -> bool:
    """True if path, once resolved, lies below root (and is not root itself)."""
    return inside(root, path) and Path(path).resolve() != Path(root).resolve()


def checked(path: Path, root: Path, action: str) -> Path:
    """The resolved path, or InputError if it is not strictly inside root.

    A path with a `..` component is refused even when it would resolve inside root: it only
    ever comes from a name that was not checked, and the message should say so.
    """
    path = Path(path)
    if ".." in path.parts:
        raise InputError(
            f"refusing to {action} {path}: the path contains '..' "
            "(a stack, variant or workload name must be a plain name)"
        )
    if not strictly_inside(root, path):
        raise InputError(
            f"refusing to {action} {path}: it resolves to {path.resolve()}, "
            f"which is outside {Path(root).resolve()} (a symlink or a bad name?)"
        )
    return path.resolve()


def safe_rmtree(path: Path, root: Path) -> None:
    """Remove the directory tree at path, which must lie strictly inside root.

    A missing path is fine. A path that is itself a symlink is refused rather than followed;
    symlinks inside the tree are removed, never followed (shutil.rmtree's fd-based walk).
    """
    path = Path(path)
    if path.is_symlink():
        raise InputError(f"refusing to remove {path}: it is a symlink to {path.resolve()}")
    if not path.exists():
        return
    real = checked(path, root, "remove")
    if not real.is_dir():
        raise InputError(f"refusing to remove {real}: it is not a directory")
    shutil.rmtree(real)


def safe_mkdir(
    path: Path, root: Path, owner: tuple[int, int] | None = None, mode: int = 0o755
) -> Path:
    """Create the directory path (and missing parents below root), strictly inside root.

    owner = (uid, gid) hands the new directories to that account (the stack user), so the
    unprivileged processes can write there and nowhere else. Returns the resolved path.
    """
    real = checked(path, root, "create")
    real_root = Path(root).resolve()
    missing = [d for d in [real, *real.parents] if not d.exists() and real_root in d.parents]
    real.mkdir(mode=mode, parents=True, exist_ok=True)
    for directory in reversed(missing):
        # mkdir applies the umask; chmod sets exactly what was asked for.
        os.chmod(directory, mode)
        if owner is not None:
            os.chown(directory, *owner)
    if owner is not None and not missing:
        os.chown(real, *owner)
    return real


def write_new_file(path: Path, root: Path, text: str, mode: int = 0o644) -> Path:
    """Write text to a file that must not exist yet (no symlink followed), inside root."""
    real = checked(path, root, "write")
    fd = os.open(real, _WRITE_NEW, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return real


def open_log(path: Path) -> int:
    """A file descriptor appending to the log at path; a symlink there is refused (ELOOP)."""
    return os.open(path, _APPEND, 0o644)


def copy_log(src: Path, dest_dir: Path) -> Path | None:
    """Copy one log file into dest_dir; None (nothing copied) unless src is a regular file.

    Log files live in directories the stack user can write: a symlink named like a log must
    not make root copy /etc/shadow into the results. The source is opened without following
    symlinks and checked to be a regular file before a byte is read.
    """
    try:
        fd = os.open(src, _READ | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            return None
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / Path(src).name
        with open(dest, "wb") as out:
            shutil.copyfileobj(source, out)
    return dest


def _regular_tail(path: Path, max_bytes: int) -> tuple[str, int] | None:
    """The last `max_bytes` of the file at path and how many bytes before them were left
    out; None unless it is a regular file. Opened without following a symlink (OSError then):
    root must not copy, say, /etc/shadow into the results because server.log became a link."""
    fd = os.open(path, _READ | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as log:
        info = os.fstat(log.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        skipped = max(0, info.st_size - max_bytes)
        log.seek(skipped)
        return log.read(max_bytes).decode(errors="replace"), skipped


def read_log(path: Path, max_bytes: int) -> str | None:
    """A whole log, or its last `max_bytes` after a line saying how much was left out; None
    unless it is a regular file (opened without following a symlink, as copy_log)."""
    try:
        tail = _regular_tail(path, max_bytes)
    except OSError:
        return None
    if tail is None:
        return None
    text, skipped = tail
    return f"[... the first {skipped} bytes left out]\n{text}" if skipped else text


def log_tail(path: Path, lines: int, max_bytes: int = 64 * 1024) -> str:
    """The last lines of a log that the process under test could have replaced (read as
    _regular_tail reads it)."""
    try:
        tail = _regular_tail(path, max_bytes)
    except OSError as exc:
        return f"(log {path} unreadable: {exc.strerror})"
    if tail is None:
        return f"(log {path} is not a regular file)"
    return "\n".join(tail[0].splitlines()[-lines:]) or "(log is empty)"


def private_temp_dir(prefix: str) -> Path:
    """A new directory in the system temp dir, only accessible to its owner (mkdtemp)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def remove_temp_dir(path: Path) -> None:
    """Remove a directory made by private_temp_dir; anything outside the temp dir is refused."""
    with contextlib.suppress(FileNotFoundError):
        safe_rmtree(path, Path(tempfile.gettempdir()))


def open_path_for(path: Path, can_traverse: Callable[[Path], bool]) -> None:
    """Make every ancestor of path traversable by the stack user, where that is ours to do.

    Run directories usually sit in a private temp dir (mkdtemp: mode 0700, owner root), which
    the stack user cannot enter. An ancestor that stackbench's own user owns inside the system
    temp dir gets the search bit for others (o+x: enter, not list); any other ancestor the stack
    user cannot enter is reported with the fix, never changed.
    """
    temp_root = Path(tempfile.gettempdir()).resolve()
    for ancestor in reversed(Path(path).resolve().parents):
        if can_traverse(ancestor):
            continue
        info = ancestor.stat()
        if info.st_uid == os.geteuid() and temp_root in ancestor.parents:
            os.chmod(ancestor, stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
            continue
        raise EnvironmentProblem(
            f"the unprivileged stack user cannot enter {ancestor}, so it cannot reach {path}; "
            f"allow it (chmod o+x {ancestor}) or use a directory it can reach"
        )
