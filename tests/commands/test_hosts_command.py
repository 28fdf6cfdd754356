"""`stackbench hosts`: the judgement of a host's facts and clock (pure), the probe over pipes."""

import io
import os
import subprocess
import sys
import threading
import time

import msgspec
import pytest

from stackbench import __version__
from stackbench.commands.hosts import (
    MAX_PROBE_LINES,
    HostFacts,
    HostReport,
    Limit,
    LineReader,
    format_clock,
    judge_clock,
    judge_facts,
    judge_version,
    local_facts,
    parse_version,
    run_probe,
)
from stackbench.config.hosts import Host
from stackbench.config.paths import REPO_ROOT
from stackbench.remote.clock import ClockSample, best_sample, clock_sample

HOST = Host(name="h1", address="10.231.0.11")


def facts(**changes: object) -> HostFacts:
    base = HostFacts(version=__version__, git_rev="abc123", python="3.11.2", boot_id="b",
                     checkout="/opt/sb", loader=True,
                     stacks={"go-nethttp": "", "node": "", "java": "java not found"},
                     nofile_soft=20000, nofile_hard=20000, somaxconn=4096,
                     limits=[Limit("open files", "ok", "soft 20000, hard 20000")])
    return msgspec.structs.replace(base, **changes)


def test_clock_sample_by_hand():
    # Sent at 100.0, received at 100.2: the host read 105.15 at the midpoint 100.1 -> +5.05 s.
    sample = clock_sample(100.0, 105.15, 105.15, 100.2)
    assert sample.offset_s == pytest.approx(5.05)
    assert sample.delay_s == pytest.approx(0.2)
    samples = [ClockSample(1.0, 0.3), ClockSample(2.0, 0.1), ClockSample(3.0, 0.2)]
    assert best_sample(samples) == ClockSample(2.0, 0.1)
    assert format_clock(ClockSample(-0.0021, 0.0006)) == "-2.10 ms ± 0.30 ms"


def test_parse_version():
    assert parse_version("stackbench, version 0.1.0\n") == "0.1.0"
    assert parse_version("bash: stackbench: command not found") is None
    assert parse_version("") is None


def test_version_mismatch_fails():
    report = HostReport(HOST)
    judge_version(report, __version__)
    assert report.failures == [] and report.version == __version__
    judge_version(report, "0.0.9")
    assert report.failures == [f"h1 runs stackbench 0.0.9, this one is {__version__}: bring its "
                               f"checkout ({REPO_ROOT}) to the same revision, then run "
                               "`stackbench hosts setup`"]


def test_same_facts_pass():
    report = HostReport(HOST)
    judge_facts(report, facts(), facts())
    assert report.failures == [] and report.warnings == []
    assert report.runtimes == "py 3.11.2, loader, 2/3 stacks"
    assert (report.nofile, report.somaxconn) == ("20000", "4096")


def test_missing_stack_and_loader_fail_with_the_fix():
    there = facts(stacks={"go-nethttp": "go not found", "java": "java not found"}, loader=False)
    report = HostReport(HOST)
    judge_facts(report, facts(), there)
    assert report.failures == [
        "h1 lacks stacks available here (go-nethttp: go not found; node: not there): run "
        "`stackbench hosts setup`, and install the runtimes it does not (`stackbench stacks` on "
        "h1 says how)",
        "h1 has no native loader (loadgen/target/release/stackbench-load): run `stackbench "
        "hosts setup` (it builds it)"]
    # A host that only needs some stacks is judged on those.
    narrowed = HostReport(HOST)
    judge_facts(narrowed, facts(), facts(stacks={"node": "", "java": "x"}),
                needed_stacks={"node"})
    assert narrowed.failures == []


def test_limits_and_revision_warn():
    there = facts(git_rev="def456", somaxconn=None,
                  limits=[Limit("somaxconn", "warn", "128", "sudo sysctl -w "
                                "net.core.somaxconn=65535")])
    report = HostReport(HOST)
    judge_facts(report, facts(), there)
    assert report.failures == []
    assert report.somaxconn == "?"
    assert report.warnings == [
        "h1's checkout is at def456, this one at abc123: results may differ; check out the "
        "same revision",
        "h1: somaxconn 128: sudo sysctl -w net.core.somaxconn=65535"]


def test_clock_far_off_warns():
    report = HostReport(HOST)
    judge_clock(report, ClockSample(0.0004, 0.001))
    assert report.warnings == [] and report.clock == "+0.40 ms ± 0.50 ms"
    judge_clock(report, ClockSample(-2.5, 0.001))
    assert report.warnings[0].startswith("h1's clock is -2.500 s off this one's")


def test_line_reader_deadline_and_end():
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as reader, os.fdopen(write_fd, "wb") as writer:
        lines = LineReader(reader)
        writer.write(b"one\ntw")
        writer.flush()
        assert lines.read_line(1) == b"one"
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            lines.read_line(0.2)
        assert time.monotonic() - started < 2
        writer.write(b"o\nlast")
        writer.close()
        assert lines.read_line(1) == b"two"
        assert lines.read_line(1) == b"last"
        assert lines.read_line(1) is None


def test_probe_answers_facts_then_clock_until_eof():
    stdin = io.BytesIO(b"t\nt\n")
    stdout = io.BytesIO()
    before = time.time()
    run_probe(stdin, stdout)
    first, *clock = stdout.getvalue().splitlines()
    got = msgspec.json.decode(first, type=HostFacts)
    assert got.version == __version__ and got.checkout == str(REPO_ROOT)
    assert len(clock) == 2 and all(before <= float(t) <= time.time() for t in clock)
    many = io.BytesIO(b"t\n" * (MAX_PROBE_LINES + 10))
    out = io.BytesIO()
    run_probe(many, out)
    assert len(out.getvalue().splitlines()) == 1 + MAX_PROBE_LINES


def test_local_facts_describe_this_machine():
    here = local_facts()
    assert here.python == f"{sys.version_info.major}.{sys.version_info.minor}." \
                          f"{sys.version_info.micro}"
    assert here.boot_id and here.nofile_hard >= here.nofile_soft
    assert {limit.name for limit in here.limits} == {"open files", "somaxconn"}


def test_probe_command_over_real_pipes():
    """The hidden command as ssh runs it: one JSON line, then a time per line, EOF ends it."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "stackbench", "hosts", "probe"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    killer = threading.Timer(120, proc.kill)
    killer.start()
    try:
        lines = LineReader(proc.stdout)
        first = lines.read_line(110)
        assert first is not None
        assert msgspec.json.decode(first, type=HostFacts).version == __version__
        proc.stdin.write(b"t\n")
        proc.stdin.flush()
        answer = lines.read_line(10)
        assert answer is not None and abs(float(answer) - time.time()) < 5
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        killer.cancel()
        proc.kill()
        proc.wait()
