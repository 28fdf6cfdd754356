"""The end of `stackbench run` (commands/run.py): the report and the exit code, a report that
cannot be written, stop signals. No server is started."""

import errno
import signal

import pytest
from rich.console import Console

from stackbench.commands import live
from stackbench.commands import run as run_module
from stackbench.errors import EnvironmentProblem, ExitCode
from stackbench.store.records import SloSettings
from stackbench.store.store import Store
from tests.store.test_store import case, level, run_record, settings


def stored(tmp_path, level_status: str = "ok", error_class: str = "") -> Store:
    store = Store(tmp_path / "stackbench.sqlite")
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    store.add_level(level(cid, 0, status=level_status, error_class=error_class))
    store.set_case_status(cid, "ok")
    store.finish_run(run, "complete")
    return store


def test_finish_writes_the_report_and_returns_the_outcome(tmp_path):
    console = Console(record=True, width=200)
    assert run_module._finish(console, stored(tmp_path), 1, tmp_path) == ExitCode.OK
    assert (tmp_path / "run-1" / "report.html").is_file()
    other = tmp_path / "other"
    other.mkdir()
    crashed = stored(other, "failed", "server-exited")
    code = run_module._finish(console, crashed, 1, other)
    assert code == ExitCode.STACK_FAILED
    assert "exit 4: 1 level(s) failed: a stack or service process exited" in console.export_text()


def test_a_full_disk_while_writing_the_report_is_an_environment_problem(tmp_path, monkeypatch):
    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run_module, "write_all", full)
    with pytest.raises(EnvironmentProblem) as problem:
        run_module._finish(Console(record=True), stored(tmp_path), 1, tmp_path)
    message = str(problem.value)
    assert message.startswith(f"writing the report to {tmp_path / 'run-1'}: the disk is full")
    assert "every finished level is kept in" in message and "'stackbench report 1'" in message
    assert problem.value.exit_code == ExitCode.ENVIRONMENT == 3


def test_sigterm_and_sighup_interrupt_like_ctrl_c_with_their_own_code(monkeypatch):
    installed: dict[int, object] = {}
    monkeypatch.setattr(signal, "signal", lambda num, handler: installed.__setitem__(num, handler))
    live.stop_signals_as_interrupt()
    handler = installed[signal.SIGTERM]
    assert installed[signal.SIGHUP] is handler
    with pytest.raises(KeyboardInterrupt) as stopped:
        handler(signal.SIGTERM, None)  # type: ignore[operator]
    assert live.signal_number(stopped.value) == 15
    # Once stopping, a second SIGTERM or SIGHUP is ignored: the clean-up runs to its end.
    assert installed[signal.SIGTERM] is signal.SIG_IGN
    assert installed[signal.SIGHUP] is signal.SIG_IGN
    assert live.signal_number(KeyboardInterrupt()) == signal.SIGINT == 2


def _slo_store(directory, gate: bool) -> Store:
    """One level with p99 = 12 ms against an SLO of p99 <= 5 ms."""
    store = Store(directory / "stackbench.sqlite")
    slo = SloSettings(
        percentile=99, latency_ms=5, max_error_rate=0.01, stop_after_failures=0, gate=gate
    )
    run = store.start_run(run_record(settings=settings(slo=slo)))
    cid = store.add_case(case(run))
    store.add_level(level(cid, 0, latency_us={"p50": 2000.0, "p99": 12000.0}))
    store.set_case_status(cid, "ok")
    store.finish_run(run, "complete")
    return store


def test_a_broken_slo_exits_1_naming_the_rule_and_the_level(tmp_path):
    console = Console(record=True, width=300)
    assert (
        run_module._finish(console, _slo_store(tmp_path, True), 1, tmp_path)
        == ExitCode.RULE_BROKEN
        == 1
    )
    text = console.export_text()
    assert "exit 1: SLO (p99 ≤ 5 ms and error rate ≤ 1.00%) broken at 1 level(s): " in text
    assert "@25: p99 12 ms > 5 ms" in text


def test_an_slo_without_gate_is_a_finding_not_a_failed_run(tmp_path):
    console = Console(record=True, width=300)
    assert run_module._finish(console, _slo_store(tmp_path, False), 1, tmp_path) == ExitCode.OK
