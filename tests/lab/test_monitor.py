"""The monitor's process counts: what a role runs, counted in its process tree."""

import subprocess
import sys
import time

from stackbench.lab.monitor import process_counts


def test_process_counts_say_what_each_role_runs_now():
    child = subprocess.Popen([sys.executable, "-c",
                              "import threading, time\n"
                              "for _ in range(3): threading.Thread(target=time.sleep, "
                              "args=(30,), daemon=True).start()\n"
                              "time.sleep(30)"])
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
