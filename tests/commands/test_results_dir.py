"""--out and its store are checked before any work, as the project's own errors naming the
flag and the path; the commands that read create nothing."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.commands.resultsdir import check_results_dir, open_existing_store, open_store
from stackbench.errors import EnvironmentProblem, ExitCode, InputError
from stackbench.store.store import Store


def stackbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stackbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("dry_run", [(), ("--dry-run",)])
def test_an_out_that_cannot_be_created_exits_2_before_the_plan_naming_the_flag(dry_run):
    done = stackbench("run", "suites/quick.toml", "--out", "/proc/nope/x", *dry_run)
    assert done.returncode == ExitCode.BAD_INPUT, done.stderr
    assert "--out /proc/nope/x" in done.stderr and "give --out a directory" in done.stderr
    assert "plan" not in done.stdout and done.stdout == ""
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", [("results",), ("report", "1"), ("compare", "1", "2")])
def test_reading_commands_create_nothing_and_say_so(tmp_path, command):
    missing = tmp_path / "missing" / "dir"
    done = stackbench(*command, "--out", str(missing))
    assert done.returncode == ExitCode.BAD_INPUT, done.stderr
    assert f"--out {missing}: no results store there" in done.stderr
    assert "nothing was created" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_dry_run_checks_out_and_leaves_nothing(tmp_path):
    target = tmp_path / "new" / "results"
    assert check_results_dir(target) == target
    assert list(tmp_path.iterdir()) == []
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(InputError, match=f"--out {a_file}/x: .* is a file, not a folder"):
        check_results_dir(a_file / "x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_out_without_write_permission_is_bad_input(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(InputError, match="--out .*locked/results: cannot create"):
        open_store(locked / "results")
    with pytest.raises(InputError, match="cannot create the results directory in"):
        check_results_dir(locked / "results")


def test_a_store_that_is_not_one_is_refused_and_left_alone(tmp_path):
    (tmp_path / "stackbench.sqlite").write_bytes(b"not sqlite")
    with pytest.raises(InputError, match="not a stackbench store"):
        check_results_dir(tmp_path)
    with pytest.raises(InputError, match="not a stackbench store"):
        open_existing_store(tmp_path)
    assert (tmp_path / "stackbench.sqlite").read_bytes() == b"not sqlite"


def test_another_sqlite_file_is_not_written_by_a_reading_command(tmp_path):
    import sqlite3

    path = tmp_path / "stackbench.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE other (x)")
    with pytest.raises(InputError, match="no schema_version table"):
        Store(path, create=False)
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master")]
    assert tables == ["other"]


def test_an_unusable_store_path_is_an_environment_problem_naming_it(tmp_path):
    (tmp_path / "stackbench.sqlite").mkdir()  # a folder where the file should be
    with pytest.raises(
        EnvironmentProblem,
        match=r"stackbench.sqlite: cannot write the "
        r"results store .*use another --out",
    ):
        open_store(tmp_path)


def test_a_run_creates_its_directory_and_store_and_reading_commands_open_it(tmp_path):
    out = tmp_path / "a" / "b"
    open_store(out).close()
    assert (out / "stackbench.sqlite").is_file()
    store = open_existing_store(out)
    assert Path(store.path) == out.resolve() / "stackbench.sqlite"
    store.close()
