"""A run spread over three network-namespace hosts (scripts/testhosts.sh up 3): the server on h1,
one loader on each of h2 and h3, through SSH and `stackbench agent` exactly as on real machines.

Checked: the merged histogram is the exact sum of the loaders' parts; the level records its
hosts and the loaders' start skew; no process but sshd is left in any namespace after the run,
nor after the SSH link to a loader host is cut mid-level; a changed host key stops the run; a
clock offset injected into one host is measured and corrected; the results have the shape of
the same suite run on one machine.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psutil
import pymysql
import pytest
from hdrh.histogram import HdrHistogram

from stackbench.config.hosts import HostsFile, parse_hosts_file
from stackbench.config.paths import REPO_ROOT
from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite, resolve_hosts
from stackbench.engine.hosts import open_hosts
from stackbench.engine.runner import Runner, RunSetup
from stackbench.errors import ServiceError
from stackbench.lab.inventory import load_inventory
from stackbench.services.resp import redis_command
from stackbench.store.store import Store
from tests.testhosts import HOSTS_FILE, NEEDS_TEST_HOSTS, STATE, run_testhosts

pytestmark = NEEDS_TEST_HOSTS

NAMESPACES = ("sbh1", "sbh2", "sbh3")

SUITE = """
name = "multihost-test"
stacks = ["go-nethttp"]
workloads = ["hello"]
hosts_file = "{hosts}"

[load]
driver = "native"
connections = [4, 20]
duration_s = {duration}
warmup_s = 0
pause_s = 0
timeout_s = 5

