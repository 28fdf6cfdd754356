"""The A/A suite of issue 32, with a background burst during go-b's level: does a disturbance
on one side of two copies of one stack make stackbench name a winner between them?

    .venv/bin/python benchmarks/aa_burst.py                    # 10 runs, a 13% burst
    .venv/bin/python benchmarks/aa_burst.py --runs 2 --burst 30 --kind pinned
    .venv/bin/python benchmarks/aa_burst.py --no-burst         # the control: no burst

The suite (written to a temporary folder): go-nethttp twice, as the variants go-a and go-b,
and php-fpm-nginx; hello at 50 connections, 12-s levels, one repetition, the default
placement. Each run is the real `stackbench run` CLI into this benchmark's own results folder
(`--out`, by default a new temporary one, kept). The run's output is followed: once it names
go-b, the first load generator (`stackbench-load`) the run starts is go-b's level, and the
burner (scripts/burner.py) runs exactly as long as that loader does, at `--burst` percent of a
core in every 100 ms:
- `pinned`: one process pinned to go-b's server core (read from go-b's own processes);
- `commands`: a new short-lived process for each burst, not pinned (wherever the scheduler
  puts it), as short commands elsewhere on the machine are;
- `alternate` (the default): odd runs pinned, even runs commands.
The burner's own CPU time (its rusage, children included) over its life is the burst's truth.

Per run it prints go-a/go-b (ratio, 95% interval, verdict, from the at-a-glance verdicts the
report shows, Holm over the run), whether go-b's level was flagged disturbed and measured again
(the other processes' share the judge named, and that of the level kept), and go against
php-fpm-nginx; then the totals: false winners between go-a and go-b out of the runs, and the
runs that named go faster than php-fpm-nginx. Runs at most `--runs` runs of at most 10 min
each; loopback only; prints figures, asserts nothing. Run it on a quiet machine: a busy one
makes stackbench flag levels disturbed everywhere (and measure them again), as it should.
"""

import argparse
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from stackbench.analysis.analysis import analyse
from stackbench.analysis.verdicts import Outcome, Verdict
from stackbench.analysis.wording import SHORT
from stackbench.commands.resultsdir import STORE_NAME
from stackbench.config.placement import default_placement
from stackbench.errors import StackbenchError
from stackbench.report.glance import MetricGlance, glance
from stackbench.store.records import CaseRow, LevelFlag, LevelRow
from stackbench.store.store import RunData, Store

ROOT = Path(__file__).resolve().parents[1]
BURNER = ROOT / "scripts" / "burner.py"
GO_A, GO_B, PHP = "go-a", "go-b", "php-fpm-nginx"
LEVEL_S = 12
PERIOD_MS = 100.0
RUN_TIMEOUT_S = 600.0  # one run: the plan says about 75 s (plus first builds)
LOADER_WAIT_S = 180.0  # go-b named -> its level's loader: start, verification
LOADER_NAME = "stackbench-load"
POLL_S = 0.02
KINDS = ("pinned", "commands")
SUITE = f"""name = "aa-burst"
description = "A/A: go-nethttp twice (go-a, go-b) and php-fpm-nginx, hello at 50 connections"
stacks = ["{GO_A}", "{GO_B}", "{PHP}"]
workloads = ["hello"]

[variants.{GO_A}]
stack = "go-nethttp"
params = {{}}

[variants.{GO_B}]
stack = "go-nethttp"
params = {{}}

[load]
driver = "native"
mode = "closed"
keepalive = "on"
connections = [50]
duration_s = {LEVEL_S}
warmup_s = 1
timeout_s = 10
pause_s = 1
repeat = 1
"""
LEGEND = """\
What to expect on a quiet machine: go-b's first measurement is flagged disturbed (the judge
names about the burst's share of go-b's server core), measured again once the burst is over,
and kept clean; go-a/go-b is then 'equivalent' or 'not enough evidence', never 'faster' or
'slower' (a FALSE WINNER); go-a and go-b are each faster than php-fpm-nginx. On a busy machine
every level is flagged and nothing is decided: that is the disturbance rule working."""
# The judge's words for a set of cores.
OTHER_SHARE = re.compile(r"other processes used ([0-9.]+)% of (cores? [0-9,]+) \(([^)]*)\)")


