"""remote/agent.py before it serves: the run directory it will remove at the end is checked
(never someone else's directory)."""

import os
import stat

import pytest

from stackbench.errors import InputError
from stackbench.remote.agent import RUN_DIR_MARKER, prepare_run_dir


def test_a_new_run_dir_is_made_private_and_marked(tmp_path):
    run_dir = prepare_run_dir(tmp_path / "agent")
    assert run_dir == (tmp_path / "agent").resolve()
    assert (run_dir / RUN_DIR_MARKER).is_file() and (run_dir / "stacks").is_dir()
    # The stack user may pass through to its own directories, not list them.
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o711


def test_a_run_dir_an_agent_kept_is_emptied(tmp_path):
    run_dir = prepare_run_dir(tmp_path / "agent")
    (run_dir / "agent.log").write_text("old\n")
    again = prepare_run_dir(tmp_path / "agent")
    assert sorted(p.name for p in again.iterdir()) == [RUN_DIR_MARKER, "stacks"]


@pytest.mark.parametrize(
    "why",
    ["relative", "dotdot", "root", "foreign", "symlink", "file", "no parent", "group writable"],
)
def test_a_run_dir_that_is_not_the_agents_own_is_refused_and_left_alone(tmp_path, monkeypatch, why):
    foreign = tmp_path / "data"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    path = {
        "relative": "agent-run",
        "dotdot": tmp_path / "x" / ".." / "data",
        "root": "/",
        "foreign": foreign,
        "symlink": tmp_path / "link",
        "file": foreign / "precious.txt",
        "no parent": tmp_path / "missing" / "agent",
        "group writable": tmp_path / "shared",
    }[why]
    if why == "symlink":
        (tmp_path / "link").symlink_to(foreign)
    if why == "group writable":
        (tmp_path / "shared").mkdir(mode=0o770)
        os.chmod(tmp_path / "shared", 0o770)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="--run-dir"):
        prepare_run_dir(type(tmp_path)(path))
    assert (foreign / "precious.txt").read_text() == "keep me"
