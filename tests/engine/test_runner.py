"""The pipeline end to end on the fake reference stack: plan -> stack -> verify -> load -> store."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil
import pytest
from conftest import FAKE_STACKS, have, native_loader_built

from stackbench.config.plan import LevelKey, build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine.progress import ProgressEvent
from stackbench.engine.runner import Runner, RunSetup
from stackbench.engine.settle import SettleAdvice
from stackbench.engine.until_decided import extension_plan
from stackbench.store.records import LevelFlag, Superseded
from stackbench.store.store import Store

pytestmark = pytest.mark.integration

SUITE = """
name = "fake"
stacks = ["refserver", "crashing", "missing"]
workloads = ["hello", "sha256?n=2"]

[load]
driver = "{driver}"
connections = [2, 4]
duration_s = 1
warmup_s = 0
pause_s = 0
timeout_s = 3

[placement]
server_cpus = "0"
loader_cpus = "{loader}"
"""


def suite_file(tmp_path: Path, driver: str, text: str = SUITE) -> Path:
    loader = "1" if len(os.sched_getaffinity(0)) > 1 else "0"
    path = tmp_path / "suite.toml"
    path.write_text(text.format(driver=driver, loader=loader))
    return path


def refserver_pids() -> list[int]:
    return [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if any("refserver.py" in part for part in (p.info["cmdline"] or []))
    ]


DRIVERS = [
    pytest.param("wrk", marks=pytest.mark.skipif(not have("wrk"), reason="no wrk")),
    pytest.param(
        "native", marks=pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
    ),
]


@pytest.mark.parametrize("driver", DRIVERS)
def test_run_stores_levels_failures_and_unavailable(tmp_path, fake_inventory, driver):
    before = set(refserver_pids())
    suite = parse_suite(suite_file(tmp_path, driver))
    plan = build_plan(suite, fake_inventory, None, None)
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(plan, RunSetup(fake_inventory, store, tmp_path)).execute()
    data = store.load_run(run_id)
    assert data.run.status == "complete"
    by_stack = {(c.stack, c.label): c for c in data.cases}
    ok = by_stack[("refserver", "sha256?n=2")]
    assert ok.status == "ok"
    assert ok.params == {} and ok.effective_params == {"fault": ""}  # the default, resolved
    levels = data.levels_of(ok.id)
    assert [lv.level_value for lv in levels] == [2, 4]
    for lv in levels:
        assert lv.completed > 0 and lv.errors_total == 0 and lv.status == "ok"
        assert "p50" in lv.latency_us and "server" in lv.usage and "loader" in lv.usage
        # Exact, unlike CPU time (a short level may spend less than one tick): a server that
        # answered requests was woken for them.
        assert lv.usage["server"].ctx_voluntary > 0
    crashed = by_stack[("crashing", "hello")]
    assert crashed.status == "failed" and "exited with code 3" in crashed.reason
    assert "crashing on purpose" in crashed.reason  # the log tail is in the reason
    missing = by_stack[("missing", "hello")]
    assert missing.status == "unavailable" and "nosuchruntime" in missing.reason
    assert {v.workload for v in data.verifications if v.ok} == {"hello", "sha256"}
    assert set(refserver_pids()) == before, "a server process was left behind"


# refused at its verification, before any load: nothing measured, so nothing to disturb
@pytest.mark.concurrent
def test_verification_failure_is_recorded_and_not_loaded(tmp_path, fake_inventory):
    text = SUITE.replace('stacks = ["refserver", "crashing", "missing"]', 'stacks = ["refserver"]')
    text += '\n[params.refserver]\nfault = "constant"\n'
    suite = parse_suite(suite_file(tmp_path, "wrk", text))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, fake_inventory, None, None), RunSetup(fake_inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    assert all(c.status == "failed" and "verification failed" in c.reason for c in data.cases)
    assert data.levels == []


def test_sigint_keeps_finished_levels_and_leaves_no_process(tmp_path):
    text = SUITE.replace("connections = [2, 4]", "connections = [2, 3, 4, 5, 6, 7, 8]")
    text = text.replace('stacks = ["refserver", "crashing", "missing"]', 'stacks = ["refserver"]')
    text = text.replace("duration_s = 1", "duration_s = 2")
    path = suite_file(tmp_path, "wrk", text)
    out = tmp_path / "out"
    env = {**os.environ, "STACKBENCH_STACKS_DIR": str(FAKE_STACKS)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "stackbench", "run", str(path), "--out", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    db = out / "stackbench.sqlite"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if db.exists():
            with sqlite3.connect(db) as conn:
                try:
                    # standing levels: a disturbed level measured again leaves one behind
                    query = "SELECT COUNT(*) FROM levels WHERE superseded IS NULL"
                    if conn.execute(query).fetchone()[0] >= 2:
                        break
                except sqlite3.OperationalError:
                    pass
        time.sleep(0.2)
    children = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
    server_pids = refserver_pids()
    assert server_pids, "the stack was not running"
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output.decode()
    time.sleep(0.5)
    alive = [
        pid
        for pid in children + server_pids
        if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]
    assert not alive, f"left behind: {alive}"
    data = Store(db).load_run(1)
    assert data.run.status == "interrupted"
    assert len(data.levels) >= 2
    assert b"keeps its finished levels" in output


SLO_SUITE = """
name = "slo"
stacks = ["refserver"]
workloads = ["sha256?n=200"]

