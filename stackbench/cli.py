"""The command line: parses arguments and calls the pipeline stages, nothing more."""

import datetime
import re
import resource
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stackbench import __version__
from stackbench.analysis.capacity import CapacityAsk
from stackbench.commands.agent import agent_command
from stackbench.commands.calibrate import calibrate_command
from stackbench.commands.claims import print_claims_overview
from stackbench.commands.compare import compare_command
from stackbench.commands.doctor import run_doctor
from stackbench.commands.history import run_history
from stackbench.commands.hosts import run_hosts_check, run_hosts_setup
from stackbench.commands.new_stack import RUNTIMES, new_stack
from stackbench.commands.run import RunRequest, run_command
from stackbench.commands.suitefile import existing_suite
from stackbench.commands.views import (
    print_results,
    print_stacks,
    print_workloads,
    run_script_timing,
    run_verify,
    write_report_files,
)
from stackbench.config.names import check_name
from stackbench.config.plan import SETTLE_FACTOR, SETTLE_MAX_S
from stackbench.errors import ExitCode, InputError, StackbenchError
from stackbench.lab.environment import read_text
from stackbench.lab.machine import may_raise_hard_limits
from stackbench.report import FORMATS
from stackbench.report.terminal import RunFilter
from stackbench.report.termtable import make_console

# Replaced by the group callback when --no-color is given. Colour is also off with NO_COLOR
# set, and all styling when the output is not a terminal (a pipe, a file).
console = make_console()
err_console = make_console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])
DATE_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]


def _out(help_text: str = "Results directory.") -> Callable[[F], F]:
    """--out, the results directory: one declaration for every command that takes it."""
    return click.option("--out", type=click.Path(path_type=Path), help=help_text)


_PARAMS = click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Override a stack parameter (repeatable).",
)


