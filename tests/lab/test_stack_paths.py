"""A stack's run dir, templates and build dir stay inside their roots; its processes are not root.

Uses the fake `refserver` stack (a small Python server), so it runs in a second.
"""

import dataclasses
import os
import stat
from pathlib import Path

import psutil
import pytest

from stackbench.config.manifest import Process, Template
from stackbench.config.placement import default_placement
from stackbench.config.status import StackEntry
from stackbench.errors import EnvironmentProblem, InputError, StackError
from stackbench.lab import build, fs, privilege
from stackbench.lab.procs import tree
from stackbench.lab.stack import StackConfig, StackInstance


@pytest.fixture
def refserver(fake_inventory: dict[str, StackEntry]) -> StackEntry:
    return fake_inventory["refserver"]


@pytest.fixture
def scratch() -> Path:
    """A run's scratch dir as the engine makes it: private (0700), in the temp dir."""
    made = fs.private_temp_dir("sb-test-scratch-")
    yield made
    fs.remove_temp_dir(made)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("user data")
    return victim


def _config(entry: StackEntry, run_dir: Path, run_root: Path | None = None) -> StackConfig:
    return StackConfig(
        entry.manifest, entry.status, run_dir, default_placement().server, {}, {}, run_root=run_root
    )


def _stack_user_or_none() -> privilege.RunAs | None:
    try:
        return privilege.stack_user()
    except EnvironmentProblem as err:
        pytest.skip(str(err))


@pytest.mark.parametrize("name", ["../victim", "a/../../victim", ".."])
def test_traversing_run_dir_is_refused_before_anything_happens(
    refserver: StackEntry, scratch: Path, outside: Path, name: str
) -> None:
    with pytest.raises(InputError, match=r"'\.\.'"):
        StackInstance(_config(refserver, scratch / name, run_root=scratch))
    assert (outside / "precious.txt").read_text() == "user data"
    assert list(scratch.iterdir()) == []


def test_run_dir_outside_its_run_root_is_refused(
    refserver: StackEntry, scratch: Path, outside: Path
) -> None:
    with pytest.raises(InputError, match="outside"):
        StackInstance(_config(refserver, outside / "run", run_root=scratch))
    assert not (outside / "run").exists()


@pytest.mark.parametrize("absolute", [True, False])
def test_existing_directory_that_is_not_a_run_dir_is_never_emptied(
    refserver: StackEntry, scratch: Path, outside: Path, absolute: bool
) -> None:
    """Even without a run root: an absolute name joined onto the scratch dir replaces it."""
    if absolute:
        run_dir = scratch / str(outside)  # == outside
    else:
        run_dir = scratch / "victim"
        run_dir.mkdir()
        (run_dir / "precious.txt").write_text("user data")
    instance = StackInstance(_config(refserver, run_dir))
    with instance, pytest.raises(InputError, match="not a run directory stackbench made"):
        instance.start()
    assert (run_dir / "precious.txt").read_text() == "user data"


def test_symlinked_run_dir_is_neither_emptied_nor_followed(
    refserver: StackEntry, scratch: Path, outside: Path
) -> None:
    (scratch / "refserver").symlink_to(outside)
    with pytest.raises(InputError, match="outside"):
        StackInstance(_config(refserver, scratch / "refserver")).start()
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]


def test_template_destination_outside_the_run_dir_is_refused(
    refserver: StackEntry, scratch: Path, outside: Path
) -> None:
    hostile = dataclasses.replace(
        refserver.manifest, templates=(Template("stack.toml", "../../victim/owned"),)
    )
    entry = StackEntry(hostile, refserver.status)
    instance = StackInstance(_config(entry, scratch / "refserver"))
    with instance, pytest.raises(InputError, match=r"'\.\.'"):
        instance.start()
    assert not (outside / "owned").exists()


def test_build_dir_outside_the_build_cache_is_refused(refserver: StackEntry, outside: Path) -> None:
    with pytest.raises(InputError, match="outside"):
        build.ensure_built(refserver.manifest, {"build_dir": str(outside)}, {})
    with pytest.raises(InputError, match=r"'\.\.'"):
        build.ensure_built(
            refserver.manifest, {"build_dir": str(build.build_cache_dir() / ".." / "x")}, {}
        )
    assert (outside / "precious.txt").exists()


@pytest.mark.integration
@pytest.mark.concurrent
def test_stack_runs_as_the_stack_user_in_a_run_dir_it_owns(
    refserver: StackEntry, scratch: Path
) -> None:
    """Started by root: every process of the stack is the stack user's, none is root's."""
    run_as = _stack_user_or_none()
    expected = run_as.uid if run_as else os.geteuid()
    run_dir = scratch / "refserver"
    with StackInstance(_config(refserver, run_dir)) as instance:
        instance.build()
        instance.start()
        procs = [p for pid in instance.roles().values() for p in tree(pid)]
        assert procs
        for proc in procs:
            assert set(proc.uids()) == {expected}, (proc.cmdline(), proc.uids())
            assert 0 not in proc.gids()
        info = run_dir.stat()
        assert info.st_uid == expected and stat.S_IMODE(info.st_mode) == 0o700
        if run_as is not None:
            assert instance.env["HOME"] == str(run_dir / "home")
            assert (run_dir / "home").stat().st_uid == run_as.uid
        assert "server" in instance.logs()
        # Starting again empties and recreates the run dir (inside its root only).
        (run_dir / "stale").write_text("x")
    assert not [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    with StackInstance(_config(refserver, run_dir)) as again:
        again.prepare_run_dir()
        assert not (run_dir / "stale").exists()


def test_program_the_stack_user_cannot_run_is_named_before_start(
    refserver: StackEntry, scratch: Path
) -> None:
    """e.g. a runtime under root's home (pyenv): say so instead of a bare EACCES."""
    if _stack_user_or_none() is None:
        pytest.skip("only root switches to the stack user")
    closed = fs.private_temp_dir("sb-test-closed-")  # 0700, root's
    try:
        program = closed / "server"
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
        hidden = dataclasses.replace(
            refserver.manifest, processes=(Process(role="server", command=(str(program),)),)
        )
        instance = StackInstance(
            _config(StackEntry(hidden, refserver.status), scratch / "refserver")
        )
        with instance, pytest.raises(StackError, match=f"cannot read or run {program}"):
            instance.start()
        assert instance.processes == []
    finally:
        fs.remove_temp_dir(closed)
