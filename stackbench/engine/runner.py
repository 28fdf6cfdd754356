"""A run: the plan in, level records out.

For each planned stack: its data services (started once per run, seed data restored between
stacks), the stack built and started (`session.stacks`), each workload verified, then its levels
chosen by the suite's strategy (`strategies`), measured (`measure`), judged (`judge`) and
committed one by one. Whatever happens (a stack that will not start, a failed verification,
Ctrl-C), everything started is stopped and the run is marked complete, interrupted or failed;
a failure while stopping is only logged.

Faults stay where they happen:
- a stack or service process that exits during a level fails that level (`server-exited`,
  see `watch`); the stack is restarted (its services too, if one of them died) and verified
  again, and the sweep goes on with the next level. After `[limits] max_restarts` restarts the
  stack is given up: its unfinished cases fail, the other stacks still run.
- a load tool that fails fails its level (`loader-failed`), not the run.

Every case of the plan is stored (pending) when the run starts; `resume` continues a run from
those still pending, replaying their stored levels. The logs of every process (stack and
services, every start of them) are copied to `run-N/logs/`.
"""

import collections
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from stackbench.config.endpoints import Endpoint
from stackbench.config.external import ExternalStack
from stackbench.config.hosts import HostsFile
from stackbench.config.loadspec import LoadRequest
from stackbench.config.manifest import Warmup
from stackbench.config.noise import THROUGHPUT_THRESHOLD
from stackbench.config.placement import allowed_cpus
from stackbench.config.plan import Level, Plan, PlannedCase, PlannedStack, Round, timings_due
from stackbench.config.status import StackEntry
from stackbench.config.workloads import BodyStability, WorkloadSpec
from stackbench.engine import agreement
from stackbench.engine.hosts import Agent, RemoteHosts, open_hosts
from stackbench.engine.judge import Measurement, disturbance, judge_level
from stackbench.engine.measure import (
    Target,
    jit_warmup_record,
    jit_warmup_request,
    level_record,
    load_request,
    measure,
)
from stackbench.engine.progress import Phase, ProgressEvent, ProgressSink, ignore_progress
from stackbench.engine.recovery import SCRATCH_PREFIX, Owner, current_owner
from stackbench.engine.resume import Replay, Selection, levels_to_run
from stackbench.engine.settings import run_settings
from stackbench.engine.settle import Advise, SettleStep, full_rates, settle_step
from stackbench.engine.spread import HostWatch, Spread, measure_spread
from stackbench.engine.strategies import fixed_sweep, rate_search
from stackbench.engine.watch import ExitCheck, ProcessExit, stack_exits
from stackbench.errors import HostLost, StackbenchError, StackError
from stackbench.lab import environment, external, fs
from stackbench.lab.busy import wait_for_quiet
from stackbench.lab.httpget import get
from stackbench.lab.monitor import process_counts
from stackbench.session.script import run_script_with_env
from stackbench.session.stacks import ServiceAccess, Services, running_stack, services_needed
from stackbench.store.records import (
    CaseRecord,
    CaseStatus,
    Environment,
    LevelFlag,
    LevelRecord,
    RunRecord,
    RunStatus,
    ScriptRecord,
    Superseded,
    VerificationRecord,
)
from stackbench.store.store import Store
from stackbench.verify.endpoint import Reference, verify_endpoint
from stackbench.verify.hashes import sha256_hex
from stackbench.verify.http import verify_workload
from stackbench.verify.outcome import VerifyOutcome

log = logging.getLogger(__name__)

SERVICES_LOG_DIR = "services"  # run-N/logs/services/<service>/
# A level found disturbed is measured again once, after waiting at most this for the level's
# cores to be quiet (busy at most the noise band with the stack idle).
QUIET_WAIT_S = 10.0
REMOTE_LOG_DIR = "hosts"  # run-N/logs/hosts/<host>/: its agent's log and its services' logs
_LOG_PART = re.compile(r"[A-Za-z0-9._-]{1,128}")


@dataclass(frozen=True)
class RunSetup:
    """What a plan is executed with: the stacks on disk, where results go, who follows the
    run, and how it was asked for (the selection, the other hosts)."""

    inventory: Mapping[str, StackEntry]
    store: Store
    out_dir: Path  # run-N/logs/ goes under it
    progress: ProgressSink = ignore_progress
    selection: Selection = field(default_factory=Selection)
    hosts: HostsFile | None = None  # the other hosts of [placement], None: this machine only
    keep_remote: bool = False  # the agents leave their run directories
    decision_looks: int = 1  # run --until-decided: see RunSettings
    machine_warnings: tuple[str, ...] = ()  # doctor's, kept in the run's environment
    label: str = ""  # run --label
    settle: Advise | None = None  # run --settle: judges a first level's warm-up (engine/settle.py)
    # The seconds of load disturbed levels may be measured again in: what the suite's load
    # budget leaves beyond the plan's levels (config/todecide.RoundsRoom.left_s), so that the
    # run keeps to the budget on a host that disturbs every level; None: no cap (no budget).
    remeasure_s: float | None = None


@dataclass
class _CaseState:
    """A case of the plan as stored: its row, its status, its levels measured so far."""

    case_id: int
    status: CaseStatus
    replay: Replay
    scripted: int  # standalone timings stored already (resume): script_timings a repetition
    notes: list[str] = field(default_factory=list)  # what its rounds noted (restarts...)