def _suite(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """A SUITE that names no file is refused before any work, naming the closest suite."""
    return existing_suite(value)


def _suite_argument() -> Callable[[F], F]:
    return click.argument("suite", type=click.Path(path_type=Path), required=False, callback=_suite)


def _capacity_options() -> Callable[[F], F]:
    """--target-rps and --price-per-core-hour: what the capacity at the SLO means for a plan."""

    def decorate(f: F) -> F:
        f = click.option(
            "--price-per-core-hour",
            type=float,
            metavar="P",
            help="With a capacity at the SLO (open loop with an SLO): the cost per million "
            "requests at P per server core-hour.",
        )(f)
        return click.option(
            "--target-rps",
            type=float,
            metavar="N",
            help="With a capacity at the SLO (open loop with an SLO): the server cores each "
            "stack needs for N req/s, if cores scaled linearly (they rarely do).",
        )(f)

    return decorate


def _csv(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items or None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="stackbench")
@click.option("--debug", is_flag=True, help="Show the traceback of an error (for bug reports).")
@click.option(
    "--no-color",
    is_flag=True,
    help="Plain text without colours (also: NO_COLOR=1, or when not a terminal).",
)
def cli(debug: bool, no_color: bool) -> None:
    """Benchmark web stacks on your own hardware, honestly."""
    if no_color:
        global console, err_console
        console = make_console(no_color=True)
        err_console = make_console(no_color=True, stderr=True)


@cli.command()
def stacks() -> None:
    """List every stack, available or not (with the reason and how to install)."""
    print_stacks(console)


@cli.command()
def claims() -> None:
    """Per article: how many of its claims this machine can test (with the article's full
    suite), and what machine (server cores, stacks, hosts) would test the rest."""
    print_claims_overview(console)


@cli.command()
def workloads() -> None:
    """The workload catalog: endpoint, work done, services needed."""
    print_workloads(console)


@cli.command()
@click.argument("stack")
@click.option("--workloads", "workload_list", help="Comma-separated workloads (default: all).")
@_PARAMS
def verify(stack: str, workload_list: str | None, params: tuple[str, ...]) -> None:
    """Start STACK, run every workload's verifier against it, stop it."""
    ok = run_verify(console, stack, _csv(workload_list), params)
    sys.exit(0 if ok else 1)


@cli.command()
@click.argument("stack")
@click.argument("workload")
@click.option(
    "--query",
    default=None,
    metavar="NAME=VALUE",
    help="Workload parameter, e.g. n=1000 (or write WORKLOAD as sha256?n=1000).",
)
@click.option(
    "--iterations",
    default=1000,
    show_default=True,
    type=int,
    help="How many times the workload's code runs in one process.",
)
@_PARAMS
def script(
    stack: str, workload: str, query: str | None, iterations: int, params: tuple[str, ...]
) -> None:
    """Time WORKLOAD's code inside one STACK process, without HTTP (wall/user/sys)."""
    ok = run_script_timing(console, stack, workload, query, iterations, params)
    sys.exit(0 if ok else 1)


@cli.command()
@_suite_argument()
@click.option("--stacks", "stack_list", help="Only these stacks (comma-separated).")
@click.option("--workloads", "workload_list", help="Only these workloads (comma-separated).")
@click.option("--dry-run", is_flag=True, help="Print the plan and exit.")
@click.option(
    "--probe",
    is_flag=True,
    help="First load each level counted in requests whose rate this machine never measured "
    "for a few seconds (a throw-away probe), so that the plan's time is estimated, not "
    "guessed (a run with --budget or a suite's load_budget_min always does).",
)
@_out()
@click.option(
    "--resume",
    type=click.IntRange(min=1),
    metavar="RUN",
    help="Continue interrupted run RUN (same suite and selection) from its first unfinished case.",
)
@click.option(
    "--hosts",
    "hosts_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="The hosts of [placement] server_host / loader_hosts ([hosts.NAME] tables); "
    "else the suite's [hosts] or hosts_file.",
)
@click.option(
    "--keep",
    is_flag=True,
    help="Multi-host runs: leave each host's run directory (logs, configs) there.",
)
@click.option(
    "--until-decided",
    is_flag=True,
    help="After the plan, repeat the levels of undecided comparisons (fresh starts, "
    "most decisions per second first) until every one is decided or the budget "
    "is spent (what --budget leaves after the plan; without --budget, 20m). On an "
    "article suite: the levels of its undecided claims, within what --budget leaves or "
    "else the suite's load_budget_min less the load measured.",
)
@click.option(
    "--budget",
    metavar="DURATION",
    help="The most the whole run may take (e.g. 20m, 90s, 1h): a plan estimated longer "
    "is refused (exit 2) with what would fit; --until-decided spends what is left.",
)
@click.option(
    "--label",
    metavar="NAME",
    help="A name for the run (e.g. a release: v2.3); compare and history accept it as well "
    "as the run's number (the latest run of that name).",
)
@click.option(
    "--no-calibrate",
    is_flag=True,
    help="An article suite on a machine not calibrated yet runs 'stackbench calibrate' "
    "first (about 2 min, in the plan); this skips it, and verdicts assume the default "
    "run-to-run spread.",
)
@_capacity_options()
@click.option(
    "--settle",
    is_flag=True,
    help="A JIT stack whose first level is not shown steady after its warm-up gets one more "
    "warm-up pass, as long as the level's series says it needed (the warm-up in all at most "
    f"{SETTLE_FACTOR:g}x the stack's declared and {SETTLE_MAX_S:g} s), and that level is "
    "measured again once.",
)
def run(
    suite: Path | None,
    label: str | None,
    stack_list: str | None,
    workload_list: str | None,
    dry_run: bool,
    probe: bool,
    out: Path | None,
    resume: int | None,
    hosts_file: Path | None,
    keep: bool,
    until_decided: bool,
    budget: str | None,
    no_calibrate: bool,
    target_rps: float | None,
    price_per_core_hour: float | None,
    settle: bool,
) -> None:
    """Run SUITE (default: suites/quick.toml): every stack x workload x load level."""
    budget_s = parse_duration(budget, "--budget") if budget is not None else None
    rounds_s = (budget_s or parse_duration(DEFAULT_BUDGET, "--budget")) if until_decided else None
    sys.exit(
        run_command(
            console,
            RunRequest(
                suite=suite,
                stacks=tuple(_csv(stack_list) or ()),
                workloads=tuple(_csv(workload_list) or ()),
                dry_run=dry_run,
                out=out,
                resume=resume,
                hosts_file=hosts_file,
                keep_remote=keep,
                until_decided_s=rounds_s,
                budget_s=budget_s,
                no_calibrate=no_calibrate,
                capacity=CapacityAsk(target_rps, price_per_core_hour),
                label=_label(label),
                settle=settle,
                probe=probe,
            ),
            lambda: calibrate_command(console, None, out),
        )
    )


DEFAULT_BUDGET = "20m"
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|min|h)?$")


