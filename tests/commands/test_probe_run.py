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


def dry_runs(tmp_path: Path, name: str, text: str) -> tuple[str, list[str]]:
    """The suite's dry run without probes (its words, on one line) and with `--probe` (its
    lines); both succeed, and neither stores anything in the results folder."""
    (tmp_path / f"{name}.toml").write_text(text)
    results = str(tmp_path / "results")
    plain = run_cli("run", f"{name}.toml", "--dry-run", "--out", results, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    probed = run_cli("run", f"{name}.toml", "--dry-run", "--probe", "--out", results, cwd=tmp_path)
    assert probed.returncode == 0, probed.stderr
    assert not (tmp_path / "results" / "stackbench.sqlite").exists()
    return " ".join(plain.stdout.split()), probed.stdout.splitlines()


def test_a_dry_run_probes_what_it_would_guess_and_a_plain_one_says_so(tmp_path: Path) -> None:
    words, lines = dry_runs(tmp_path, "probe-me", SUITE)
    assert "3 level(s) counted in requests have no rate measured here" in words
    assert "2 probe(s)" in words and "GUESS" in words

    probed = "\n".join(lines)
    assert any(line.startswith("probing 2 rate(s)") for line in lines), probed
    rates = [line for line in lines if line.strip().startswith("probe go-nethttp hello @")]
    assert [r.split("@")[1].split(":")[0] for r in rates] == ["4", "32"], probed
    assert all(r.endswith("req/s") for r in rates), rates
    # estimated from the probes: nothing left at a guess (nothing stored: dry_runs)
    assert "GUESS" not in probed and "have no rate measured" not in probed


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
    words, lines = dry_runs(tmp_path, "time-me", TIMED)
    assert "2 standalone timing(s) were never timed here" in words, words
    assert "1 timing(s) of 200" in words and "GUESS" in words

    probed = "\n".join(lines)
    assert any(line.startswith("probing 1 standalone timing(s)") for line in lines), probed
    assert any("hello x 200" in line for line in lines), probed  # the timing, told
    # estimated from the timing: nothing left at a guess (nothing stored: dry_runs)
    assert "GUESS" not in probed and "never timed here" not in probed
