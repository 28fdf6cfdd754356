"""An external server found on this machine: its url must answer, and its pids must be
running processes of an unprivileged user that are neither stackbench's own line of parents
nor children of another listed pid; a unit needs systemd. Each refusal names the table and
what to do."""

import os
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from stackbench.config.external import ExternalStack
from stackbench.errors import EnvironmentProblem, InputError, StackError
from stackbench.lab import external

WHERE = "mine.toml: [external.x]"
AS_USER = {"user": "stackbench"} if os.geteuid() == 0 else {}


@pytest.fixture
def listening() -> Iterator[int]:
    """A port something listens on (a socket of the test: nothing has to answer HTTP)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def ext(port: int, pids: tuple[int, ...] = (), unit: str | None = None) -> ExternalStack:
    return ExternalStack("x", f"http://127.0.0.1:{port}", "127.0.0.1", port, ("hello",), pids, unit)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_nothing_answering_at_the_url_is_a_stack_error_with_the_url_and_the_fix() -> None:
    port = closed_port()
    with pytest.raises(StackError, match=rf"nothing answers at http://127.0.0.1:{port}") as got:
        external.attach(ext(port), WHERE)
    assert "start your server there" in str(got.value) and got.value.exit_code == 4


def test_no_pids_and_no_unit_attaches_nothing_to_sample(listening) -> None:
    found = external.attach(ext(listening), WHERE)
    assert found.roles == {} and found.gone() == []


def test_a_pid_that_is_not_running_is_refused(listening) -> None:
    with pytest.raises(InputError, match="key 'pids': 4000000: no such process is running"):
        external.attach(ext(listening, (4_000_000,)), WHERE)


def test_stackbench_and_its_parents_are_refused(listening) -> None:
    if os.geteuid() == 0:  # root's own processes are refused for being root first
        pytest.skip("runs as root: the root rule refuses these pids first")
    with pytest.raises(InputError, match="stackbench itself or one of its parents"):
        external.attach(ext(listening, (os.getppid(),)), WHERE)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start a root process")
def test_a_root_process_is_refused(listening) -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(InputError, match=f"{proc.pid}: the process runs as root"):
            external.attach(ext(listening, (proc.pid,)), WHERE)
    finally:
        proc.kill()
        proc.wait()


def test_a_child_of_a_listed_pid_is_refused_and_a_gone_pid_is_seen(listening) -> None:
    shell = subprocess.Popen(
        ["sh", "-c", "sleep 30 & echo $!; wait"],
        stdout=subprocess.PIPE,
        text=True,
        **AS_USER,  # type: ignore[call-overload]
    )
    try:
        assert shell.stdout is not None
        child = int(shell.stdout.readline())
        with pytest.raises(InputError, match=f"{child}: a child of {shell.pid}, which is listed"):
            external.attach(ext(listening, (shell.pid, child)), WHERE)
        found = external.attach(ext(listening, (shell.pid,)), WHERE)
        assert found.roles == {"server": shell.pid} and found.gone() == []
        assert found.cpus  # its cores are known
        other = subprocess.Popen(["sleep", "30"], **AS_USER)  # type: ignore[call-overload]
        try:
            two = external.attach(ext(listening, (shell.pid, other.pid)), WHERE)
        finally:
            other.kill()
            other.wait()
        assert set(two.roles) == {f"server-{shell.pid}", f"server-{other.pid}"}
    finally:
        os.kill(child, 9)
        shell.kill()
        shell.wait()
    deadline = time.monotonic() + 5
    while found.gone() != [shell.pid] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found.gone() == [shell.pid]


def test_a_unit_without_systemd_is_refused_with_the_pids_to_give(listening, monkeypatch, tmp_path):
    monkeypatch.setattr(external, "SYSTEMD_RUNNING", tmp_path / "absent")
    with pytest.raises(EnvironmentProblem, match="systemd is not running on this machine") as got:
        external.attach(ext(listening, unit="app.service"), WHERE)
    assert "pids = [...]" in str(got.value) and got.value.exit_code == 3


def fake_systemctl(monkeypatch, tmp_path, main_pid: str, returncode: int = 0) -> list[list[str]]:
    """systemd 'running' (its directory present) and systemctl answering `main_pid`."""
    monkeypatch.setattr(external, "SYSTEMD_RUNNING", tmp_path)
    calls: list[list[str]] = []

    def run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        return subprocess.CompletedProcess(command, returncode, main_pid + "\n", "")

    monkeypatch.setattr(external.subprocess, "run", run)
    return calls


def test_a_units_main_process_is_read_from_systemctl_and_checked_like_a_pid(
    listening, monkeypatch, tmp_path
) -> None:
    other = subprocess.Popen(["sleep", "30"], **AS_USER)  # type: ignore[call-overload]
    try:
        calls = fake_systemctl(monkeypatch, tmp_path, str(other.pid))
        found = external.attach(ext(listening, unit="app.service"), WHERE)
        assert found.roles == {"server": other.pid}
        assert calls == [
            ["systemctl", "show", "--property=MainPID", "--value", "--", "app.service"]
        ]
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize(("main_pid", "code"), [("0", 0), ("", 1), ("garbage", 0)])
def test_a_unit_without_a_main_process_is_refused(
    listening, monkeypatch, tmp_path, main_pid, code
) -> None:
    fake_systemctl(monkeypatch, tmp_path, main_pid, code)
    with pytest.raises(InputError, match="app.service has no main process"):
        external.attach(ext(listening, unit="app.service"), WHERE)
