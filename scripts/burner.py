"""A bounded background load of known duty cycle: `on_ms` of CPU time in every `period_ms`
for `seconds`, pinned to one core (`--cpu`; without it, wherever the scheduler puts it);
`--fork`: each burst in a new child process that exits after it (short commands, which no
per-process sample ever sees). Used by the disturbance tests (tests/lab/test_disturbance.py)
and the A/A benchmark with a burst (benchmarks/aa_burst.py), each running it as a process.

    python3 scripts/burner.py --cpu 0 --on-ms 13 --seconds 12          # 13% of core 0
    python3 scripts/burner.py --on-ms 13 --seconds 12 --fork           # short commands

A burst lasts until the process's own CPU clock has advanced `on_ms`, so that on a busy core
it still takes about its share (it then spans more wall time). Its real CPU time, not the
duty cycle, is the ground truth all the same: fork, exit and a late period change it.
"""

import argparse
import os
import time


def burst(on_s: float) -> None:
    end = time.process_time() + on_s
    while time.process_time() < end:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", type=int, default=None, help="pin to this core")
    parser.add_argument("--on-ms", type=float, required=True)
    parser.add_argument("--period-ms", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--fork", action="store_true")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    start = time.monotonic()
    period, on = args.period_ms / 1000, args.on_ms / 1000
    n = 0
    while time.monotonic() - start < args.seconds:
        if args.fork:
            pid = os.fork()
            if pid == 0:
                burst(on)
                os._exit(0)
            os.waitpid(pid, 0)
        else:
            burst(on)
        n += 1
        pause = start + n * period - time.monotonic()
        if pause > 0:
            time.sleep(pause)


if __name__ == "__main__":
    main()
