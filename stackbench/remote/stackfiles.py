"""A stack of the user's own, shipped to the host that runs it.

The catalog's stacks are on every host already (each host has a stackbench checkout of the
same version, which `hello` checks); a stack from a folder of the user's is not. The controller
packs that folder (a gzip'd tar: regular files, directories and symlinks that stay inside it,
`.git` left out) and sends it over the agent's channel in parts; the agent unpacks it into its
own run directory with tarfile's `data` filter (no absolute path, no `..`, no link leading out,
no device), readable by the stack user, and builds and starts it from there like a local one.
"""

import hashlib
import io
import os
import stat
import tarfile
from pathlib import Path

from stackbench.config.plan import Plan
from stackbench.errors import InputError

# What one part of the archive carries: base64 makes it 4/3 larger, under the agent's 1 MiB
# request limit with room for the rest of the request.
PART_BYTES = 512 * 1024
# A stack's sources, not its dependencies or build output: the host builds it from its lock
# files as this machine does. Larger folders are refused, naming what to leave out.
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_PARTS = MAX_ARCHIVE_BYTES // PART_BYTES  # = protocol.MAX_STACK_PARTS (tested)
# Left out of the archive: version control, never read by a build or a server.
SKIPPED = frozenset({".git"})


def _member(folder: Path, info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """The archive's entry for one path: readable by everyone (the stack runs as another user
    there), owned by nobody in particular; None to leave it out."""
    parts = Path(info.name).parts
    if any(part in SKIPPED for part in parts):
        return None
    where = folder / Path(*parts[1:]) if len(parts) > 1 else folder
    if info.issym():
        target = (where.parent / info.linkname).resolve()
        if not target.is_relative_to(folder.resolve()):
            raise InputError(
                f"{where}: a symlink leading out of the stack's folder ({info.linkname}); the "
                "folder is copied to the server host, where that target does not exist: copy "
                "the file into the folder"
            )
    elif not (info.isfile() or info.isdir()):
        raise InputError(
            f"{where}: not a regular file, directory or symlink; it cannot be copied to the "
            "server host: remove it from the stack's folder"
        )
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = (info.mode & 0o755) | (0o555 if info.isdir() or info.mode & 0o100 else 0o444)
    return info


def pack(folder: Path) -> bytes:
    """The folder as a gzip'd tar, its top entry named after the folder. InputError when a
    path cannot be copied or the archive is over MAX_ARCHIVE_BYTES."""
    buffer = io.BytesIO()
    try:
        with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as archive:
            archive.add(folder, arcname=folder.name, filter=lambda i: _member(folder, i))
    except OSError as exc:
        raise InputError(f"{folder}: cannot be read to copy it to the server host: {exc}") from exc
    data = buffer.getvalue()
    if len(data) > MAX_ARCHIVE_BYTES:
        raise InputError(
            f"{folder}: packs to {len(data) / 2**20:.0f} MiB, over the "
            f"{MAX_ARCHIVE_BYTES // 2**20} MiB a stack's folder may take to the server host: "
            "leave dependencies and build output (node_modules, target/, .venv) out of the "
            "folder; the host installs and builds them from the stack's lock files"
        )
    return data


def parts(data: bytes) -> list[bytes]:
    return [data[at : at + PART_BYTES] for at in range(0, len(data), PART_BYTES)] or [b""]


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def unpack(data: bytes, dest: Path) -> Path:
    """Unpack an archive made by `pack` into `dest` (which must not exist yet); the stack's
    folder, dest/<its top entry>. InputError for anything `pack` would not have made."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            tops = {Path(m.name).parts[0] for m in archive.getmembers() if m.name}
            if len(tops) != 1:
                raise InputError(f"a stack archive holds one folder, not {sorted(tops)[:3]}")
            os.makedirs(dest, mode=0o711)
            archive.extractall(dest, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"the stack archive cannot be unpacked: {exc}") from exc
    folder = dest / tops.pop()
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise InputError("a stack archive holds one folder, not a file")
    return folder


def check_own_stacks_travel(plan: Plan) -> None:
    """On a multi-host run, every stack of the user's own is copied to the server host when
    it starts there: one that cannot be (a symlink leading out, a device, too large) refuses
    the run before anything starts, naming the path."""
    if plan.suite.placement.server_host is None:
        return
    for st in plan.stacks:
        own = plan.suite.own_stacks.get(st.stack)
        if own is not None and st.available:
            pack(own.stack_dir)
