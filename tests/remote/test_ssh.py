"""SshLink and `stackbench hosts` against real sshds: two network-namespace hosts brought up by
scripts/testhosts.sh (root and openssh-server needed) and always taken down at the end."""

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stackbench.config.hosts import HostsFile, parse_hosts_file
from stackbench.config.paths import REPO_ROOT
from stackbench.errors import EnvironmentProblem
from stackbench.remote.ssh import SshLink
from tests.testhosts import HOSTS_FILE, NEEDS_TEST_HOSTS, STATE, run_testhosts

pytestmark = [*NEEDS_TEST_HOSTS, pytest.mark.concurrent]


def stackbench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "stackbench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def namespaces() -> list[str]:
    out = subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, timeout=10, check=True
    ).stdout
    return [line.split()[0] for line in out.splitlines() if re.match(r"sbh\d+\b", line)]


def our_sshds() -> list[str]:
    out = subprocess.run(
        ["ps", "-eo", "args"], capture_output=True, text=True, timeout=10, check=True
    ).stdout
    return [line for line in out.splitlines() if str(STATE) in line and "sshd" in line]


@pytest.fixture(scope="module")
def hosts() -> Iterator[HostsFile]:
    up = run_testhosts("up", "2")
    try:
        assert up.returncode == 0, up.stderr
        yield parse_hosts_file(HOSTS_FILE)
    finally:
        run_testhosts("down")


def with_known_hosts(tmp_path: Path, text: str, checkout: Path | None = None) -> Path:
    """A copy of the hosts file using other known_hosts contents (and another checkout)."""
    known = tmp_path / "known_hosts"
    known.write_text(text)
    hosts_text = HOSTS_FILE.read_text().replace(
        f'known_hosts = "{STATE}/known_hosts"', f'known_hosts = "{known}"'
    )
    if checkout is not None:
        hosts_text = hosts_text.replace(f'checkout = "{REPO_ROOT}"', f'checkout = "{checkout}"')
    path = tmp_path / "hosts.toml"
    path.write_text(hosts_text)
    return path


def test_testhosts_layout(hosts):
    assert sorted(hosts.hosts) == ["h1", "h2"]
    assert [h.address for h in hosts.hosts.values()] == ["10.231.0.11", "10.231.0.12"]
    assert STATE.stat().st_mode & 0o777 == 0o700
    assert sorted(namespaces()) == ["sbh1", "sbh2"]
    assert len(our_sshds()) == 2
    # Each sshd listens on its own address only, inside its namespace.
    listening = subprocess.run(
        ["ip", "netns", "exec", "sbh1", "ss", "-Hltn"], capture_output=True, text=True, timeout=10
    ).stdout
    assert "10.231.0.11:22" in listening and "0.0.0.0:22" not in listening
    known = (STATE / "known_hosts").read_text().splitlines()
    assert [line.split()[:2] for line in known] == [
        ["10.231.0.11", "ssh-ed25519"],
        ["10.231.0.12", "ssh-ed25519"],
    ]
    assert run_testhosts("status").stdout.count("sshd pid") == 2


def test_run_and_open(hosts):
    with SshLink(hosts.hosts["h1"]) as link:
        link.check()
        assert link.run(["true"], timeout_s=30).returncode == 0
        # The remote command's own status comes back; only ssh's 255 is an error.
        assert link.run(["sh", "-c", "exit 7"], timeout_s=30).returncode == 7
        # Words reach the remote program exactly, through the remote shell.
        tricky = ["printf", "%s|", "a b", "$HOME", "; echo no", "'q'"]
        assert link.run(tricky, timeout_s=30).stdout == "a b|$HOME|; echo no|'q'|"
        # It runs in the host's namespace.
        assert "10.231.0.11" in link.run(["ip", "-o", "addr"], timeout_s=30).stdout
        channel = link.open(["cat"])
        out, _ = channel.communicate(b"over the channel\n", timeout=30)
        assert out == b"over the channel\n" and channel.returncode == 0


def test_hosts_check_passes(hosts):
    done = stackbench("hosts", "check", "--hosts", str(HOSTS_FILE))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    for name, address in (("h1", "10.231.0.11"), ("h2", "10.231.0.12")):
        row = next(r for r in rows if r[:2] == [name, address])
        assert row[2:4] == ["ok", "0.1.0"]
    assert "all 2 hosts ready" in done.stdout


def test_changed_host_key_stops_with_the_fix(hosts, tmp_path):
    lines = (STATE / "known_hosts").read_text().splitlines()
    h2_key = lines[1].split(maxsplit=1)[1]
    hosts_file = with_known_hosts(tmp_path, f"10.231.0.11 {h2_key}\n{lines[1]}\n")
    done = stackbench("hosts", "check", "--hosts", str(hosts_file))
    assert done.returncode == 3, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    known = tmp_path / "known_hosts"
    assert "h1 (root@10.231.0.11:22): its host key is not the one recorded in" in text
    assert f"`ssh-keygen -R 10.231.0.11 -f {known}`" in text
    assert "1 of 2 hosts failed a check" in text
    # The same through the API, and the file was not touched.
    bad = parse_hosts_file(hosts_file).hosts["h1"]
    with SshLink(bad) as link, pytest.raises(EnvironmentProblem, match="ssh-keygen -R"):
        link.run(["true"], timeout_s=30)
    assert known.read_text() == f"10.231.0.11 {h2_key}\n{lines[1]}\n"


def test_unknown_host_key_is_refused(hosts, tmp_path):
    host = parse_hosts_file(with_known_hosts(tmp_path, "")).hosts["h2"]
    with SshLink(host) as link, pytest.raises(EnvironmentProblem) as exc:
        link.check()
    assert "never accepts an unknown key" in str(exc.value)
    assert f"ssh-keyscan -p 22 10.231.0.12 >> {tmp_path / 'known_hosts'}" in str(exc.value)
    assert exc.value.exit_code == 3


def test_hosts_setup_on_this_machine_is_a_check(hosts):
    done = stackbench("hosts", "setup", "--hosts", str(HOSTS_FILE))
    assert done.returncode == 0, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    assert f"h1: this machine and this checkout ({REPO_ROOT})" in text
    assert "h2: stackbench 0.1.0 runs there" in text


def test_hosts_setup_runs_the_installer_of_another_checkout(hosts, tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    (checkout / "scripts" / "setup.sh").write_text(
        "echo fake installer on $(ip -4 -o addr show dev eth0 | awk '{print $4}')\n"
    )
    known = (STATE / "known_hosts").read_text()
    done = stackbench("hosts", "setup", "--hosts", str(with_known_hosts(tmp_path, known, checkout)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "h1| fake installer on 10.231.0.11/24" in done.stdout
    # h2 is the same machine with the same checkout: set up once.
    assert "h2: same machine and checkout as h1: set up above" in done.stdout
    missing = stackbench(
        "hosts", "setup", "--hosts", str(with_known_hosts(tmp_path, known, tmp_path / "nowhere"))
    )
    assert missing.returncode == 3
    assert "no stackbench checkout at" in " ".join(missing.stdout.split())


def test_down_leaves_nothing(hosts):
    with SshLink(hosts.hosts["h1"]) as link:  # a session still open inside the namespace
        sleeper = link.open(["sleep", "300"])
        assert run_testhosts("down").returncode == 0
        sleeper.wait(timeout=30)
    assert namespaces() == []
    assert our_sshds() == []
    assert not STATE.exists()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, timeout=10).stdout
    assert "sbbr0" not in links and not re.search(r"sbh\d+v", links)
