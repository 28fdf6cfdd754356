"""A run: the plan in, level records out.

For each planned stack: its data services (started once per run, seed data restored between
stacks), the stack built and started (`lab.session`), each workload verified, then its levels
chosen by the suite's strategy (`strategies`), measured (`measure`), judged (`judge`) and
committed one by one. Whatever happens (a stack that will not start, a failed verification,
Ctrl-C), everything started is stopped and the run is marked complete, interrupted or failed;
a failure while stopping is only logged.
"""

import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stackbench.config.plan import Level, Plan, PlannedCase, PlannedStack
from stackbench.config.status import StackEntry
from stackbench.config.workloads import BodyStability, WorkloadSpec
from stackbench.engine.judge import judge_level
from stackbench.engine.measure import Target, level_record, load_request, measure
from stackbench.engine.settings import run_settings
from stackbench.engine.strategies import fixed_sweep, rate_search
from stackbench.errors import StackbenchError, StackError
from stackbench.lab import environment
from stackbench.lab.script import run_script_with_env
from stackbench.lab.session import ServiceAccess, Services, running_stack, services_needed
from stackbench.store.records import (
    CaseRecord,
    LevelRecord,
    LevelRow,
    RunRecord,
    RunStatus,
    ScriptRecord,
    VerificationRecord,
)
from stackbench.store.store import Store
from stackbench.verify.hashes import sha256_hex
from stackbench.verify.http import verify_workload
from stackbench.verify.httpget import get
from stackbench.verify.outcome import VerifyOutcome

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LevelEvent:
    stack: str
    label: str
    level: Level
    row: LevelRow


def _ignore(_value: object) -> None:
    return None


@dataclass
class Progress:
    """Callbacks the CLI provides to show what happens; no-ops for tests."""

    message: Callable[[str], None] = field(default=_ignore)
    level_done: Callable[[LevelEvent], None] = field(default=_ignore)


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

    def execute(self) -> int:
        suite = self.suite
        self.run_id = self.store.start_run(RunRecord(
            suite_name=suite.name, suite_path=str(suite.path), suite_text=suite.raw_text,
            settings=run_settings(suite), environment=environment.snapshot(),
            started_at=time.time()))
        status: RunStatus = "failed"
        scratch = Path(tempfile.mkdtemp(prefix="stackbench-"))
        try:
            with Services(scratch / "services", suite.placement.services) as services:
                for planned in self.plan.stacks:
                    self._run_stack(planned, services, scratch)
            status = "complete"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            self.store.finish_run(self.run_id, status)
            shutil.rmtree(scratch, ignore_errors=True)
        return self.run_id

    def _run_stack(self, planned: PlannedStack, services: Services, scratch: Path) -> None:
        case_ids = {
            c.spec.label: self.store.add_case(CaseRecord(
                run_id=self.run_id, stack=planned.name, workload=c.spec.name,
                label=c.spec.label, path=c.spec.path, params=planned.params))
            for c in planned.cases
        }
        if not planned.available:
            self.progress.message(f"{planned.name}: unavailable ({planned.reason})")
            for cid in case_ids.values():
                self.store.set_case_status(cid, "unavailable", planned.reason)
            return
        try:
            access = self._services_for(planned, services)
        except StackbenchError as exc:  # this stack's cases fail, the suite goes on
            self.store.fail_pending_cases(case_ids.values(), f"services could not start: {exc}")
            self.progress.message(f"{planned.name}: FAILED: services could not start: {exc}")
            return
        run_dir = scratch / planned.name
        try:
            with running_stack(self.inventory[planned.stack], self.suite.placement, run_dir,
                               planned.params, access.env,
                               lambda step: self.progress.message(f"{planned.name}: {step}")
                               ) as instance:
                target = Target(instance.base_url, instance.roles(), services.roles(),
                                len(instance.cfg.server_cpus), self.suite.placement.loader)
                _StackRun(self, planned, case_ids, access, target).run()
        except StackError as exc:
            self.store.fail_pending_cases(case_ids.values(), str(exc))
            self.progress.message(f"{planned.name}: FAILED: {exc}")
        finally:
            self._keep_logs(run_dir, planned.name)

    def _services_for(self, planned: PlannedStack, services: Services) -> ServiceAccess:
        names = [c.spec.name for c in planned.cases]
        kinds = sorted(k.value for k in services_needed(names))
        if kinds:
            self.progress.message(f"services: {', '.join(kinds)} (seed data restored)")
        return services.prepare(names)

    def _keep_logs(self, run_dir: Path, stack: str) -> None:
        """Copy the stack's logs next to the report; a copy that fails is only logged."""
        target = self.out_dir / f"run-{self.run_id}" / "logs" / stack
        if not run_dir.exists():
            return
        try:
            target.mkdir(parents=True, exist_ok=True)
            for path in run_dir.glob("*.log"):
                shutil.copy2(path, target / path.name)
        except OSError as exc:
            log.warning("%s: keeping the logs in %s failed: %s", stack, target, exc)


