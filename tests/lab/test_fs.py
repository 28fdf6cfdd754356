"""lab/fs.py: nothing outside its root is ever created, written or removed, whatever the path."""

import os
import stat
from pathlib import Path

import pytest

from stackbench.errors import EnvironmentProblem, InputError
from stackbench.lab import fs


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(root, outside): a run root and a precious sibling directory with a file in it."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "precious.txt").write_text("user data")
    return root, outside


def _intact(outside: Path) -> bool:
    return (outside / "precious.txt").read_text() == "user data"


# ------------------------------------------------------------------ inside


def test_inside_and_strictly_inside(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    assert fs.inside(root, root / "a" / "b")
    assert fs.inside(root, root)
    assert not fs.strictly_inside(root, root)
    assert fs.strictly_inside(root, root / "a")
    assert not fs.inside(root, outside)
    assert not fs.inside(root, root / ".." / "outside")
    assert not fs.inside(root, Path("/etc"))
    # A prefix of the name is not containment: /x/root-evil is not inside /x/root.
    assert not fs.inside(root, root.parent / (root.name + "-evil"))


def test_inside_follows_symlinks(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (root / "link").symlink_to(outside)
    assert not fs.inside(root, root / "link")
    assert not fs.inside(root, root / "link" / "precious.txt")
    (root / "inner").mkdir()
    (root / "alias").symlink_to(root / "inner")
    assert fs.inside(root, root / "alias")


# ------------------------------------------------------------------ checked


@pytest.mark.parametrize("name", ["../outside", "a/../../outside", "..", "a/../b"])
def test_checked_refuses_dotdot_even_when_it_stays_inside(
    tree: tuple[Path, Path], name: str
) -> None:
    root, _ = tree
    with pytest.raises(InputError, match=r"contains '\.\.'"):
        fs.checked(root / name, root, "create")


def test_checked_refuses_absolute_paths_and_the_root_itself(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    for path in (Path("/etc"), Path("/victim"), outside, root):
        with pytest.raises(InputError, match="outside"):
            fs.checked(path, root, "create")
    # An absolute name joined onto root replaces it entirely: root / "/etc" is /etc.
    with pytest.raises(InputError, match="outside"):
        fs.checked(root / "/etc", root, "remove")


def test_checked_returns_the_resolved_path(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert fs.checked(root / "a" / "b", root, "create") == (root / "a" / "b").resolve()


# ------------------------------------------------------------------ safe_rmtree


def test_rmtree_removes_a_tree_inside(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    (root / "run" / "deep").mkdir(parents=True)
    (root / "run" / "deep" / "f").write_text("x")
    fs.safe_rmtree(root / "run", root)
    assert not (root / "run").exists()
    fs.safe_rmtree(root / "run", root)  # missing: nothing to do


@pytest.mark.parametrize("hostile", ["../outside", "/outside-abs", "link"])
def test_rmtree_refuses_what_leads_outside(tree: tuple[Path, Path], hostile: str) -> None:
    root, outside = tree
    (root / "link").symlink_to(outside)
    target = outside if hostile == "/outside-abs" else root / hostile
    with pytest.raises(InputError, match="refusing to remove"):
        fs.safe_rmtree(target, root)
    assert _intact(outside)


def test_rmtree_refuses_the_root_itself_and_a_file(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    with pytest.raises(InputError):
        fs.safe_rmtree(root, root)
    (root / "file").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        fs.safe_rmtree(root / "file", root)
    assert root.is_dir() and (root / "file").exists()


def test_rmtree_removes_symlinks_inside_the_tree_without_following(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (root / "run").mkdir()
    (root / "run" / "escape").symlink_to(outside)
    (root / "run" / "file-escape").symlink_to(outside / "precious.txt")
    fs.safe_rmtree(root / "run", root)
    assert not (root / "run").exists()
    assert _intact(outside)


# ------------------------------------------------------------------ safe_mkdir, writing


def test_mkdir_creates_inside_with_the_mode(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    made = fs.safe_mkdir(root / "a" / "b", root, mode=0o700)
    assert made.is_dir()
    assert stat.S_IMODE((root / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert fs.safe_mkdir(root / "a" / "b", root) == made  # exists already: fine


@pytest.mark.parametrize("hostile", ["../victim", "link/victim", "/victim"])
def test_mkdir_refuses_outside(tree: tuple[Path, Path], hostile: str) -> None:
    root, outside = tree
    (root / "link").symlink_to(outside)
    target = Path(hostile) if hostile.startswith("/") else root / hostile
    with pytest.raises(InputError):
        fs.safe_mkdir(target, root)
    assert not (outside / "victim").exists()
    assert not (root.parent / "victim").exists()
    assert not Path("/victim").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_mkdir_hands_new_directories_to_the_owner(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    fs.safe_mkdir(root / "a" / "b", root, owner=(65534, 65534))
    assert (root / "a").stat().st_uid == 65534
    assert (root / "a" / "b").stat().st_gid == 65534
    assert root.stat().st_uid == os.geteuid()  # the root itself is left alone


def test_write_new_file_never_follows_or_overwrites(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    written = fs.write_new_file(root / "conf", root, "text")
    assert written.read_text() == "text"
    with pytest.raises(FileExistsError):
        fs.write_new_file(root / "conf", root, "again")
    (root / "planted").symlink_to(outside / "precious.txt")
    with pytest.raises(InputError):
        fs.write_new_file(root / "planted", root, "overwritten")
    with pytest.raises(InputError):
        fs.write_new_file(root / ".." / "outside" / "new", root, "x")
    assert _intact(outside)


def test_open_log_refuses_a_symlink(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (root / "server.log").symlink_to(outside / "precious.txt")
    with pytest.raises(OSError):
        fs.open_log(root / "server.log")
    fd = fs.open_log(root / "real.log")
    os.write(fd, b"line\n")
    os.close(fd)
    assert (root / "real.log").read_text() == "line\n"
    assert _intact(outside)


def test_copy_log_copies_regular_files_only(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (root / "server.log").write_text("started\n")
    (root / "evil.log").symlink_to(outside / "precious.txt")
    os.mkfifo(root / "fifo.log")
    dest = root.parent / "logs"
    assert fs.copy_log(root / "server.log", dest) == dest / "server.log"
    assert (dest / "server.log").read_text() == "started\n"
    assert fs.copy_log(root / "evil.log", dest) is None
    assert fs.copy_log(root / "fifo.log", dest) is None  # would block a reader forever
    assert fs.copy_log(root / "missing.log", dest) is None
    assert sorted(p.name for p in dest.iterdir()) == ["server.log"]


# ------------------------------------------------------------------ temp dirs, traversal


def test_private_temp_dir_is_owner_only_and_removable() -> None:
    made = fs.private_temp_dir("sb-test-")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    fs.remove_temp_dir(made)
    assert not made.exists()
    fs.remove_temp_dir(made)  # twice: fine


def test_remove_temp_dir_refuses_outside_the_temp_dir(tree: tuple[Path, Path]) -> None:
    _, outside = tree
    with pytest.raises(InputError):
        fs.remove_temp_dir(Path("/etc"))
    if not fs.inside(Path(os.environ.get("TMPDIR", "/tmp")), outside):
        with pytest.raises(InputError):
            fs.remove_temp_dir(outside)


def test_open_path_for_opens_our_temp_ancestors_only() -> None:
    scratch = fs.private_temp_dir("sb-test-")
    try:
        run_dir = scratch / "run"
        run_dir.mkdir()
        fs.open_path_for(run_dir, lambda d: bool(d.stat().st_mode & stat.S_IXOTH))
        assert scratch.stat().st_mode & stat.S_IXOTH  # entered, not listed
        assert not scratch.stat().st_mode & stat.S_IROTH
    finally:
        fs.remove_temp_dir(scratch)


def test_open_path_for_reports_what_it_may_not_change(tmp_path: Path) -> None:
    closed = Path("/")  # never ours to chmod, wherever the temp dir is
    with pytest.raises(EnvironmentProblem, match=r"cannot enter /.*chmod o\+x"):
        fs.open_path_for(tmp_path / "run", lambda d: d != closed)
