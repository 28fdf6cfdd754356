"""The rate probes as part of the pre-run checks (engine/preflight.py): when `run` probes the
rates its plan would guess, the line that announces them before they run, their rates in the
estimate, or the sentence saying what the estimate guesses. The probes' runner is a fake."""

from collections.abc import Mapping
from pathlib import Path

import pytest

from stackbench.config.estimate import PastLevel
from stackbench.config.hosts import HostsFile
from stackbench.config.plan import Plan, build_plan
from stackbench.config.status import StackEntry
from stackbench.config.suite import parse_suite
from stackbench.engine import preflight as preflight_module
from stackbench.engine.pastruns import PastRuns
from stackbench.engine.preflight import Asked, preflight, probe_wanted
from stackbench.engine.progress import Phase, ProgressEvent, ProgressSink
from stackbench.engine.resume import Selection

BUDGET_SUITE = """
name = "t"
stacks = ["refserver"]
workloads = ["hello"]
{budget}
[load]
connections = [1]
requests = 100
"""

# 2 stacks x 2 workloads x 3 levels counted in requests x 3 repetitions, none measured here
SUITE = """
name = "t"
stacks = ["refserver", "refjit"]
workloads = ["hello", "data"]

[load]
driver = "ab"
keepalive = "off"
connections = [1, 20, 200]
requests = 1000
warmup_s = 2
pause_s = 1
timeout_s = 30
repeat = 3
"""
SETUP = "ab/closed/keepalive-off"  # what decides a rate under SUITE's load (setup_key)

# 8 probes (each case at its lowest and highest level), each 3 s measured + 1 s warm-up (the
# suite's 2 s, at most 1) + 0.5 s pause + 0.5 s its loader's start = 5 s: 40 s; and each of
# the 2 stacks' start and stop 3 s: 46 s in all.
ANNOUNCEMENT = (
    "probing 8 rate(s) this machine never measured, for the plan's estimate "
    "(about 46 s; not part of the results)"
)
GUESS_NOTE = (
    "36 level(s) counted in requests have no rate measured here, so their time below is a "
    "guess (the ETA corrects it as levels finish); `--probe` first measures them: 8 probe(s) "
    "of 3 s, about 46 s in all"
)


