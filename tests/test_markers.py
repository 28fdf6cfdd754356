"""The guards of tests/conftest.py: a test that is not marked `integration` cannot start a server
(unmarked tests run in parallel, see scripts/test.sh), and `concurrent` marks integration tests
only."""

import pytest
from conftest import misplaced_concurrent

import stackbench.lab.stack
import stackbench.services.base


@pytest.mark.parametrize("module", [stackbench.lab.stack, stackbench.services.base])
def test_an_unmarked_test_that_starts_a_server_fails(module, tmp_path):
    with pytest.raises(pytest.fail.Exception, match=r"\(true\) but is not marked .*integration"):
        module.spawn(["true"], tmp_path, None, tmp_path / "server.log")
    assert not (tmp_path / "server.log").exists()  # refused before anything started


@pytest.mark.integration
@pytest.mark.concurrent
def test_an_integration_test_starts_servers(tmp_path):
    proc = stackbench.lab.stack.spawn(["true"], tmp_path, None, tmp_path / "server.log")
    assert proc.wait(timeout=30) == 0


def test_concurrent_is_refused_off_integration_and_beside_serial():
    assert misplaced_concurrent({"integration", "concurrent"}) is None
    assert misplaced_concurrent({"integration"}) is None and misplaced_concurrent(set()) is None
    assert "without `integration`" in (misplaced_concurrent({"concurrent"}) or "")
    assert "both `concurrent` and `serial`" in (
        misplaced_concurrent({"integration", "serial", "concurrent"}) or ""
    )
