"""SshLink without a network: the ssh command line it builds and how ssh's stderr becomes a
message. The stderr texts are what OpenSSH 9.2 prints (captured on the namespace hosts)."""

import shlex
from pathlib import Path

import pytest

from stackbench.config.hosts import Host
from stackbench.errors import EnvironmentProblem
from stackbench.remote.ssh import SshLink, known_hosts_name, ssh_failure, tail

HOST = Host(
    name="h1",
    address="10.231.0.11",
    identity=Path("/run/t/id_ed25519"),
    known_hosts=Path("/run/t/known_hosts"),
)

CHANGED = """\
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\r
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\r
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\r
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\r
The fingerprint for the ED25519 key sent by the remote host is
SHA256:DfZbHO4thKuBkYFiZet06yRVmFRkUP2ZyF1kLM7HA4c.\r
Add correct host key in /run/t/known_hosts to get rid of this message.\r
Offending ED25519 key in /run/t/known_hosts:1\r
  remove with:\r
  ssh-keygen -f "/run/t/known_hosts" -R "10.231.0.11"\r
Host key for 10.231.0.11 has changed and you have requested strict checking.\r
Host key verification failed.\r
"""
UNKNOWN = """\
No ED25519 host key is known for 10.231.0.11 and you have requested strict checking.
Host key verification failed.
"""


def message(stderr: str, host: Host = HOST) -> str:
    error = ssh_failure(host, stderr, "true")
    assert isinstance(error, EnvironmentProblem) and error.exit_code == 3
    text = str(error)
    assert "\n" not in text  # the command line prints it as one line
    return text


def test_changed_host_key_gives_the_commands_that_fix_it():
    text = message(CHANGED)
    assert text.startswith(
        "h1 (root@10.231.0.11:22): its host key is not the one recorded in "
        "/run/t/known_hosts (the key was changed, or someone is "
        "intercepting the connection)"
    )
    assert "`ssh-keygen -R 10.231.0.11 -f /run/t/known_hosts`" in text
    assert "`ssh-keyscan -p 22 10.231.0.11 >> /run/t/known_hosts`" in text
    assert "`ssh-keyscan -p 22 10.231.0.11 | ssh-keygen -lf -`" in text


def test_changed_key_names_the_file_ssh_found_it_in():
    other = CHANGED.replace(
        "Offending ED25519 key in /run/t/known_hosts:1",
        "Offending ED25519 key in /root/.ssh/known_hosts:7",
    )
    assert "`ssh-keygen -R 10.231.0.11 -f /root/.ssh/known_hosts`" in message(other)


def test_unknown_host_key_is_never_accepted():
    text = message(UNKNOWN)
    assert "its host key is not in /run/t/known_hosts" in text
    assert "never accepts an unknown key" in text
    assert text.endswith("`ssh-keyscan -p 22 10.231.0.11 >> /run/t/known_hosts`")
    assert "ssh-keygen -R" not in text


def test_known_hosts_default_and_other_port():
    host = Host(name="b", address="bench.example.org", port=2222)
    assert known_hosts_name(host) == "[bench.example.org]:2222"
    text = message(UNKNOWN.replace("10.231.0.11", "[bench.example.org]:2222"), host)
    assert "not in ~/.ssh/known_hosts" in text
    assert "`ssh-keyscan -p 2222 bench.example.org >> '~/.ssh/known_hosts'`" in text
    changed = message(
        CHANGED.replace("Offending ED25519 key in /run/t/known_hosts:1\r\n", ""), host
    )
    assert "`ssh-keygen -R '[bench.example.org]:2222' -f '~/.ssh/known_hosts'`" in changed


def test_login_refused():
    text = message("root@10.231.0.11: Permission denied (publickey).\r\n")
    assert "the login was refused (publickey)" in text
    assert "`ssh-copy-id -i /run/t/id_ed25519 -p 22 root@10.231.0.11`" in text


@pytest.mark.parametrize(
    "stderr",
    [
        "ssh: connect to host 10.231.0.11 port 2222: Connection refused\r\n",
        "ssh: connect to host 10.231.0.99 port 22: Connection timed out\r\n",
        "ssh: Could not resolve hostname nonexist.invalid: Name or service not known\r\n",
    ],
)
def test_unreachable(stderr):
    text = message(stderr)
    assert f"cannot connect ({stderr.strip()})" in text
    assert "sshd listens on port 22" in text


def test_other_failures_keep_the_tail_of_stderr():
    text = message("debug1: a\nsomething odd\r\nmux_client_request_session: failed\n")
    assert text == (
        "h1 (root@10.231.0.11:22): ssh failed running `true`: debug1: a | something "
        "odd | mux_client_request_session: failed"
    )
    assert message("").endswith("no message (exit status 255)")
    assert tail("1\n2\n\n3\n4\n", 2) == "3 | 4"


def test_command_line():
    link = SshLink(HOST, connect_timeout_s=7)
    try:
        argv = link.ssh_argv(["stackbench", "hosts", "probe", "a b; rm -rf /"])
    finally:
        link.close()
    options = [argv[i + 1] for i, word in enumerate(argv) if word == "-o"]
    for wanted in (
        "BatchMode=yes",
        "StrictHostKeyChecking=yes",
        "ControlMaster=auto",
        "ControlPersist=60",
        "ConnectTimeout=7",
        "ServerAliveInterval=5",
        "UserKnownHostsFile=/run/t/known_hosts",
        "IdentitiesOnly=yes",
        "ForwardAgent=no",
    ):
        assert wanted in options
    control = next(o for o in options if o.startswith("ControlPath="))
    assert "StrictHostKeyChecking=no" not in options
    assert argv[:2] == ["ssh", "-T"]
    assert argv[argv.index("-i") + 1] == "/run/t/id_ed25519"
    assert argv[-7:-2] == ["-p", "22", "-l", "root", "--"]
    assert argv[-2] == "10.231.0.11"
    # One word for the remote shell, which splits it back into exactly the argv.
    assert shlex.split(argv[-1]) == ["stackbench", "hosts", "probe", "a b; rm -rf /"]
    # close() removed the private control directory.
    assert not Path(control.removeprefix("ControlPath=")).parent.exists()


def test_control_directory_is_private():
    with SshLink(HOST) as link:
        control = next(w for w in link.ssh_argv(["true"]) if w.startswith("ControlPath="))
        directory = Path(control.removeprefix("ControlPath=")).parent
        assert directory.stat().st_mode & 0o777 == 0o700
        assert len(control) < 100  # a Unix socket path has ~108 bytes
    assert not directory.exists()


def test_no_identity_no_known_hosts_leaves_ssh_defaults():
    with SshLink(Host(name="b", address="bench")) as link:
        argv = link.ssh_argv(["true"])
    assert "-i" not in argv and "IdentitiesOnly=yes" not in argv
    assert not any(w.startswith("UserKnownHostsFile=") for w in argv)
    with pytest.raises(ValueError):
        SshLink(HOST).ssh_argv([])
