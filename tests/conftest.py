import os
import shutil
from collections.abc import Collection
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, settings

import stackbench.lab.stack
import stackbench.services.base
from stackbench.config.paths import loadgen_binary
from stackbench.lab.inventory import load_inventory

FAKE_STACKS = Path(__file__).parent / "fakes" / "stacks"

# The unit tests run on every core beside the builds (scripts/test.sh): Hypothesis's per-example
# deadline and its too-slow health check are timing assertions, which a busy 2-core machine
# fails at random. A test's own settings still bound its examples.
settings.register_profile("stackbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("stackbench")

# Where stackbench starts a server: a stack's processes (lab/stack.py) and a data store
# (services/base.py) both go through these modules' `spawn`.
SERVER_SPAWNS = (stackbench.lab.stack, stackbench.services.base)


@pytest.fixture
def fake_inventory():
    return load_inventory(stacks_dir=FAKE_STACKS)


@pytest.fixture(autouse=True)
def _isolated_build_dir(tmp_path_factory, monkeypatch):
    # Build caches of the real stacks are shared across tests; only override when unset.
    if "STACKBENCH_BUILD_DIR" not in os.environ:
        monkeypatch.setenv(
            "STACKBENCH_BUILD_DIR", str(Path(__file__).resolve().parents[1] / ".build")
        )


@pytest.fixture(autouse=True)
def _servers_start_only_in_integration_tests(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails a test that starts a server without the `integration` marker: unmarked tests run
    in parallel (pytest -n 2), where a server would compete for ports and cores with the
    other worker's tests and falsify what it measures."""
    if request.node.get_closest_marker("integration") is None:

        def refuse(command: list[str], *_: object, **__: object) -> NoReturn:
            pytest.fail(
                f"{request.node.nodeid} starts a server ({command[0]}) but is not marked "
                "@pytest.mark.integration: servers start only in the serial integration run "
                "(scripts/test.sh)",
                pytrace=False,
            )

        for module in SERVER_SPAWNS:
            monkeypatch.setattr(module, "spawn", refuse)


def misplaced_concurrent(markers: Collection[str]) -> str | None:
    """Why a test's `concurrent` marker is wrong, or None. It means "an integration test that
    may run beside another one" (scripts/test.sh runs those two at a time): on a test that is
    not `integration` it selects nothing, and beside `serial` it contradicts it."""
    if "concurrent" not in markers:
        return None
    if "integration" not in markers:
        return "is marked `concurrent` without `integration`: only those run two at a time"
    if "serial" in markers:
        return "is marked both `concurrent` and `serial`: a serial test runs alone"
    return None


@pytest.fixture(autouse=True)
def _concurrent_only_on_integration_tests(request: pytest.FixtureRequest) -> None:
    wrong = misplaced_concurrent({marker.name for marker in request.node.iter_markers()})
    if wrong is not None:
        pytest.fail(f"{request.node.nodeid} {wrong}", pytrace=False)


def native_loader_built() -> bool:
    return loadgen_binary().exists()


def have(command: str) -> bool:
    return shutil.which(command) is not None
