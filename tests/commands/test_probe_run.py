"""The rate probes on a real stack: a plan of levels counted in requests, on a machine that
never measured them, is estimated from a few seconds' probe, not a guess (issue 31 item 5)."""

from pathlib import Path

import pytest

from tests.commands.cli_run import run_cli

pytestmark = pytest.mark.integration

SUITE = """
name = "probe-me"
stacks = ["go-nethttp"]
workloads = ["hello"]

[load]
driver = "native"
mode = "closed"
keepalive = "on"
connections = [4, 16, 32]
requests = 20000
warmup_s = 0
pause_s = 0
timeout_s = 5
repeat = 1
"""


def test_a_dry_run_probes_what_it_would_guess_and_a_plain_one_says_so(tmp_path: Path) -> None:
    (tmp_path / "probe-me.toml").write_text(SUITE)
    results = str(tmp_path / "results")
    plain = run_cli("run", "probe-me.toml", "--dry-run", "--out", results, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    words = " ".join(plain.stdout.split())
    assert "3 level(s) counted in requests have no rate measured here" in words
    assert "2 probe(s)" in words and "GUESS" in words

    probed = run_cli("run", "probe-me.toml", "--dry-run", "--probe", "--out", results, cwd=tmp_path)
    assert probed.returncode == 0, probed.stderr
    lines = probed.stdout.splitlines()
    assert any(line.startswith("probing 2 rate(s)") for line in lines), probed.stdout
    rates = [line for line in lines if line.strip().startswith("probe go-nethttp hello @")]
    assert [r.split("@")[1].split(":")[0] for r in rates] == ["4", "32"], probed.stdout
    assert all(r.endswith("req/s") for r in rates), rates
    # estimated from the probes: nothing left at a guess, and nothing stored
    assert "GUESS" not in probed.stdout and "have no rate measured" not in probed.stdout
    assert not (tmp_path / "results" / "stackbench.sqlite").exists()


TIMED = """
name = "time-me"
stacks = ["go-nethttp"]
workloads = ["hello"]
script_iterations = 5000

[load]
driver = "native"
connections = [4]
duration_s = 1
warmup_s = 0
pause_s = 0
repeat = 2
"""


def test_a_standalone_timing_never_timed_here_is_probed_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "time-me.toml").write_text(TIMED)
    results = str(tmp_path / "results")
    plain = run_cli("run", "time-me.toml", "--dry-run", "--out", results, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    words = " ".join(plain.stdout.split())
    assert "2 standalone timing(s) were never timed here" in words, plain.stdout
    assert "1 timing(s) of 200" in words and "GUESS" in words

    probed = run_cli("run", "time-me.toml", "--dry-run", "--probe", "--out", results, cwd=tmp_path)
    assert probed.returncode == 0, probed.stderr
    lines = probed.stdout.splitlines()
    assert any(line.startswith("probing 1 standalone timing(s)") for line in lines), lines
    assert any("hello x 200" in line for line in lines), probed.stdout  # the timing, told
    # estimated from the timing: nothing left at a guess, and nothing stored
    assert "GUESS" not in probed.stdout and "never timed here" not in probed.stdout
    assert not (tmp_path / "results" / "stackbench.sqlite").exists()