@dataclass(frozen=True)
class Injection:
    """The burst as it ran: how, where, and its truth (CPU seconds over its wall time)."""

    kind: str  # pinned | commands | none
    cpu: int | None  # the core it was pinned to
    share: float  # asked, of one core
    truth: float  # measured: its CPU time / its life, of one core
    seconds: float  # its life (go-b's level's loader's)
    note: str = ""  # what went wrong following the run, if anything

    def describe(self) -> str:
        if self.kind == "none":
            return "no burst (control)" + (f"; {self.note}" if self.note else "")
        where = f"one process pinned to CPU {self.cpu}" if self.cpu is not None else ""
        where = where or "a new short process per burst, not pinned"
        said = (
            f"{where}, {self.share:.0%} asked; truth {self.truth:.1%} of a core over "
            f"{self.seconds:.1f} s"
        )
        return said + (f"; {self.note}" if self.note else "")


@dataclass(frozen=True)
class PairFigure:
    """a against b at a glance: a/b, its interval, the verdict (None: no pair shown)."""

    a: str
    b: str
    ratio: float | None
    low: float | None
    high: float | None
    outcome: Outcome | None
    why_none: str = ""
    decide: str = ""  # an undecided pair: why, and what would decide it

    @property
    def named(self) -> bool:
        return self.outcome in (Outcome.FASTER, Outcome.SLOWER)

    @property
    def a_faster(self) -> bool:
        return self.outcome is Outcome.FASTER

    def describe(self) -> str:
        if self.outcome is None:
            return f"{self.a}/{self.b}: no verdict ({self.why_none})"
        interval = (
            f" (95% {self.low:.2f}–{self.high:.2f}×)"
            if self.low is not None and self.high is not None
            else ""
        )
        ratio = "–" if self.ratio is None else f"{self.ratio:.2f}×"
        said = f"{self.a}/{self.b} {ratio}{interval}: {SHORT[self.outcome]}"
        return said + (f" ({_short(self.decide)})" if self.decide else "")


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class GoB:
    """go-b's level: flagged on its first measurement, and the level kept."""

    remeasured: bool
    first_other: str  # what the judge named on the first measurement ("" when not flagged)
    kept_other: str  # the kept level's other processes + steal, per set of cores
    kept_disturbed: bool


@dataclass(frozen=True)
class RunResult:
    number: int
    exit_code: int
    injection: Injection
    aa: PairFigure
    go_b: GoB | None
    vs_php: tuple[PairFigure, ...]
    rates: tuple[tuple[str, float], ...] = ()  # each stack's req/s at a glance
    disturbed: tuple[str, ...] = ()  # the stacks whose kept level is still disturbed

    @property
    def go_faster_than_php(self) -> bool:
        return any(p.a_faster for p in self.vs_php)


# --- following the run ------------------------------------------------------------------------


def _reader(stream: IO[str], lines: "queue.Queue[str | None]", log: IO[str]) -> None:
    for line in stream:
        log.write(line)
        log.flush()
        lines.put(line)
    lines.put(None)


def _wait_for_line(lines: "queue.Queue[str | None]", prefix: str, deadline: float) -> bool:
    """True once the run prints a line starting with `prefix`; False when it ends or the
    deadline passes first."""
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            return False
        if line.startswith(prefix):
            return True
    return False


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc (a process gone while read is skipped)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _descendants(root: int) -> list[int]:
    tree, found, todo = _children(), [], [root]
    while todo:
        kids = tree.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _new_loader(root: int, seen: set[int], deadline: float) -> int | None:
    """The first load generator under the run that is not in `seen`."""
    while time.monotonic() < deadline:
        for pid in _descendants(root):
            if pid not in seen and _comm(pid) == LOADER_NAME:
                return pid
        time.sleep(POLL_S)
    return None


