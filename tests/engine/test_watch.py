"""The crash watch without servers: how an exit is described, the failure recorded on a level,
the watcher thread stopping the load once."""

import threading
import time
from pathlib import Path

from stackbench.engine.judge import LevelFailure
from stackbench.engine.watch import (
    ProcessExit,
    Watcher,
    describe_exit,
    loader_failed,
    server_exited,
    stack_exits,
)
from stackbench.services import ServiceKind
from stackbench.store.records import LevelFlag


def test_exit_statuses_and_signals_are_named():
    assert describe_exit(0) == "exited with status 0"
    assert describe_exit(3) == "exited with status 3"
    assert describe_exit(-9) == "killed by signal 9 (SIGKILL)"
    assert describe_exit(-15) == "killed by signal 15 (SIGTERM)"
    assert describe_exit(-200) == "killed by signal 200"


def test_a_server_exit_becomes_a_failed_level_with_its_log():
    exits = [
        ProcessExit("node process 'server'", -9, "listening on 8080\nheap exhausted"),
        ProcessExit("service redis", 1, "oom"),
    ]
    failure = server_exited(exits)
    assert failure == LevelFailure(
        "server-exited",
        "node process 'server' killed by signal 9 (SIGKILL); service redis exited with "
        "status 1 (during the level)",
        "--- node process 'server':\nlistening on 8080\nheap exhausted\n--- service redis:\noom",
    )
    assert failure.flag.kind is LevelFlag.FAILED
    assert failure.flag.text.startswith("failed: server-exited: node process 'server' killed")
    before = server_exited(exits[:1], before_level=True)
    assert before.error.endswith("(before the level started)")


def test_a_loader_failure_keeps_the_first_line_and_the_stderr_tail():
    stderr = "\n".join(f"line {i}" for i in range(40))
    failure = loader_failed(f"/x/stackbench-load http://h/ exited 1: {stderr}")
    assert failure.error_class == "loader-failed"
    assert failure.error == "/x/stackbench-load http://h/ exited 1: line 0"
    assert failure.log_tail.splitlines() == [f"line {i}" for i in range(20, 40)]


class FakeInstance:
    name = "go-nethttp"
    log_path = Path("/nonexistent/server.log")

    def __init__(self, exited: dict[str, int]) -> None:
        self._exited = exited

    def exited(self) -> dict[str, int]:
        return self._exited


class FakeService:
    def __init__(self, kind: ServiceKind, status: int | None) -> None:
        self.kind, self.status = kind, status
        self.log_path = Path("/nonexistent") / f"{kind.value}.log"

    def exit_status(self) -> int | None:
        return self.status


class FakeServices:
    def __init__(self, services: list[FakeService]) -> None:
        self.services = services

    def running(self) -> list[FakeService]:
        return self.services


def test_the_check_covers_the_stack_and_only_the_services_it_uses():
    services = FakeServices(
        [
            FakeService(ServiceKind.REDIS, -9),
            FakeService(ServiceKind.MARIADB, 1),
            FakeService(ServiceKind.MEMCACHED, None),
        ]
    )
    check = stack_exits(
        FakeInstance({"server": 2}),
        services,  # type: ignore[arg-type]
        frozenset({ServiceKind.REDIS, ServiceKind.MEMCACHED}),
    )
    exits = check()
    assert [(e.name, e.status) for e in exits] == [
        ("go-nethttp process 'server'", 2),
        ("service redis", -9),
    ]
    assert "unreadable" in exits[0].log_tail  # the tail says why there is no log
    quiet = stack_exits(
        FakeInstance({}),
        FakeServices([]),  # type: ignore[arg-type]
        frozenset(),
    )
    assert quiet() == []


def test_the_watcher_stops_the_load_once_when_a_process_exits():
    dead = threading.Event()
    stopped: list[int] = []

    def check() -> list[ProcessExit]:
        return [ProcessExit("x", 1, "")] if dead.is_set() else []

    with Watcher(check, lambda: stopped.append(1), interval_s=0.01) as watcher:
        threading.Timer(0.05, dead.set).start()
        for _ in range(200):  # up to 2 s
            if stopped:
                break
            time.sleep(0.01)
        time.sleep(0.05)  # it keeps no polling (and stopping) after the first exit
    assert stopped == [1] and watcher.fired


def test_the_watcher_does_nothing_while_every_process_runs():
    stopped: list[int] = []
    with Watcher(list, lambda: stopped.append(1), interval_s=0.01) as watcher:
        time.sleep(0.1)
    assert stopped == [] and not watcher.fired


def test_an_exited_child_is_seen_without_being_reaped():
    """The watch reads the exit status but leaves the zombie: its pid stays taken until the
    stack is stopped, so stopping never signals a stranger that got the same pid."""
    import subprocess
    import sys

    import psutil

    from stackbench.lab.procs import exit_status

    def started(code: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", code])

    def wait_for_zombie(proc: subprocess.Popen[bytes]) -> None:
        for _ in range(500):
            if psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE:
                return
            time.sleep(0.01)

    sleeper = started("import time; time.sleep(30)")
    assert exit_status(sleeper) is None
    sleeper.kill()
    wait_for_zombie(sleeper)
    assert exit_status(sleeper) == -9 and exit_status(sleeper) == -9
    assert psutil.Process(sleeper.pid).status() == psutil.STATUS_ZOMBIE  # not reaped
    assert sleeper.wait(timeout=5) == -9 and exit_status(sleeper) == -9
    three = started("import sys; sys.exit(3)")
    wait_for_zombie(three)
    assert exit_status(three) == 3 and three.wait(timeout=5) == 3


def test_a_log_tail_never_follows_a_symlink(tmp_path):
    """The run dir belongs to the stack user: a server.log replaced by a link to a root-only
    file must not put that file into the results."""
    from stackbench.lab.fs import log_tail

    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret\n")
    log = tmp_path / "server.log"
    log.symlink_to(secret)
    assert "secret" not in log_tail(log, 20) and "unreadable" in log_tail(log, 20)
    log.unlink()
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert log_tail(log, 3) == "line 97\nline 98\nline 99"
    assert log_tail(log, 3, max_bytes=16) == "line 98\nline 99"  # only the file's end is read
    (tmp_path / "empty.log").write_text("")
    assert log_tail(tmp_path / "empty.log", 3) == "(log is empty)"
    assert "unreadable" in log_tail(tmp_path / "missing.log", 3)
