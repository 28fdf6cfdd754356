"""`stackbench agent` as a local subprocess, driven by RemoteHost exactly as the controller
drives it over SSH: hello, the clock offset, the fake reference stack started and loaded by the
real native loader, the crash watch, stop-load, and the clean-up when the controller goes away
(end of file on stdin, mid-level; a lost heartbeat): no process of the agent's survives."""

import os
import platform
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from conftest import FAKE_STACKS, native_loader_built

from stackbench import __version__
from stackbench.config.loadspec import LoadRequest, LoadSettings
from stackbench.errors import DriverError, ExitCode, HostLost, InputError
from stackbench.remote import protocol as p
from stackbench.remote.agent import LOG_NAME, RUN_DIR_MARKER
from stackbench.remote.client import RemoteHost, agent_argv

# Each test judges what the agent answers, refuses, reports and leaves behind, within bounds
# that hold whatever the machine's load (the clock offset's error is bounded by the measured
# round trip), so they run beside another test (`concurrent`). Two stay alone: the one that
# times a level's start on the agent's clock, and the lost heartbeat's, whose stack must start
# within the agent's 2-s heartbeat (a busy core could stretch the start past it).
pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SKEWED_AGENT = REPO / "tests" / "fakes" / "skewed_agent.py"
CPUS = sorted(os.sched_getaffinity(0))
SERVER = frozenset(CPUS[:1])
LOADER = frozenset(CPUS[-1:])

StartAgent = Callable[..., tuple[RemoteHost, subprocess.Popen[bytes], Path]]


@pytest.fixture
def start_agent(tmp_path: Path) -> Iterator[StartAgent]:
    started: list[tuple[RemoteHost, subprocess.Popen[bytes]]] = []

    def start(
        heartbeat_s: float = 10.0,
        client_heartbeat_s: float | None = 1.0,
        keep: bool = False,
        clock_offset_s: float | None = None,
    ) -> tuple[RemoteHost, subprocess.Popen[bytes], Path]:
        run_dir = tmp_path / f"agent-{len(started)}"
        # A host whose clock is off: the agent started through the skewed launcher (fakes/).
        launcher = (
            [sys.executable, "-m", "stackbench"]
            if clock_offset_s is None
            else [sys.executable, str(SKEWED_AGENT), repr(clock_offset_s)]
        )
        argv = agent_argv(launcher, run_dir, heartbeat_s, keep)
        proc = subprocess.Popen(
            argv,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # PYTHONPATH: the skewed launcher imports this checkout, as -m does from cwd.
            env={**os.environ, "STACKBENCH_STACKS_DIR": str(FAKE_STACKS), "PYTHONPATH": str(REPO)},
        )
        host = RemoteHost("h1", proc, heartbeat_s=client_heartbeat_s, timeout_s=30)
        started.append((host, proc))
        return host, proc, run_dir

    yield start
    for host, proc in started:
        host.close(timeout_s=30)
        if proc.poll() is None:  # never leave an agent behind, whatever the test did
            proc.kill()
            proc.wait()