def _server_core(root: int, loader: int) -> int:
    """go-b's server core: the lowest core its processes (the run's other children, pinned
    away from the loader) are pinned to; the default placement's when none is found."""
    loader_cpus = _affinity(loader)
    cores: set[int] = set()
    for pid in _descendants(root):
        if pid == loader:
            continue
        cpus = _affinity(pid)
        if cpus and cpus != loader_cpus and cpus != os.sched_getaffinity(0):
            cores |= cpus
    return min(cores or default_placement().server)


def _affinity(pid: int) -> set[int]:
    try:
        return set(os.sched_getaffinity(pid))
    except OSError:
        return set()


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and _comm(pid) == LOADER_NAME


def _burn_while(loader: int, kind: str, share: float, cpu: int | None) -> Injection:
    """The burner, for as long as the loader runs (at most the level and a margin)."""
    command = [sys.executable, str(BURNER), "--on-ms", f"{share * PERIOD_MS:g}"]
    command += ["--period-ms", f"{PERIOD_MS:g}", "--seconds", str(LEVEL_S + 20)]
    command += ["--cpu", str(cpu)] if kind == "pinned" else ["--fork"]
    started = time.monotonic()
    burner = subprocess.Popen(command)
    bound = started + LEVEL_S + 20
    while _alive(loader) and time.monotonic() < bound and burner.poll() is None:
        time.sleep(POLL_S)
    burner.terminate()
    _, _, usage = os.wait4(burner.pid, 0)
    burner.returncode = 0
    life = time.monotonic() - started
    truth = (usage.ru_utime + usage.ru_stime) / life
    return Injection(kind, cpu if kind == "pinned" else None, share, truth, life)


def _inject(
    run: "subprocess.Popen[str]", lines: "queue.Queue[str | None]", kind: str, share: float
) -> Injection:
    """Wait for go-b's level and burn during it (kind "none": only follow the run)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    seen = {pid for pid in _descendants(run.pid) if _comm(pid) == LOADER_NAME}
    if not _wait_for_line(lines, f"{GO_B}:", deadline):
        return Injection(kind, None, share, 0.0, 0.0, "go-b never started: no burst")
    seen |= {pid for pid in _descendants(run.pid) if _comm(pid) == LOADER_NAME}
    loader = _new_loader(run.pid, seen, min(deadline, time.monotonic() + LOADER_WAIT_S))
    if loader is None:
        return Injection(kind, None, share, 0.0, 0.0, "go-b's level never started: no burst")
    if kind == "none":
        return Injection(kind, None, 0.0, 0.0, 0.0)
    return _burn_while(loader, kind, share, _server_core(run.pid, loader))


def _run_once(
    suite: Path, out: Path, number: int, kind: str, share: float, log: IO[str]
) -> tuple[int, Injection]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "NO_COLOR": "1",
        "COLUMNS": "200",  # one event a line: the run's lines are followed by their start
    }
    command = [sys.executable, "-m", "stackbench", "run", str(suite), "--out", str(out)]
    command += ["--label", f"aa-{number}", "--no-calibrate"]
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    assert run.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_reader, args=(run.stdout, lines, log), daemon=True)
    reader.start()
    injection = _inject(run, lines, kind, share)
    try:
        code = run.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        run.terminate()  # stackbench stops what it started and keeps what it measured
        code = run.wait(timeout=60)
    reader.join(timeout=10)
    return code, injection


# --- reading the stored run ---------------------------------------------------------------------


def _pair(m: MetricGlance, a: str, b: str) -> PairFigure:
    """a against b as the glance judged them (its pairs are best first)."""
    for p in m.pairs:
        if {p.first, p.second} == {a, b}:
            return _oriented(p.verdict, a, b, flip=p.first != a)
    shown = {bar.stack for bar in m.bars}
    missing = ", ".join(s for s in (a, b) if s not in shown) or "?"
    return PairFigure(a, b, None, None, None, None, f"no figure to compare: {missing}")


FLIPPED = {Outcome.FASTER: Outcome.SLOWER, Outcome.SLOWER: Outcome.FASTER}


def _oriented(v: Verdict, a: str, b: str, flip: bool) -> PairFigure:
    decide = v.decide or ""
    if not flip:
        return PairFigure(a, b, v.ratio, v.low, v.high, v.outcome, decide=decide)

    def inv(x: float | None) -> float | None:
        return None if x is None or x == 0 else 1.0 / x

    outcome = FLIPPED.get(v.outcome, v.outcome)
    return PairFigure(a, b, inv(v.ratio), inv(v.high), inv(v.low), outcome, decide=decide)


def _first_other(data: RunData, case: CaseRow) -> str:
    """What the judge named on the first, disturbed measurement ("" when the level was
    measured once): the store keeps that measurement, superseded by the one measured again."""
    said = "; ".join(
        lv.superseded.why
        for lv in data.superseded
        if lv.case_id == case.id and lv.superseded is not None
    )
    found = [f"{pct}% of {cores} ({roles})" for pct, cores, roles in OTHER_SHARE.findall(said)]
    return "; ".join(found) or said


def _kept_other(level: LevelRow) -> str:
    """The kept level's other processes + steal on each set of cores it used."""
    if level.cores is None:
        return "not accounted"
    parts = []
    for use in level.cores.sets:
        if use.roles:
            capacity = use.capacity_s(level.cores.elapsed_s)
            share = (use.other_s + use.steal_s) / capacity if capacity > 0 else 0.0
            parts.append(f"{'/'.join(use.roles)} {share:.1%}")
    return ", ".join(parts) or "no role's cores"


