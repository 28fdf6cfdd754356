"""One SSH link to one host, over the system's OpenSSH client.

The system client is used (not a Python SSH library) so that everything the user set up for
ssh works unchanged: ~/.ssh/config, the agent, known_hosts, jump hosts. Every command:

- never prompts (BatchMode=yes: a missing key fails at once instead of waiting for a password
  nobody types) and never accepts a key it does not know (StrictHostKeyChecking=yes); an
  unknown or changed host key stops with the commands that fix it, after a fingerprint check;
- shares one connection per link (ControlMaster=auto, its socket in a private 0700 directory,
  ControlPersist=60 so a forgotten master still goes away), so a command costs a round trip,
  not a handshake;
- notices a cut link (ServerAliveInterval: 3 unanswered probes, 5 s apart) and a dead address
  (ConnectTimeout);
- forwards nothing (agent, X11, ports) and gets no terminal.

The remote command is an argv joined with shlex.join: sshd hands it to the login shell of the
remote user, which splits it back into exactly these words. ssh's own failures exit 255
(OpenSSH reserves it), which is how they are told from the remote command's own status.
"""

import contextlib
import re
import shlex
import shutil
import subprocess
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from stackbench.config.hosts import Host
from stackbench.errors import EnvironmentProblem

SSH_FAILED = 255  # ssh's exit status for its own errors (connection, authentication, host key)
CONTROL_PERSIST_S = 60
SERVER_ALIVE_INTERVAL_S = 5
SERVER_ALIVE_COUNT = 3
DEFAULT_CONNECT_TIMEOUT_S = 10.0
_CLOSE_TIMEOUT_S = 5.0
_TAIL_LINES = 3

_CHANGED = re.compile(r"REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed")
_UNKNOWN = re.compile(r"No \S+ host key is known for|Host key verification failed")
_OFFENDING = re.compile(r"Offending \S+ key in (?P<file>\S+):(?P<line>\d+)")
_DENIED = re.compile(r"Permission denied \((?P<methods>[^)]*)\)")
_UNREACHABLE = re.compile(
    r"ssh: connect to host .*|ssh: Could not resolve hostname .*|"
    r"Connection timed out during banner exchange|"
    r"Connection (?:closed|reset) by .*"
)


