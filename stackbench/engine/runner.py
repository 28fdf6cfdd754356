"""Execute a plan: for each stack, services up, stack up, verify, load each level, store.

Every finished level is committed before the next starts; whatever happens (a stack that
will not start, a failed verification, Ctrl-C), everything started is stopped and the run is
marked complete, interrupted or failed.
"""


import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from stackbench.analysis.stats import (
    Probe,
    SloOutcome,
    SloStatus,
    evaluate_slo,
    median,
    next_rate,
    percentile_key,
    sustainable_bounds,
)
from stackbench.config.loadspec import LoadRequest, LoadResult, Mode
from stackbench.config.plan import Level, Plan, PlannedCase, PlannedStack
from stackbench.config.status import StackEntry
from stackbench.config.suite import Slo, Suite
from stackbench.config.workloads import BodyStability, WorkloadSpec
from stackbench.drivers import get_driver, start_load
from stackbench.errors import StackError
from stackbench.lab import environment
from stackbench.lab.checkstack import services_needed, stack_service_env
from stackbench.lab.monitor import Monitor, loader_bound
from stackbench.lab.stack import StackConfig, StackInstance
from stackbench.store.store import LevelRow, Store
from stackbench.verify.hashes import sha256_hex
from stackbench.verify.http import VerifyOutcome, verify_workload
from stackbench.verify.httpget import get


@dataclass(frozen=True)
class LevelEvent:
    stack: str
    label: str
    level: Level
    row: LevelRow


@dataclass
class Progress:
    """Callbacks the CLI provides to show what happens; no-ops for tests."""

    message: Callable[[str], None] = lambda _m: None
    level_done: Callable[[LevelEvent], None] = lambda _e: None


def suite_settings(suite: Suite) -> dict[str, object]:
    s = suite.load
    return {
        "mode": s.mode.value, "level_kind": suite.level_kind, "keepalive": s.keepalive.value,
        "driver": s.driver.value, "duration_s": s.duration_s, "requests": s.requests,
        "warmup_s": s.warmup_s, "timeout_s": s.timeout_s, "pause_s": s.pause_s,
        "repeat": s.repeat, "threads": s.threads, "pipeline": s.pipeline,
        "levels": list(suite.levels), "max_error_rate": suite.max_error_rate,
        "variant": suite.variant, "description": suite.description,
        "slo": None if suite.slo is None else dict(suite.slo.__dict__),
        "search": None if suite.search is None else dict(suite.search.__dict__),
        "script_iterations": suite.script_iterations,
        "variants": {n: {"stack": v.stack, "params": v.params} for n, v in suite.variants.items()},
        "workload_levels": {k: list(v) for k, v in suite.workload_levels.items()},
        "workload_durations": dict(suite.workload_durations),
        "placement": {"server": sorted(suite.placement.server),
                      "loader": sorted(suite.placement.loader),
                      "services": sorted(suite.placement.services)},
    }


