"""RemoteHost against small fake agents (a few lines of Python on the other end of the pipes):
replies matched by id, an agent's error raised as its class, and every way a channel dies
(garbage, end of file, silence, a wrong answer) raised as HostLost naming what happened."""

import subprocess
import sys
import threading
import time

import pytest

from stackbench.errors import HostLost, StackError
from stackbench.remote.client import RemoteHost, agent_argv

FAKE_AGENT = r"""
import json, sys

def answer(msg):
    if msg["type"] == "exits":
        return {"type": "exited", "exits": [], "id": msg["id"]}
    if msg["type"] == "hello":
        return {"type": "agent", "version": "0", "hostname": "fake", "pid": 1, "cores": [0],
                "id": msg["id"]}
    return {"type": "ok", "id": msg["id"]}

mode = sys.argv[1]
if mode == "exit":  # what ssh does when it cannot connect
    sys.stderr.write("ssh: connect to host 10.231.0.12 port 22: Connection refused\n")
    sys.exit(255)
if mode == "swap":  # answers the second request before the first
    first, second = (json.loads(sys.stdin.readline()) for _ in range(2))
    for msg in (second, first):
        print(json.dumps(answer(msg)), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if mode == "garbage":
        print("Welcome to h1! Last login: yesterday", flush=True)
    elif mode == "error":
        print(json.dumps({"type": "error", "id": msg["id"], "kind": "StackError",
                          "exit_code": 4, "message": "refserver: not ready"}), flush=True)
    elif mode == "wrong":
        print(json.dumps({"type": "ok", "id": msg["id"]}), flush=True)
    elif mode in ("swap", "polite"):
        print(json.dumps(answer(msg)), flush=True)
    # "silent": reads and never answers
"""


@pytest.fixture
def fake_agent():
    hosts: list[RemoteHost] = []

    def start(mode: str, timeout_s: float = 10.0) -> RemoteHost:
        proc = subprocess.Popen(
            [sys.executable, "-c", FAKE_AGENT, mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        host = RemoteHost("h1", proc, heartbeat_s=None, timeout_s=timeout_s)
        hosts.append(host)
        return host

    yield start
    for host in hosts:
        host.close(timeout_s=5)


def test_replies_find_their_call_by_id_whatever_their_order(fake_agent):
    host = fake_agent("swap")
    exits: list[object] = []
    other = threading.Thread(target=lambda: exits.append(host.exits()))
    other.start()
    time.sleep(0.2)
    info = host.hello()
    other.join(timeout=10)
    assert info.hostname == "fake" and exits == [()]
    assert host.lost is None


def test_an_error_reply_raises_the_agents_class_with_the_host_name(fake_agent):
    host = fake_agent("error")
    with pytest.raises(StackError, match="^h1: refserver: not ready$"):
        host.stop_stack()
    assert host.lost is None  # an error is an answer: the channel still works


def test_an_agent_that_cannot_start_is_lost_with_its_exit_code_and_last_words(fake_agent):
    host = fake_agent("exit")
    with pytest.raises(HostLost) as lost:
        host.hello()
    assert lost.value.host == "h1"
    assert "exit code 255" in str(lost.value) and "Connection refused" in str(lost.value)


def test_output_that_is_not_the_protocol_loses_the_host_and_shows_it(fake_agent):
    host = fake_agent("garbage")
    with pytest.raises(HostLost, match="not the agent protocol.*Welcome to h1"):
        host.hello()
    with pytest.raises(HostLost):  # and every later call
        host.exits()


def test_a_silent_agent_is_lost_after_the_calls_timeout(fake_agent):
    host = fake_agent("silent", timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(HostLost, match="no answer to hello #1 within 1 s"):
        host.hello()
    assert time.monotonic() - started < 5


def test_an_answer_of_the_wrong_kind_loses_the_host(fake_agent):
    host = fake_agent("wrong")
    with pytest.raises(HostLost, match="answered ok #1 to hello #1"):
        host.hello()


def test_calls_waiting_when_the_channel_dies_are_woken_with_host_lost(fake_agent):
    host = fake_agent("silent", timeout_s=60.0)
    errors: list[BaseException] = []

    def wait_for_exits() -> None:
        try:
            host.exits()
        except HostLost as exc:
            errors.append(exc)

    waiting = threading.Thread(target=wait_for_exits)
    waiting.start()
    time.sleep(0.3)
    host._proc.kill()  # the link is cut
    waiting.join(timeout=10)
    assert not waiting.is_alive()
    assert len(errors) == 1 and "channel closed" in str(errors[0])


def test_the_heartbeat_keeps_asking_while_the_host_answers(fake_agent):
    host = fake_agent("polite")
    host.start_heartbeat(0.05)
    time.sleep(0.5)
    host.stop_heartbeat()
    assert host._next_id >= 5 and host.lost is None
    assert host.close(timeout_s=5) == 0


def test_the_agent_command_line():
    assert agent_argv(["/opt/sb/bin/stackbench"], "/tmp/sb-agent-1", 10, keep=False) == [
        "/opt/sb/bin/stackbench",
        "agent",
        "--run-dir",
        "/tmp/sb-agent-1",
        "--heartbeat-s",
        "10",
    ]
    assert agent_argv(["python3", "-m", "stackbench"], "/tmp/x", 2.5, keep=True)[-3:] == [
        "--heartbeat-s",
        "2.5",
        "--keep",
    ]
