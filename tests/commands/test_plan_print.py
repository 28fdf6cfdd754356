"""The plan as `run` prints it before anything starts: the parameters each stack starts with
(derived from the server cores) and, up front, what the server lacks against the article."""

import io
from pathlib import Path

from rich.console import Console

from stackbench.commands.claims import suite_cores_note
from stackbench.commands.preflight import print_plan
from stackbench.config.calibrate_first import CalibrationChoice
from stackbench.config.estimate import plan_timeline
from stackbench.config.manifest import parse_manifest
from stackbench.config.paths import STACKS_DIR
from stackbench.config.plan import build_plan
from stackbench.config.status import Availability, StackEntry, StackStatus
from stackbench.config.suite import parse_suite
from stackbench.engine.pastruns import PastRuns
from stackbench.engine.preflight import Preflight
from stackbench.engine.probe import Probed, probe_need
from stackbench.lab.stack import planned_params

SUITE = """
name = "article"
stacks = ["php-fpm-nginx", "node-cluster"]
workloads = ["hello"]

[params.php-fpm-nginx]
db_strategy = "per-request"

[placement]
server_cpus = "0"
loader_cpus = "0"
article_server_cores = {cores}
"""


def _inventory() -> dict[str, StackEntry]:
    out = {}
    for name in ("php-fpm-nginx", "node-cluster"):
        m = parse_manifest(STACKS_DIR / name / "stack.toml")
        out[name] = StackEntry(m, StackStatus(name, Availability.AVAILABLE))
    return out


def _printed(tmp_path: Path, cores: int, top: str = "", tail: str = "") -> str:
    path = tmp_path / "article.toml"
    path.write_text(top + SUITE.format(cores=cores) + tail)
    suite = parse_suite(path)
    inventory = _inventory()
    plan = build_plan(suite, inventory, None, None)
    console = Console(record=True, width=80, file=io.StringIO(), color_system=None)
    timeline = plan_timeline(plan)
    no_calibration = CalibrationChoice(False, "")
    params = planned_params(plan, inventory)
    probes = Probed(probe_need(plan, []))
    checks = Preflight(
        plan, params, (), (), (), None, None, timeline, (), no_calibration, probes, PastRuns()
    )
    print_plan(console, checks, suite_cores_note(suite, ()))
    return console.export_text()


def test_plan_prints_the_derived_parameters_within_80_columns(tmp_path):
    out = _printed(tmp_path, 1)
    assert max(len(line) for line in out.splitlines()) <= 80
    text = " ".join(out.split())
    assert "parameters each stack starts with on 1 server core (* = from the cores):" in text
    assert "php-fpm-nginx: workers=1*, children_per_worker=4, db_strategy=per-request" in text
    assert "node-cluster: workers=1*, db_strategy=pool" in text
    assert "article's server" not in text  # the article had one core too: nothing to say
    assert (
        "a level on whose cores other processes or steal took more than the 2% noise band is "
        "measured again once, after up to 10 s"
    ) in text


def test_plan_says_up_front_when_the_server_has_fewer_cores_than_the_article(tmp_path):
    out = _printed(tmp_path, 4)
    text = " ".join(out.split())
    sentence = (
        "The article's server had 4 cores; this machine gives the server 1 core, so "
        "the stacks size their workers for 1."
    )
    assert sentence in text
    assert text.index(sentence) < text.index("plan stack")  # before the stacks' table


def test_plan_says_how_many_standalone_timings_it_makes(tmp_path):
    """script_timings in each of the `repeat` rounds: the count each stack and workload gets."""
    top = "script_iterations = 3000\nscript_timings = 2\n"
    out = _printed(tmp_path, 1, top, "[load]\nrepeat = 3\n")
    assert max(len(line) for line in out.splitlines()) <= 80
    text = " ".join(out.split())
    assert (
        "standalone timing: the code x 3,000 without HTTP, 2 in each repetition (6 a stack "
        "and workload), each a fresh process"
    ) in text
    assert "standalone timing:" not in " ".join(_printed(tmp_path, 1).split())