[placement]
server_host = "h1"
loader_hosts = ["h2", "h3"]
server_cpus = "0"
services_cpus = "0"
loader_cpus = "{loader}"
"""


def stackbench(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "120", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "stackbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def suite_file(
    tmp_path: Path, duration: float = 3, hosts: Path = HOSTS_FILE, levels: str = "[4, 20]"
) -> Path:
    loader = "1" if len(os.sched_getaffinity(0)) > 1 else "0"
    path = tmp_path / "multihost.toml"
    path.write_text(
        SUITE.format(hosts=hosts, duration=duration, loader=loader).replace("[4, 20]", levels)
    )
    return path


def left_in_namespaces() -> dict[str, list[str]]:
    """Every process in a test-host namespace but its sshd listener."""
    left: dict[str, list[str]] = {}
    for ns in NAMESPACES:
        pids = subprocess.run(
            ["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=10, check=False
        ).stdout.split()
        names = []
        for pid in pids:
            try:
                cmd = " ".join(psutil.Process(int(pid)).cmdline())
            except psutil.Error:
                continue  # ended meanwhile
            if not re.match(r"sshd: /usr/sbin/sshd -f \S+ .*\[listener\]", cmd):
                names.append(cmd)
        if names:
            left[ns] = names
    return left


def running_in(ns: str, fragment: str) -> bool:
    """A process of the namespace runs a command line containing `fragment`."""
    pids = subprocess.run(
        ["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=10, check=False
    ).stdout.split()
    for pid in pids:
        try:
            if fragment in " ".join(psutil.Process(int(pid)).cmdline()):
                return True
        except psutil.Error:
            continue  # ended meanwhile
    return False


def wait_until_clean(timeout_s: float) -> dict[str, list[str]]:
    deadline = time.monotonic() + timeout_s
    while (left := left_in_namespaces()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.fixture(scope="module")
def hosts() -> Iterator[HostsFile]:
    up = run_testhosts("up", "3")
    try:
        assert up.returncode == 0, up.stderr
        yield parse_hosts_file(HOSTS_FILE)
    finally:
        run_testhosts("down")


def test_a_run_over_three_hosts_merges_its_loaders_exactly(hosts, tmp_path):
    out = tmp_path / "out"
    done = stackbench("run", str(suite_file(tmp_path)), "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = " ".join(done.stdout.split())  # the terminal wraps lines
    assert "one loader on each of h2 (10.231.0.12), h3 (10.231.0.13)" in said
    data = Store(out / "stackbench.sqlite").load_run(1)
    assert data.run.status == "complete"
    assert set(data.run.environment.hosts) == {"h1", "h2", "h3"}
    # the shape of a one-machine run of the same suite: one case, its two levels
    (case,) = data.cases
    assert case.status == "ok" and case.effective_params["workers"] == "1"
    levels = data.levels_of(case.id)
    assert [lv.level_value for lv in levels] == [4, 20]
    for lv in levels:
        assert lv.status == "ok" and lv.completed > 0
        assert lv.hosts["server"] == "h1"
        assert {lv.hosts["loader@h2"], lv.hosts["loader@h3"]} == {"h2", "h3"}
        assert {"server", "loader@h2", "loader@h3"} <= set(lv.usage)  # CPU per host and role
        assert lv.start_skew_s is not None and lv.start_skew_s < 0.5
        parts = lv.loader_parts
        assert [p.host for p in parts] == ["h2", "h3"]
        assert sum(p.connections for p in parts) == lv.level_value
        assert sum(p.completed for p in parts) == lv.completed
        merged = HdrHistogram.decode(lv.histogram)
        total = HdrHistogram(
            merged.lowest_trackable_value,
            merged.highest_trackable_value,
            merged.significant_figures,
        )
        for p in parts:
            assert p.histogram is not None
            total.add(HdrHistogram.decode(p.histogram))
        assert total.get_total_count() == merged.get_total_count() == lv.completed
        assert list(total.counts) == list(merged.counts)  # bucket by bucket
    assert "host h2" in (out / "run-1" / "summary.md").read_text()
    logs = out / "run-1" / "logs"  # fetched from the hosts before their files were removed
    assert list((logs / "go-nethttp").glob("*.log"))
    assert all((logs / "hosts" / h / "agent.log").is_file() for h in ("h1", "h2", "h3"))
    assert set(data.run.environment.hosts) == {"h1", "h2", "h3"}
    for facts in data.run.environment.hosts.values():  # removed at the end
        assert not Path(facts.run_dir).exists()
    assert wait_until_clean(15) == {}, "a process outlived the run in a test host"


def skewed_launcher(command: tuple[str, ...], offset_s: float) -> tuple[str, ...]:
    """The host's stackbench command, its agent's clock `offset_s` ahead (fakes/skewed_agent.py):
    the same environment words, this interpreter, this checkout."""
    words = tuple(w for w in command if "=" in w and not w.startswith("/"))
    return (
        "/usr/bin/env",
        *(w for w in words if not w.startswith("PYTHONPATH=")),
        f"PYTHONPATH={REPO_ROOT}",
        sys.executable,
        str(REPO_ROOT / "tests" / "fakes" / "skewed_agent.py"),
        repr(offset_s),
    )


def test_an_injected_clock_offset_is_measured_and_corrected(hosts, tmp_path):
    """Namespaces share one clock: h3's agent reports its clock 2.5 s ahead. Uncorrected, h3's
    loader would start 2.5 s after h2's; corrected, they start together."""
    suite = parse_suite(suite_file(tmp_path, levels="[4]"))
    inventory = load_inventory(["go-nethttp"])
    store = Store(tmp_path / "s.sqlite")
    hosts = resolve_hosts(suite, None)
    assert hosts is not None
    h3 = hosts.hosts["h3"]
    skewed = replace(h3, stackbench=skewed_launcher(h3.stackbench, 2.5))
    setup = RunSetup(
        inventory,
        store,
        tmp_path,
        hosts=replace(hosts, hosts={**hosts.hosts, "h3": skewed}),
        keep_remote=True,
    )
    data = store.load_run(Runner(build_plan(suite, inventory, None, None), setup).execute())
    offsets = {name: facts.clock_offset_s for name, facts in data.run.environment.hosts.items()}
    assert abs(offsets["h3"] - 2.5) < 0.05 and abs(offsets["h2"]) < 0.05
    (level,) = data.levels
    assert level.status == "ok" and level.start_skew_s is not None
    assert level.start_skew_s < 0.5, level.start_skew_s
    started = {p.host: p.started_at for p in level.loader_parts}
    assert abs(started["h3"] - started["h2"]) < 0.5  # on the controller's clock
    assert wait_until_clean(15) == {}
    kept = Path(data.run.environment.hosts["h1"].run_dir)  # --keep: left on the host
    assert kept.is_dir()
    shutil.rmtree(kept)


