"""`stackbench hosts`: the judgement of a host's readiness and clock (pure), this machine's
readiness, the line reader of `hosts setup`. The readiness of another host comes through its
agent: tests/remote/test_agent.py (a local agent), tests/remote/test_ssh.py (`hosts check`
against two SSH hosts)."""

import os
import platform
import time

import msgspec
import pytest

from stackbench.commands.hosts import (
    HostReport,
    LineReader,
    format_clock,
    judge_clock,
    judge_readiness,
    parse_version,
)
from stackbench.config.hosts import Host
from stackbench.remote.clock import ClockSample, best_sample, clock_sample
from stackbench.remote.protocol import HostReadiness, Limit
from stackbench.remote.readiness import local_readiness

HOST = Host(name="h1", address="10.231.0.11")


def facts(**changes: object) -> HostReadiness:
    base = HostReadiness(
        git_rev="abc123",
        python="3.11.2",
        loader=True,
        stacks={"go-nethttp": "", "node": "", "java": "java not found"},
        nofile_soft=20000,
        nofile_hard=20000,
        somaxconn=4096,
        limits=(Limit("open files", "ok", "soft 20000, hard 20000"),),
    )
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


def test_same_facts_pass():
    report = HostReport(HOST)
    judge_readiness(report, facts(), facts())
    assert report.failures == [] and report.warnings == []
    assert report.runtimes == "py 3.11.2, loader, 2/3 stacks"
    assert (report.nofile, report.somaxconn) == ("20000", "4096")


def test_missing_stack_and_loader_fail_with_the_fix():
    there = facts(stacks={"go-nethttp": "go not found", "java": "java not found"}, loader=False)
    report = HostReport(HOST)
    judge_readiness(report, facts(), there)
    assert report.failures == [
        "h1 lacks stacks available here (go-nethttp: go not found; node: not there): run "
        "`stackbench hosts setup`, and install the runtimes it does not (`stackbench stacks` on "
        "h1 says how)",
        "h1 has no native loader (loadgen/target/release/stackbench-load): run `stackbench "
        "hosts setup` (it builds it)",
    ]
    # A host that only needs some stacks is judged on those.
    narrowed = HostReport(HOST)
    judge_readiness(
        narrowed, facts(), facts(stacks={"node": "", "java": "x"}), needed_stacks={"node"}
    )
    assert narrowed.failures == []


def test_limits_and_revision_warn():
    there = facts(
        git_rev="def456",
        somaxconn=None,
        limits=(Limit("somaxconn", "warn", "128", "sudo sysctl -w net.core.somaxconn=65535"),),
    )
    report = HostReport(HOST)
    judge_readiness(report, facts(), there)
    assert report.failures == []
    assert report.somaxconn == "?"
    assert report.warnings == [
        "h1's checkout is at def456, this one at abc123: results may differ; check out the "
        "same revision",
        "h1: somaxconn 128: sudo sysctl -w net.core.somaxconn=65535",
    ]


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


def test_local_readiness_describes_this_machine():
    here = local_readiness()
    assert here.python == platform.python_version()
    assert here.nofile_hard >= here.nofile_soft > 0
    assert {limit.name for limit in here.limits} == {"open files", "somaxconn"}
    assert "go-nethttp" in here.stacks  # every stack of the checkout, available or not
    # It crosses the channel as it is.
    line = msgspec.json.encode(here)
    assert msgspec.json.decode(line, type=HostReadiness) == here
