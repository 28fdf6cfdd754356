"""The command line as a user meets it: exit codes and messages that name the culprit.

The commands run in this process (tests/commands/cli_inprocess.py), through the entry point
`python -m stackbench` calls; what only a process shows (that entry itself, the colour a new
process picks from its environment) runs as a subprocess."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackbench.config.placement import default_placement
from stackbench.lab.environment import tool_versions
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import Verdict, all_checks
from stackbench.store.store import Store
from tests.commands.cli_inprocess import Ran, run_in_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))  # synthetic_run


def stackbench(*args: str) -> Ran:
    return run_in_process(*args)


def subprocess_stackbench(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m stackbench ARGS` in a new process, colour asked for only through `env`."""
    plain = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "stackbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**plain, **env},
    )


def test_python_m_stackbench_runs_the_command_line_and_exits_with_its_code():
    version = subprocess_stackbench("--version")
    assert version.returncode == 0 and "stackbench" in version.stdout, version.stderr
    bogus = subprocess_stackbench("run", "--bogus")
    assert bogus.returncode == 2 and "--bogus" in bogus.stderr


def test_bad_suite_key_exits_2_naming_file_and_key(tmp_path):
    suite = tmp_path / "bad.toml"
    suite.write_text(
        'name = "x"\nstacks = ["go-nethttp"]\nworkloads = ["hello"]\n[load]\nconections = [1]\n'
    )
    done = stackbench("run", str(suite))
    assert done.returncode == 2
    assert str(suite) in done.stderr and "conections" in done.stderr