def test_a_changed_host_key_stops_the_run_before_anything_starts(hosts, tmp_path):
    known = tmp_path / "known_hosts"
    lines = (STATE / "known_hosts").read_text().splitlines()
    other = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")],
        capture_output=True,
        timeout=30,
        check=True,
    )
    assert other.returncode == 0
    fake = (tmp_path / "other.pub").read_text().split()
    known.write_text(
        "\n".join(
            f"{line.split()[0]} {fake[0]} {fake[1]}" if line.startswith("10.231.0.11 ") else line
            for line in lines
        )
        + "\n"
    )
    hosts_file = tmp_path / "hosts.toml"
    hosts_file.write_text(HOSTS_FILE.read_text().replace(f"{STATE}/known_hosts", str(known)))
    out = tmp_path / "out"
    done = stackbench("run", str(suite_file(tmp_path, hosts=hosts_file)), "--out", str(out))
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert "ssh-keygen -R" in done.stderr and "h1" in done.stderr
    assert (
        not (out / "stackbench.sqlite").exists() or not Store(out / "stackbench.sqlite").runs()
    )  # stopped before the run was stored
    assert wait_until_clean(15) == {}


def test_a_link_cut_mid_level_fails_that_level_and_leaves_nothing_behind(hosts, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "120", "NO_COLOR": "1"}
    # 20 s: the cut lands within a poll of h2's loader starting, far inside the level; the
    # level need not outlast the loss being noticed (h2's answer can never come back), but h3
    # loads to its end, so a longer level only costs time.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stackbench",
            "run",
            str(suite_file(tmp_path, duration=20, levels="[4]")),
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout or []), daemon=True)
    reader.start()
    try:
        # The cut waits for h2's loader, not for a time: it lands inside the level however
        # slow the start and the verification were.
        deadline = time.monotonic() + 180
        # The loader measuring (its URL follows the binary), not a command line that merely
        # names the binary (an agent started with STACKBENCH_LOAD in its environment).
        while not running_in("sbh2", "stackbench-load http://"):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(output)
            time.sleep(0.1)
        subprocess.run(["ip", "link", "set", "sbh2v", "down"], check=True, timeout=10)
        code = proc.wait(timeout=240)
    finally:
        subprocess.run(["ip", "link", "set", "sbh2v", "up"], check=False, timeout=10)
        if proc.poll() is None:
            proc.kill()
    reader.join(10)
    text = "".join(output)
    store = Store(out / "stackbench.sqlite")
    assert store.runs(), text[-3000:]  # the run was stored before the link went down
    data = store.load_run(1)
    (level,) = data.levels
    assert level.status == "failed" and level.error_class == "host-lost", text[-3000:]
    assert "h2" in level.error
    assert code == 3, text[-3000:]  # the set-up failed, not the stack under test
    # the agent on h2 heard nothing for its heartbeat time and stopped its loader itself
    assert wait_until_clean(30) == {}


SERVICES_SUITE = SUITE.replace(
    'workloads = ["hello"]', 'workloads = ["mysql-row", "redis-get"]'
).replace('loader_hosts = ["h2", "h3"]', 'loader_hosts = ["h2"]\nservices_host = "h3"')