def _go_b(data: RunData) -> GoB | None:
    case = next((c for c in data.cases if c.stack == GO_B), None)
    levels = [] if case is None else data.levels_of(case.id)
    if case is None or not levels:
        return None
    kept = levels[-1]
    disturbed = any(f.kind is LevelFlag.DISTURBED for f in kept.flags)
    first = _first_other(data, case)
    return GoB(bool(first), first, _kept_other(kept), disturbed)


def _read(path: Path, number: int, exit_code: int, injection: Injection) -> RunResult:
    store = Store(path, create=False)
    try:
        data = store.load_run(store.resolve_run(f"aa-{number}"))
    finally:
        store.close()
    hello = glance(analyse(data))
    if not hello:
        none = PairFigure(GO_A, GO_B, None, None, None, None, "no workload measured")
        return RunResult(number, exit_code, injection, none, None, ())
    throughput = hello[0].throughput
    vs_php = tuple(_pair(throughput, go, PHP) for go in (GO_A, GO_B))
    rates = tuple((bar.stack, bar.estimate.value) for bar in throughput.bars)
    aa = _pair(throughput, GO_A, GO_B)
    return RunResult(number, exit_code, injection, aa, _go_b(data), vs_php, rates, _disturbed(data))


def _disturbed(data: RunData) -> tuple[str, ...]:
    stacks = {c.id: c.stack for c in data.cases}
    flagged = (
        stacks[lv.case_id]
        for lv in data.levels
        if any(f.kind is LevelFlag.DISTURBED for f in lv.flags)
    )
    return tuple(dict.fromkeys(flagged))


# --- printing -----------------------------------------------------------------------------------


def _print_run(r: RunResult, runs: int) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())  # just after the run
    print(f"run {r.number} of {runs} (stackbench run exit {r.exit_code}; load average {load}):")
    print(f"  burst during go-b's level: {r.injection.describe()}")
    print("  req/s: " + ", ".join(f"{stack} {rate:,.0f}" for stack, rate in r.rates))
    winner = "FALSE WINNER" if r.aa.named else "no winner"
    print(f"  A/A: {r.aa.describe()}  -> {winner}")
    if r.go_b is None:
        print("  go-b's level: not stored")
    else:
        first = (
            f"flagged disturbed ({r.go_b.first_other}) and measured again"
            if r.go_b.remeasured
            else "not flagged on its first measurement"
        )
        kept = "still disturbed: it decides nothing" if r.go_b.kept_disturbed else "not flagged"
        print(f"  go-b's level: {first}")
        print(f"  go-b's kept level: other processes + steal {r.go_b.kept_other}; {kept}")
    for p in r.vs_php:
        print(f"  go vs php: {p.describe()}")
    if r.disturbed:
        print(
            f"  kept levels still disturbed (no verdict rests on them): {', '.join(r.disturbed)}"
            " (on a busy machine, expected)"
        )
    sys.stdout.flush()


