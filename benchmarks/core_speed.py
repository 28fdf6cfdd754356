"""How fast does the host run this machine's cores, second by second? The reference loop that
stackbench runs beside every level (stackbench/lab/corespeed.py), here alone, under three
conditions one after the other, each for `--seconds`:

  idle       nothing else on the cores (a core woken from idle reads slower on a VM);
  saturated  each core kept busy by a pinned spinning process, as a CPU-bound server does;
  cache      each core shared with a process that walks 8 MiB of memory (a server that
             leaves the caches cold, as php-fpm's processes do).

Per core and condition it prints the fastest second's median loop over the whole script, each
second's speed against it as a strip (`.` at least 0.8 of the fastest, `x` below it), the
share of such seconds, the median and the lowest speed; then the same seconds against the
core's prevailing speed, the median of its saturated seconds (the reference a stackbench run
reads a level against: `x` slower, `+` faster by more than the tolerance, the seconds the judge
counts where the level saturates the core). A host that holds still prints dots; a host that
changes a core's speed for seconds at a time prints runs of x (or +) under `saturated`.

    .venv/bin/python benchmarks/core_speed.py               # 20 s per condition, ~1 min
    .venv/bin/python benchmarks/core_speed.py --seconds 60

Prints figures, asserts nothing; every process it starts ends with it (bounded by --seconds).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stackbench.lab.corespeed import TOLERANCE, CoreSpeed, SpeedProbe  # noqa: E402

SPIN = "import time\nend = time.time() + {s}\nwhile time.time() < end: pass\n"
WALK = (
    "import time\nb = bytearray(8 << 20)\nend = time.time() + {s}\n"
    "while time.time() < end:\n    for i in range(0, len(b), 64): b[i] ^= 1\n"
)


def pinned(script: str, core: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", script], preexec_fn=lambda: os.sched_setaffinity(0, {core})
    )


def measure(cores: list[int], seconds: float, beside: str | None) -> list[CoreSpeed]:
    others = [pinned(beside.format(s=seconds + 2), c) for c in cores] if beside else []
    try:
        time.sleep(0.5 if others else 0.0)  # the neighbours running first
        probe = SpeedProbe(cores).start()
        time.sleep(seconds)
        return list(probe.stop())
    finally:
        for proc in others:
            proc.kill()
            proc.wait()


def strip(per_s: tuple[float, ...]) -> str:
    low, high = 1 / (1 + TOLERANCE), 1 + TOLERANCE
    return "".join("." if low <= v <= high else ("x" if v < low else "+") for v in per_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per condition (at most 300)")
    args = parser.parse_args()
    seconds = min(max(args.seconds, 3.0), 300.0)
    cores = sorted(os.sched_getaffinity(0))
    found = {
        name: measure(cores, seconds, beside)
        for name, beside in (("idle", None), ("saturated", SPIN), ("cache", WALK))
    }
    # each core's fastest second of all, and its prevailing one: the median of its saturated
    # seconds (the reference a stackbench run reads a level's seconds against)
    fastest = {
        c: min(m for v in found.values() for s in v if s.core == c for m in s.medians_us)
        for c in cores
    }
    prevailing = {
        s.core: statistics.median(s.medians_us) for s in found["saturated"] if s.medians_us
    }
    print(
        f"reference loop on cores {cores}, {seconds:g} s per condition; each second against "
        f"the core's fastest (its speed; x below {1 / (1 + TOLERANCE):.2f}) and its "
        f"prevailing saturated second (x slower, + faster by more than {TOLERANCE:.0%})"
    )
    for name, speeds in found.items():
        for speed in speeds:
            per_s = tuple(fastest[speed.core] / m for m in speed.medians_us)
            against = tuple(prevailing.get(speed.core, m) / m for m in speed.medians_us)
            slow = sum(1 for v in per_s if v < 1 / (1 + TOLERANCE))
            print(
                f"{name:>9} core {speed.core}: fastest {fastest[speed.core]:,.0f} us, "
                f"{slow}/{len(per_s)} s slow, median {statistics.median(per_s):.2f}, lowest "
                f"{min(per_s, default=1):.2f}  {strip(per_s)}"
            )
            print(
                f"{'':>9}        against the prevailing "
                f"{prevailing.get(speed.core, 0):,.0f} us: {strip(against)}"
            )


if __name__ == "__main__":
    main()