def test_services_on_their_own_host_serve_the_server_host(hosts, tmp_path):
    """MariaDB and Redis on h3, the stack on h1 reaching them over the bridge, the loader on
    h2: each level records the services' host and their CPU there."""
    path = tmp_path / "services.toml"
    path.write_text(
        SERVICES_SUITE.format(hosts=HOSTS_FILE, duration=3, loader="1").replace("[4, 20]", "[4]")
    )
    out = tmp_path / "out"
    done = stackbench("run", str(path), "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = " ".join(done.stdout.split())
    assert "data services on host h3 (10.231.0.13), reached over the network by h1 only" in said
    data = Store(out / "stackbench.sqlite").load_run(1)
    assert data.run.settings.placement.services_host == "h3"
    assert [c.status for c in data.cases] == ["ok", "ok"]
    assert {lv.case_id for lv in data.levels} == {c.id for c in data.cases}  # both were loaded
    for level in data.levels:
        assert level.status == "ok" and level.completed > 0
        assert level.hosts["server"] == "h1"
        service = "mariadb" if level.hosts.get("mariadb") else "redis"
        assert level.hosts[service] == "h3" and service in level.usage
    assert "data services | 0 on host h3" in (out / "run-1" / "summary.md").read_text()
    assert (
        out / "run-1" / "logs" / "hosts" / "h3" / "services" / "mariadb" / "mariadb.log"
    ).is_file()
    assert wait_until_clean(15) == {}


def test_services_on_their_own_host_let_in_the_server_host_only(hosts):
    """The services host's MariaDB takes the stack's login from h1's address and refuses the
    same login, right password and all, from anywhere else (here: the controller's address);
    its Redis answers nobody without the per-start password."""
    with open_hosts(hosts, ["h3"]) as remote:
        started = remote["h3"].client.start_services(
            ["mysql-row", "redis-get"],
            cpus=frozenset({0}),
            host="10.231.0.13",
            clients=("10.231.0.11",),
        )
        env = started.env
        assert env["DB_HOST"] == env["REDIS_HOST"] == "10.231.0.13"
        login = {
            "host": env["DB_HOST"],
            "port": int(env["DB_PORT"]),
            "user": env["DB_USER"],
            "password": env["DB_PASSWORD"],
            "database": env["DB_NAME"],
            "connect_timeout": 5,
        }
        with pytest.raises(pymysql.err.OperationalError) as refused:
            pymysql.connect(**login)  # from 10.231.0.1: not an allowed host
        assert refused.value.args[0] in (1045, 1130), refused.value
        with pytest.raises(ServiceError, match="NOAUTH"):
            redis_command(env["REDIS_HOST"], int(env["REDIS_PORT"]), "GET", "x")
        from_h1 = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                "sbh1",
                sys.executable,
                "-c",
                "import json, os, pymysql; c = pymysql.connect(**json.loads(os.environ['LOGIN']));"
                " cur = c.cursor(); cur.execute('SELECT COUNT(*) FROM World');"
                " print(cur.fetchone()[0])",
            ],
            env={**os.environ, "LOGIN": json.dumps(login)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert from_h1.returncode == 0 and int(from_h1.stdout) > 0, from_h1.stderr
    assert wait_until_clean(15) == {}


OWN_SUITE = """
name = "own-multihost"
stacks = ["./apps/mine"]
workloads = ["hello"]
hosts_file = "{hosts}"

[load]
driver = "native"
connections = [4]
duration_s = 2
warmup_s = 0
pause_s = 0

[placement]
server_host = "h1"
loader_hosts = ["h2"]
server_cpus = "0"
loader_cpus = "{loader}"
"""


def test_a_stack_of_the_users_own_is_copied_to_the_server_host_and_run_there(hosts, tmp_path):
    """The folder exists on this machine only (the namespaces share the filesystem, so the
    test checks that h1 ran its agent's copy): copied over the agent's channel, built and
    started on h1, loaded from h2."""
    stack = tmp_path / "apps" / "mine"
    stack.mkdir(parents=True)
    (stack / "refserver.py").write_text((REPO_ROOT / "tests/fakes/refserver.py").read_text())
    manifest = (REPO_ROOT / "tests/fakes/stacks/refserver/stack.toml").read_text()
    (stack / "stack.toml").write_text(
        manifest.replace('name = "refserver"', 'name = "mine"').replace(
            "{{stack_dir}}/../../refserver.py", "{{stack_dir}}/refserver.py"
        )
    )
    loader = "1" if len(os.sched_getaffinity(0)) > 1 else "0"
    suite = tmp_path / "own.toml"
    suite.write_text(OWN_SUITE.format(hosts=HOSTS_FILE, loader=loader))
    out = tmp_path / "out"
    done = stackbench("run", str(suite), "--out", str(out), "--no-calibrate")
    said = " ".join(done.stdout.split())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"copying {stack} to host h1" in said
    data = Store(out / "stackbench.sqlite").load_run(1)
    (case,) = data.cases
    assert case.stack == "mine" and case.status == "ok"
    (level,) = data.levels
    assert level.status == "ok" and level.completed > 0 and not any(level.errors.values())
    assert level.hosts["server"] == "h1" and level.hosts["loader@h2"] == "h2"
    agent_log = (out / "run-1" / "logs" / "hosts" / "h1" / "agent.log").read_text()
    copy = re.search(r"stack mine put into (\S+)", agent_log)
    assert copy is not None  # into h1's agent's run directory, not from this machine's folder
    assert Path(copy.group(1)).is_relative_to(data.run.environment.hosts["h1"].run_dir)
    assert list((out / "run-1" / "logs" / "mine").glob("*.log"))  # the stack's, from h1
    assert wait_until_clean(15) == {}


EXTERNAL_SUITE = """
name = "external-multihost"
stacks = []
workloads = ["hello"]
hosts_file = "{hosts}"

[load]
driver = "native"
connections = [4]
duration_s = 2
warmup_s = 0
pause_s = 0

[placement]
server_host = "h1"
loader_hosts = ["h2"]
loader_cpus = "{loader}"

[external.byhand]
url = "http://10.231.0.11:{port}"
workloads = ["hello"]
pids = [{pid}]
"""


@pytest.fixture
def server_on_h1() -> Iterator[tuple[int, int]]:
    """The hello server run by hand in h1's namespace, on h1's address, as the unprivileged
    user (a root process is refused) from a folder it can read: `ip netns exec` and
    `setpriv` exec, so the pid is the server's own."""
    folder = Path(tempfile.mkdtemp(prefix="stackbench-byhand-"))
    folder.chmod(0o755)
    script = folder / "hello.py"
    shutil.copy(REPO_ROOT / "tests" / "fakes" / "external_hello.py", script)
    script.chmod(0o644)
    port = 18080
    command = ["ip", "netns", "exec", "sbh1", "setpriv", "--reuid=stackbench"]
    command += ["--regid=stackbench", "--init-groups", "/usr/bin/python3", str(script)]
    proc = subprocess.Popen(
        [*command, str(port), "10.231.0.11"], stdout=subprocess.PIPE, text=True, cwd=folder
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc.pid, port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(folder)


def test_a_server_run_by_hand_on_the_server_host_is_sampled_by_its_agent(
    hosts, tmp_path, server_on_h1
):
    pid, port = server_on_h1
    loader = "1" if len(os.sched_getaffinity(0)) > 1 else "0"
    suite = tmp_path / "external.toml"
    suite.write_text(EXTERNAL_SUITE.format(hosts=HOSTS_FILE, loader=loader, port=port, pid=pid))
    out = tmp_path / "out"
    done = stackbench("run", str(suite), "--out", str(out), "--no-calibrate")
    said = " ".join(done.stdout.split())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"external at http://10.231.0.11:{port} on host h1" in said
    data = Store(out / "stackbench.sqlite").load_run(1)
    (case,) = data.cases
    assert case.stack == "byhand" and case.status == "ok"
    (level,) = data.levels
    assert level.status == "ok" and level.completed > 0 and not any(level.errors.values())
    assert level.hosts["server"] == "h1" and level.hosts["loader@h2"] == "h2"
    server = level.usage["server"]  # sampled by h1's agent
    assert server.rss_max_bytes > 0 and server.cpu_user_s + server.cpu_sys_s > 0
    assert psutil.pid_exists(pid)  # never signalled
