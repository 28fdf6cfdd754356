"""Faults end to end, with real servers and the real loader: a server killed mid-level, a stack
that keeps dying, a loader that fails, stackbench itself killed (SIGKILL, then resume) or
stopped (SIGTERM). Levels are 1-2 s; the fake stacks stand in where a real one is not needed.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from conftest import FAKE_STACKS, have, native_loader_built

from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine.progress import ProgressEvent
from stackbench.engine.runner import Runner, RunSetup
from stackbench.errors import ExitCode
from stackbench.lab.inventory import load_inventory
from stackbench.store.store import Store

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not native_loader_built(), reason="loadgen not built"),
]

ENGINE_FAKES = Path(__file__).parent / "fakes" / "stacks"
LEVEL_S = 4  # the server-killed test's levels: the kill lands early in one, by construction
LOADER = "1" if len(os.sched_getaffinity(0)) > 1 else "0"


def suite_text(
    stacks: list[str], connections: list[int], duration_s: float = 1, extra: str = ""
) -> str:
    return f"""
name = "faults"
stacks = {json.dumps(stacks)}
workloads = ["hello"]

[load]
connections = {json.dumps(connections)}
duration_s = {duration_s}
warmup_s = 0
pause_s = 0
timeout_s = 2

[placement]
server_cpus = "0"
loader_cpus = "{LOADER}"
{extra}"""


def write_suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "faults.toml"
    path.write_text(text)
    return path


def stackbench(
    *args: str, stacks_dir: Path | None = None, **popen: object
) -> subprocess.Popen[str]:
    env = {**os.environ, "COLUMNS": "160"}
    if stacks_dir is not None:
        env["STACKBENCH_STACKS_DIR"] = str(stacks_dir)
    return subprocess.Popen(
        [sys.executable, "-m", "stackbench", *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        **popen,
    )


def level_count(db: Path) -> int:
    """The standing levels stored: a level measured again after a disturbance (issue 32)
    leaves its first measurement behind, superseded, which a resume does not replay."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as conn:
            query = "SELECT COUNT(*) FROM levels WHERE superseded IS NULL"
            return int(conn.execute(query).fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not created yet
        return 0


def wait_for_levels(db: Path, count: int, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while level_count(db) < count:
        assert time.monotonic() < deadline, f"fewer than {count} levels after {timeout_s} s"
        time.sleep(0.05)


def descendants(pid: int, name: str) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if p.name() == name]
    except psutil.NoSuchProcess:
        return []


def alive(pids: list[int]) -> list[int]:
    return [
        pid
        for pid in pids
        if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]


@pytest.mark.skipif(not have("node") or not have("npm"), reason="node is not installed")
def test_a_server_killed_mid_level_fails_that_level_and_the_sweep_goes_on(tmp_path):
    """SIGKILL node's server as soon as the second level's loader runs: that level is failed
    (server-exited, with the signal and the log tail), node is restarted and verified again,
    the later levels are measured, and `run` exits 4. The kill waits for the loader, not for
    a time: it lands inside the level however slow the machine is."""
    out = tmp_path / "out"
    suite = write_suite(tmp_path, suite_text(["node"], [2, 3, 4, 5], duration_s=LEVEL_S))
    run = stackbench("run", str(suite), "--out", str(out))
    db = out / "stackbench.sqlite"
    killed: list[int] = []

    def kill_during_second_level() -> None:
        wait_for_levels(db, 1)
        deadline = time.monotonic() + 120
        while not descendants(run.pid, "stackbench-load") and time.monotonic() < deadline:
            time.sleep(0.02)
        servers = descendants(run.pid, "node")
        killed.extend(p.pid for p in servers)
        for p in servers:
            p.send_signal(signal.SIGKILL)

    killer = threading.Thread(target=kill_during_second_level, daemon=True)
    killer.start()
    output, _ = run.communicate(timeout=600)
    killer.join(timeout=5)
    assert killed, "the node server was not found"
    assert run.returncode == ExitCode.STACK_FAILED, output
    data = Store(db).load_run(1)
    assert data.run.status == "complete"
    levels = sorted(data.levels, key=lambda lv: lv.level_index)
    assert [lv.level_value for lv in levels] == [2, 3, 4, 5]
    crashed = levels[1]
    assert crashed.status == "failed" and crashed.error_class == "server-exited"
    assert "killed by signal 9 (SIGKILL)" in crashed.error
    assert "node process 'node'" in crashed.error and crashed.log_tail
    assert any(f.text.startswith("failed: server-exited") for f in crashed.flags)
    # It stopped the load at once instead of hammering a dead port to the end of the level.
    assert crashed.duration_s < LEVEL_S
    for lv in (levels[0], *levels[2:]):
        assert lv.status == "ok" and lv.completed > 0 and lv.error_class == "", lv
    (case,) = data.cases
    assert case.status == "ok" and "restarted (1 of at most 2)" in case.reason
    assert [v.ok for v in data.verifications] == [True, True]  # verified again after restart
    assert "server-exited" in output and "exit 4" in output
    logs = out / "run-1" / "logs" / "node"
    assert (logs / "server.log").is_file() and (logs / "start-2" / "server.log").is_file()
    assert not alive(killed)


@pytest.mark.skipif(not have("node") or not have("redis-server"), reason="needs node and Redis")
def test_a_service_killed_mid_level_is_restarted_with_the_stack(tmp_path):
    """SIGKILL Redis during node's second redis-get level: the level fails naming the service,
    Redis and node start again, the next level is measured; both Redis logs are kept."""
    out = tmp_path / "out"
    text = suite_text(["node"], [2, 3, 4], duration_s=2).replace('["hello"]', '["redis-get"]')
    run = stackbench("run", str(write_suite(tmp_path, text)), "--out", str(out))
    db = out / "stackbench.sqlite"
    # The kill waits for the second level's loader, not for a time: it lands inside that
    # level however slow the machine is (the first level's loader ended before it was stored).
    wait_for_levels(db, 1)
    deadline = time.monotonic() + 120
    while not descendants(run.pid, "stackbench-load") and time.monotonic() < deadline:
        time.sleep(0.02)
    victims = descendants(run.pid, "redis-server")
    for p in victims:
        p.send_signal(signal.SIGKILL)
    output, _ = run.communicate(timeout=600)
    assert victims and run.returncode == ExitCode.STACK_FAILED, output
    data = Store(db).load_run(1)
    first, second, third = data.levels
    assert first.status == "ok" and third.status == "ok" and third.completed > 0
    assert second.error_class == "server-exited"
    assert second.error.startswith("service redis killed by signal 9 (SIGKILL)")
    logs = out / "run-1" / "logs"
    assert (logs / "services" / "redis" / "redis.log").is_file()
    assert (logs / "services" / "redis" / "start-2" / "redis.log").is_file()
    assert (logs / "node" / "start-2").is_dir()


def dying_inventory() -> dict:
    return {**load_inventory(stacks_dir=FAKE_STACKS), **load_inventory(stacks_dir=ENGINE_FAKES)}


def test_a_stack_that_keeps_dying_is_given_up_and_the_other_stacks_run(tmp_path):
    """`dying` exits after 20 requests, so in every level: with max_restarts = 1
    it is restarted once, then given up; refserver, next in the suite, is measured."""
    inventory = dying_inventory()
    text = suite_text(["dying", "refserver"], [2, 3, 4], extra="[limits]\nmax_restarts = 1\n")
    suite = parse_suite(write_suite(tmp_path, text))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, inventory, None, None), RunSetup(inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    assert data.run.status == "complete"
    dying, ref = sorted(data.cases, key=lambda c: c.stack)
    assert dying.stack == "dying" and dying.status == "failed"
    assert "given up for the rest of the run after 1 restart(s)" in dying.reason
    assert "(suite key limits.max_restarts = 1)" in dying.reason
    dying_levels = data.levels_of(dying.id)
    assert [lv.level_value for lv in dying_levels] == [2, 3]
    for lv in dying_levels:
        assert lv.status == "failed" and lv.error_class == "server-exited"
        assert "exited with status 7" in lv.error and "dying: exiting on purpose" in lv.log_tail
    assert ref.status == "ok"
    assert [lv.status for lv in data.levels_of(ref.id)] == ["ok", "ok", "ok"]
    logs = tmp_path / f"run-{run_id}" / "logs" / "dying"
    assert (logs / "server.log").is_file() and (logs / "start-2" / "server.log").is_file()


FAILING_LOADER = """#!/bin/sh
# A load tool that fails at 3 connections, and is the real one otherwise.
for arg in "$@"; do
  if [ "$prev" = "-c" ] && [ "$arg" = "3" ]; then
    echo "stackbench-load: failing on purpose at 3 connections" >&2
    exit 1
  fi
  prev="$arg"
done
exec "{real}" "$@"
"""


def test_a_failing_loader_fails_its_level_not_the_run(tmp_path, monkeypatch):
    from stackbench.config.paths import loadgen_binary

    script = tmp_path / "failing-loader"
    script.write_text(FAILING_LOADER.format(real=loadgen_binary()))
    script.chmod(0o755)
    monkeypatch.setenv("STACKBENCH_LOAD", str(script))
    inventory = load_inventory(stacks_dir=FAKE_STACKS)
    suite = parse_suite(write_suite(tmp_path, suite_text(["refserver"], [2, 3, 4])))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, inventory, None, None), RunSetup(inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    assert data.run.status == "complete"
    two, three, four = data.levels
    assert two.status == "ok" and four.status == "ok" and four.completed > 0
    assert three.status == "failed" and three.error_class == "loader-failed"
    assert "exited 1" in three.error
    assert "failing on purpose at 3 connections" in three.log_tail
    assert data.cases[0].status == "ok"
    # (a busy machine may add a note of a re-measured disturbed level before it)
    assert "hello c=3: the load tool failed: " in data.cases[0].reason

    from stackbench.engine.outcome import run_outcome

    assert run_outcome(data).exit_code == ExitCode.ENVIRONMENT


def test_sigkill_of_stackbench_then_results_shows_interrupted_and_resume_completes(tmp_path):
    """SIGKILL the whole stackbench process group mid-run: no server survives, `results` marks
    the run interrupted and removes its temporary files, `run --resume 1` measures the rest
    and writes one report with every level; a changed suite file is refused first."""
    out = tmp_path / "out"
    suite = write_suite(tmp_path, suite_text(["refserver"], [2, 3, 4, 5, 6]))
    run = stackbench(
        "run", str(suite), "--out", str(out), stacks_dir=FAKE_STACKS, start_new_session=True
    )
    db = out / "stackbench.sqlite"
    wait_for_levels(db, 2)
    servers = [p.pid for p in descendants(run.pid, "python3")]
    os.killpg(run.pid, signal.SIGKILL)
    run.communicate(timeout=30)
    scratch = Path(Store(db).run(1).scratch_dir)
    assert scratch.is_dir() and Store(db).run(1).status == "running"
    deadline = time.monotonic() + 15
    while alive(servers) and time.monotonic() < deadline:  # they get SIGTERM (PDEATHSIG)
        time.sleep(0.1)
    assert servers and not alive(servers), "a server outlived stackbench"

    results = stackbench("results", "--out", str(out), stacks_dir=FAKE_STACKS)
    listing, _ = results.communicate(timeout=60)
    assert results.returncode == 0, listing
    assert "interrupted" in listing and "--resume 1" in listing
    assert not scratch.exists()
    kept = level_count(db)
    assert kept >= 2 and Store(db).run(1).status == "interrupted"

    original = suite.read_text()
    suite.write_text(original.replace("duration_s = 1", "duration_s = 2"))
    refused = stackbench("run", "--resume", "1", "--out", str(out), stacks_dir=FAKE_STACKS)
    message, _ = refused.communicate(timeout=60)
    assert refused.returncode == ExitCode.BAD_INPUT, message
    assert "changed since run 1 started" in message and "Traceback" not in message
    suite.write_text(original)

    resumed = stackbench("run", "--resume", "1", "--out", str(out), stacks_dir=FAKE_STACKS)
    output, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, output
    data = Store(db).load_run(1)
    assert data.run.status == "complete" and data.run.resumed == 1
    assert [lv.level_value for lv in data.levels] == [2, 3, 4, 5, 6]  # each level once
    assert data.cases[0].status == "ok"
    assert f"{kept} level(s) kept" in output
    exported = json.loads((out / "run-1" / "results.json").read_text())
    assert len(exported["levels"]) == 5


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_or_sighup_stops_the_run_with_128_plus_n_and_a_report(tmp_path, signum, code):
    out = tmp_path / "out"
    suite = write_suite(tmp_path, suite_text(["refserver"], [2, 3, 4, 5, 6, 7, 8]))
    run = stackbench("run", str(suite), "--out", str(out), stacks_dir=FAKE_STACKS)
    wait_for_levels(out / "stackbench.sqlite", 1)
    servers = [p.pid for p in descendants(run.pid, "python3")]
    run.send_signal(signum)
    output, _ = run.communicate(timeout=120)
    assert run.returncode == 128 + signum == code, output
    assert f"interrupted ({signal.Signals(signum).name})" in output
    assert "--resume 1" in output
    data = Store(out / "stackbench.sqlite").load_run(1)
    assert data.run.status == "interrupted" and len(data.levels) >= 1
    assert (out / "run-1" / "report.html").stat().st_size > 1000
    assert not alive(servers)


def test_progress_hears_of_a_restart(tmp_path):
    """The runner says what happened in words: the exit, the restart, the give-up."""
    inventory = dying_inventory()
    text = suite_text(["dying"], [2, 3], extra="[limits]\nmax_restarts = 0\n")
    suite = parse_suite(write_suite(tmp_path, text))
    messages: list[str] = []
    store = Store(tmp_path / "s.sqlite")
    events: list[ProgressEvent] = []
    Runner(
        build_plan(suite, inventory, None, None),
        RunSetup(inventory, store, tmp_path, events.append),
    ).execute()
    messages += [e.describe() for e in events]
    failed = [m for m in messages if "FAILED" in m]
    assert len(failed) == 1 and "exited with status 7 (during the level)" in failed[0]
    assert "max_restarts = 0" in failed[0]
    assert [lv.level_value for lv in store.load_run(1).levels] == [2]
