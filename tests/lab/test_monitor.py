"""The monitor's process counts: what a role runs, counted in its process tree."""

import subprocess
import sys
import time

from stackbench.lab.monitor import Monitor, process_counts


def test_process_counts_say_what_each_role_runs_now():
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import threading, time\n"
            "for _ in range(3): threading.Thread(target=time.sleep, "
            "args=(30,), daemon=True).start()\n"
            "time.sleep(30)",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while "4 threads" not in process_counts({"py": child.pid}):
            assert time.monotonic() < deadline, process_counts({"py": child.pid})
            time.sleep(0.05)
        assert process_counts({"py": child.pid}) == "py 1 process (4 threads)"
    finally:
        child.kill()
        child.wait()
    assert process_counts({"gone": child.pid}) == "gone 0 processes (0 threads)"


def test_cpu_time_a_role_spent_is_measured():
    """By construction, not by timing luck: told to go, the child spins until its own CPU
    clock has advanced 0.3 s, then says so and waits; the monitor, started before the go,
    must count at least that (less a clock tick at each end)."""

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "input()\n"
            "start = time.process_time()\n"
            "while time.process_time() - start < 0.3: pass\n"
            "print('spent', flush=True)\n"
            "time.sleep(30)",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        monitor = Monitor({"spin": child.pid}).start()
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "spent\n"
        usage = monitor.stop()["spin"]
    finally:
        child.kill()
        child.wait()
    assert usage.cpu_user_s + usage.cpu_sys_s >= 0.25
    assert usage.cpu_percent > 0 and usage.rss_max_bytes > 0
