"""remote/protocol.py and remote/clock.py: every message survives the line round trip, bad
lines are refused, agent errors come back as the same class, and the clock-offset arithmetic
against hand-computed exchanges."""

import math

import msgspec
import pytest

from stackbench.config.loadspec import DriverKind, LoadRequest, LoadResult, LoadSettings, Mode
from stackbench.errors import (
    BuildError,
    DriverError,
    EnvironmentProblem,
    ExitCode,
    HostLost,
    InputError,
    StackbenchError,
    StackError,
)
from stackbench.remote import protocol as p
from stackbench.remote.clock import ClockSample, best_sample, clock_sample
from stackbench.verify.outcome import VerifyOutcome
from tests.measured import open_loop, second, usage

LOAD = LoadRequest(
    "http://10.231.0.11:8080/hello",
    LoadSettings(mode=Mode.OPEN, duration_s=2, warmup_s=0),
    64,
    500.0,
    frozenset({1, 3}),
    200,
    "ab" * 32,
)
RESULT = LoadResult(
    driver=DriverKind.NATIVE,
    command=("stackbench-load", "http://x/"),
    duration_s=2.001,
    completed=1000,
    ok=998,
    errors={"status": 2},
    requests_per_s=499.5,
    latency_us={"p50": 812.0, "p99": 2400.5},
    connect_us={"mean": 90.0},
    histogram="HISTFAAA",
    timeseries=(second(1, 500, p50_us=800, histogram="HISTFAAB"),),
    open_loop=open_loop(1000.0, sustained=False, unsent=12),
    loader_cpu_s=(0.4, 0.2),
    unanswered_at_end=(1, 1500.0),
    warnings=("few connections",),
    raw_output='{"a": 1}\n',
)

REQUESTS = [
    p.Hello(id=1),
    p.Clock(id=2),
    p.StartStack(
        id=3,
        stack="node",
        name="node-cluster",
        server_cpus=frozenset({0, 1}),
        services_cpus=frozenset({2}),
        workloads=("hello", "mysql-row"),
        params={"workers": "4"},
        host="10.231.0.11",
    ),
    p.Verify(id=4, workloads=("hello",)),
    p.Exits(id=5),
    p.MonitorStart(id=6, interval_s=0.5),
    p.MonitorStop(id=7),
    p.WarmUp(id=8, request=LOAD),
    p.RunLoad(id=9, request=LOAD, start_at=1_800_000_000.25, timeout_s=340.0),
    p.StopLoad(id=10),
    p.StopStack(id=11),
    p.Heartbeat(id=12),
    p.Bye(id=13),
    p.Readiness(id=14),
]
REPLIES = [
    p.Ok(id=1),
    p.AgentInfo(id=2, version="0.1.0", hostname="h1", pid=42, cores=(0, 1)),
    p.ClockReading(id=3, t2=10.5, t3=10.6),
    p.StackStarted(
        id=4,
        base_url="http://10.231.0.11:8080",
        server_roles={"server": 100},
        service_roles={"redis": 101},
        params={"workers": "4"},
    ),
    p.Verified(id=5, outcomes=(VerifyOutcome("hello", False, ("body differs",), 3),)),
    p.Exited(id=6, exits=(p.ExitInfo("node process 'server'", -9, "last\nlines"),)),
    p.Usage(
        id=7,
        usage={"server": usage(97.5, rss_max_bytes=2**33, processes_max=4), "loader": usage(40.0)},
    ),
    p.LoadDone(id=8, result=RESULT, started_at=1_800_000_000.2501),
    p.Error(id=9, kind="StackError", exit_code=4, message="node: not ready\nlog tail"),
    p.ReadinessReport(
        id=10,
        readiness=p.HostReadiness(
            python="3.11.2",
            git_rev=None,
            loader=True,
            stacks={"node": "", "java": "no java"},
            nofile_soft=1024,
            nofile_hard=20000,
            somaxconn=None,
            limits=(
                p.Limit("somaxconn", "warn", "128", "sudo sysctl -w net.core.somaxconn=65535"),
                p.Limit("open files", "ok", "soft 1024, hard 20000"),
            ),
        ),
    ),
]


@pytest.mark.parametrize("message", REQUESTS, ids=p.describe)
def test_every_request_survives_one_line(message):
    line = p.encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert p.decode_request(line) == message


