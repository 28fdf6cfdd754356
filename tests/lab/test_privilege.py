"""lab/privilege.py: servers never run as root; the account and its access are checked."""

import os
import pwd
import stat
import subprocess
from pathlib import Path

import pytest

from stackbench.errors import EnvironmentProblem
from stackbench.lab import fs, privilege
from stackbench.lab.privilege import RunAs, can_enter, server_environment
from stackbench.lab.procs import child_setup, spawn, stop

USER = RunAs("sbtest", 1500, 1600)


def _stat(uid: int, gid: int, mode: int) -> os.stat_result:
    return os.stat_result((stat.S_IFDIR | mode, 0, 0, 2, uid, gid, 4096, 0, 0, 0))


def _stack_user_or_skip() -> RunAs:
    if os.geteuid() != 0:
        pytest.skip("switching users needs root")
    try:
        run_as = privilege.stack_user()
    except EnvironmentProblem as err:
        pytest.skip(str(err))
    assert run_as is not None
    return run_as


# ------------------------------------------------------------------ pure


@pytest.mark.parametrize(
    ("uid", "gid", "mode", "expected"),
    [
        (1500, 0, 0o700, True),  # owner with x
        (1500, 1600, 0o070, False),  # owner bits decide for the owner, even if the group may
        (0, 1600, 0o710, True),  # group with x
        (0, 1600, 0o701, False),  # group bits decide for the group
        (0, 0, 0o701, True),  # others with x
        (0, 0, 0o700, False),  # mkdtemp's 0700 owned by root
        (0, 0, 0o755, True),
    ],
)
def test_can_enter_follows_owner_group_other(uid: int, gid: int, mode: int, expected: bool) -> None:
    assert can_enter(_stat(uid, gid, mode), USER) is expected


def test_server_environment_gives_the_stack_user_its_own_home_and_temp() -> None:
    env = server_environment(
        {"HOME": "/root", "PATH": "/usr/bin", "USER": "root"}, USER, Path("/run/x")
    )
    assert env == {
        "HOME": "/run/x/home",
        "TMPDIR": "/run/x/tmp",
        "PATH": "/usr/bin",
        "USER": "sbtest",
        "LOGNAME": "sbtest",
    }
    unchanged = {"HOME": "/home/dev", "PATH": "/usr/bin"}
    assert server_environment(unchanged, None, Path("/run/x")) == unchanged


def test_no_switch_when_not_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert privilege.stack_user() is None


def test_missing_stack_user_is_an_environment_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv(privilege.STACK_USER_ENV, "sb-no-such-user-here")
    with pytest.raises(EnvironmentProblem, match="'sb-no-such-user-here'.*install-system.sh"):
        privilege.stack_user()


def test_root_is_refused_as_the_stack_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv(privilege.STACK_USER_ENV, pwd.getpwuid(0).pw_name)
    with pytest.raises(EnvironmentProblem, match="uid 0"):
        privilege.stack_user()


# ------------------------------------------------------------------ real processes (root only)


def test_spawned_process_runs_as_the_stack_user_for_good(tmp_path: Path) -> None:
    run_as = _stack_user_or_skip()
    log = tmp_path / "out.log"
    # Prints real/effective/saved uids and gids, then the supplementary groups.
    code = "import os; print(*os.getresuid(), *os.getresgid()); print(os.getgroups()); os.setuid(0)"
    proc = spawn(["python3", "-c", code], tmp_path, None, log, run_as=run_as)
    try:
        proc.wait(timeout=20)
    finally:
        stop(proc)
    lines = log.read_text().splitlines()
    assert lines[0].split() == [str(run_as.uid)] * 3 + [str(run_as.gid)] * 3
    assert lines[1] == "[]"
    assert "PermissionError" in log.read_text()  # and it cannot come back
    assert proc.returncode != 0


def test_child_setup_switches_user_before_pinning(tmp_path: Path) -> None:
    run_as = _stack_user_or_skip()
    done = subprocess.run(
        ["id", "-u"],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=child_setup(frozenset({0}), run_as),
    )
    assert done.stdout.strip() == str(run_as.uid)


def test_unreadable_names_what_the_stack_user_cannot_read() -> None:
    run_as = _stack_user_or_skip()
    base = fs.private_temp_dir("sb-test-")
    try:
        os.chmod(base, 0o755)
        open_file = base / "open.txt"
        open_file.write_text("x")
        closed_file = base / "closed.txt"
        closed_file.write_text("x")
        os.chmod(closed_file, 0o600)
        closed_dir = base / "closed"
        closed_dir.mkdir(mode=0o700)
        assert privilege.unreadable(run_as, [open_file, closed_file, closed_dir, base]) == [
            closed_file,
            closed_dir,
        ]
    finally:
        fs.remove_temp_dir(base)