def parse_duration(text: str, flag: str) -> float:
    """'20m' -> 1200.0; seconds by default; at most a day, at least 10 s."""
    match = _DURATION.match(text.strip())
    if not match:
        raise InputError(f"{flag} {text!r}: expected a duration such as 90s, 20m or 1h")
    unit = {"s": 1, None: 1, "m": 60, "min": 60, "h": 3600}[match.group(2)]
    seconds = float(match.group(1)) * unit
    if not 10 <= seconds <= 86_400:
        raise InputError(f"{flag} {text!r}: give between 10 s and 24 h")
    return seconds


def _label(text: str | None) -> str:
    """--label: a name (the one name rule) that cannot be read as a run number or 'last'."""
    if text is None:
        return ""
    check_name(text, "--label")
    if text.isdigit() or text == "last" or text.startswith("last~"):
        raise InputError(f"--label {text!r}: a run number or 'last' names runs already")
    return text


def _formats(values: tuple[str, ...]) -> tuple[str, ...] | None:

    wanted = [f for v in values for f in _csv(v) or []]
    unknown = [f for f in wanted if f not in FORMATS]
    if unknown:
        raise InputError(
            f"--format '{unknown[0]}': choose among {', '.join(FORMATS)} "
            "(repeat the flag or separate with commas)"
        )
    return tuple(dict.fromkeys(wanted)) or None


def _until(value: datetime.datetime | None) -> datetime.datetime | None:
    """--until 2024-06-01 includes that whole day."""
    if value is not None and value.time() == datetime.time():
        return value + datetime.timedelta(days=1) - datetime.timedelta(microseconds=1)
    return value


@cli.command()
@click.argument("run_id", required=False)
@click.option("--suite", "suite_name", help="Only runs of this suite (its name, e.g. quick).")
@click.option(
    "--stack",
    "stack_list",
    help="Only runs with these stacks (comma-separated); "
    "with RUN_ID, only these stacks of that run.",
)
@click.option(
    "--workload",
    "workload_list",
    help="Only runs with these workloads (name or "
    "label, comma-separated); with RUN_ID, only these workloads of that run.",
)
@click.option(
    "--since",
    type=click.DateTime(DATE_FORMATS),
    help="Only runs started on or after this date (YYYY-MM-DD[ HH:MM]).",
)
@click.option(
    "--until",
    type=click.DateTime(DATE_FORMATS),
    help="Only runs started on or before this date (a day counts whole).",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="With RUN_ID: the at-a-glance summary also says its verdicts in words.",
)
@_capacity_options()
@_out()
def results(
    run_id: str | None,
    suite_name: str | None,
    stack_list: str | None,
    workload_list: str | None,
    since: datetime.datetime | None,
    until: datetime.datetime | None,
    verbose: bool,
    target_rps: float | None,
    price_per_core_hour: float | None,
    out: Path | None,
) -> None:
    """List stored runs (filtered), or show one run's tables and summary."""
    run_filter = RunFilter(
        suite_name,
        tuple(_csv(stack_list) or ()),
        tuple(_csv(workload_list) or ()),
        since,
        _until(until),
    )
    ask = CapacityAsk(target_rps, price_per_core_hour)
    print_results(console, run_id, out, run_filter, verbose, ask)