[load]
driver = "native"
connections = [1, 2, 3, 4, 5, 6]
duration_s = 1
warmup_s = 0
pause_s = 0
timeout_s = 5

[placement]
server_cpus = "0"
loader_cpus = "{loader}"

[slo]
percentile = 99
latency_ms = 0.001
stop_after_failures = 2
"""


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_sweep_stops_after_k_consecutive_slo_failures(tmp_path, fake_inventory):
    """An objective no server can meet (1 µs) fails at once: the sweep stops after 2 levels."""
    suite = parse_suite(suite_file(tmp_path, "native", SLO_SUITE))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, fake_inventory, None, None), RunSetup(fake_inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    assert [lv.level_value for lv in data.levels] == [1, 2]
    assert "stopped early" in data.cases[0].reason


SEARCH_SUITE = """
name = "search"
stacks = ["refserver"]
workloads = ["hello"]

[load]
driver = "native"
mode = "open"
duration_s = 1
warmup_s = 0
pause_s = 0
timeout_s = 2

[placement]
server_cpus = "0"
loader_cpus = "{loader}"

[slo]
percentile = 99
latency_ms = 500

[search]
lo = 20
hi = 100000
probes = 5
"""


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_open_loop_search_narrows_within_its_probe_budget(tmp_path, fake_inventory):
    suite = parse_suite(suite_file(tmp_path, "native", SEARCH_SUITE))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, fake_inventory, None, None), RunSetup(fake_inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    rates = [lv.level_value for lv in data.levels]
    assert 2 <= len(rates) <= 5 and rates[0] == 20 and rates[1] == 40
    assert all(lv.mode == "open" and lv.open_loop for lv in data.levels)
    assert "max sustainable rate" in data.cases[0].reason


STOP_SUITE = """
name = "stop"
stacks = ["refserver"]
workloads = ["hello"]

[load]
driver = "native"
connections = [2]
duration_s = 1
warmup_s = 0
pause_s = 0

