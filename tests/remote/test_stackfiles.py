"""A stack of the user's own, copied to the server host: packed here (readable by everyone,
`.git` left out, nothing that leads out of the folder), unpacked there into a fresh folder;
an archive `pack` would not make is refused, whatever it holds."""

import io
import os
import tarfile
from pathlib import Path

import pytest

from stackbench.errors import InputError
from stackbench.remote import protocol as p
from stackbench.remote import stackfiles


def app(folder: Path) -> Path:
    stack = folder / "myapp"
    (stack / "src").mkdir(parents=True)
    (stack / "stack.toml").write_text('name = "myapp"\n')
    (stack / "src" / "server.js").write_text("// hello\n")
    (stack / "run.sh").write_text("#!/bin/sh\n")
    (stack / "run.sh").chmod(0o700)
    (stack / "secret-mode").write_text("x")
    (stack / "secret-mode").chmod(0o600)
    (stack / ".git").mkdir()
    (stack / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (stack / "current").symlink_to("src/server.js")
    return stack


def test_a_folder_travels_whole_readable_by_the_stack_user(tmp_path) -> None:
    stack = app(tmp_path / "here")
    folder = stackfiles.unpack(stackfiles.pack(stack), tmp_path / "there" / "myapp")
    assert folder == tmp_path / "there" / "myapp" / "myapp"
    files = sorted(str(f.relative_to(folder)) for f in folder.rglob("*"))
    assert files == ["current", "run.sh", "secret-mode", "src", "src/server.js", "stack.toml"]
    assert (folder / "src" / "server.js").read_text() == "// hello\n"
    assert (folder / "current").is_symlink() and (folder / "current").read_text() == "// hello\n"
    # the stack runs as another user there: everything readable, executables still executable
    assert (folder / "secret-mode").stat().st_mode & 0o777 == 0o644
    assert (folder / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (folder / "src").stat().st_mode & 0o777 == 0o755


def test_a_symlink_leading_out_is_refused_naming_it(tmp_path) -> None:
    stack = app(tmp_path)
    (stack / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(InputError, match=r"myapp/passwd: a symlink leading out of the stack"):
        stackfiles.pack(stack)


def test_a_fifo_cannot_travel(tmp_path) -> None:
    stack = app(tmp_path)
    os.mkfifo(stack / "pipe")
    with pytest.raises(InputError, match=r"myapp/pipe: not a regular file"):
        stackfiles.pack(stack)


def test_a_folder_too_large_names_what_to_leave_out(tmp_path, monkeypatch) -> None:
    stack = app(tmp_path)
    (stack / "big").write_bytes(os.urandom(4096))
    monkeypatch.setattr(stackfiles, "MAX_ARCHIVE_BYTES", 1024)
    with pytest.raises(InputError, match=r"over the 0 MiB .*node_modules"):
        stackfiles.pack(stack)


def test_parts_cover_the_archive_and_fit_a_request() -> None:
    data = os.urandom(stackfiles.PART_BYTES * 2 + 5)
    pieces = stackfiles.parts(data)
    assert [len(x) for x in pieces] == [stackfiles.PART_BYTES, stackfiles.PART_BYTES, 5]
    assert b"".join(pieces) == data
    assert stackfiles.parts(b"") == [b""]
    assert stackfiles.MAX_PARTS == p.MAX_STACK_PARTS
    assert stackfiles.PART_BYTES * 4 // 3 + 1024 < p.MAX_REQUEST_BYTES  # base64 and the rest


def archive(*members: tuple[str, bytes | None, str | None]) -> bytes:
    """A gzip'd tar by hand: (name, file bytes or None, symlink target or None)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ((("app", None, None), ("app/../../escape", b"x", None)), "cannot be unpacked"),
        ((("app", None, None), ("/abs", b"x", None)), "one folder"),
        ((("app", None, None), ("app/l", None, "/etc/passwd")), "cannot be unpacked"),
        ((("a", None, None), ("b", None, None)), "one folder"),
        ((("app", b"just a file", None),), "one folder, not a file"),
    ],
)
def test_an_archive_pack_would_not_make_is_refused(tmp_path, members, message) -> None:
    with pytest.raises(InputError, match=message):
        stackfiles.unpack(archive(*members), tmp_path / "dest")
    assert not (tmp_path / "escape").exists()


def test_garbage_is_refused(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot be unpacked"):
        stackfiles.unpack(b"not a tar", tmp_path / "dest")
