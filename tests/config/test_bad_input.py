"""Bad input, as a user meets it on the command line: exit 2, one message that names the file
and the key and says what is allowed, no traceback (issue 11, point 7)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FAKE_STACKS

SUITE = """name = "bad"
stacks = ["refserver"]
workloads = ["hello"]

[load]
connections = [1, 2]
duration_s = 1
"""


def stackbench(*args: str, stacks: Path = FAKE_STACKS) -> subprocess.CompletedProcess[str]:
    # A wide terminal, so rich does not wrap the message inside a path.
    env = {**os.environ, "STACKBENCH_STACKS_DIR": str(stacks), "COLUMNS": "1000"}
    return subprocess.run(
        [sys.executable, "-m", "stackbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def assert_refused(done: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    message = done.stderr
    for part in parts:
        assert part in message, (part, message)


@pytest.mark.parametrize(
    "change, parts",
    [
        (
            ("connections = [1, 2]", "connections = nan"),
            ["[load] key 'connections': expected a non-empty list of numbers", "got nan"],
        ),
        (
            ("connections = [1, 2]", "connections = [inf]"),
            ["[load] key 'connections' (item 1): expected a number above 0", "got inf"],
        ),
        (
            ("duration_s = 1", "duration_s = inf"),
            ["[load] key 'duration_s': expected a number from 0.1 to 86400, got inf"],
        ),
        (
            ('workloads = ["hello"]', 'workloads = ["sha256?n=²"]'),
            ["key 'workloads': sha256 n='²' is not a whole number (use ASCII digits"],
        ),
        (
            ('stacks = ["refserver"]', 'stacks = ["refserver", "refserver"]'),
            ["key 'stacks': 'refserver' is listed twice"],
        ),
        (
            ('workloads = ["hello"]', 'workloads = ["hello", "hello"]'),
            ["key 'workloads': the workload 'hello' is listed twice"],
        ),
        (
            ("duration_s = 1", "duration_s = 1\nrepeat = 100000"),
            ["[load] key 'repeat': expected a whole number from 1 to 100"],
        ),
        (
            ("connections = [1, 2]", "connections = []"),
            ["[load] key 'connections': expected a non-empty list"],
        ),
        (
            ("[load]", "[limits]\nmax_error_rate = 1.5\n\n[load]"),
            ["[limits] key 'max_error_rate': expected a number from 0 to 1, got 1.5"],
        ),
        (
            ("duration_s = 1", 'duration_s = 1\n\n[variants."../x/victim"]\nstack = "refserver"'),
            ["[variants] key '../x/victim': '../x/victim' is not a valid name"],
        ),
        (
            ("[load]", '[params.refserver]\nfault = "crash\\nLoadModule x /tmp/x.so"\n\n[load]'),
            [
                "[params.refserver] key 'fault': 'crash\\nLoadModule x /tmp/x.so' is not allowed",
                "expected one of: '', constant",
            ],
        ),
        (
            (
                'workloads = ["hello"]',
                'workloads = ["items"]\n[endpoints.items]\npath = "/items"\nmethod = "POST"\n'
                'body_file = "../../etc/passwd"',
            ),
            ["[endpoints.items] key 'body_file': '../../etc/passwd' leads out of the suite's"],
        ),
        (
            (
                'workloads = ["hello"]',
                'workloads = ["hello", "items"]\n[endpoints.items]\npath = "/i"',
            ),
            ['[endpoints.items]: no stack of the suite serves it; add "items" to the'],
        ),
        (
            ("[load]", "[placement]\nserver_cores = [1, 1]\n\n[load]"),
            ["[placement] key 'server_cores': a core count is listed twice"],
        ),
        (
            ("[load]", "[placement]\nserver_cores = [1, 4097]\n\n[load]"),
            ["[placement] key 'server_cores' (item 2): expected a whole number from 1 to 4096"],
        ),
        (
            ("[load]", '[placement]\nserver_cores = [1]\nserver_cpus = "0"\n\n[load]'),
            ["[placement] key 'server_cores': the core counts place the server", "server_cpus"],
        ),
    ],
)
def test_bad_suites_exit_2_with_one_message(tmp_path, change, parts):
    suite = tmp_path / "bad.toml"
    suite.write_text(SUITE.replace(*change))
    assert_refused(stackbench("run", str(suite), "--dry-run"), str(suite), *parts)


def test_unreadable_suite_files_exit_2(tmp_path):
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(SUITE.replace('"bad"', '"caf\xe9"').encode("latin-1"))
    assert_refused(stackbench("run", str(latin1), "--dry-run"), str(latin1), "not UTF-8 text")
    assert_refused(stackbench("run", "/dev/zero", "--dry-run"), "/dev/zero: larger than 1024 KiB")


def test_a_broken_manifest_is_one_invalid_stack(tmp_path):
    stacks = tmp_path / "stacks"
    shutil.copytree(FAKE_STACKS, stacks)
    manifest = stacks / "crashing" / "stack.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace(
            'command = ["{{cmd.python}}", "{{stack_dir}}/../../refserver.py"]', "command = []"
        )
    )
    assert_refused(
        stackbench("verify", "crashing", stacks=stacks),
        str(manifest),
        "[[process]] #1 key 'command': expected a non-empty list",
    )
    listed = stackbench("stacks", stacks=stacks)
    assert listed.returncode == 0, listed.stderr
    assert "invalid" in listed.stdout and "refserver" in listed.stdout


def test_a_param_from_the_command_line_goes_through_the_same_check():
    assert_refused(
        stackbench("verify", "refserver", "--param", "fault=x\ny"),
        "--param key 'fault': 'x\\ny' is not allowed for parameter 'fault'",
    )


def test_more_server_cores_than_the_machine_has_exit_2(tmp_path):
    many = len(os.sched_getaffinity(0)) + 1
    suite = tmp_path / "bad.toml"
    suite.write_text(SUITE.replace("[load]", f"[placement]\nserver_cores = [1, {many}]\n\n[load]"))
    assert_refused(
        stackbench("run", str(suite), "--dry-run"),
        str(suite),
        f"[placement] key 'server_cores': {many} server cores asked, but this machine allows",
    )