class SshLink:
    """Commands on one host over one multiplexed SSH connection. Call `close()` (or use it as
    a context manager) to end the connection; a link that is garbage-collected closes too."""

    def __init__(self, host: Host, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> None:
        self.host = host
        self.connect_timeout_s = connect_timeout_s
        # The control socket path must stay short (a Unix socket path has ~100 bytes), so it
        # lives in a fresh directory of the system's temporary folder, readable by us alone.
        self._control_dir = Path(tempfile.mkdtemp(prefix="stackbench-ssh-"))
        self._finalizer = weakref.finalize(
            self, _end_master, self._control_args(), host.address, self._control_dir
        )

    def __enter__(self) -> "SshLink":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def ssh_argv(self, argv: Sequence[str]) -> list[str]:
        """The local command line that runs `argv` on the host (never through a local shell)."""
        if not argv:
            raise ValueError("an empty remote command")
        host = self.host
        options = [
            "BatchMode=yes",
            "StrictHostKeyChecking=yes",
            "UpdateHostKeys=no",  # the user's known_hosts changes only by the user's hand
            f"ConnectTimeout={max(1, round(self.connect_timeout_s))}",
            f"ServerAliveInterval={SERVER_ALIVE_INTERVAL_S}",
            f"ServerAliveCountMax={SERVER_ALIVE_COUNT}",
            "ForwardAgent=no",
            "ForwardX11=no",
            "ClearAllForwardings=yes",
            "PermitLocalCommand=no",
            "ControlMaster=auto",
            f"ControlPersist={CONTROL_PERSIST_S}",
        ]
        if host.known_hosts is not None:
            options.append(f"UserKnownHostsFile={host.known_hosts}")
        if host.identity is not None:
            options.append("IdentitiesOnly=yes")
        command = ["ssh", "-T"]
        for option in options:
            command += ["-o", option]
        command += self._control_args()
        if host.identity is not None:
            command += ["-i", str(host.identity)]
        command += ["-p", str(host.port), "-l", host.user, "--", host.address, shlex.join(argv)]
        return command

    def run(
        self, argv: Sequence[str], timeout_s: float, input_text: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `argv` on the host and wait (at most `timeout_s`): its status, stdout, stderr.
        A remote command that fails is returned as such; ssh failing is an EnvironmentProblem."""
        try:
            done = subprocess.run(
                self.ssh_argv(argv),
                input=input_text,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout_s,
                start_new_session=True,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise EnvironmentProblem(
                f"{self.host.label}: `{shlex.join(argv)}` did not finish within {timeout_s:g} s "
                "(ssh was stopped); check the host's load and the network to it"
            ) from exc
        except FileNotFoundError as exc:
            raise EnvironmentProblem(
                "ssh not found: install the OpenSSH client (apt-get "
                "install openssh-client, or scripts/setup.sh)"
            ) from exc
        if done.returncode == SSH_FAILED:
            raise ssh_failure(self.host, done.stderr, shlex.join(argv))
        return done

    def check(self) -> None:
        """Connect (or reuse the connection) and run `true`: the host is reachable and logs in."""
        done = self.run(["true"], timeout_s=self.connect_timeout_s + 20)
        if done.returncode != 0:
            raise EnvironmentProblem(
                f"{self.host.label}: `true` exited {done.returncode} "
                f"through the login shell of {self.host.user}: "
                f"{tail(done.stderr) or 'no message'}"
            )

    def open(
        self, argv: Sequence[str], stderr: int | IO[bytes] | None = subprocess.PIPE
    ) -> "subprocess.Popen[bytes]":
        """Start `argv` on the host with byte pipes to its stdin and stdout (and stderr, unless
        `stderr` says otherwise): a channel for a long-running remote process. The caller
        reads and writes it, closes stdin to end it, and maps an exit status of 255 through
        `ssh_failure`. It runs in its own session, so a Ctrl-C at the terminal reaches the
        controller, which ends the channel in order, and not ssh directly."""
        try:
            return subprocess.Popen(
                self.ssh_argv(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise EnvironmentProblem(
                "ssh not found: install the OpenSSH client (apt-get "
                "install openssh-client, or scripts/setup.sh)"
            ) from exc

    def close(self) -> None:
        """End the shared connection (and every channel still on it); idempotent."""
        self._finalizer()

    def _control_args(self) -> list[str]:
        return ["-o", f"ControlPath={self._control_dir / 'master'}"]


def _end_master(control_args: list[str], address: str, control_dir: Path) -> None:
    if (control_dir / "master").exists():
        # If this fails, the master still exits by itself ControlPersist after its last client.
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                ["ssh", *control_args, "-O", "exit", "--", address],
                capture_output=True,
                timeout=_CLOSE_TIMEOUT_S,
                check=False,
            )
    shutil.rmtree(control_dir, ignore_errors=True)


def tail(stderr: str, lines: int = _TAIL_LINES) -> str:
    """The last lines of ssh's stderr, on one line."""
    kept = [line.strip() for line in stderr.replace("\r", "").splitlines() if line.strip()]
    return " | ".join(kept[-lines:])


def known_hosts_name(host: Host) -> str:
    """How known_hosts names the host: the plain address on port 22, [address]:port else."""
    return host.address if host.port == 22 else f"[{host.address}]:{host.port}"


def ssh_failure(host: Host, stderr: str, what: str) -> EnvironmentProblem:
    """What ssh's stderr says went wrong, as one sentence naming the host and the fix."""
    text = stderr.replace("\r", "")
    offending = _OFFENDING.search(text)
    known = (
        offending.group("file")
        if offending
        else str(host.known_hosts)
        if host.known_hosts
        else "~/.ssh/known_hosts"
    )
    name = shlex.quote(known_hosts_name(host))
    scan = f"ssh-keyscan -p {host.port} {shlex.quote(host.address)}"
    fingerprint = (
        f"check the fingerprint `{scan} | ssh-keygen -lf -` against "
        "`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` run on the host itself"
    )
    if _CHANGED.search(text):
        return EnvironmentProblem(
            f"{host.label}: its host key is not the one recorded in {known} (the key was "
            "changed, or someone is intercepting the connection); stackbench never connects "
            f"then. If the change is expected, remove the old key with `ssh-keygen -R {name} "
            f"-f {shlex.quote(known)}`, {fingerprint}, and add it: "
            f"`{scan} >> {shlex.quote(known)}`"
        )
    if _UNKNOWN.search(text):
        return EnvironmentProblem(
            f"{host.label}: its host key is not in {known}, and stackbench never accepts an "
            f"unknown key; {fingerprint}, then add it: `{scan} >> {shlex.quote(known)}`"
        )
    denied = _DENIED.search(text)
    if denied:
        key = f"the public key of {host.identity}" if host.identity else "your public key"
        return EnvironmentProblem(
            f"{host.label}: the login was refused ({denied.group('methods')}); stackbench "
            f"logs in by key only: add {key} to ~{host.user}/.ssh/authorized_keys there "
            f"(`ssh-copy-id{' -i ' + shlex.quote(str(host.identity)) if host.identity else ''}"
            f" -p {host.port} {host.user}@{host.address}`)"
        )
    unreachable = _UNREACHABLE.search(text)
    if unreachable:
        return EnvironmentProblem(
            f"{host.label}: cannot connect ({unreachable.group(0).strip()}); check that the "
            f"host is up, reachable from here and that sshd listens on port {host.port}"
        )
    return EnvironmentProblem(
        f"{host.label}: ssh failed running `{what}`: {tail(text) or 'no message (exit status 255)'}"
    )