def test_unknown_flag_and_missing_file_exit_2(tmp_path):
    assert stackbench("run", "--bogus").returncode == 2
    missing = stackbench("run", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "cannot read the suite file" in missing.stderr


def test_unknown_stack_lists_the_known_ones():
    done = stackbench("verify", "nosuchstack")
    assert done.returncode == 2 and "go-nethttp" in done.stderr


def test_dry_run_prints_the_plan_and_starts_nothing():
    done = stackbench("run", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "plan" in done.stdout and "load levels" in done.stdout


def test_until_decided_flags_are_checked_and_planned(tmp_path):
    out = str(tmp_path / "out")
    bad = stackbench("run", "--dry-run", "--until-decided", "--budget", "soon")
    assert bad.returncode == 2 and "--budget 'soon'" in bad.stderr
    done = stackbench("run", "--dry-run", "--out", out, "--until-decided", "--budget", "30m")
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "until decided:" in said and "alpha / 6" in said
    plain = stackbench("run", "--dry-run", "--out", out, "--until-decided")
    assert "at most 20 min" in " ".join(plain.stdout.split())  # the default, after the plan


def test_a_budget_too_small_for_the_plan_exits_2_with_what_fits(tmp_path):
    done = stackbench("run", "--dry-run", "--out", str(tmp_path / "out"), "--budget", "1m")
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert "--budget 1 min: the plan takes about" in said and "give --budget" in said
    assert "not even one stack fits" in said  # quick's stacks take about 1.5 min each
    assert "load levels, about" in done.stdout  # the plan was shown first


def test_a_suite_load_budget_is_stated_and_a_longer_plan_refused_unless_budgeted(tmp_path):
    out = str(tmp_path / "out")
    body = (
        'stacks = ["go-nethttp", "node"]\nworkloads = ["hello"]\n[load]\nconnections = [10, 20]\n'
    )
    fits = tmp_path / "fits.toml"
    fits.write_text(f"load_budget_min = 5\n{body}duration_s = 10\n")  # 4 levels of 10 s
    done = stackbench("run", str(fits), "--dry-run", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "40 s of load (the suite is designed for at most 5.0 min)" in " ".join(
        done.stdout.split()
    )
    over = tmp_path / "over.toml"
    over.write_text(f"load_budget_min = 0.5\n{body}duration_s = 10\n")
    refused = stackbench("run", str(over), "--dry-run", "--out", out)
    assert refused.returncode == 2
    said = " ".join(refused.stderr.split())
    assert "key 'load_budget_min'" in said and "at most 0.5 min of load" in said
    assert "go-nethttp 0.3, node 0.3" in said and "--budget" in said
    assert "load levels, about" in refused.stdout  # the plan was shown first
    accepted = stackbench("run", str(over), "--dry-run", "--out", out, "--budget", "30m")
    assert accepted.returncode == 0, accepted.stderr


def test_an_article_suite_calibrates_first_unless_told_not_to(tmp_path):
    out = str(tmp_path / "out")  # a new store: this machine is not calibrated there
    suite = "suites/db-html-report-short.toml"
    first = stackbench("run", suite, "--dry-run", "--out", out)
    assert first.returncode == 0, first.stderr
    said = " ".join(first.stdout.split())
    assert "of calibration first" in said and "'stackbench calibrate' runs first" in said
    skipped = stackbench("run", suite, "--dry-run", "--out", out, "--no-calibrate")
    said = " ".join(skipped.stdout.split())
    assert "calibration first" not in said and "not calibrated (--no-calibrate)" in said
    quick = stackbench("run", "--dry-run", "--out", out)  # no claims: nothing said
    assert "calibrat" not in quick.stdout


def test_a_calibration_suite_must_be_one_level_repeated(tmp_path):
    suite = tmp_path / "cal.toml"
    suite.write_text(
        'name = "cal"\nstacks = ["go-nethttp", "node"]\nworkloads = ["hello"]\n'
        "[load]\nconnections = [50]\nduration_s = 5\n"
    )
    done = stackbench("calibrate", str(suite), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "not a calibration suite" in done.stderr and "'stacks' lists 2" in done.stderr
    assert "repeat = 1" in done.stderr and not (tmp_path / "out").exists()


def test_informational_commands_run():
    for command in ("stacks", "workloads", "doctor", "--version"):
        assert stackbench(command).returncode == 0, command


# --- an 80-column terminal, colour, results and report options --------------------------------
def stackbench_env(*args: str, **env: str) -> Ran:
    return run_in_process(*args, env={"COLUMNS": "80", **env}, unset=("NO_COLOR", "FORCE_COLOR"))


def _longest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def _words(text: str) -> set[str]:
    return set(text.split())


def test_stacks_fit_80_columns_and_keep_every_word():
    done = stackbench_env("stacks")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    hints = {
        e.status.hint for e in load_inventory().values() if not e.status.available and e.status.hint
    }
    assert hints <= set(lines)  # each install command a line of its own, never wrapped
    assert max(len(line) for line in lines if line not in hints) <= 80
    for name, entry in load_inventory().items():
        text = (
            entry.manifest.description
            if entry.status.available
            else f"{entry.status.reason} {entry.status.hint}"
        )
        assert name in _words(done.stdout)
        assert _words(text) <= _words(done.stdout), name


def test_doctor_fits_80_columns_and_keeps_the_advice():
    done = stackbench_env("doctor")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for check in all_checks():
        assert _words(check.hint) <= _words(done.stdout), check.name
        if check.verdict is not Verdict.OK:
            assert set(check.commands) <= set(lines), check.name  # each a line of its own
    # the table fits; only a command line may run past the edge (never broken)
    assert max(len(line) for line in lines if line not in _commands(all_checks())) <= 80
    for name, version in tool_versions().items():  # e.g. wrk's '[epoll]' is text, not markup
        assert _words(version) <= _words(done.stdout), name


def test_workloads_and_the_plan_fit_80_columns():
    for args in (("workloads",), ("run", "suites/all-stacks.toml", "--dry-run")):
        done = stackbench_env(*args)
        assert done.returncode == 0, done.stderr
        assert _longest(done.stdout) <= 80, args


def test_article_dry_run_says_up_front_what_the_server_lacks():
    done = stackbench_env("run", "suites/db-html-report-short.toml", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert _longest(done.stdout) <= 80
    text = " ".join(done.stdout.split())
    cores = len(default_placement().server)
    assert f"parameters each stack starts with on {cores} server core" in text
    assert f"php-apache: workers={cores}*, processes_per_worker=4, max_request_workers=150" in text
    said = "The article's server had 4 cores; this machine gives the server"
    if cores < 4:  # the 2-core machine: one server core
        assert f"{said} {cores} core" in text and "of the article's claims" in text
        assert text.index(said) < text.index("plan stack")  # before the plan's table
    else:
        assert said not in text


COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-9]")  # a foreground colour escape


def test_colour_only_when_wanted():
    # a new process picks its colours from its environment when it imports stackbench.cli
    forced = subprocess_stackbench("stacks", COLUMNS="80", FORCE_COLOR="1")
    assert COLOUR.search(forced.stdout), forced.stderr
    assert COLOUR.search(stackbench_env("stacks", FORCE_COLOR="1").stdout)
    assert not COLOUR.search(stackbench_env("--no-color", "stacks", FORCE_COLOR="1").stdout)
    assert not COLOUR.search(stackbench_env("stacks", FORCE_COLOR="1", NO_COLOR="1").stdout)
    assert "\x1b[" not in stackbench_env("stacks").stdout  # not a terminal: plain text


@pytest.fixture()
def results_dir(tmp_path):
    from synthetic_run import add_case, fill, settings, start_run

    store = Store(tmp_path / "stackbench.sqlite")
    fill(store)
    other = start_run(store, "quick", run_settings=settings(repeat=1))
    add_case(store, other, "rust-hyper", "hello", status="ok")
    store.finish_run(other, "complete")
    store.close()
    return tmp_path


def _run_ids(stdout: str) -> list[int]:
    return [int(line.split()[0]) for line in stdout.splitlines() if line.strip()[:1].isdigit()]


def test_results_filters(results_dir):
    out = str(results_dir)
    assert _run_ids(stackbench_env("results", "--out", out).stdout) == [1, 2]
    assert _run_ids(stackbench_env("results", "--out", out, "--suite", "quick").stdout) == [2]
    assert _run_ids(
        stackbench_env(
            "results", "--out", out, "--stack", "node,go-nethttp", "--workload", "sha256"
        ).stdout
    ) == [1]
    assert _run_ids(stackbench_env("results", "--out", out, "--since", "2999-01-01").stdout) == []
    assert _run_ids(
        stackbench_env("results", "--out", out, "--until", time.strftime("%Y-%m-%d")).stdout
    ) == [1, 2]
    bad = stackbench_env("results", "--out", out, "--since", "yesterday")
    assert bad.returncode == 2 and "--since" in bad.stderr
    one = stackbench_env("results", "1", "--out", out, "--stack", "node")
    assert one.returncode == 0 and "go-nethttp" not in one.stdout and "node" in one.stdout
    assert _longest(one.stdout) <= 80
    mixed = stackbench_env("results", "1", "--out", out, "--suite", "quick")
    assert mixed.returncode == 2 and "--suite" in mixed.stderr


def test_results_verbose_says_the_verdicts_in_words(results_dir):
    out = str(results_dir)
    plain = stackbench_env("results", "1", "--out", out).stdout
    verbose = stackbench_env("results", "1", "--out", out, "--verbose").stdout
    said = "go-nethttp is the best, shown faster than every other"
    glance = " ".join(verbose[verbose.index("At a glance") :].split())
    assert said in glance and said not in " ".join(plain[plain.index("At a glance") :].split())
    assert "go-nethttp  »  node (1.98×)  »  php-fpm-nginx (2.6×)" in plain


def test_report_formats(results_dir):
    out = str(results_dir)
    done = stackbench_env("report", "1", "--out", out, "--format", "md,csv")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (results_dir / "run-1").iterdir()) == [
        "results.csv",
        "summary.md",
    ]
    bad = stackbench_env("report", "1", "--out", out, "--format", "pdf")
    assert bad.returncode == 2 and "--format 'pdf'" in bad.stderr


def test_capacity_flags_are_checked_and_said_when_there_is_no_capacity(results_dir):
    out = str(results_dir)
    bad = stackbench_env("report", "1", "--out", out, "--target-rps", "0")
    assert bad.returncode == 2 and "--target-rps must be a positive number" in bad.stderr
    # a closed-loop run has no capacity at the SLO: nothing invented for the target
    done = stackbench_env("results", "1", "--out", out, "--target-rps", "100000")
    said = " ".join(done.stdout.split())
    assert done.returncode == 0 and "no capacity at the SLO in this run" in said
    # run checks them before any work, the plan first
    run = stackbench("run", "suites/capacity.toml", "--dry-run", "--price-per-core-hour", "-1")
    assert run.returncode == 2 and "--price-per-core-hour must be a positive" in run.stderr


def _commands(checks) -> set[str]:
    return {command for check in checks for command in check.commands}


def test_doctor_prints_each_command_whole_on_its_own_line(monkeypatch):
    """At 80 columns a long sysctl is never wrapped inside its quoted argument: the commands
    follow the table, one a line, under a comment naming their check (pasted as they are)."""
    import io

    from rich.console import Console

    from stackbench.commands import doctor
    from stackbench.lab.machine import Check, Verdict

    commands = (
        "sysctl -w net.ipv4.ip_local_port_range='1024 65535'",
        "sysctl -w net.ipv4.tcp_tw_reuse=1",
        "cargo build --release --locked --manifest-path /a/very/long/checkout/path/"
        "that/runs/past/eighty/columns/loadgen/Cargo.toml",
    )
    hint = "runs without keep-alive leave sockets in TIME_WAIT and exhaust ports"
    monkeypatch.setattr(
        doctor,
        "all_checks",
        lambda: [
            Check(
                "ephemeral ports for a very long suite name",
                Verdict.WARN,
                "32768-60999 (28232 ports), tcp_tw_reuse=2 [epoll]",
                hint,
                commands[:2],
            ),
            Check("stackbench-load", Verdict.FAIL, "not built", "build it", commands[2:]),
            Check("somaxconn", Verdict.OK, "4096", "", ("sysctl -w never.shown=1",)),
        ],
    )
    console = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    doctor.run_doctor(console)
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines if line not in commands) <= 80
    start = lines.index("commands (as root; one a line, copy them as they are):")
    assert lines[start + 1 : start + 6] == [
        "# ephemeral ports for a very long suite name",
        *commands[:2],
        "# stackbench-load",
        commands[2],
    ]
    assert "sysctl -w never.shown=1" not in lines  # an ok check needs no fix
    assert _words(hint) <= _words("\n".join(lines)) and "[epoll]" in "\n".join(lines)


def test_a_suite_name_that_is_not_a_path_suggests_the_suite_file(tmp_path):
    for given in ("quick", "quik.toml"):
        done = stackbench("run", given, "--dry-run")
        assert done.returncode == 2
        assert (
            f"{given}: cannot read the suite file: no such file; did you mean "
            "suites/quick.toml?" in done.stderr
        )
        assert "Traceback" not in done.stderr
    doctor = stackbench("doctor", "concurency-sweep")
    assert doctor.returncode == 2 and "did you mean suites/concurrency-sweep.toml?" in doctor.stderr
    nothing = stackbench("run", str(tmp_path / "zzzz"))
    assert nothing.returncode == 2 and "quick.toml" in nothing.stderr  # the suites listed


def test_report_to_writes_elsewhere_and_checks_the_folder_first(results_dir, tmp_path):
    out = str(results_dir)
    target = tmp_path / "slides" / "run-1"
    done = stackbench_env("report", "1", "--out", out, "--to", str(target), "--format", "md")
    assert done.returncode == 0, done.stderr
    assert [p.name for p in target.iterdir()] == ["summary.md"]
    assert not (results_dir / "run-1").exists()  # the run's own folder untouched
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for bad in (a_file, a_file / "below"):
        refused = stackbench_env("report", "1", "--out", out, "--to", str(bad))
        assert refused.returncode == 2
        assert f"--to {bad}: {a_file} is a file, not a folder" in refused.stderr
    # checked before any work: a bad --to is named even when the store is missing too
    both = stackbench_env("report", "1", "--out", str(tmp_path / "none"), "--to", str(a_file))
    assert both.returncode == 2 and "--to" in both.stderr
    assert not (tmp_path / "none").exists()


def test_history_lists_each_case_across_runs_and_names_a_filter_that_matches_nothing(
    results_dir,
):
    out = str(results_dir)
    shown = stackbench_env("history", "--out", out, "--stack", "node")
    assert shown.returncode == 0, shown.stderr
    assert "node · hello" in shown.stdout and "first run" in shown.stdout
    none = stackbench_env("history", "--out", out, "--stack", "nope")
    assert none.returncode == 2 and "matches --stack nope" in none.stderr


def test_a_label_that_reads_as_a_run_number_or_no_name_is_refused():
    for bad, why in (("12", "a run number"), ("last", "a run number"), ("V 2", "not a valid")):
        done = stackbench_env("run", "suites/quick.toml", "--dry-run", "--label", bad)
        assert done.returncode == 2 and "--label" in done.stderr and why in done.stderr, bad
    assert stackbench_env("run", "suites/quick.toml", "--dry-run", "--label", "v2").returncode == 0