[placement]
server_cpus = "0"
loader_cpus = "{loader}"
"""


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_a_failure_while_stopping_does_not_fail_a_finished_run(
    tmp_path, fake_inventory, monkeypatch, caplog
):
    from stackbench.lab.stack import StackInstance

    real_stop = StackInstance.stop

    def stop_then_fail(self: StackInstance) -> None:
        real_stop(self)
        raise OSError("kill: operation not permitted")

    monkeypatch.setattr(StackInstance, "stop", stop_then_fail)
    suite = parse_suite(suite_file(tmp_path, "native", STOP_SUITE))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, fake_inventory, None, None), RunSetup(fake_inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    assert data.run.status == "complete"
    assert [c.status for c in data.cases] == ["ok"] and len(data.levels) == 1
    assert "stopping the stack failed: kill: operation not permitted" in caplog.text


def test_a_jit_stack_gets_its_warm_up_pass_before_each_case(tmp_path, fake_inventory):
    text = SUITE.replace(
        'stacks = ["refserver", "crashing", "missing"]', 'stacks = ["refjit", "refserver"]'
    )
    suite = parse_suite(suite_file(tmp_path, "native", text))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, fake_inventory, None, None), RunSetup(fake_inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    assert len(data.cases) == 2 * 2  # refjit and refserver, each with both workloads
    for case in data.cases:
        assert case.status == "ok", case.reason
        if case.stack == "refserver":
            assert case.jit_warmup is None  # no [warmup] in its stack.toml
            continue
        w = case.jit_warmup
        assert w is not None and w.seconds == 1 and w.level_value == 2 and not w.failure
        assert w.completed > 0 and w.requests_per_s > 0
        assert [lv.level_value for lv in data.levels_of(case.id)] == [2, 4]  # not a level


def _judged_disturbed(monkeypatch, disturbed: bool) -> None:
    """Every level judged disturbed, or none (the machine running the tests is busy too)."""
    from stackbench.engine import runner as runner_module
    from stackbench.engine.judge import Verdict

    real_judge = runner_module.judge_level
    flag = LevelFlag.DISTURBED.detail("other processes used 13.0% of core 0 (server)")

    def judge(measured, max_error_rate):
        verdict = real_judge(measured, max_error_rate)
        others = tuple(f for f in verdict.flags if f.kind is not LevelFlag.DISTURBED)
        return Verdict(verdict.status, (*others, flag) if disturbed else others)

    monkeypatch.setattr(runner_module, "judge_level", judge)
    monkeypatch.setattr(runner_module, "wait_for_quiet", lambda cpus, limit_s, share: False)


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
@pytest.mark.parametrize("disturbed", [False, True])
def test_settle_adds_a_warm_up_pass_and_measures_the_first_level_again(
    tmp_path, fake_inventory, monkeypatch, disturbed
):
    """run --settle on refjit (1 s declared, so at most 4 s in all): the first level judged
    unsteady by the advice gets a longer pass and is measured again, once; later levels are
    not judged; a stack without [warmup] is left alone. A disturbed level is not judged."""
    _judged_disturbed(monkeypatch, disturbed)
    text = SUITE.replace(
        'stacks = ["refserver", "crashing", "missing"]', 'stacks = ["refjit", "refserver"]'
    ).replace('workloads = ["hello", "sha256?n=2"]', 'workloads = ["hello"]')
    text = text.replace("duration_s = 1", "duration_s = 3")  # whole seconds to judge
    suite = parse_suite(suite_file(tmp_path, "native", text))
    store = Store(tmp_path / "s.sqlite")
    judged: list[int] = []

    def advise(rates: Sequence[float]) -> SettleAdvice:
        judged.append(len(rates))
        return SettleAdvice(False, 2, "settled 2 s into the level")

    setup = RunSetup(fake_inventory, store, tmp_path, settle=advise)
    data = store.load_run(Runner(build_plan(suite, fake_inventory, None, None), setup).execute())
    by_stack = {c.stack: c for c in data.cases}
    jit = by_stack["refjit"]
    assert jit.status == "ok"
    assert [lv.level_value for lv in data.levels_of(jit.id)] == [2, 4]  # stored once each
    assert "--settle" not in by_stack["refserver"].reason
    if disturbed:
        assert judged == [] and "--settle" not in jit.reason
        return
    assert len(judged) == 1  # refjit's first level, not its repetition nor refserver's
    assert (
        "hello at 2: not shown steady after the 1-s JIT warm-up (settled 2 s into the level); "
        "run --settle warmed it up 2 s more (3 s in all, at most 4) and measured the level again"
    ) in jit.reason


INTERLEAVED = """
name = "interleaved"
stacks = ["refserver", "refserver-b"]
workloads = ["hello"]

[variants.refserver-b]
stack = "refserver"

[load]
driver = "native"
connections = [2]
duration_s = 1
warmup_s = 0
pause_s = 0
timeout_s = 3
repeat = 3