class Runner:
    def __init__(self, plan: Plan, inventory: dict[str, StackEntry], store: Store,
                 out_dir: Path, progress: Progress | None = None) -> None:
        self.plan = plan
        self.suite = plan.suite
        self.inventory = inventory
        self.store = store
        self.out_dir = out_dir
        self.progress = progress or Progress()
        self.run_id = 0
        self.services = None

    # ---- the run ---------------------------------------------------------------------------
    def execute(self) -> int:
        self.run_id = self.store.start_run(self.suite.name, str(self.suite.path),
                                           self.suite.raw_text, suite_settings(self.suite),
                                           environment.snapshot())
        status = "failed"
        scratch = Path(tempfile.mkdtemp(prefix="stackbench-"))
        try:
            with ExitStack() as cleanup:
                cleanup.callback(self._stop_services)
                for planned in self.plan.stacks:
                    self._run_stack(planned, scratch)
            status = "complete"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            self.store.finish_run(self.run_id, status)
            shutil.rmtree(scratch, ignore_errors=True)
        return self.run_id

    def _stop_services(self) -> None:
        if self.services is not None:
            self.services.stop_all()

    def _service_env(self, specs: list[WorkloadSpec], scratch: Path) -> dict[str, str]:
        kinds = services_needed([s.name for s in specs])
        if not kinds:
            return {}
        from stackbench.services import ServiceKind, ServiceSet, reset_data

        if self.services is None:
            self.services = ServiceSet(scratch / "services", self.suite.placement.services)
        self.progress.message(f"services: starting {', '.join(sorted(kinds))}")
        self.services.ensure(ServiceKind(k) for k in sorted(kinds))
        # Every stack starts from the seed: /updates of the previous stack changed World.
        reset_data(self.services.running())
        return stack_service_env(self.services.env())

    def _run_stack(self, planned: PlannedStack, scratch: Path) -> None:
        case_ids = {
            c.spec.label: self.store.add_case(self.run_id, planned.name, c.spec.name,
                                              c.spec.label, c.spec.path, planned.params)
            for c in planned.cases
        }
        if not planned.available:
            self.progress.message(f"{planned.name}: unavailable ({planned.reason})")
            for cid in case_ids.values():
                self.store.set_case_status(cid, "unavailable", planned.reason)
            return
        try:
            service_env = self._service_env([c.spec for c in planned.cases], scratch)
        except Exception as exc:  # ServiceError: this stack's cases fail, the suite goes on
            self.store.fail_pending_cases(case_ids.values(), f"services could not start: {exc}")
            return
        entry = self.inventory[planned.stack]
        cfg = StackConfig(entry.manifest, entry.status, scratch / planned.name,
                          self.suite.placement.server, planned.params, service_env,
                          run_root=scratch)
        try:
            with StackInstance(cfg) as instance:
                self.progress.message(f"{planned.name}: building")
                instance.build()
                self.progress.message(f"{planned.name}: starting")
                instance.start()
                self._verify_and_load(planned, instance, case_ids, service_env)
        except StackError as exc:
            self.store.fail_pending_cases(case_ids.values(), str(exc))
            self.progress.message(f"{planned.name}: FAILED: {exc}")
        finally:
            self._keep_logs(cfg.run_dir, planned.name)

    def _keep_logs(self, run_dir: Path, stack: str) -> None:
        target = self.out_dir / f"run-{self.run_id}" / "logs" / stack
        if not run_dir.exists():
            return
        target.mkdir(parents=True, exist_ok=True)
        for log in run_dir.glob("*.log"):
            shutil.copy2(log, target / log.name)

    # ---- one stack ---------------------------------------------------------------------------
    def _verify_and_load(self, planned: PlannedStack, instance: StackInstance,
                         case_ids: dict[str, int], service_env: dict[str, str]) -> None:
        context = _data_context(service_env)
        verified: dict[str, VerifyOutcome] = {}
        for case in planned.cases:
            name = case.spec.name
            if name not in verified:
                self.progress.message(f"{planned.name}: verifying {name}")
                outcome = verify_workload(name, instance.base_url, context)
                verified[name] = outcome
                self.store.add_verification(self.run_id, planned.name, name, outcome.ok,
                                            outcome.checked, list(outcome.failures))
            outcome = verified[name]
            cid = case_ids[case.spec.label]
            if not outcome.ok:
                self.store.set_case_status(cid, "failed", "verification failed: "
                                           + "; ".join(outcome.failures[:3]))
                continue
            if self.suite.script_iterations:
                self._script_timing(planned, case.spec, service_env)
            expect_sha = _load_body_hash(case.spec, instance.base_url)
            note = self._load_case(planned.name, case, cid, instance, expect_sha)
            self.store.set_case_status(cid, "ok", note)

    def _script_timing(self, planned: PlannedStack, spec: WorkloadSpec,
                       service_env: dict[str, str]) -> None:
        """The articles' standalone timing: the workload's code N times in one process."""
        from stackbench.lab.script import run_script_with_env

        n = self.suite.script_iterations
        self.progress.message(f"{planned.name}: timing {spec.label} x {n} without HTTP")
        try:
            t = run_script_with_env(self.inventory[planned.stack], spec, n,
                                    self.suite.placement, planned.params, service_env)
        except StackError as exc:
            self.store.add_script(self.run_id, planned.name, spec.label, n, None, str(exc))
            return
        self.store.add_script(self.run_id, planned.name, spec.label, n,
                              (t.wall_s, t.user_s, t.sys_s), t.check)
        self.progress.message(f"{planned.name}: {spec.label} x {n}: real {t.wall_s:.3f} s, "
                              f"user {t.user_s:.3f} s, sys {t.sys_s:.3f} s ({t.check})")

    def _load_case(self, stack: str, case: PlannedCase, case_id: int, instance: StackInstance,
                   expect_sha: str | None) -> str:
        """Run the case's levels; returns a note for the case (early stop, search result)."""
        def one(level: Level) -> dict[str, object]:
            return self._one_level(stack, case, case_id, instance, expect_sha, level)

        if self.suite.search is not None:
            return self._search(one)
        slo = self.suite.slo
        failed_in_a_row = 0
        for index, group in groupby(case.levels, key=lambda lv: lv.index):
            rows = [one(level) for level in group]
            if slo is None or not slo.stop_after_failures:
                continue
            failed = slo_outcome(rows, slo).status is SloStatus.FAIL
            failed_in_a_row = failed_in_a_row + 1 if failed else 0
            remaining = len(self.suite.levels_for(case.spec.label)) - index - 1
            if failed_in_a_row >= slo.stop_after_failures and remaining > 0:
                note = (f"sweep stopped early: SLO failed at {failed_in_a_row} consecutive "
                        f"levels (stop_after_failures = {slo.stop_after_failures})")
                self.progress.message(f"{stack} {case.spec.label}: {note}")
                return note
        return ""

    def _search(self, one: Callable[[Level], dict[str, object]]) -> str:
        search, slo = self.suite.search, self.suite.slo
        assert search is not None and slo is not None
        history: list[Probe] = []
        index = 0
        while (rate := next_rate(history, search.lo, search.hi, search.probes,
                                 search.tolerance)) is not None:
            rows = [one(Level(index, rate, rep)) for rep in range(self.suite.load.repeat)]
            history.append(Probe(rate, all(_sustained(row, slo) for row in rows)))
            index += 1
        best, failed_at = sustainable_bounds(history)
        if best is None:
            return (f"max sustainable rate: below {search.lo:g} req/s (the lowest probe broke "
                    "the SLO)")
        above = f", {failed_at:g} req/s did not" if failed_at else ""
        return (f"max sustainable rate: {best:g} req/s met the SLO{above} "
                f"({len(history)} probes)")

    def _one_level(self, stack: str, case: PlannedCase, case_id: int, instance: StackInstance,
                   expect_sha: str | None, level: Level) -> dict[str, object]:
        s = self.suite.load_for(case.spec.label)
        rate = level.value if s.mode is Mode.OPEN else None
        connections = int(level.value) if s.mode is Mode.CLOSED else _open_connections(level)
        req = LoadRequest(instance.base_url + case.spec.path, s, connections, rate,
                          self.suite.placement.loader, 200, expect_sha)
        row = self._run_level(instance, req, level)
        level_id = self.store.add_level(case_id, row)
        self.progress.level_done(LevelEvent(stack, case.spec.label, level,
                                            self.store.level(level_id)))
        if s.pause_s:
            time.sleep(s.pause_s)
        return row

    def _run_level(self, instance: StackInstance, req: LoadRequest, level: Level
                   ) -> dict[str, object]:
        driver = get_driver(req.settings.driver)
        roles = dict(instance.roles())
        if self.services is not None:
            roles.update({svc.kind.value: svc.root_pid() for svc in self.services.running()})
        s = req.settings
        budget = (s.duration_s or 0) + s.warmup_s + 10 * s.timeout_s + 300
        monitor = Monitor(roles).start()
        started = time.time()
        try:
            load = start_load(driver, req)
            monitor.add_role("loader", load.pid)
            try:
                result = load.finish(timeout_s=budget)
            finally:
                load.kill()
        finally:
            usage = monitor.stop()
        server_roles = list(instance.roles())
        flags = list(result.warnings)
        if loader_bound(usage, len(req.loader_cpus), server_roles, len(instance.cfg.server_cpus)):
            flags.append("loader-bound")
        status = "ok"
        if s.mode is Mode.CLOSED and s.duration_s and result.completed < req.connections:
            # Each connection did not get even one answer within the level: requests in flight
            # at the end are dropped, so the level saw start-up, not a steady state. A
            # processor-sharing server (every request progressing at once) then shows 0 req/s.
            status = "invalid"
            flags.append(f"unsteady: {result.completed} responses for {req.connections} "
                         f"connections in {s.duration_s:g} s; raise duration_s")
        starved = starvation_flag(result)
        if starved:
            flags.append(starved)
        if result.error_rate > self.suite.max_error_rate:
            status = "invalid"
            flags.append(f"invalid: error rate {result.error_rate:.1%} > "
                         f"{self.suite.max_error_rate:.1%}")
        return {
            "level_index": level.index, "level_value": level.value,
            "repetition": level.repetition, "driver": result.driver.value,
            "mode": s.mode.value, "keepalive": s.keepalive.value, "started_at": started,
            "duration_s": result.duration_s, "completed": result.completed, "ok": result.ok,
            "errors": result.errors, "requests_per_s": result.requests_per_s,
            "latency_us": result.latency_us, "connect_us": result.connect_us,
            "histogram": result.histogram, "timeseries": result.timeseries,
            "open_loop": result.open_loop, "loader_cpu_s": result.loader_cpu_s,
            "usage": {role: u.as_dict() for role, u in usage.items()}, "flags": flags,
            "status": status, "command": " ".join(result.command),
            "error_rate": result.error_rate,
            "raw_output": result.raw_output[-200_000:],
        }


