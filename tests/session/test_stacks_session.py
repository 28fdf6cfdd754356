"""session/stacks.py: services started once and reset between stacks, TCP-only addresses for the
stacks, and stopping that never raises; `stackbench verify` with a service that cannot start."""

import logging
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from stackbench.config.placement import default_placement
from stackbench.errors import ServiceError
from stackbench.lab import fs
from stackbench.lab.stack import StackInstance
from stackbench.services import ServiceKind
from stackbench.session import stacks as session
from stackbench.session.stacks import Services, running_stack


class FakeService:
    def __init__(self, kind: ServiceKind) -> None:
        self.kind = kind

    def root_pid(self) -> int:
        return 1000 + list(ServiceKind).index(self.kind)

    def is_alive(self) -> bool:
        return True


class FakeServiceSet:
    """Stands in for services.ServiceSet: records what was started and stopped."""

    instances: list["FakeServiceSet"] = []

    def __init__(
        self,
        run_dir: Path,
        cpus: frozenset[int],
        bind: str = "127.0.0.1",
        clients: tuple[str, ...] = (),
    ) -> None:
        self.bind, self.clients = bind, clients
        self.started: list[ServiceKind] = []
        self.stops = 0
        self.fail_stop = False
        FakeServiceSet.instances.append(self)

    def ensure(self, kinds: Iterable[ServiceKind]) -> None:
        self.started += [k for k in ServiceKind if k in set(kinds) and k not in self.started]

    def running(self) -> list[FakeService]:
        return [FakeService(k) for k in self.started]

    def env(self) -> dict[str, str]:
        env = {}
        if ServiceKind.MARIADB in self.started:
            env.update(
                DB_HOST="127.0.0.1",
                DB_PORT="3307",
                DB_SOCKET="/tmp/m.sock",
                DB_USER="stackbench",
                DB_PASSWORD="pw",
                DB_NAME="hello_world",
            )
        if ServiceKind.REDIS in self.started:
            env.update(REDIS_HOST="127.0.0.1", REDIS_PORT="6380", REDIS_SOCKET="/tmp/r.sock")
        return env

    def stop_all(self) -> None:
        self.stops += 1
        if self.fail_stop:
            raise ServiceError("stopping services failed: redis: still running")


@pytest.fixture
def fake_services(monkeypatch: pytest.MonkeyPatch) -> list[list[ServiceKind]]:
    """Fake service set; returns the list of reset_data calls (kinds reset each time)."""
    FakeServiceSet.instances = []
    resets: list[list[ServiceKind]] = []
    monkeypatch.setattr(session, "ServiceSet", FakeServiceSet)
    monkeypatch.setattr(
        session, "reset_data", lambda running: resets.append([s.kind for s in running])
    )
    return resets


def test_services_start_once_and_are_reset_for_the_next_stack(tmp_path, fake_services):
    with Services(tmp_path / "services", frozenset({0})) as services:
        assert services.prepare(["hello", "sha256"]) == session.NO_SERVICES
        assert FakeServiceSet.instances == []  # nothing needed, nothing created
        first = services.prepare(["hello", "mysql-row"])
        second = services.prepare(["mysql-row", "redis-get"])
        (fake,) = FakeServiceSet.instances
        assert fake.started == [ServiceKind.MARIADB, ServiceKind.REDIS]
        # fresh services are seeded already; the one the first stack used is restored
        assert fake_services == [[], [ServiceKind.MARIADB]]
        assert services.roles() == {"mariadb": 1000, "redis": 1001}
    assert fake.stops == 1
    # stacks get TCP addresses only, for every stack alike; the verifiers the same services
    assert "DB_SOCKET" not in first.env and first.env["DB_PORT"] == "3307"
    assert set(second.env) >= {"DB_HOST", "REDIS_HOST", "REDIS_PORT"}
    assert not any(k.endswith("_SOCKET") for k in second.env)
    assert second.context is not None and second.context.redis_port == 6380


def test_a_failure_while_stopping_services_is_logged_not_raised(tmp_path, fake_services, caplog):
    services = Services(tmp_path, frozenset({0}))
    services.prepare(["redis-get"])
    FakeServiceSet.instances[0].fail_stop = True
    with caplog.at_level(logging.WARNING, logger="stackbench.session.stacks"):
        services.stop()
    assert "redis: still running" in caplog.text


def test_a_failure_while_stopping_the_stack_is_logged_not_raised(
    tmp_path, fake_inventory, monkeypatch, caplog
):
    steps: list[str] = []
    monkeypatch.setattr(StackInstance, "build", lambda self: tmp_path)
    monkeypatch.setattr(StackInstance, "start", lambda self: steps.append("started"))

    def stop(self: StackInstance) -> None:
        raise OSError("kill: operation not permitted")

    monkeypatch.setattr(StackInstance, "stop", stop)
    entry = fake_inventory["refserver"]
    with (
        caplog.at_level(logging.WARNING, logger="stackbench.session.stacks"),
        running_stack(
            entry, default_placement(), tmp_path / "run", {}, {}, steps.append
        ) as instance,
    ):
        assert instance.name == "refserver"
    assert steps == ["building", "starting", "started"]
    assert "refserver: stopping the stack failed: kill: operation not permitted" in caplog.text
    # an error inside still propagates (and the stop is still attempted)
    with (
        pytest.raises(ValueError),
        running_stack(entry, default_placement(), tmp_path / "run", {}, {}),
    ):
        raise ValueError("measured nothing")


STACK = """
name = "dbstack"
description = "a stack with a MariaDB workload (tests only)"
language = "python"
io_model = "thread-per-request"
workloads = ["hello", "mysql-row"]

[[requires]]
name = "python"
commands = ["python3"]
version_args = ["--version"]
hint = "install python3"

[[process]]
role = "server"
command = ["{{cmd.python}}", "-c", "raise SystemExit(3)"]

[ready]
path = "/hello"
timeout_s = 5
"""


def test_verify_with_mariadb_unable_to_start_says_why_in_one_message(tmp_path, request):
    """No traceback, the cause on the first line, the exit code of a failed service (4)."""
    stacks = tmp_path / "stacks"
    (stacks / "dbstack").mkdir(parents=True)
    (stacks / "dbstack" / "stack.toml").write_text(STACK)
    # The services run as the stack user: the fake must lie where that user can run it.
    bad_bin = fs.private_temp_dir("sb-test-bin-")
    bad_bin.chmod(0o755)
    request.addfinalizer(lambda: fs.remove_temp_dir(bad_bin))
    fake = bad_bin / "mariadb-install-db"
    fake.write_text("#!/bin/sh\necho 'cannot create the data directory: disk full'\nexit 1\n")
    fake.chmod(0o755)
    env = {
        **os.environ,
        "STACKBENCH_STACKS_DIR": str(stacks),
        "PATH": f"{bad_bin}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "stackbench", "verify", "dbstack", "--workloads", "mysql-row"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: mariadb failed to start: mariadb-install-db exit status 1")
    assert "disk full" in lines[0]  # the log tail's last line says why