@dataclass
class _StackRun:
    """One started stack: verify each workload once, then load each of its cases."""

    runner: Runner
    planned: PlannedStack
    case_ids: dict[str, int]
    access: ServiceAccess
    target: Target
    verified: dict[str, VerifyOutcome] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.planned.name

    def run(self) -> None:
        store, suite = self.runner.store, self.runner.suite
        for case in self.planned.cases:
            cid = self.case_ids[case.spec.label]
            outcome = self._verify(case.spec.name)
            if not outcome.ok:
                store.set_case_status(cid, "failed", "verification failed: "
                                      + "; ".join(outcome.failures[:3]))
                continue
            if suite.script_iterations:
                self._script_timing(case.spec)
            note = self._load_case(case, cid)
            store.set_case_status(cid, "ok", note)

    def _message(self, text: str) -> None:
        self.runner.progress.message(f"{self.name}: {text}")

    def _verify(self, workload: str) -> VerifyOutcome:
        if workload not in self.verified:
            self._message(f"verifying {workload}")
            outcome = verify_workload(workload, self.target.base_url, self.access.context)
            self.verified[workload] = outcome
            self.runner.store.add_verification(VerificationRecord(
                run_id=self.runner.run_id, stack=self.name, workload=workload, ok=outcome.ok,
                checked=outcome.checked, failures=tuple(outcome.failures), at=time.time()))
        return self.verified[workload]

    def _script_timing(self, spec: WorkloadSpec) -> None:
        """The articles' standalone timing: the workload's code N times in one process."""
        runner = self.runner
        n = runner.suite.script_iterations
        self._message(f"timing {spec.label} x {n} without HTTP")
        times: tuple[float | None, float | None, float | None] = (None, None, None)
        try:
            t = run_script_with_env(runner.inventory[self.planned.stack], spec, n,
                                    runner.suite.placement, self.planned.params, self.access.env)
        except StackError as exc:
            outcome = str(exc)
        else:
            times, outcome = (t.wall_s, t.user_s, t.sys_s), t.check
            self._message(f"{spec.label} x {n}: real {t.wall_s:.3f} s, user {t.user_s:.3f} s, "
                          f"sys {t.sys_s:.3f} s ({t.check})")
        wall, user, sys = times
        runner.store.add_script(ScriptRecord(
            run_id=runner.run_id, stack=self.name, label=spec.label, iterations=n,
            wall_s=wall, user_s=user, sys_s=sys, outcome=outcome))

    def _load_case(self, case: PlannedCase, case_id: int) -> str:
        """Run the case's levels by the suite's strategy; returns the case's note."""
        suite = self.runner.suite
        expect_sha = _load_body_hash(case.spec, self.target.base_url)

        def one(level: Level) -> LevelRecord:
            return self._level(case, case_id, expect_sha, level)

        if suite.search is not None:
            assert suite.slo is not None  # the suite parser requires an SLO for a search
            note = rate_search(suite.search, suite.slo, suite.load.repeat, one)
        else:
            note = fixed_sweep(case.levels, suite.slo, one)
        if note:
            self._message(f"{case.spec.label}: {note}")
        return note

    def _level(self, case: PlannedCase, case_id: int, expect_sha: str | None,
               level: Level) -> LevelRecord:
        runner = self.runner
        settings = runner.suite.load_for(case.spec.label)
        req = load_request(self.target, case.spec.path, settings, level, expect_sha)
        started = time.time()
        measured = measure(self.target, req)
        verdict = judge_level(measured, runner.suite.max_error_rate)
        record = level_record(case_id, level, started, settings, measured, verdict)
        level_id = runner.store.add_level(record)
        runner.progress.level_done(LevelEvent(self.name, case.spec.label, level,
                                              runner.store.level(level_id)))
        if settings.pause_s:
            time.sleep(settings.pause_s)
        return record


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