@pytest.mark.parametrize("message", REPLIES, ids=p.describe)
def test_every_reply_survives_one_line(message):
    line = p.encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # newlines in text are escaped
    assert p.decode_reply(line) == message


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"shutdown-everything","id":1}',  # no such request
        b'{"type":"hello","id":0}',  # ids start at 1
        b'{"type":"hello"}',  # no id
        b'{"type":"hello","id":1,"extra":true}',  # unknown field
        b'{"type":"start-stack","id":1,"stack":"x","name":"x","server_cpus":[],'
        b'"services_cpus":[0],"workloads":[]}',  # no server cpu
        b'{"type":"monitor-start","id":1,"interval_s":0}',
        b'{"type":"clock","id":1',  # cut short
    ],
)
def test_a_line_that_is_not_a_valid_request_is_refused(line):
    with pytest.raises(msgspec.MsgspecError):
        p.decode_request(line)


def test_the_id_of_a_refused_line_is_found_when_it_has_one():
    assert p.message_id(b'{"type":"nonsense","id":17}') == 17
    assert p.message_id(b'{"type":"nonsense"}') == 0
    assert p.message_id(b"garbage") == 0


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (StackError("node: not ready"), StackError),
        (BuildError("go build failed"), BuildError),
        (DriverError("stackbench-load exited 2"), DriverError),
        (InputError("start-stack: bad name"), InputError),
        (OSError(28, "No space left on device"), EnvironmentProblem),
    ],
)
def test_an_agent_error_is_raised_again_as_its_own_class_naming_the_host(raised, expected):
    reply = p.decode_reply(p.encode(p.error_reply(5, raised)))
    assert isinstance(reply, p.Error) and reply.id == 5
    again = p.remote_error("h1", reply)
    assert type(again) is expected
    assert str(again).startswith("h1: ") and str(raised) in str(again)


def test_an_unknown_stackbench_error_falls_back_to_the_class_of_its_exit_code():
    class Exotic(StackbenchError):
        exit_code = ExitCode.STACK_FAILED

    again = p.remote_error("h2", p.error_reply(1, Exotic("odd")))
    assert type(again) is StackError and str(again) == "h2: odd"


def test_a_bug_in_the_agent_stays_a_bug_here():
    again = p.remote_error("h1", p.error_reply(1, KeyError("role")))
    assert type(again) is RuntimeError and "KeyError" in str(again)


def test_host_lost_exits_like_a_failed_stack_and_names_the_host():
    lost = HostLost("h3", "no answer to run-load #9 within 40 s")
    assert lost.exit_code == ExitCode.STACK_FAILED == 4
    assert lost.host == "h3" and str(lost) == "host h3 lost: no answer to run-load #9 within 40 s"


# --- the clock --------------------------------------------------------------------------------
def test_a_symmetric_exchange_gives_the_offset_exactly():
    # The agent's clock is 2.5 s ahead; 0.1 s each way; the agent took 0.1 s to answer.
    t1, t2, t3, t4 = 100.0, 102.6, 102.7, 100.3
    offset, delay = clock_sample(t1, t2, t3, t4)
    assert math.isclose(offset, 2.5) and math.isclose(delay, 0.2)


def test_an_asymmetric_path_errs_the_offset_by_at_most_half_the_delay():
    # True offset 10 s; 0.5 s out, 0.1 s back, 0.1 s on the agent:
    # offset = ((10.5 - 0) + (10.6 - 0.7)) / 2 = 10.2; delay = 0.7 - 0.1 = 0.6.
    offset, delay = clock_sample(0.0, 10.5, 10.6, 0.7)
    assert math.isclose(offset, 10.2) and math.isclose(delay, 0.6)
    assert abs(offset - 10.0) <= delay / 2


def test_an_agent_behind_gives_a_negative_offset():
    offset, delay = clock_sample(50.0, 47.01, 47.02, 50.03)
    assert math.isclose(offset, -3.0) and math.isclose(delay, 0.02)


def test_the_sample_with_the_least_delay_is_the_estimate():
    samples = [ClockSample(2.7, 0.3), ClockSample(2.51, 0.002), ClockSample(2.4, 0.05)]
    assert best_sample(samples) == ClockSample(2.51, 0.002)
    assert best_sample(iter(samples)) == ClockSample(2.51, 0.002)
    with pytest.raises(ValueError):
        best_sample([])
