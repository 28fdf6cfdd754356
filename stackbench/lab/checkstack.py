"""`stackbench verify STACK`: build, start, run every verifier, stop. Also used by the tests."""

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from stackbench.config.placement import Placement
from stackbench.config.status import StackEntry, unavailable_reason
from stackbench.config.workloads import CATALOG
from stackbench.errors import InputError, StackError
from stackbench.lab.stack import StackConfig, StackInstance
from stackbench.verify.http import VerifyOutcome, verify_workload


def stack_service_env(env: Mapping[str, str]) -> dict[str, str]:
    """The service addresses a stack gets: TCP on loopback only, for every stack alike.

    The services also listen on unix sockets, but only some drivers can use them; handing
    sockets to the stacks that can would measure the transport, not the stack. TCP is also
    what a multi-host run must use.
    """
    return {k: v for k, v in env.items() if not k.endswith("_SOCKET")}


def services_needed(workloads: Sequence[str]) -> set[str]:
    return {s for w in workloads for s in CATALOG[w].services}


def pick_workloads(entry: StackEntry, requested: Sequence[str] | None) -> list[str]:
    implemented = list(entry.manifest.workloads)
    if not requested:
        return implemented
    missing = [w for w in requested if w not in implemented]
    if missing:
        raise InputError(f"stack '{entry.manifest.name}' does not implement '{missing[0]}' "
                         f"(it implements: {', '.join(implemented)})")
    return list(requested)


@contextmanager
def running_stack(entry: StackEntry, placement: Placement, run_dir: Path,
                  params: Mapping[str, str], service_env: Mapping[str, str]
                  ) -> Iterator[StackInstance]:
    if not entry.status.available:
        raise StackError(f"{entry.manifest.name} is unavailable: {unavailable_reason(entry)}")
    cfg = StackConfig(entry.manifest, entry.status, run_dir, placement.server, params, service_env)
    with StackInstance(cfg) as instance:
        instance.build()
        instance.start()
        yield instance


def verify_stack(entry: StackEntry, placement: Placement, workloads: Sequence[str] | None = None,
                 params: Mapping[str, str] | None = None) -> list[VerifyOutcome]:
    chosen = pick_workloads(entry, workloads)
    with tempfile.TemporaryDirectory(prefix=f"stackbench-{entry.manifest.name}-") as tmp:
        root = Path(tmp)
        with (
            started_services(services_needed(chosen), root / "services", placement)
            as (env, ctx),
            running_stack(entry, placement, root / "stack", params or {}, env) as inst,
        ):
            return [verify_workload(w, inst.base_url, ctx) for w in chosen]


@contextmanager
def started_services(kinds: set[str], run_dir: Path, placement: Placement
                     ) -> Iterator[tuple[dict[str, str], object | None]]:
    """Private services for one command: (the env a stack gets, the verifiers' context)."""
    if not kinds:
        yield {}, None
        return
    from stackbench.services import ServiceKind, ServiceSet
    from stackbench.verify.data import DataVerifyContext

    run_dir.mkdir(parents=True, exist_ok=True)
    with ServiceSet(run_dir, placement.services) as services:
        services.ensure(ServiceKind(k) for k in sorted(kinds))
        env = services.env()
        yield stack_service_env(env), DataVerifyContext.from_env(env)