def slo_outcome(rows: list[dict[str, object]], slo: Slo) -> SloOutcome:
    """The SLO judged on the median over a level's repetitions."""
    key = percentile_key(slo.percentile)
    latencies = [r["latency_us"][key] for r in rows if key in r["latency_us"]]  # type: ignore[index,operator]
    latency = {key: median(latencies)} if len(latencies) == len(rows) else {}
    return evaluate_slo(latency, median([float(r["error_rate"]) for r in rows]), slo)  # type: ignore[arg-type]


def _sustained(row: dict[str, object], slo: Slo) -> bool:
    """An open-loop probe holds when the rate was achieved and the SLO met."""
    open_loop = row.get("open_loop") or {}
    achieved = bool(open_loop.get("sustained", True))  # type: ignore[union-attr]
    return achieved and slo_outcome([row], slo).status is SloStatus.PASS


def starvation_flag(result: LoadResult) -> str | None:
    """A request still unanswered at the end that had waited longer than any answered one:
    the server left some connections starving (e.g. a prefork pool smaller than the
    connection count), which the latency of the answered requests alone would hide."""
    if result.unanswered_at_end is None:
        return None
    count, oldest_us = result.unanswered_at_end
    longest = result.latency_us.get("max", 0.0)
    if count == 0 or oldest_us <= max(longest, 1e6):
        return None
    return (f"starved: a request was still unanswered after {oldest_us / 1e6:.1f} s at the end "
            f"(longest answered: {longest / 1e6:.2f} s; {count} in flight at the end)")


def _open_connections(level: Level) -> int:
    """Open loop: enough connections that the rate, not the pool, limits (capped)."""
    return int(min(max(64, level.value / 50), 2000))


def _load_body_hash(spec: WorkloadSpec, base_url: str) -> str | None:
    """Hash of the body every load request must return, when the body is fixed."""
    if spec.workload.stability is not BodyStability.FIXED:
        return None
    expected = spec.expected_body()
    if expected is None:
        resp = get(base_url, spec.path, timeout_s=30)
        if resp.status != 200:
            raise StackError(f"GET {spec.path} answered {resp.status} after verification passed")
        expected = resp.body
    return sha256_hex(expected)


def _data_context(service_env: dict[str, str]) -> object | None:
    if not service_env:
        return None
    from stackbench.verify.data import DataVerifyContext

    return DataVerifyContext.from_env(service_env)
