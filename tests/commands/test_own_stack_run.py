"""A stack of the user's own, end to end: `new-stack` writes it, a suite names its folder,
`run` builds, starts (as the unprivileged user), verifies and measures it like a catalog stack."""

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from stackbench.store.store import Store
from tests.commands.cli_run import run_cli

pytestmark = pytest.mark.integration


def stackbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


@pytest.fixture
def open_folder():
    """A folder the unprivileged stack user can read (pytest's own tmp_path is root's alone:
    the run would refuse it, naming the path and the chmod that fixes it)."""
    folder = Path(tempfile.mkdtemp(prefix="stackbench-own-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_new_python_stack_is_verified_and_measured(open_folder) -> None:
    tmp_path = open_folder
    made = stackbench("new-stack", "apps/mine", "--like", "python", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    (tmp_path / "mine.toml").write_text(
        'name = "mine"\ndescription = "my stack"\nstacks = ["./apps/mine"]\n'
        'workloads = ["hello"]\n[load]\nconnections = [4]\nduration_s = 3\nwarmup_s = 0\n'
        "pause_s = 0\n"
    )
    ran = stackbench("run", "mine.toml", "--out", str(tmp_path / "results"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    store = Store(tmp_path / "results" / "stackbench.sqlite")
    data = store.load_run(store.runs()[-1].id)
    store.close()
    assert [c.stack for c in data.cases] == ["mine"]
    assert [v.ok for v in data.verifications] == [True]
    # "invalid" is possible on a busy machine (a disturbed level); "failed" is not
    assert [lv.status for lv in data.levels] != ["failed"]
    assert len(data.levels) == 1
    assert data.levels[0].requests_per_s > 0