@cli.command()
@click.argument("run_id")
@click.option(
    "--format",
    "formats",
    multiple=True,
    metavar="FORMAT",
    help="html, md, csv, json, png (the charts) or bmf (Bencher Metric Format, for dashboards); "
    "repeat or separate with commas (default: all but bmf).",
)
@_out("Results directory (its store holds the run).")
@click.option(
    "--to",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write the files into DIR (created if need be) instead of the run's folder "
    "in the results directory.",
)
@_capacity_options()
def report(
    run_id: str,
    formats: tuple[str, ...],
    out: Path | None,
    to: Path | None,
    target_rps: float | None,
    price_per_core_hour: float | None,
) -> None:
    """(Re)write the report files of a stored run (RUN_ID: a number or 'last')."""
    ask = CapacityAsk(target_rps, price_per_core_hour)
    write_report_files(console, run_id, out, _formats(formats), to, ask)


@cli.command()
@click.argument("run_a")
@click.argument("run_b")
@_out("Results directory (its store).")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["terminal", "md", "json"]),
    default="terminal",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--fail-if-slower",
    metavar="PCT",
    help="Exit 1 if B's throughput is shown more than PCT (e.g. 5%) lower.",
)
@click.option(
    "--fail-if",
    "fail_if",
    multiple=True,
    metavar="'pNN +PCT'",
    help="Exit 1 if B's percentile is shown more than PCT higher, e.g. 'p99 +10%' (repeatable).",
)
def compare(
    run_a: str,
    run_b: str,
    out: Path | None,
    output_format: str,
    fail_if_slower: str | None,
    fail_if: tuple[str, ...],
) -> None:
    """Compare run B against run A case by case: verdict, ratio and its 95% interval.

    RUN_A and RUN_B are run ids in the store of --out, or paths of results.json files.

    Exit codes: 0 every gated case shown not to regress beyond its limit (or no gate);
    1 a regression beyond a gate's limit shown; 2 bad input; 5 the runs have no case in
    common; 6 some gated case undecided (the output says what would decide it)."""
    sys.exit(compare_command(console, run_a, run_b, out, output_format, fail_if_slower, fail_if))


@cli.command()
@click.option("--suite", "suite_name", metavar="NAME", help="Only the runs of this suite.")
@click.option("--stack", metavar="NAME", help="Only this stack (or variant).")
@click.option("--workload", metavar="LABEL", help="Only this workload (e.g. sha256?n=1000).")
@click.option(
    "--chart", is_flag=True, help="Also draw each case's trend (PNG, under the results directory)."
)
@_out("Results directory (its store holds the runs).")
def history(
    suite_name: str | None, stack: str | None, workload: str | None, chart: bool, out: Path | None
) -> None:
    """Every stored run of the same case, oldest first: its req/s with the 95% interval, the
    verdict against the run before, the stack folder's git revision, and change points."""
    sys.exit(run_history(console, out, suite_name, stack, workload, chart))


@cli.command("new-stack")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--like",
    required=True,
    type=click.Choice(RUNTIMES),
    help="The runtime of the starting server.",
)
def new_stack_command(folder: Path, like: str) -> None:
    """Write a stack of your own into FOLDER: a commented stack.toml and a hello endpoint in
    the runtime of --like. A suite then measures it: stacks = ["./FOLDER", "node"]."""
    new_stack(console, folder, like)


@cli.command()
@_suite_argument()
@_out()
def calibrate(suite: Path | None, out: Path | None) -> None:
    """Measure this machine's run-to-run spread (SUITE: default suites/calibrate.toml) and
    store it: verdicts of single repetitions use it instead of the assumed 5%."""
    sys.exit(calibrate_command(console, suite, out))


@cli.command()
@_suite_argument()
@_out("Results directory (its store holds this machine's calibration).")
def doctor(suite: Path | None, out: Path | None) -> None:
    """Check this machine for benchmarking (and for SUITE's load, if given); print advice."""
    run_doctor(console, suite, out)


@cli.group()
def hosts() -> None:
    """The hosts of a multi-host run (--hosts FILE or a SUITE's [hosts] table)."""


