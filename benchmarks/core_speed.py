"""How fast does the host run this machine's cores, second by second? The reference loop that
stackbench runs beside every level (stackbench/lab/corespeed.py), here alone, under three
conditions one after the other, each for `--seconds`:

  idle       nothing else on the cores (a core woken from idle reads slower on a VM);
  saturated  each core kept busy by a pinned spinning process, as a CPU-bound server does;
  cache      each core shared with a process that walks 8 MiB of memory (a server that
             leaves the caches cold, as php-fpm's processes do).

Per core and condition it prints the fastest second's median loop over the whole script (the
reference a stackbench run learns as it goes), each second's speed against it as a strip (`.` at
least 0.8 of the fastest, `x` below it: the seconds the judge would count where the level
saturates the core), the share of such seconds, the median and the lowest speed. A host that
holds still prints dots; a host that slows cores for seconds at a time prints runs of x under
`saturated`.

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

from stackbench.lab.corespeed import TOLERANCE, CoreSpeed, Fastest, SpeedProbe  # noqa: E402

SPIN = "import time\nend = time.time() + {s}\nwhile time.time() < end: pass\n"
WALK = (
    "import time\nb = bytearray(8 << 20)\nend = time.time() + {s}\n"
    "while time.time() < end:\n    for i in range(0, len(b), 64): b[i] ^= 1\n"
)


def pinned(script: str, core: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", script], preexec_fn=lambda: os.sched_setaffinity(0, {core})
    )


def measure(
    cores: list[int], seconds: float, fastest: Fastest, beside: str | None
) -> list[CoreSpeed]:
    others = [pinned(beside.format(s=seconds + 2), c) for c in cores] if beside else []
    try:
        time.sleep(0.5 if others else 0.0)  # the neighbours running first
        probe = SpeedProbe(cores, fastest).start()
        time.sleep(seconds)
        return list(probe.stop())
    finally:
        for proc in others:
            proc.kill()
            proc.wait()


def strip(speed: CoreSpeed) -> str:
    return "".join("x" if v < 1 / (1 + TOLERANCE) else "." for v in speed.per_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per condition (at most 300)")
    args = parser.parse_args()
    seconds = min(max(args.seconds, 3.0), 300.0)
    cores = sorted(os.sched_getaffinity(0))
    fastest = Fastest()
    found = {
        name: measure(cores, seconds, fastest, beside)
        for name, beside in (("idle", None), ("saturated", SPIN), ("cache", WALK))
    }
    print(
        f"reference loop on cores {cores}, {seconds:g} s per condition; x: below "
        f"{1 / (1 + TOLERANCE):.2f} of the core's fastest second"
    )
    # every condition against the fastest of all (an earlier one learned a slower reference)
    best = {s.core: s.fastest_us for speeds in found.values() for s in speeds}
    for speeds in found.values():
        for s in speeds:
            best[s.core] = min(best[s.core], s.fastest_us)
    for name, speeds in found.items():
        for speed in speeds:
            per_s = tuple(v * best[speed.core] / speed.fastest_us for v in speed.per_s)
            again = CoreSpeed(speed.core, best[speed.core], per_s)
            slow = sum(1 for v in per_s if v < 1 / (1 + TOLERANCE))
            print(
                f"{name:>9} core {speed.core}: fastest {again.fastest_us:,.0f} us, "
                f"{slow}/{len(per_s)} s slow, median {statistics.median(per_s):.2f}, lowest "
                f"{min(per_s, default=1):.2f}  {strip(again)}"
            )


if __name__ == "__main__":
    main()
