"""warmup_s is honoured by every driver: wrk and ab run a discarded warm-up pass first."""

import subprocess
import sys
from typing import Any

import pytest

import stackbench.drivers as drivers
from stackbench.config.loadspec import KeepAlive, LoadRequest, LoadSettings
from stackbench.drivers.ab import AbDriver
from stackbench.drivers.native import NativeDriver
from stackbench.drivers.wrk import WrkDriver
from stackbench.errors import DriverError


class Recorder:
    """Stands in for subprocess: records every command in order, starts nothing."""

    def __init__(self, warmup_rc: int = 0) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.warmup_rc = warmup_rc

    def run(self, command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(("warm-up", command))
        return subprocess.CompletedProcess(command, self.warmup_rc, None, "boom")

    def popen(self, command: list[str], **_: Any) -> object:
        self.calls.append(("measured", command))
        return object()


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    rec = Recorder()
    monkeypatch.setattr(subprocess, "run", rec.run)
    monkeypatch.setattr(subprocess, "Popen", rec.popen)
    return rec


def request(**settings: Any) -> LoadRequest:
    return LoadRequest(
        "http://127.0.0.1:1/hello", LoadSettings(**settings), 25, None, frozenset({1})
    )


def test_wrk_runs_a_discarded_warm_up_pass_before_the_measured_one(recorder: Recorder) -> None:
    drivers.start_load(
        WrkDriver(), request(duration_s=30, warmup_s=2.5, keepalive=KeepAlive.ON, timeout_s=3)
    )
    assert [(kind, cmd[6]) for kind, cmd in recorder.calls] == [
        ("warm-up", "3s"),
        ("measured", "30s"),
    ]
    assert recorder.calls[0][1][:4] == ["wrk", "-t", "1", "-c"]


def test_ab_warm_up_is_time_bounded_even_for_a_request_count(recorder: Recorder) -> None:
    drivers.start_load(AbDriver(), request(duration_s=None, requests=2000, warmup_s=2))
    (first, warm), (second, measured) = recorder.calls
    assert (first, second) == ("warm-up", "measured")
    assert warm[6:10] == ["-t", "2", "-n", "50000000"]
    assert measured[6:8] == ["-n", "2000"]


def test_no_warm_up_pass_without_warmup_s_or_for_the_native_loader(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKBENCH_LOAD", sys.executable)  # any existing file: never started
    drivers.start_load(WrkDriver(), request(duration_s=10, warmup_s=0))
    drivers.start_load(NativeDriver(), request(duration_s=10, warmup_s=2))
    assert [kind for kind, _ in recorder.calls] == ["measured", "measured"]


def test_a_caller_that_warmed_up_already_is_not_warmed_twice(recorder: Recorder) -> None:
    req = request(duration_s=10, warmup_s=2)
    assert drivers.warm_up(WrkDriver(), req) is not None
    drivers.start_load(WrkDriver(), req, warm_up_first=False)
    assert [kind for kind, _ in recorder.calls] == ["warm-up", "measured"]


def test_a_failed_warm_up_is_a_driver_error(recorder: Recorder) -> None:
    recorder.warmup_rc = 1
    with pytest.raises(DriverError, match="warm-up pass wrk .* exited 1: boom"):
        drivers.start_load(WrkDriver(), request(duration_s=10, warmup_s=2))
    assert [kind for kind, _ in recorder.calls] == ["warm-up"]