_HOSTS_FILE = click.option(
    "--hosts",
    "hosts_file",
    type=click.Path(path_type=Path),
    help="A hosts file ([hosts.NAME] tables); else SUITE's [hosts].",
)


@hosts.command("check")
@_suite_argument()
@_HOSTS_FILE
def hosts_check(suite: Path | None, hosts_file: Path | None) -> None:
    """Check that every host is ready (exit 3 if one is not).

    Per host: ssh login, the same stackbench version, the runtimes and loader available here,
    ulimit -n, somaxconn and the clock offset."""
    sys.exit(run_hosts_check(console, hosts_file, suite))


@hosts.command("setup")
@_suite_argument()
@_HOSTS_FILE
def hosts_setup(suite: Path | None, hosts_file: Path | None) -> None:
    """Run the installer on every host (its checkout's scripts/setup.sh)."""
    sys.exit(run_hosts_setup(console, hosts_file, suite))


@cli.command(hidden=True)
@click.option(
    "--run-dir",
    type=click.Path(path_type=Path),
    required=True,
    help="Where everything the agent writes lives (created; removed at the end).",
)
@click.option(
    "--heartbeat-s",
    type=click.FloatRange(min=0.1, max=86_400.0),
    default=10.0,
    show_default=True,
    help="Stop everything when no message came for this long.",
)
@click.option("--keep", is_flag=True, help="Keep the run directory at the end.")
def agent(run_dir: Path, heartbeat_s: float, keep: bool) -> None:
    """The remote side of a multi-host run: JSON lines on stdin/stdout (for the controller)."""
    sys.exit(agent_command(run_dir, heartbeat_s, keep))


# The hard limit stackbench raises RLIMIT_NOFILE to where it may: the largest suite level,
# 10,000 connections, needs that many in the loader and in a server that holds them all.
NOFILE_WANTED = 65536


def raise_open_files_limit() -> None:
    """Servers and loaders inherit this process's limit: thousands of connections need it.
    Where the process may (CAP_SYS_RESOURCE, which root usually holds), the hard limit too:
    the stacks run as an unprivileged user and cannot raise it themselves."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < NOFILE_WANTED and may_raise_hard_limits():
        nr_open = int(read_text("/proc/sys/fs/nr_open") or NOFILE_WANTED)
        wanted = min(NOFILE_WANTED, nr_open)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            soft = hard = wanted
        except (ValueError, OSError):
            pass  # refused after all: the plan's limits check says what it means
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def one_line(message: str) -> str:
    """An error in one line: its first line (the cause) and, when a command's output or a log
    tail follows, that output's last line, which is where servers say why they stopped."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) <= 1:
        return message.strip()
    return f"{lines[0]} (last line of its output: {lines[-1]}; --debug shows all)"


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error ends as one message and a documented exit code (errors.ExitCode).

    `--debug` anywhere on the command line also prints the traceback.
    """
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    raise_open_files_limit()
    try:
        cli.main(args=args, standalone_mode=False)
    except click.exceptions.Abort:
        err_console.print("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(ExitCode.BAD_INPUT if isinstance(exc, click.UsageError) else exc.exit_code)
    except StackbenchError as exc:
        if debug:
            traceback.print_exc()
        message = str(exc) if debug else one_line(str(exc))
        err_console.print(
            f"error: {message}", style="red", markup=False, highlight=False, soft_wrap=True
        )
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted; everything started was stopped")
        sys.exit(ExitCode.INTERRUPTED)
    except OSError as exc:  # a full disk, a vanished directory: the machine, not the input
        if debug:
            traceback.print_exc()
        err_console.print(
            f"error: {exc}", style="red", markup=False, highlight=False, soft_wrap=True
        )
        sys.exit(ExitCode.ENVIRONMENT)
    except Exception as exc:  # a bug in stackbench: one line, the traceback on --debug
        if debug:
            traceback.print_exc()
        err_console.print(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug and report it)",
            style="red",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(ExitCode.INTERNAL)