def _print_totals(results: list[RunResult], burst: str) -> None:
    n = len(results)
    false = sum(r.aa.named for r in results)
    flagged = sum(bool(r.go_b and r.go_b.remeasured) for r in results)
    still = sum(bool(r.go_b and r.go_b.kept_disturbed) for r in results)
    go = sum(r.go_faster_than_php for r in results)
    each = ", ".join(
        f"{name} {sum(r.vs_php[i].a_faster for r in results if len(r.vs_php) > i)}"
        for i, name in enumerate((GO_A, GO_B))
    )
    print()
    print(f"totals over {n} run(s), {burst}:")
    print(f"  false winners between go-a and go-b: {false} of {n}  (issue 32 asks 0 of 10)")
    print(f"  runs naming go faster than php-fpm-nginx: {go} of {n}  ({each})")
    print(f"  go-b's level flagged disturbed and measured again: {flagged} of {n}")
    print(f"  go-b's kept level still disturbed (so undecided): {still} of {n}")
    print("| run | burst | truth | go-a/go-b | verdict | go-b flagged | kept other | go vs php |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        ratio = "–" if r.aa.ratio is None else f"{r.aa.ratio:.2f}×"
        aa = SHORT[r.aa.outcome] if r.aa.outcome else "no verdict"
        flag = r.go_b.first_other if r.go_b and r.go_b.remeasured else "no"
        kept = r.go_b.kept_other if r.go_b else "–"
        php = " / ".join(SHORT[p.outcome] if p.outcome else "–" for p in r.vs_php)
        truth = f"{r.injection.truth:.1%}" if r.injection.kind != "none" else "–"
        print(
            f"| {r.number} | {r.injection.kind} | {truth} | {ratio} | {aa} | {flag} | {kept} "
            f"| {php} |"
        )


def _kind(choice: str, number: int) -> str:
    if choice == "alternate":
        return KINDS[(number - 1) % len(KINDS)]
    return choice


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--burst", type=float, default=13.0, help="percent of one core")
    parser.add_argument("--kind", choices=(*KINDS, "alternate"), default="alternate")
    parser.add_argument("--no-burst", action="store_true", help="the control: no burner")
    parser.add_argument("--out", type=Path, default=None, help="results folder (kept)")
    args = parser.parse_args()
    if not 1 <= args.runs <= 100 or not 0 < args.burst <= 100:
        parser.error("--runs 1..100, --burst 0..100 (percent of one core)")
    folder = Path(tempfile.mkdtemp(prefix="stackbench-aa-burst-"))
    folder.chmod(0o755)
    suite = folder / "aa-burst.toml"
    suite.write_text(SUITE)
    out = args.out or folder / "results"
    burst = "no burst" if args.no_burst else f"a {args.burst:g}% burst during go-b's level"
    print(f"A/A suite {suite}, results in {out}, run output in {folder / 'runs.log'}; {burst}")
    print(LEGEND)
    results = []
    with (folder / "runs.log").open("w") as log:
        for number in range(1, args.runs + 1):
            kind = "none" if args.no_burst else _kind(args.kind, number)
            code, injection = _run_once(suite, out, number, kind, args.burst / 100, log)
            try:
                result = _read(out / STORE_NAME, number, code, injection)
            except StackbenchError as exc:
                print(f"run {number}: exit {code}, nothing stored to read ({exc}); see the log")
                continue
            _print_run(result, args.runs)
            results.append(result)
    _print_totals(results, burst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
