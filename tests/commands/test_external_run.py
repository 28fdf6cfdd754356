"""A server the user runs, named as [external.NAME] in a suite beside a catalog stack, end to
end through the CLI: verified, measured (its CPU sampled from its pid, or not at all and the
report says so), and still running after the run, which never stops it."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite
from stackbench.engine import runner as runner_module
from stackbench.engine.runner import Runner, RunSetup
from stackbench.store.store import Store
from tests.commands.cli_run import run_cli

pytestmark = pytest.mark.integration

SERVER = Path(__file__).resolve().parents[1] / "fakes" / "external_hello.py"
# The system's Python: the unprivileged user may not reach the test's own interpreter (a venv
# under root's home).
SYSTEM_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable


def stackbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env={"COLUMNS": "1000"})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder the unprivileged user can read: the server script is run from it."""
    folder = Path(tempfile.mkdtemp(prefix="stackbench-external-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def server(open_folder: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """The hello server, started by the test (as the unprivileged user when the test runs as
    root: stackbench refuses to sample a root process) and stopped by it."""
    script = open_folder / "hello.py"
    shutil.copy(SERVER, script)
    script.chmod(0o644)
    port = free_port()
    user = {"user": "stackbench"} if os.geteuid() == 0 else {}
    proc = subprocess.Popen(
        [SYSTEM_PYTHON, str(script), str(port)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=open_folder,
        **user,  # type: ignore[call-overload]
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc, port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def suite(folder: Path, port: int, pid: int, catalog: str = '"php-fpm-nginx"') -> Path:
    path = folder / "mine.toml"
    path.write_text(
        f'name = "mine"\nstacks = [{catalog}]\nworkloads = ["hello"]\n'
        "[load]\nconnections = [4]\nduration_s = 2\nwarmup_s = 0\npause_s = 0\n"
        f'[external.byhand]\nurl = "http://127.0.0.1:{port}"\nworkloads = ["hello"]\n'
        f"pids = [{pid}]\n"
        f'[external.bare]\nurl = "http://127.0.0.1:{port}"\nworkloads = ["hello"]\n'
    )
    return path


def test_a_server_run_by_hand_is_measured_beside_a_catalog_stack_and_left_running(
    open_folder: Path, server: tuple[subprocess.Popen[str], int]
) -> None:
    proc, port = server
    suite(open_folder, port, proc.pid)
    out = open_folder / "results"
    ran = stackbench("run", "mine.toml", "--out", str(out), "--no-calibrate", cwd=open_folder)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert proc.poll() is None, "stackbench stopped the external server"
    assert "external stack byhand: http://127.0.0.1:" in ran.stdout  # the plan says so
    store = Store(out / "stackbench.sqlite")
    run = store.runs()[-1]
    data = store.load_run(run.id)
    store.close()
    cases = {c.stack: c for c in data.cases}
    assert set(cases) == {"php-fpm-nginx", "byhand", "bare"}
    assert {v.stack: v.ok for v in data.verifications}.get("byhand") is True
    for name in ("byhand", "bare"):
        assert cases[name].status == "ok", cases[name].reason
        levels = data.levels_of(cases[name].id)
        assert len(levels) == 1 and levels[0].status != "failed", levels[0].error
        assert levels[0].requests_per_s > 0
    sampled = data.levels_of(cases["byhand"].id)[0].usage
    assert sampled["server"].cpu_percent > 0 and sampled["server"].rss_max_bytes > 0
    assert not {"server"} & set(data.levels_of(cases["bare"].id)[0].usage)
    said = "server CPU and memory: not measured, no pids or unit given for external stack bare"
    assert said in cases["bare"].reason
    assert said not in cases["byhand"].reason
    assert "not independent starts" in cases["byhand"].reason
    assert cases["byhand"].effective_params == {"external": f"http://127.0.0.1:{port}"}
    summary = (out / f"run-{run.id}" / "summary.md").read_text()
    assert said in summary


@pytest.mark.concurrent  # refused before any load: nothing measured
def test_an_external_url_where_nothing_answers_is_refused_before_any_load(
    open_folder: Path,
) -> None:
    suite(open_folder, free_port(), 4_000_000, catalog="")
    out = open_folder / "results"
    ran = stackbench("run", "mine.toml", "--out", str(out), "--no-calibrate", cwd=open_folder)
    assert ran.returncode == 4, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "[external.byhand]: nothing answers at http://127.0.0.1:" in ran.stderr
    assert "start your server there" in ran.stderr and "Traceback" not in ran.stderr
    store = Store(out / "stackbench.sqlite")
    assert store.runs() == []
    store.close()


def test_an_external_server_that_goes_away_fails_its_level_and_is_not_restarted(
    open_folder: Path, server: tuple[subprocess.Popen[str], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    proc, port = server
    path = open_folder / "gone.toml"
    path.write_text(
        'stacks = []\nworkloads = ["hello"]\n'
        "[load]\nconnections = [2, 4]\nduration_s = 1\nwarmup_s = 0\npause_s = 0\n"
        f'[external.gone]\nurl = "http://127.0.0.1:{port}"\nworkloads = ["hello"]\n'
        f"pids = [{proc.pid}]\n"
    )
    real_measure = runner_module.measure

    def measure_after_a_kill(*args: Any) -> Any:
        """The server dies just before the first level: the level must see it gone."""
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        return real_measure(*args)

    monkeypatch.setattr(runner_module, "measure", measure_after_a_kill)
    store = Store(open_folder / "stackbench.sqlite")
    plan = build_plan(parse_suite(path), {}, None, None)
    data = store.load_run(Runner(plan, RunSetup({}, store, open_folder)).execute())
    store.close()
    (case,) = data.cases
    assert case.status == "failed"
    assert "does not restart an external server" in case.reason
    (level,) = data.levels_of(case.id)  # the second level never ran: no restart
    assert level.error_class == "server-exited"
    assert f"external stack gone's process {proc.pid} is gone" in level.error