class Runner:
    def __init__(self, plan: Plan, setup: RunSetup, resume: int | None = None) -> None:
        self.plan = plan
        self.suite = plan.suite
        self.setup = setup
        self.inventory = setup.inventory
        self.store = setup.store
        self.out_dir = setup.out_dir
        self.resume = resume  # the stored run this one continues
        self.run_id = 0
        self.measured_again_s = 0.0  # the load of disturbed levels measured again (superseded)
        self.remote = RemoteHosts()
        # The answer the stacks agree on, per own endpoint with same_across_stacks.
        self.references: dict[str, Reference] = {}

    def emit(self, event: ProgressEvent) -> None:
        self.setup.progress(event)

    @property
    def logs_dir(self) -> Path:
        return self.out_dir / f"run-{self.run_id}" / "logs"

    def execute(self) -> int:
        self.emit(ProgressEvent(Phase.BEGIN, plan=self.plan))
        hosts, keep = self.setup.hosts, self.setup.keep_remote
        if hosts is not None:  # before the run is stored: a host that fails stops it here
            names = self.suite.placement.hosts()
            self.emit(
                ProgressEvent(
                    Phase.HOSTS,
                    f"hosts: {', '.join(names)}: connecting (ssh), starting their agents",
                )
            )
            self.remote = open_hosts(hosts, names, keep)
            for name, agent in self.remote.agents.items():
                self.emit(
                    ProgressEvent(
                        Phase.HOSTS,
                        f"host {name}: {agent.host.address}, clock offset "
                        f"{agent.clock.offset_s * 1000:+.2f} ms, files in {agent.run_dir}"
                        + (" (kept)" if keep else ""),
                    )
                )
        scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        try:
            self.run_id = self._open_run(current_owner(), scratch)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            self.remote.close()
            raise
        status: RunStatus = "failed"
        failing = True
        try:
            if self.resume is not None:  # what it measured again before counts against the cap
                superseded = self.store.load_run(self.run_id).superseded
                self.measured_again_s = sum(row.duration_s for row in superseded)
            cases = self._cases()
            with Services(scratch / "services", self.suite.placement.services) as services:
                self.references = self._references(services, scratch)
                for round_ in self.plan.rounds():
                    for planned in round_.order:
                        self._run_stack(planned, services, scratch, cases, round_)
                    self._timings_in_turns(round_, services, cases)
            status, failing = "complete", False
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            try:
                self._close(status, scratch, failing)
            finally:
                self.remote.close()
        return self.run_id

    def _open_run(self, owner: Owner, scratch: Path) -> int:
        if self.resume is not None:
            self.store.reopen_run(
                self.resume, owner.pid, owner.started_at, owner.host, str(scratch)
            )
            return self.resume
        suite = self.suite
        return self.store.start_run(
            RunRecord(
                suite_name=suite.name,
                suite_path=str(suite.path.resolve()),
                suite_text=suite.raw_text,
                settings=run_settings(suite, self.setup.decision_looks),
                environment=self._environment(),
                started_at=time.time(),
                owner_pid=owner.pid,
                owner_started_at=owner.started_at,
                owner_host=owner.host,
                scratch_dir=str(scratch),
                only_stacks=self.setup.selection.stacks,
                only_workloads=self.setup.selection.workloads,
                label=self.setup.label,
            )
        )

    def _environment(self) -> Environment:
        snapshot = msgspec.convert(environment.snapshot(), Environment)
        if self.suite.stack_folders:
            revisions = environment.stack_revisions(self.suite.stack_folders)
            snapshot = msgspec.structs.replace(snapshot, stack_revisions=revisions)
        warnings = self.setup.machine_warnings
        if warnings:
            snapshot = msgspec.structs.replace(snapshot, machine_warnings=warnings)
        if self.remote.agents:
            return msgspec.structs.replace(snapshot, hosts=self.remote.facts())
        return snapshot

    def spread(self) -> Spread | None:
        """Where the levels run when the server is on another host; None: this machine."""
        placement = self.suite.placement
        if placement.server_host is None:
            return None
        services = placement.separate_services_host
        return Spread(
            self.remote[placement.server_host],
            tuple(self.remote[name] for name in placement.loader_hosts),
            None if services is None else self.remote[services],
        )

    def _cases(self) -> dict[tuple[str, str], _CaseState]:
        """Every case of the plan, stored at once (pending) so an interrupted run shows what
        it did not reach; on resume, the stored cases with their levels."""
        previous = self.store.load_run(self.run_id) if self.resume is not None else None
        stored = {(c.stack, c.label): c for c in previous.cases} if previous else {}
        scripted = collections.Counter(
            (s.stack, s.label) for s in (previous.scripts if previous else ())
        )
        states = {}
        for planned in self.plan.stacks:
            for case in planned.cases:
                key = (planned.name, case.spec.label)
                row = stored.get(key)
                if row is not None and previous is not None:
                    states[key] = _CaseState(
                        row.id, row.status, Replay(previous.levels_of(row.id)), scripted[key]
                    )
                    continue
                case_id = self.store.add_case(
                    CaseRecord(
                        run_id=self.run_id,
                        stack=planned.name,
                        workload=case.spec.name,
                        label=case.spec.label,
                        path=case.spec.path,
                        params=planned.params,
                    )
                )
                states[key] = _CaseState(case_id, "pending", Replay(()), 0)
        return states

    def _close(self, status: RunStatus, scratch: Path, failing: bool) -> None:
        """Keep the services' logs, record how the run ended, remove the scratch dir. While
        another error ends the run, a failure here (a full disk) must not hide that error."""
        try:
            self.keep_logs(scratch / "services", SERVICES_LOG_DIR, by_subdir=True)
            self._keep_remote_logs()
            self.store.finish_run(self.run_id, status)
        except StackbenchError as exc:
            if not failing:
                raise
            log.warning("run %d: recording its end (%s) failed: %s", self.run_id, status, exc)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _run_stack(
        self,
        planned: PlannedStack,
        services: Services,
        scratch: Path,
        cases: dict[tuple[str, str], _CaseState],
        round_: Round,
    ) -> None:
        """One round of one stack: a fresh start, its pending cases at the round's levels."""
        states = {c.spec.label: cases[(planned.name, c.spec.label)] for c in planned.cases}
        pending = [s for s in states.values() if s.status == "pending"]
        if not pending:
            return  # finished before a resume, or failed in an earlier round
        if not planned.available:
            self.emit(
                ProgressEvent(Phase.UNAVAILABLE, f"unavailable ({planned.reason})", planned.name)
            )
            for state in pending:
                self.store.set_case_status(state.case_id, "unavailable", planned.reason)
                state.status = "unavailable"
            return
        if round_.repetition is not None:
            fresh = "a fresh start" if planned.external is None else "not restarted (external)"
            self.emit(
                ProgressEvent(
                    Phase.ROUND,
                    f"round {round_.repetition + 1} of {self.suite.load.repeat}, {fresh}",
                    planned.name,
                )
            )
        stack = _StackRun(self, planned, states, services, scratch / planned.name, round_)
        try:
            stack.start()
            stack.run()
        except StackError as exc:  # this stack's unfinished cases fail, the suite goes on
            self.store.fail_pending_cases([s.case_id for s in pending], str(exc))
            for state in pending:
                state.status = "failed" if state.status == "pending" else state.status
            self.emit(ProgressEvent(Phase.FAILED, f"FAILED: {exc}", planned.name))
        finally:
            stack.close()

    def _timings_in_turns(
        self, round_: Round, services: Services, cases: dict[tuple[str, str], _CaseState]
    ) -> None:
        """The round's standalone timings (script_timings a case), after its stacks' levels,
        taken in turns: one timing of every case whose stack ran and verified in the round,
        then again in the reverse order (php, node, node, php...). A timing's figure drifts
        with the machine by more than its own noise (db-html-report's timings minutes apart
        spread 9-13%, those taken one after another 4-8%): the k-th timings of two stacks,
        seconds apart, share their drift, which their ratio's pairs then cancel
        (analysis.paired), and the turns' reversal cancels a steady drift within the round."""
        suite = self.suite
        if not suite.script_iterations:
            return
        wanted = timings_due(round_.repetition, suite.load.repeat, suite.script_timings)
        timed = [
            (planned, case.spec)
            for planned in round_.order
            for case in planned.cases
            if cases[(planned.name, case.spec.label)].status in ("pending", "ok")
            and cases[(planned.name, case.spec.label)].scripted < wanted
        ]
        if not timed:  # none due: an until-decided round beyond `repeat` times nothing
            return
        access = self._script_access(timed, services)
        for turn in range(wanted):
            for planned, spec in timed if turn % 2 == 0 else reversed(timed):
                state = cases[(planned.name, spec.label)]
                if state.scripted < wanted:
                    self._script_timing(planned, spec, access)
                    state.scripted += 1

    def _script_access(
        self, timed: list[tuple[PlannedStack, WorkloadSpec]], services: Services
    ) -> ServiceAccess | str:
        """The services' access for the standalone timings (their seed data restored), or
        why they cannot be timed: only a server on this machine runs its script here."""
        if self.spread() is not None:
            return (
                "not timed: the standalone timing runs only when the server is on this "
                "machine (the suite puts it on another host)"
            )
        try:
            return services.prepare([spec.name for _, spec in timed])
        except StackbenchError as exc:
            return f"not timed: the services could not start: {exc}"

    def _script_timing(
        self, planned: PlannedStack, spec: WorkloadSpec, access: ServiceAccess | str
    ) -> None:
        """The articles' standalone timing: the workload's code N times in one process."""
        n = self.suite.script_iterations

        def say(text: str) -> None:
            self.emit(ProgressEvent(Phase.SCRIPT, text, planned.name, spec.label))

        say(f"timing {spec.label} x {n} without HTTP")
        times: tuple[float | None, float | None, float | None] = (None, None, None)
        try:
            if planned.external is not None:
                raise StackError("not timed: an external stack has no script stackbench could run")
            if isinstance(access, str):
                raise StackError(access)
            t = run_script_with_env(
                self.inventory[planned.stack],
                spec,
                n,
                self.plan.placement_of(planned),
                planned.params,
                access.env,
            )
        except StackError as exc:
            outcome = str(exc)
        else:
            times, outcome = (t.wall_s, t.user_s, t.sys_s), t.check
            say(
                f"{spec.label} x {n}: real {t.wall_s:.3f} s, user {t.user_s:.3f} s, "
                f"sys {t.sys_s:.3f} s ({t.check})"
            )
        wall, user, sys = times
        self.store.add_script(
            ScriptRecord(
                run_id=self.run_id,
                stack=planned.name,
                label=spec.label,
                iterations=n,
                wall_s=wall,
                user_s=user,
                sys_s=sys,
                outcome=outcome,
            )
        )

    def _references(self, services: Services, scratch: Path) -> dict[str, Reference]:
        """The answers the stacks agree on, asked before any load (engine/agreement.py)."""
        if not agreement.compared_endpoints(self.plan):
            return {}

        def say(stack: str, text: str) -> None:
            self.emit(ProgressEvent(Phase.VERIFY, text, stack))

        found = agreement.references(
            self.plan,
            self.inventory,
            scratch / "agreement",
            lambda planned: self.services_for(planned, services),
            say,
        )
        for name, reference in found.items():
            say(", ".join(reference.stacks), f"{name}: the reference answer")
        return found

    def services_for(self, planned: PlannedStack, services: Services) -> ServiceAccess:
        names = [c.spec.name for c in planned.cases]
        kinds = sorted(k.value for k in services_needed(names))
        if kinds:
            self.emit(
                ProgressEvent(
                    Phase.SERVICES,
                    f"services: {', '.join(kinds)} (seed data restored)",
                    planned.name,
                )
            )
        return services.prepare(names)

    def _keep_remote_logs(self) -> None:
        """Each host's agent log and its services' logs, to run-N/logs/hosts/<host>/, before
        the agents remove their run directories; a host that is gone keeps its own."""
        for name, agent in self.remote.agents.items():
            for part in ("agent", "services"):
                try:
                    files = agent.client.fetch_logs(part)
                except StackbenchError as exc:
                    log.warning("host %s: fetching its %s logs failed: %s", name, part, exc)
                    continue
                where = self.logs_dir / REMOTE_LOG_DIR / name
                write_fetched_logs(files, where / SERVICES_LOG_DIR if part == "services" else where)

    def keep_logs(self, source: Path, name: str, by_subdir: bool = False) -> None:
        """Copy the *.log files of `source` (of each of its subdirectories with `by_subdir`)
        to run-N/logs/<name>/; a copy that fails is only logged."""
        target = self.logs_dir / name
        try:
            if by_subdir:
                if source.is_dir() and not source.is_symlink():
                    for sub in sorted(source.iterdir()):
                        if sub.is_dir() and not sub.is_symlink():
                            copy_logs(sub, target / sub.name)
            else:
                copy_logs(source, target)
        except OSError as exc:
            log.warning("keeping the logs of %s in %s failed: %s", source, target, exc)