def agent_processes(proc: subprocess.Popen[bytes]) -> list[psutil.Process]:
    try:
        return psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def named(procs: list[psutil.Process], fragment: str) -> list[psutil.Process]:
    found = []
    for proc in procs:
        try:
            if any(fragment in part for part in proc.cmdline()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def wait_for(condition: Callable[[], object], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s"
        time.sleep(0.05)


def survivors(procs: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.NoSuchProcess:
            continue
    return alive


def short_level(base_url: str, duration_s: float) -> LoadRequest:
    settings = LoadSettings(duration_s=duration_s, warmup_s=0, timeout_s=2, pause_s=0)
    return LoadRequest(base_url + "/hello", settings, 2, None, LOADER)


def start_refserver(host: RemoteHost):  # -> StackStarted
    return host.start_stack(
        "refserver", server_cpus=SERVER, services_cpus=SERVER, workloads=["hello"], timeout_s=120
    )


@pytest.mark.concurrent
def test_hello_names_the_agent_and_keep_leaves_its_run_dir(start_agent):
    host, proc, run_dir = start_agent(keep=True)
    info = host.hello()
    assert info.version == __version__
    assert info.pid == proc.pid
    assert set(info.cores) == set(CPUS)
    assert host.close(timeout_s=30) == 0
    assert (run_dir / RUN_DIR_MARKER).is_file()
    assert "the controller said bye" in (run_dir / LOG_NAME).read_text()


@pytest.mark.concurrent
def test_readiness_comes_from_the_agents_host(start_agent):
    """`hosts check` asks the agent, in the worker thread: heartbeats go on meanwhile."""
    host, _, _ = start_agent()
    ready = host.readiness()
    assert ready.python == platform.python_version()
    # The agent's own stacks folder (the fakes), each available or saying why not.
    assert set(ready.stacks) == {p.name for p in FAKE_STACKS.iterdir() if p.is_dir()}
    assert ready.stacks["refserver"] == "" and ready.stacks["missing"] != ""
    assert ready.loader == native_loader_built()
    assert {limit.name for limit in ready.limits} == {"open files", "somaxconn"}
    assert host.lost is None


@pytest.mark.concurrent
def test_an_injected_clock_offset_is_measured(start_agent):
    host, _, _ = start_agent(clock_offset_s=2.5)  # its clock 2.5 s ahead of ours
    offset, delay = host.clock_offset()
    # The four-timestamp bound, whatever the machine's load: the estimate errs by at most half
    # the round trip (both clocks are this machine's, 2.5 s apart by construction).
    assert delay >= 0 and abs(offset - 2.5) <= delay / 2 + 1e-6
    assert host.offset_s == offset


@pytest.mark.concurrent
def test_requests_the_agent_must_refuse_leave_it_serving(start_agent):
    host, _, run_dir = start_agent()
    bad_url = LoadRequest("--config=/etc/shadow", LoadSettings(duration_s=1), 2, None, LOADER)
    with pytest.raises(InputError, match="^h1: run-load: url"):
        host.run_load(bad_url, time.time(), timeout_s=10)
    with pytest.raises(InputError, match="CPUs 4096 are not available"):
        host.start_stack(
            "refserver", server_cpus=frozenset({4096}), services_cpus=SERVER, workloads=["hello"]
        )
    with pytest.raises(InputError, match="not a valid name"):
        host.start_stack("../../etc", server_cpus=SERVER, services_cpus=SERVER, workloads=["hello"])
    with pytest.raises(InputError, match="not an IPv4 address"):
        host.start_stack(
            "refserver",
            server_cpus=SERVER,
            services_cpus=SERVER,
            workloads=["hello"],
            host="0.0.0.0; rm -rf /",
        )
    with pytest.raises(InputError, match="service_env key 'LD_PRELOAD' is not one of"):
        host.start_stack(
            "refserver",
            server_cpus=SERVER,
            services_cpus=SERVER,
            workloads=["hello"],
            service_env={"LD_PRELOAD": "/tmp/x.so"},
        )
    with pytest.raises(InputError, match="service_env DB_HOST has characters"):
        host.start_stack(
            "refserver",
            server_cpus=SERVER,
            services_cpus=SERVER,
            workloads=["hello"],
            service_env={"DB_HOST": "$(reboot)"},
        )
    with pytest.raises(InputError, match="start-services: clients: '%' is not an IPv4"):
        host.start_services(["mysql-row"], cpus=SERVER, host="127.0.0.1", clients=["%"])
    with pytest.raises(InputError, match="start-services: unknown workload"):
        host.start_services(["nope"], cpus=SERVER, host="127.0.0.1", clients=[])
    with pytest.raises(InputError, match="monitor does not run"):
        host.monitor_stop()
    assert host.hello().version == __version__
    assert host.exits() == ()
    assert not (run_dir / "stacks" / "etc").exists()


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_a_stack_started_loaded_watched_and_stopped_through_the_agent(start_agent):
    host, proc, run_dir = start_agent()
    host.clock_offset()
    stack = start_refserver(host)
    assert stack.base_url.startswith("http://127.0.0.1:")
    assert set(stack.server_roles) == {"server"} and stack.service_roles == {}
    assert stack.params == {"fault": ""}
    assert stack.processes.startswith("server 1 process (")  # counted on the agent's host
    (outcome,) = host.verify(["hello"])
    assert outcome.ok, outcome.failures

    # One level, 1 s, 2 connections, started on the agent's clock.
    host.monitor_start()
    start_at = time.time() + host.offset_s + 0.5
    result, started_at = host.run_load(short_level(stack.base_url, 1.0), start_at, timeout_s=60)
    usage = host.monitor_stop()
    assert result.completed > 0 and result.errors_total == 0
    assert start_at <= started_at < start_at + 0.5
    assert {"server", "loader"} <= set(usage)
    # What the level guarantees, whatever the CPU tick granularity and the machine's load:
    # the server was alive (its memory sampled) and, having answered requests that arrived
    # while it waited for them, was woken (context switches are counted exactly, unlike CPU
    # time, which a 1-s level at 2 connections may spend in less than one tick).
    server = usage["server"]
    assert server.rss_max_bytes > 0 and server.processes_max >= 1
    assert server.ctx_voluntary > 0
    assert server.cpu_user_s >= 0 and server.cpu_sys_s >= 0

    # stop-load ends a level at once: its run-load fails, the stack stays up.
    failed: list[BaseException] = []

    def long_level() -> None:
        try:
            host.run_load(
                short_level(stack.base_url, 30.0), time.time() + host.offset_s, timeout_s=60
            )
        except DriverError as exc:
            failed.append(exc)

    level = threading.Thread(target=long_level)
    level.start()
    wait_for(lambda: named(agent_processes(proc), "stackbench-load"), 20, "the loader runs")
    stopped = time.monotonic()
    host.stop_load()
    level.join(timeout=20)
    assert failed and time.monotonic() - stopped < 5
    assert host.exits() == ()

    # The crash watch: the server killed, its exit reported with its log.
    os.kill(stack.server_roles["server"], signal.SIGKILL)
    wait_for(host.exits, 10, "the exit is reported")
    (exit_info,) = host.exits()
    assert exit_info.name == "refserver process 'server'" and exit_info.status == -9
    host.stop_stack()
    assert not psutil.pid_exists(stack.server_roles["server"])
    # Its logs, fetched before the run directory goes; a planted symlink is not followed.
    (run_dir / "stacks" / "refserver" / "planted.log").symlink_to("/etc/shadow")
    logs = host.fetch_logs("stack", "refserver")
    assert logs and "planted.log" not in logs and all(n.endswith(".log") for n in logs)
    assert "agent.log" in host.fetch_logs("agent")
    with pytest.raises(InputError, match="not a valid name"):
        host.fetch_logs("stack", "../..")
    assert host.close(timeout_s=30) == 0
    assert not run_dir.exists()


@pytest.mark.concurrent
@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_stdin_closed_mid_level_leaves_no_process_and_no_run_dir(start_agent):
    host, proc, run_dir = start_agent()
    stack = start_refserver(host)
    lost: list[BaseException] = []

    def level() -> None:
        try:
            host.run_load(short_level(stack.base_url, 30.0), time.time(), timeout_s=60)
        except HostLost as exc:
            lost.append(exc)

    loading = threading.Thread(target=level)
    loading.start()
    wait_for(lambda: named(agent_processes(proc), "stackbench-load"), 20, "the loader runs")
    procs = agent_processes(proc)
    assert named(procs, "refserver.py") and named(procs, "stackbench-load")
    host.stop_heartbeat()
    assert proc.stdin is not None
    proc.stdin.close()  # the controller is gone: the SSH channel reached end of file
    wait_for(lambda: not survivors(procs), 15, "every process of the agent is gone")
    assert proc.wait(timeout=15) == ExitCode.OK
    loading.join(timeout=15)
    assert lost and "channel closed" in str(lost[0])
    assert not run_dir.exists()


def test_a_lost_heartbeat_stops_everything(start_agent):
    host, proc, run_dir = start_agent(heartbeat_s=2, client_heartbeat_s=None)
    started = time.monotonic()
    stack = start_refserver(host)
    procs = agent_processes(proc)
    assert named(procs, "refserver.py")
    # The controller says nothing more: within 2 s of its last message the agent gives up.
    assert proc.wait(timeout=20) == ExitCode.ENVIRONMENT
    assert time.monotonic() - started >= 2
    assert not survivors(procs)
    assert not psutil.pid_exists(stack.server_roles["server"])
    assert not run_dir.exists()
    with pytest.raises(HostLost, match="exit code 3.*heartbeat lost"):
        host.exits()


@pytest.mark.concurrent
def test_sigterm_stops_everything_and_exits_143(start_agent):
    host, proc, run_dir = start_agent()
    start_refserver(host)
    procs = agent_processes(proc)
    assert named(procs, "refserver.py")
    host.stop_heartbeat()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    assert not survivors(procs)
    assert not run_dir.exists()


def own_refserver(folder: Path) -> Path:
    """A stack of the user's own: the reference server and its manifest in one folder."""
    stack = folder / "mine"
    stack.mkdir(parents=True)
    (stack / "refserver.py").write_text((REPO / "tests" / "fakes" / "refserver.py").read_text())
    manifest = (FAKE_STACKS / "refserver" / "stack.toml").read_text()
    manifest = manifest.replace('name = "refserver"', 'name = "myref"')
    manifest = manifest.replace("{{stack_dir}}/../../refserver.py", "{{stack_dir}}/refserver.py")
    (stack / "stack.toml").write_text(manifest)
    stack.chmod(0o755)
    return stack


@pytest.mark.concurrent
def test_a_stack_of_the_users_own_is_put_built_and_started_from_the_agents_copy(
    start_agent, tmp_path
):
    host, proc, run_dir = start_agent()
    stack = own_refserver(tmp_path / "user")
    with pytest.raises(InputError, match="unknown stack .myref."):  # not there before it is put
        host.start_stack("myref", server_cpus=SERVER, services_cpus=SERVER, workloads=["hello"])
    assert host.put_stack("myref", stack) > 0
    started = host.start_stack(
        "myref", server_cpus=SERVER, services_cpus=SERVER, workloads=["hello"], timeout_s=120
    )
    (outcome,) = host.verify(["hello"])
    assert outcome.ok, outcome.failures
    # it runs the agent's copy, not the folder on this machine
    server = psutil.Process(started.server_roles["server"])
    assert str(run_dir / "own" / "myref" / "mine" / "refserver.py") in server.cmdline()
    host.stop_stack()
    # a part out of order, or an archive whose digest is not the one announced, is refused
    with pytest.raises(InputError, match="out of order"):
        host._call(
            p.PutStack(id=host._new_id(), stack="x", part=1, parts=2, sha256="0" * 64, data=""),
            p.Ok,
        )
    with pytest.raises(InputError, match="SHA-256 does not match"):
        host._call(
            p.PutStack(id=host._new_id(), stack="x", part=0, parts=1, sha256="0" * 64, data=""),
            p.Ok,
        )
    assert host.close(timeout_s=30) == 0