[placement]
server_cpus = "0"
loader_cpus = "{loader}"
"""


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_repetitions_run_round_robin_each_on_a_fresh_start(tmp_path, fake_inventory):
    """repeat = 3 over two copies of one stack: 3 rounds, each starting both afresh in the
    plan's shuffled order; levels are stored in that order and every case ends ok."""
    suite = parse_suite(suite_file(tmp_path, "native", INTERLEAVED))
    plan = build_plan(suite, fake_inventory, None, None)
    rounds = plan.rounds()
    assert [r.repetition for r in rounds] == [0, 1, 2]
    assert all({s.name for s in r.order} == {"refserver", "refserver-b"} for r in rounds)
    messages: list[str] = []
    store = Store(tmp_path / "s.sqlite")
    events: list[ProgressEvent] = []
    run_id = Runner(plan, RunSetup(fake_inventory, store, tmp_path, events.append)).execute()
    messages = [e.describe() for e in events]
    data = store.load_run(run_id)
    stacks = {c.id: c.stack for c in data.cases}
    stored = [
        (stacks[lv.case_id], lv.repetition)
        for lv in sorted(data.levels, key=lambda lv: lv.started_at)
    ]
    assert stored == [(s.name, r.repetition) for r in rounds for s in r.order]
    assert all(c.status == "ok" for c in data.cases)
    starts = [m for m in messages if m.endswith(": starting")]
    assert len(starts) == 6  # a fresh start of each stack in each round
    assert sum("round 2 of 3, a fresh start" in m for m in messages) == 2


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_an_extension_adds_one_repetition_of_the_chosen_levels(tmp_path, fake_inventory):
    """What run --until-decided does between looks: one more repetition of chosen levels of a
    stored run, through resume, and the cases end ok again."""
    text = INTERLEAVED.replace("repeat = 3", "repeat = 1")
    suite = parse_suite(suite_file(tmp_path, "native", text))
    plan = build_plan(suite, fake_inventory, None, None)
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(plan, RunSetup(fake_inventory, store, tmp_path)).execute()
    data = store.load_run(run_id)
    chosen = [LevelKey("refserver-b", "hello", 2.0)]
    extension = extension_plan(plan, data, chosen)
    assert [
        (s.name, [(lv.index, lv.repetition) for c in s.cases for lv in c.levels])
        for s in extension.stacks
    ] == [("refserver-b", [(0, 1)])]
    case = next(c for c in data.cases if c.stack == "refserver-b")
    store.set_case_status(case.id, "pending", case.reason)
    Runner(extension, RunSetup(fake_inventory, store, tmp_path), resume=run_id).execute()
    after = store.load_run(run_id)
    assert sorted(lv.repetition for lv in after.levels_of(case.id)) == [0, 1]
    assert all(c.status == "ok" for c in after.cases) and after.run.status == "complete"


@pytest.mark.skipif(not native_loader_built(), reason="loadgen not built")
def test_a_disturbed_level_is_measured_again_once_after_waiting_for_quiet(
    tmp_path, fake_inventory, monkeypatch
):
    """The judge finds the first measurement of each level disturbed (as on a busy machine):
    each level is measured again, once, after a wait for quiet; the second stands, the first
    is kept superseded by it with the judge's sentence, and the case notes the machine that
    was still busy."""
    from stackbench.engine import runner as runner_module
    from stackbench.engine.judge import Verdict
    from stackbench.store.records import LevelFlag

    judged: list[int] = []
    waits: list[tuple[frozenset[int], float]] = []
    real_judge = runner_module.judge_level

    def judge(measured, max_error_rate):
        verdict = real_judge(measured, max_error_rate)
        judged.append(1)
        if len(judged) % 2:  # every first measurement
            flag = LevelFlag.DISTURBED.detail("other processes used 13.0% of core 0 (server)")
            return Verdict(verdict.status, (flag,))
        return Verdict(verdict.status, ())

    def wait(cpus, limit_s, share):
        waits.append((frozenset(cpus), limit_s))
        return False

    monkeypatch.setattr(runner_module, "judge_level", judge)
    monkeypatch.setattr(runner_module, "wait_for_quiet", wait)
    text = SUITE.replace('stacks = ["refserver", "crashing", "missing"]', 'stacks = ["refserver"]')
    text = text.replace('workloads = ["hello", "sha256?n=2"]', 'workloads = ["hello"]')
    suite = parse_suite(suite_file(tmp_path, "native", text))
    store = Store(tmp_path / "s.sqlite")
    run_id = Runner(
        build_plan(suite, fake_inventory, None, None), RunSetup(fake_inventory, store, tmp_path)
    ).execute()
    data = store.load_run(run_id)
    (case,) = data.cases
    standing = data.levels_of(case.id)
    assert [lv.level_value for lv in standing] == [2, 4]  # one standing record each
    assert all(lv.flags == () for lv in standing)
    said = "other processes used 13.0% of core 0 (server)"
    assert [(lv.level_value, lv.superseded) for lv in data.superseded] == [
        (lv.level_value, Superseded(why=said, by=lv.id)) for lv in standing
    ]
    assert all(lv.completed > 0 for lv in data.superseded)  # measured, and kept
    assert len(judged) == 4 and [limit for _, limit in waits] == [1.0, 1.0]  # the level's 1 s
    assert "hello at 2: measured again although the machine was not quiet after 1 s" in (
        case.reason
    )
