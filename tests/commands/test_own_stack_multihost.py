"""A stack of the user's own on a multi-host run is copied to the server host when it starts
there; a folder that cannot be copied refuses the run before anything starts (exit 2, one
line naming the path), `--dry-run` included, and no host is contacted for that."""

from pathlib import Path

from tests.commands.cli_run import run_cli

HOSTS = '[hosts.h1]\naddress = "10.231.0.11"\n[hosts.h2]\naddress = "10.231.0.12"\n'
SUITE = """\
stacks = ["./apps/mine"]
workloads = ["hello"]
hosts_file = "hosts.toml"
[load]
connections = [4]
duration_s = 2
[placement]
server_host = "h1"
loader_hosts = ["h2"]
"""


def folder_with_stack(tmp_path: Path) -> Path:
    made = run_cli("new-stack", "apps/mine", "--like", "node", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    (tmp_path / "hosts.toml").write_text(HOSTS)
    (tmp_path / "s.toml").write_text(SUITE)
    return tmp_path / "apps" / "mine"


def test_a_folder_that_can_travel_plans(tmp_path) -> None:
    folder_with_stack(tmp_path)
    planned = run_cli("--no-color", "run", "s.toml", "--dry-run", cwd=tmp_path)
    assert planned.returncode == 0, planned.stdout + planned.stderr


def test_a_symlink_leading_out_refuses_the_run_naming_it(tmp_path) -> None:
    stack = folder_with_stack(tmp_path)
    (stack / "passwd").symlink_to("/etc/passwd")
    refused = run_cli("--no-color", "run", "s.toml", "--dry-run", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"error: {stack}/passwd: a symlink leading out of the stack's folder (/etc/passwd); "
        "the folder is copied to the server host, where that target does not exist: copy the "
        "file into the folder"
    ]