def write_fetched_logs(files: Mapping[str, str], base: Path) -> None:
    """Logs another host's agent sent (relative path -> text) under base, or base/start-N
    after an earlier start; a path that is not plain names is refused, a write that fails
    only logged."""
    if not files:
        return
    target = free_log_dir(base)
    for relative, text in sorted(files.items()):
        parts = relative.split("/")
        if not all(_LOG_PART.fullmatch(part) and part not in (".", "..") for part in parts):
            log.warning("a log named %r from another host was not kept", relative)
            continue
        try:
            path = target.joinpath(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            fs.write_new_file(path, target, text, 0o644)
        except (OSError, StackbenchError) as exc:
            log.warning("keeping the log %s in %s failed: %s", relative, target, exc)


def copy_logs(source: Path, base: Path) -> Path | None:
    """Copy the regular *.log files of `source` to `base`, or to base/start-N when base holds
    the logs of an earlier start already (a restart, a resumed run). Symlinks are skipped: the
    directories belong to the (unprivileged) processes under test."""
    if not source.is_dir() or source.is_symlink():
        return None
    logs = [p for p in sorted(source.glob("*.log")) if not p.is_symlink() and p.is_file()]
    if not logs:
        return None
    target = free_log_dir(base)
    copied = [fs.copy_log(path, target) for path in logs]  # never through a symlink
    return target if any(copied) else None


def free_log_dir(base: Path) -> Path:
    """base for the first start; base/start-2, start-3 ... for the next ones."""
    if not base.is_dir() or not any(base.glob("*.log")):
        return base
    n = 2
    while (base / f"start-{n}").exists():
        n += 1
    return base / f"start-{n}"


@dataclass
class _Live:
    """One start of a stack, here or on another host: how to stop it, where the load goes,
    how to watch, verify and measure it."""

    started: ExitStack  # leaving it stops the stack
    target: Target
    exits: ExitCheck
    verify: Callable[[str], VerifyOutcome]
    measure: Callable[[LoadRequest], Measurement]
    jit_warmup: Warmup | None  # the warm-up the stack needs as it started
    access: ServiceAccess | None  # the services' access here (None: on another host)
    # On another host: its logs of this start, fetched before its run directory goes.
    fetch_logs: Callable[[], dict[str, str]] | None = None
    verified: dict[str, VerifyOutcome] = field(default_factory=dict)


class _StackRun:
    """One planned stack: started, then each pending case verified and loaded; restarted
    when one of its processes (or of its services) exits, at most max_restarts times."""

    def __init__(
        self,
        runner: Runner,
        planned: PlannedStack,
        cases: dict[str, _CaseState],
        services: Services,
        run_dir: Path,
        round_: Round,
    ) -> None:
        self.runner = runner
        self.planned = planned
        self.round = round_
        self.cases = cases
        self.services = services
        self.run_dir = run_dir
        self.kinds = frozenset(services_needed(c.spec.name for c in planned.cases))
        self.restarts = 0
        self.notes: list[str] = []  # what happened to the current case (restarts)
        self._live: _Live | None = None

    @property
    def name(self) -> str:
        return self.planned.name

    @property
    def live(self) -> _Live:
        assert self._live is not None, "the stack is not started"
        return self._live

    def _message(self, text: str, phase: Phase = Phase.START, case: str | None = None) -> None:
        self.runner.emit(ProgressEvent(phase, text, self.name, case))

    # --- starting and stopping -----------------------------------------------------------
    def start(self) -> None:
        spread = self.runner.spread()
        if self.planned.external is not None and spread is not None:
            self._live = self._start_external_remote(self.planned.external, spread)
            return
        if self.planned.external is not None:
            self._live = self._start_external(self.planned.external)
            return
        if spread is not None:
            try:
                self._live = self._start_remote(spread)
            except HostLost as exc:  # its cases fail; later stacks find the host lost too
                raise StackError(f"could not start on host {exc.host}: {exc.what}") from exc
            return
        runner = self.runner
        try:
            access = runner.services_for(self.planned, self.services)
        except StackbenchError as exc:
            raise StackError(f"services could not start: {exc}") from exc
        started = ExitStack()
        placement = runner.plan.placement_of(self.planned)
        instance = started.enter_context(
            running_stack(
                runner.inventory[self.planned.stack],
                placement,
                self.run_dir,
                self.planned.params,
                access.env,
                self._message,
            )
        )
        runner.store.set_effective_params(
            (c.case_id for c in self.cases.values()), instance.params_in_force()
        )
        self._message(f"running: {process_counts(instance.roles())}")
        target = Target(
            instance.base_url,
            instance.roles(),
            self.services.roles(),
            len(instance.cfg.server_cpus),
            placement.loader,
            frozenset(instance.cfg.server_cpus) | placement.services,
        )
        exits = stack_exits(instance, self.services, self.kinds)
        context = access.context

        endpoints, references = runner.suite.endpoints, runner.references

        def verify(workload: str) -> VerifyOutcome:
            endpoint = endpoints.get(workload)
            if endpoint is not None:
                reference = references.get(workload)
                return verify_endpoint(endpoint, self.name, target.base_url, reference)
            return verify_workload(workload, target.base_url, context)

        self._live = _Live(
            started,
            target,
            exits,
            verify,
            lambda req: measure(target, req, exits),
            instance.jit_warmup(),
            access,
        )

    def _start_external_remote(self, ext: ExternalStack, spread: Spread) -> _Live:
        """A server the user runs on the server host of a multi-host run: its processes
        found, sampled and watched by that host's agent; loaded from the loader hosts."""
        agent = spread.server
        try:
            found = agent.client.attach_external(ext.name, ext.url, ext.pids, ext.unit)
        except HostLost:
            raise
        except StackbenchError as exc:  # e.g. gone since an earlier round: its cases fail
            raise StackError(f"[external.{ext.name}] on host {agent.name}: {exc}") from exc
        started = ExitStack()
        started.callback(_stop_remote_stack, agent.client.stop_stack, self.name)
        self._announce_external(ext.url, found.roles, f" on host {agent.name}")
        cpus = found.cpus or frozenset(agent.info.cores)
        target = Target(ext.url, found.roles, {}, len(cpus), self.runner.suite.placement.loader)
        watch = HostWatch(spread.stack_hosts)

        def verify(workload: str) -> VerifyOutcome:
            return verify_workload(workload, ext.url, None)  # from here, as the loaders ask

        return _Live(
            started,
            target,
            watch,
            verify,
            lambda req: measure_spread(target, req, spread, watch),
            None,
            None,
        )

    def _announce_external(self, url: str, roles: Mapping[str, int], where: str = "") -> None:
        """A server the user runs, as the reports' "parameters in force" give it (where it
        ran, run by the user) and as the progress tells it: the processes sampled, if any."""
        self.runner.store.set_effective_params(
            (c.case_id for c in self.cases.values()), {"external": url}
        )
        sampled = f"pids {', '.join(map(str, roles.values()))}" if roles else ""
        self._message(
            f"external at {url}{where}, not started by stackbench: "
            + (f"{process_counts(roles)} ({sampled})" if sampled else "not sampled")
        )

    def _start_external(self, ext: ExternalStack) -> _Live:
        """A server the user runs: nothing started (and nothing to stop), its url checked
        and its processes (pids or unit) found for the monitor and the crash watch."""
        where = f"{self.runner.suite.path}: [external.{ext.name}]"
        try:
            found = external.attach(ext, where)
        except StackbenchError as exc:  # e.g. gone since an earlier round: its cases fail
            raise StackError(str(exc)) from exc
        placement = self.runner.suite.placement
        self._announce_external(ext.url, found.roles)
        cpus = found.cpus or allowed_cpus()
        # Its cores are accounted only when its processes are known: an unknown server's
        # CPU would be other work on them, and every level would look disturbed.
        accounted = cpus if found.roles else frozenset()
        target = Target(ext.url, found.roles, {}, len(cpus), placement.loader, accounted)

        def exits() -> list[ProcessExit]:
            return [
                ProcessExit(f"external stack {ext.name}'s process {pid}", None, "")
                for pid in found.gone()
            ]

        endpoints, references = self.runner.suite.endpoints, self.runner.references

        def verify(workload: str) -> VerifyOutcome:
            endpoint = endpoints.get(workload)
            if endpoint is not None:
                reference = references.get(workload)
                return verify_endpoint(endpoint, self.name, ext.url, reference)
            return verify_workload(workload, ext.url, None)

        return _Live(
            ExitStack(),
            target,
            exits,
            verify,
            lambda req: measure(target, req, exits),
            None,
            None,
        )

    def _start_remote(self, spread: Spread) -> _Live:
        """The stack and its services started by the server host's agent, on its address."""
        runner, placement = self.runner, self.runner.suite.placement
        agent = spread.server
        workloads = [c.spec.name for c in self.planned.cases]
        service_env, service_roles = self._remote_services(spread, workloads)
        self._put_own_stack(agent)
        self._message(f"building and starting on host {agent.name} ({agent.host.address})")
        got = agent.client.start_stack(
            self.planned.stack,
            name=self.planned.name,
            server_cpus=placement.server,
            services_cpus=placement.services,
            params=self.planned.params,
            workloads=workloads,
            host=agent.host.address,
            service_env=service_env,
        )
        started = ExitStack()
        started.callback(_stop_remote_stack, agent.client.stop_stack, self.name)
        runner.store.set_effective_params((c.case_id for c in self.cases.values()), got.params)
        self._message(f"running on host {agent.name}: {got.processes}")
        target = Target(
            got.base_url,
            got.server_roles,
            {**got.service_roles, **service_roles},
            len(placement.server),
            placement.loader,
        )
        watch = HostWatch(spread.stack_hosts)
        warmup = runner.inventory[self.planned.stack].manifest.warmup

        def verify(workload: str) -> VerifyOutcome:
            return agent.client.verify([workload])[0]

        return _Live(
            started,
            target,
            watch,
            verify,
            lambda req: measure_spread(target, req, spread, watch),
            warmup if warmup is not None and warmup.applies(got.params) else None,
            None,
            lambda: agent.client.fetch_logs("stack", self.name),
        )

    def _put_own_stack(self, agent: Agent) -> None:
        """A stack of the user's own exists on this machine only: its folder is copied to
        the server host (once a run), where the agent builds and starts it like a local one."""
        own = self.runner.suite.own_stacks.get(self.planned.stack)
        if own is None or self.planned.stack in agent.stacks_put:
            return
        self._message(f"copying {own.stack_dir} to host {agent.name}")
        try:
            size = agent.client.put_stack(self.planned.stack, own.stack_dir)
        except HostLost:
            raise
        except StackbenchError as exc:  # changed since the run checked it: this stack fails
            raise StackError(f"could not be copied to host {agent.name}: {exc}") from exc
        agent.stacks_put.add(self.planned.stack)
        log.info("%s: %d bytes copied to host %s", self.planned.stack, size, agent.name)

    def _remote_services(
        self, spread: Spread, workloads: list[str]
    ) -> tuple[dict[str, str] | None, dict[str, int]]:
        """With the services on a host of their own: started there (seed data restored) for
        the server host's address alone; their environment for the stack, and their roles.
        (None, {}): the server's agent starts them next to the stack."""
        host = spread.services
        if host is None:
            return None, {}
        if not services_needed(workloads):
            return {}, {}
        self._message(
            f"services on host {host.name} ({host.host.address}), for {spread.server.name} only",
            Phase.SERVICES,
        )
        try:
            got = host.client.start_services(
                workloads,
                cpus=self.runner.suite.placement.services,
                host=host.host.address,
                clients=(spread.server.host.address,),
            )
        except HostLost:
            raise
        except StackbenchError as exc:
            raise StackError(f"services could not start on host {host.name}: {exc}") from exc
        return got.env, got.roles

    def close(self) -> None:
        """Stop the stack if it runs and keep the logs of this start."""
        live, self._live = self._live, None
        try:
            if live is not None:
                live.started.close()
        finally:
            if live is not None and live.fetch_logs is not None:
                self._keep_fetched_logs(live.fetch_logs)
            else:
                self.runner.keep_logs(self.run_dir, self.name)

    def _keep_fetched_logs(self, fetch: Callable[[], dict[str, str]]) -> None:
        try:
            files = fetch()
        except StackbenchError as exc:  # a lost host: its logs are lost with it
            log.warning("%s: fetching its logs failed: %s", self.name, exc)
            return
        write_fetched_logs(files, self.runner.logs_dir / self.name)

    def _restart(self, what: str, workload: str) -> None:
        """A process of the stack or of its services exited: start both again and verify
        `workload` again; StackError when the restarts are used up or the restart fails."""
        if self.planned.external is not None:
            raise StackError(
                f"{self.name}: {what}; stackbench does not restart an external server: "
                "its cases left fail (start it again and run the suite again)"
            )
        limit = self.runner.suite.max_restarts
        if self.restarts >= limit:
            raise StackError(
                f"{self.name}: {what}; given up for the rest of the run after "
                f"{self.restarts} restart(s) (suite key limits.max_restarts = "
                f"{limit})"
            )
        self.restarts += 1
        self.notes.append(f"{what}; restarted ({self.restarts} of at most {limit})")
        self._message(f"{what}: restarting ({self.restarts} of at most {limit})")
        for service in self.services.running():
            if service.exit_status() is not None:  # its directory is emptied on restart
                self.runner.keep_logs(
                    service.log_path.parent, f"{SERVICES_LOG_DIR}/{service.kind.value}"
                )
        self.close()
        self.start()
        outcome = self._verify(workload)
        if not outcome.ok:
            raise StackError(
                f"{self.name}: verification after the restart failed: "
                + "; ".join(outcome.failures[:3])
            )

    # --- the cases -----------------------------------------------------------------------
    def run(self) -> None:
        store = self.runner.store
        rounds = self.runner.plan.rounds()
        last_round = self.round.repetition in (None, rounds[-1].repetition)
        for planned_case in self.planned.cases:
            case = self.round.levels(planned_case)
            state = self.cases[case.spec.label]
            if state.status != "pending":
                continue
            self.notes = []
            dead = self.live.exits()
            if dead:  # died after the previous case: start afresh before verifying
                self._restart(
                    "; ".join(e.describe() for e in dead) + " (between cases)", case.spec.name
                )
            outcome = self._verify(case.spec.name)
            if not outcome.ok:
                store.set_case_status(
                    state.case_id,
                    "failed",
                    "verification failed: " + "; ".join(outcome.failures[:3]),
                )
                state.status = "failed"
                continue
            state.notes += filter(None, [self._load_case(case, state), *self.notes])
            if self.planned.external is not None:
                state.notes += self.planned.external.not_measured()
            if last_round:
                store.set_case_status(state.case_id, "ok", "; ".join(dict.fromkeys(state.notes)))
                state.status = "ok"

    def _verify(self, workload: str) -> VerifyOutcome:
        live = self.live
        if workload not in live.verified:
            self._message(f"verifying {workload}", Phase.VERIFY)
            outcome = live.verify(workload)
            live.verified[workload] = outcome
            self.runner.store.add_verification(
                VerificationRecord(
                    run_id=self.runner.run_id,
                    stack=self.name,
                    workload=workload,
                    ok=outcome.ok,
                    checked=outcome.checked,
                    failures=tuple(outcome.failures),
                    at=time.time(),
                )
            )
        return live.verified[workload]

    def _load_case(self, case: PlannedCase, state: _CaseState) -> str:
        """Run the case's levels by the suite's strategy; returns the case's note."""
        suite = self.runner.suite
        expect_sha = _load_body_hash(case.spec, self.live.target.base_url)
        if len(state.replay):
            left = len(levels_to_run(case.levels, state.replay.done()))
            self._message(
                f"{case.spec.label}: resuming: {len(state.replay)} level(s) kept"
                + ("" if suite.search else f", {left} to run"),
                Phase.NOTE,
                case.spec.label,
            )

        if levels_to_run(case.levels, state.replay.done()) or suite.search is not None:
            self._jit_warmup(case, state, expect_sha)

        def one(level: Level) -> LevelRecord:
            return self._level(case, state, expect_sha, level)

        if suite.search is not None:
            assert suite.slo is not None  # the suite parser requires an SLO for a search
            note = rate_search(suite.search, suite.slo, suite.load.repeat, one)
        else:
            note = fixed_sweep(case.levels, suite.slo, one)
        if note:
            self._message(f"{case.spec.label}: {note}", Phase.NOTE, case.spec.label)
        return note

    def _jit_warmup(self, case: PlannedCase, state: _CaseState, expect_sha: str | None) -> None:
        """A JIT stack's discarded pass at the case's first load, so that its levels measure
        compiled code; what it measured cold is kept on the case, beside the warm levels.
        A server that dies in it is found (and restarted) by the first level."""
        suite, live = self.runner.suite, self.live
        warmup = live.jit_warmup
        settings = suite.load_for(case.spec.label)
        if warmup is None or not settings.jit_warmup:
            return
        first = (
            case.levels[0] if case.levels else Level(0, suite.search.lo if suite.search else 1.0, 0)
        )
        req = jit_warmup_request(
            live.target, case.spec.path, settings, first, warmup, expect_sha, _endpoint(case)
        )
        self._message(
            f"{case.spec.label}: JIT warm-up, {warmup.seconds:g} s at "
            f"{first.value:g} ({warmup.why}); not measured",
            Phase.WARMUP,
            case.spec.label,
        )
        record = jit_warmup_record(warmup, first.value, live.measure(req))
        self.runner.store.set_jit_warmup(state.case_id, record)

    def _level(
        self,
        case: PlannedCase,
        state: _CaseState,
        expect_sha: str | None,
        level: Level,
        repeated: bool = False,
        settled: bool = False,
    ) -> LevelRecord:
        """One level measured and stored; `repeated`: already measured again after a
        disturbance; `settled`: already measured again after a --settle warm-up pass."""
        runner = self.runner
        kept = state.replay.get(level)
        if kept is not None:  # measured before the run was interrupted
            runner.emit(ProgressEvent(Phase.LEVEL, "", self.name, case.spec.label, level, kept))
            return kept
        live = self.live
        settings = runner.suite.load_for(case.spec.label)
        req = load_request(
            live.target, case.spec.path, settings, level, expect_sha, _endpoint(case)
        )
        started = time.time()
        measured = live.measure(req)
        verdict = judge_level(measured, runner.suite.max_error_rate)
        disturbed = next((f for f in verdict.flags if f.kind is LevelFlag.DISTURBED), None)
        if disturbed is not None and not repeated and measured.failure is None:
            # it would decide nothing: kept, superseded, and measured again once, when quiet,
            # if the budget's room beyond the plan pays for it
            first = level_record(state.case_id, level, started, settings, measured, verdict)
            if self._may_measure_again(case, level, first.duration_s):
                self._supersede(case, level, first, disturbance(disturbed), settings.duration_s)
                return self._level(case, state, expect_sha, level, True, settled)
        # a level still disturbed says nothing of the stack's warm-up: not settled on it
        step = None if settled or disturbed else self._settle_step(case, level, measured)
        if step is not None:  # run --settle: a longer warm-up, then the level once more
            self._settle_pass(case, level, step, expect_sha)
            return self._level(case, state, expect_sha, level, repeated, True)
        record = level_record(state.case_id, level, started, settings, measured, verdict)
        level_id = runner.store.add_level(record)
        row = runner.store.level(level_id)
        runner.emit(ProgressEvent(Phase.LEVEL, "", self.name, case.spec.label, level, row))
        failure = measured.failure
        closed = runner.suite.level_kind == "connections"
        where = f"{case.spec.label} " + (
            f"c={level.value:g}" if closed else f"rate {level.value:g}/s"
        )
        if failure is not None and failure.error_class == "server-exited":
            self._restart(f"{where}: {failure.error}", case.spec.name)
            return record  # a fresh start needs no pause
        if failure is not None:
            self.notes.append(f"{where}: the load tool failed: {failure.error}")
        if settings.pause_s:
            time.sleep(settings.pause_s)
        return record

    def _settle_step(
        self, case: PlannedCase, level: Level, measured: Measurement
    ) -> SettleStep | None:
        """run --settle, after a case's first level: the warm-up pass to add when the level is
        not shown steady after the JIT warm-up (None: nothing to add)."""
        advise, warmup = self.runner.setup.settle, self.live.jit_warmup
        first = (level.index, level.repetition) == (0, 0)
        jit = self.runner.suite.load_for(case.spec.label).jit_warmup
        if advise is None or warmup is None or not jit or not first or measured.failure:
            return None
        rates = full_rates(None if measured.result is None else measured.result.timeseries)
        return settle_step(advise(rates), warmup.seconds) if rates else None

    def _settle_pass(
        self, case: PlannedCase, level: Level, step: SettleStep, expect_sha: str | None
    ) -> None:
        live, settings = self.live, self.runner.suite.load_for(case.spec.label)
        assert live.jit_warmup is not None  # _settle_step found one
        where = f"{case.spec.label} at {level.value:g}"
        self._message(
            f"{where}: not shown steady ({step.why}); --settle: JIT warm-up {step.seconds:g} s "
            f"more ({step.total_s:g} s in all, at most {step.bound_s:g}), then the level again",
            Phase.WARMUP,
            case.spec.label,
        )
        longer = msgspec.structs.replace(live.jit_warmup, seconds=step.seconds)
        live.measure(
            jit_warmup_request(
                live.target, case.spec.path, settings, level, longer, expect_sha, _endpoint(case)
            )
        )
        self.notes.append(step.note(where, live.jit_warmup.seconds))

    def _may_measure_again(self, case: PlannedCase, level: Level, level_s: float) -> bool:
        """Whether a disturbed level's second measurement fits in what the suite's load
        budget leaves beyond the plan (RunSetup.remeasure_s) after the levels measured again
        so far; if not, the case says so, and the level stands disturbed."""
        runner = self.runner
        room = runner.setup.remeasure_s
        if room is None or runner.measured_again_s + level_s <= room:
            runner.measured_again_s += level_s
            return True
        self.notes.append(
            f"{case.spec.label} at {level.value:g}: disturbed, and not measured again: the "
            f"{room:.0f} s of load the suite's budget leaves beyond its plan went to levels "
            f"measured again before ({runner.measured_again_s:.0f} s)"
        )
        return False

    def _supersede(
        self, case: PlannedCase, level: Level, first: LevelRecord, why: str, level_s: float | None
    ) -> None:
        """Store a disturbed first measurement marked superseded (nothing measured is lost;
        no reader counts it, and the level's next record replaces it: Store.add_level), say
        that the level is measured again, and wait for quiet: no longer than QUIET_WAIT_S,
        nor than the level itself lasts. The report says it was measured again, from the
        store; the case notes only a machine still busy."""
        self.runner.store.add_level(msgspec.structs.replace(first, superseded=Superseded(why=why)))
        target = self.live.target
        cores = target.server_cpus | target.loader_cpus
        where = f"{case.spec.label} at {level.value:g}"
        self._message(
            f"{where}: disturbed ({why}); its measurement ({first.requests_per_s:,.0f} req/s) "
            "is kept, superseded, and the level measured again once the machine is quiet",
            Phase.NOTE,
            case.spec.label,
        )
        limit = min(QUIET_WAIT_S, level_s or QUIET_WAIT_S)
        if not wait_for_quiet(cores, limit, THROUGHPUT_THRESHOLD):
            self.notes.append(
                f"{where}: measured again although the machine was not quiet after {limit:g} s"
            )


def _stop_remote_stack(stop: Callable[[], None], name: str) -> None:
    """Stopping must not fail what was measured; a lost host has nothing left to stop."""
    try:
        stop()
    except StackbenchError as exc:
        log.warning("%s: stopping the stack on its host failed: %s", name, exc)


def _endpoint(case: PlannedCase) -> Endpoint | None:
    """The suite's own endpoint the case loads (None: a catalog workload)."""
    return case.spec.workload.endpoint


def _load_body_hash(spec: WorkloadSpec, base_url: str) -> str | None:
    """Hash of the body every load request must return, when the body is fixed."""
    if spec.workload.endpoint is not None:
        return agreement.load_body_hash(spec.workload.endpoint, base_url)
    if spec.workload.stability is not BodyStability.FIXED:
        return None
    expected = spec.expected_body()
    if expected is None:
        try:
            resp = get(base_url, spec.path, timeout_s=30)
        except OSError as exc:
            raise StackError(f"GET {spec.path} failed after verification passed: {exc}") from exc
        if resp.status != 200:
            raise StackError(f"GET {spec.path} answered {resp.status} after verification passed")
        expected = resp.body
    return sha256_hex(expected)
