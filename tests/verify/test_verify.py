"""Verifiers against the reference server: correct passes; each kind of wrong server fails."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackbench.config.workloads import CATALOG, Group
from stackbench.lab.procs import free_port
from stackbench.verify.http import verify_workload

REFSERVER = Path(__file__).parents[1] / "fakes" / "refserver.py"
MICRO = [w.name for w in CATALOG.values() if w.group is Group.MICRO]


def start(fault: str = "") -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "PORT": str(port), "FAULT": fault}
    proc = subprocess.Popen([sys.executable, str(REFSERVER)], env=env)
    deadline = time.monotonic() + 10
    import socket

    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def servers():
    started = {fault: start(fault) for fault in ("", "constant", "status500", "wrongtype", "no400")}
    yield {fault: url for fault, (_p, url) in started.items()}
    for proc, _url in started.values():
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("workload", MICRO)
def test_correct_server_passes(servers, workload):
    outcome = verify_workload(workload, servers[""], seed=1)
    assert outcome.ok, outcome.failures
    assert outcome.checked >= 1


@pytest.mark.parametrize("workload", ["concat", "add", "sha256", "readfile", "data"])
def test_constant_answers_fail(servers, workload):
    outcome = verify_workload(workload, servers["constant"], seed=2)
    assert not outcome.ok and any("body" in f for f in outcome.failures)


def test_wrong_status_fails(servers):
    outcome = verify_workload("hello", servers["status500"])
    assert not outcome.ok and "status 500, expected 200" in outcome.failures[0]


def test_wrong_content_type_fails(servers):
    outcome = verify_workload("hello", servers["wrongtype"])
    assert not outcome.ok and "Content-Type" in outcome.failures[0]


def test_invalid_parameter_must_be_refused(servers):
    outcome = verify_workload("concat", servers["no400"])
    assert not outcome.ok and "expected 400" in outcome.failures[-1]


def test_random_values_differ_between_runs():
    from random import Random

    from stackbench.verify.http import _values_to_check

    w = CATALOG["concat"]
    assert _values_to_check(w, Random(1)) != _values_to_check(w, Random(2))


def test_nothing_listening_is_a_failure_not_a_crash():
    outcome = verify_workload("hello", f"http://127.0.0.1:{free_port()}")
    assert not outcome.ok and "request failed" in outcome.failures[0]
