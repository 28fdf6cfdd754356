"""The command line as a user meets it: exit codes and messages that name the culprit."""

import subprocess
import sys


def stackbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stackbench", *args], capture_output=True,
                          text=True, timeout=120, check=False)


def test_bad_suite_key_exits_2_naming_file_and_key(tmp_path):
    suite = tmp_path / "bad.toml"
    suite.write_text('name = "x"\nstacks = ["go-nethttp"]\nworkloads = ["hello"]\n'
                     "[load]\nconections = [1]\n")
    done = stackbench("run", str(suite))
    assert done.returncode == 2
    assert str(suite) in done.stderr and "conections" in done.stderr


def test_unknown_flag_and_missing_file_exit_2(tmp_path):
    assert stackbench("run", "--bogus").returncode == 2
    missing = stackbench("run", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "cannot read the suite file" in missing.stderr


def test_unknown_stack_lists_the_known_ones():
    done = stackbench("verify", "nosuchstack")
    assert done.returncode == 2 and "go-nethttp" in done.stderr


def test_dry_run_prints_the_plan_and_starts_nothing():
    done = stackbench("run", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "plan" in done.stdout and "load levels" in done.stdout


def test_informational_commands_run():
    for command in ("stacks", "workloads", "doctor", "--version"):
        assert stackbench(command).returncode == 0, command