def test_asked_or_a_real_run_that_a_budget_judges(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(BUDGET_SUITE.format(budget=""))
    plain = parse_suite(path)
    path.write_text(BUDGET_SUITE.format(budget="load_budget_min = 5"))
    budgeted = parse_suite(path)
    # --probe: always, dry run or not
    assert probe_wanted(Asked(probe=True, dry_run=True), plain)
    assert probe_wanted(Asked(probe=True), plain)
    # a real run probes when a budget will judge its plan: --budget or load_budget_min
    assert probe_wanted(Asked(budget_s=600.0), plain)
    assert probe_wanted(Asked(), budgeted)
    # ... and otherwise not: the ETA corrects a guess as levels finish
    assert not probe_wanted(Asked(), plain)
    # a dry run only when asked, budget or not
    assert not probe_wanted(Asked(dry_run=True, budget_s=600.0), budgeted)


class FakeProbes:
    """Stands in for engine/probe.py `run_probes`: says when it ran (in `said`, after the
    events it was preceded by) and measures each probed level at 500 req/s."""

    def __init__(self, said: list[str]) -> None:
        self.said = said
        self.selection: Selection | None = None

    def __call__(
        self,
        probes: Plan,
        inventory: Mapping[str, StackEntry],
        progress: ProgressSink,
        selection: Selection,
        hosts: HostsFile | None = None,
    ) -> tuple[list[PastLevel], dict[tuple[str, str], float]]:
        self.said.append("probes ran")
        self.selection = selection
        levels = [
            PastLevel(st.name, c.spec.label, SETUP, lv.value, 500.0, 0.0)
            for st in probes.stacks
            for c in st.cases
            for lv in c.levels
        ]
        timed = probes.suite.script_iterations
        return levels, {
            (st.name, c.spec.label): 0.002 for st in probes.stacks for c in st.cases
        } if timed else {}


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What happened, in order: the events' lines and the fake probes' run."""
    out: list[str] = []
    monkeypatch.setattr(preflight_module, "run_probes", FakeProbes(out))
    # the busy machine's 1-s sample is not what these tests are about
    monkeypatch.setattr(preflight_module, "busy_machine", lambda suite, read_steal: [])
    return out


def checked(
    tmp_path: Path,
    inventory: dict[str, StackEntry],
    asked: Asked,
    said: list[str],
    text: str = SUITE,
):
    path = tmp_path / "s.toml"
    path.write_text(text)
    plan = build_plan(parse_suite(path), inventory, None, None)

    def tell(event: ProgressEvent) -> None:
        said.append(f"{event.phase.value}: {event.text}")

    return preflight(
        plan, inventory, None, lambda plan, params, timeline: None, PastRuns(), asked, tell
    )


def test_asked_probes_are_announced_before_they_run_and_their_rates_make_the_estimate(
    tmp_path: Path, fake_inventory, said: list[str]
) -> None:
    only = Selection(("refserver", "refjit"), ())
    checks = checked(tmp_path, fake_inventory, Asked(probe=True, selection=only), said)
    assert said == [f"{Phase.PROBE.value}: {ANNOUNCEMENT}", "probes ran"]
    fake = preflight_module.run_probes
    assert isinstance(fake, FakeProbes) and fake.selection == only
    assert checks.probes.rates is not None and len(checks.probes.rates) == 8
    assert list(checks.probes.rates) == checks.past.levels  # the past had none before
    assert checks.probes.guess_note is None
    # levels 1 and 200 measured by the probes, 20 between them: nothing left at a guess
    assert checks.timeline.sources() == {"measured": 24, "nearby": 12}


def test_unasked_probes_leave_a_guess_and_the_sentence_saying_what_probing_costs(
    tmp_path: Path, fake_inventory, said: list[str]
) -> None:
    checks = checked(tmp_path, fake_inventory, Asked(), said)
    assert said == []  # nothing announced, nothing run
    assert checks.probes.rates is None and checks.past.levels == []
    assert checks.probes.guess_note == GUESS_NOTE
    assert checks.timeline.sources() == {"guess": 36}


def test_a_resumed_run_keeps_its_own_rates_and_says_nothing_of_probes(
    tmp_path: Path, fake_inventory, said: list[str]
) -> None:
    checks = checked(tmp_path, fake_inventory, Asked(resumed=True, probe=True), said)
    assert said == []
    assert checks.probes.rates is None and checks.probes.guess_note is None


def test_a_real_run_a_budget_judges_probes_and_its_dry_run_does_not(
    tmp_path: Path, fake_inventory, said: list[str]
) -> None:
    checks = checked(tmp_path, fake_inventory, Asked(dry_run=True, budget_s=3600.0), said)
    assert said == [] and checks.probes.guess_note == GUESS_NOTE
    checks = checked(tmp_path, fake_inventory, Asked(budget_s=3600.0), said)
    assert said == [f"{Phase.PROBE.value}: {ANNOUNCEMENT}", "probes ran"]
    assert checks.probes.guess_note is None


def test_probed_standalone_timings_replace_the_guess_in_the_estimate(
    tmp_path: Path, fake_inventory, said: list[str]
) -> None:
    # levels of 5 s (nothing to probe there) and 1,000 iterations timed in each repetition
    text = SUITE.replace("requests = 1000", "duration_s = 5").replace(
        "[load]", "script_iterations = 1000\n\n[load]"
    )
    checks = checked(tmp_path, fake_inventory, Asked(), said, text)
    assert checks.probes.guess_note == (
        "12 standalone timing(s) were never timed here, so their time below is a guess (the "
        "ETA corrects it as they finish); `--probe` first measures them: 4 timing(s) of 200, "
        "about 14 s in all"
    )
    assert checks.timeline.guessed_timings == 12
    said.clear()
    checks = checked(tmp_path, fake_inventory, Asked(probe=True), said, text)
    assert said == [
        f"{Phase.PROBE.value}: probing 4 standalone timing(s) this machine never measured, for "
        "the plan's estimate (about 14 s; not part of the results)",
        "probes ran",
    ]
    # timed at 2 ms an iteration: 12 timings of 1,000 take 24 s, not the guess's 120
    assert checks.timeline.guessed_timings == 0 and checks.timeline.borrowed_timings == 0
    assert checks.past.scripts[("refjit", "hello")] == 0.002


def test_the_steal_under_load_is_read_before_a_real_run_of_two_minutes_of_load_or_more(
    tmp_path: Path, fake_inventory, said: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keeping the cores busy 2 s to read the hypervisor's steal is worth it before a run of
    minutes, not before a dry run (nothing started) nor a short run (a test's)."""
    read: list[bool] = []

    def busy(suite: object, read_steal: bool) -> list[object]:
        read.append(read_steal)
        return []

    monkeypatch.setattr(preflight_module, "busy_machine", busy)
    timed = SUITE.replace('driver = "ab"', 'driver = "native"').replace(
        "requests = 1000", "duration_s = 10"
    )
    short = timed.replace("[1, 20, 200]", "[1]").replace("repeat = 3", "repeat = 1")
    loads = []
    for text, dry in ((timed, False), (timed, True), (short, False)):
        checks = checked(tmp_path, fake_inventory, Asked(dry_run=dry), said, text)
        loads.append(checks.timeline.load_s)
    assert loads == [360.0, 360.0, 40.0]  # 2 stacks x 2 workloads x 3 levels x 3, 10 s each
    assert read == [True, False, False]
