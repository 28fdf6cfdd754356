import os
from pathlib import Path

import pytest

from stackbench.config.loadspec import DriverKind, KeepAlive, Mode
from stackbench.config.paths import SUITES_DIR
from stackbench.config.placement import Placement, core_counts
from stackbench.config.plan import build_plan
from stackbench.config.suite import Range, expand_sweep, parse_suite
from stackbench.engine.settings import core_count_settings
from stackbench.errors import InputError

SUITE = """
name = "t"
stacks = ["refserver"]
workloads = ["hello", "sha256?n=10"]

[load]
driver = "native"
connections = [1, {start = 100, step = 100, stop = 300}]
duration_s = 2
repeat = 2

[placement]
server_cpus = "0"
loader_cpus = "0"

[slo]
percentile = 99
latency_ms = 3000
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    return path


def test_good_suite(tmp_path):
    s = parse_suite(write(tmp_path, SUITE))
    assert s.levels == (1, 100, 200, 300)
    assert s.load.driver is DriverKind.NATIVE and s.load.mode is Mode.CLOSED
    assert s.load.keepalive is KeepAlive.ON and s.load.repeat == 2
    assert [w.label for w in s.workloads] == ["hello", "sha256?n=10"]
    assert s.slo is not None and s.slo.latency_ms == 3000


def test_article_server_cores_is_a_statement_beside_the_placement(tmp_path):
    s = parse_suite(
        write(
            tmp_path,
            SUITE.replace('server_cpus = "0"', 'server_cpus = "0"\narticle_server_cores = 4'),
        )
    )
    assert s.article_server_cores == 4 and s.server_cores == 1  # the placement is unchanged
    assert parse_suite(write(tmp_path, SUITE)).article_server_cores is None


def test_article_suites_state_their_articles_cores():
    # (the article's own words are quoted beside each value in the suite files)
    expected = {
        "db-html-report": 4,
        "pool-and-cluster": 4,
        "concurrency-sweep": 4,
        "php-node-micro": 1,
        "io-vs-cpu": None,
    }  # io-vs-cpu: the article does not say
    for name, cores in expected.items():
        for suffix in ("", "-short"):
            assert parse_suite(SUITES_DIR / f"{name}{suffix}.toml").article_server_cores == cores


def test_expand_sweep_by_hand():
    assert expand_sweep([1, Range(100, 100, 1000)], "x") == (
        1,
        100,
        200,
        300,
        400,
        500,
        600,
        700,
        800,
        900,
        1000,
    )
    assert len(expand_sweep([Range(100, 100, 10000)], "x")) == 100
    with pytest.raises(InputError, match="x: the range has 1001 levels; at most 1000"):
        expand_sweep([Range(1, 1, 1001)], "x")
    with pytest.raises(InputError, match="x: more than 1000 levels"):
        expand_sweep([Range(1, 1, 1000), 5], "x")
    with pytest.raises(InputError, match="stop >= start"):
        expand_sweep([Range(10, 1, 5)], "x")


@pytest.mark.parametrize(
    "change, message",
    [
        (("[load]", "[load]\nconections = [1]"), r"\[load\] key 'conections': unknown key"),
        (("duration_s = 2", 'duration_s = "2"'), r"\[load\] key 'duration_s': expected a number"),
        (('driver = "native"', 'driver = "siege"'), r"'siege' is not one of: native, wrk, ab"),
        (
            ("repeat = 2", "repeat = 0"),
            r"key 'repeat': expected a whole number from 1 to 100, got 0",
        ),
        (
            ("duration_s = 2", "duration_s = 2\nrequests = 10"),
            "either a request count or duration_s",
        ),
        (('name = "t"', 'name = "t"\ncolour = "red"'), "key 'colour': unknown key"),
        (
            ("connections = [1, {start = 100, step = 100, stop = 300}]", "connections = [0]"),
            r"key 'connections' \(item 1\): expected a number above 0 and at most 10000000 or a table "  # noqa: E501 - the message as printed
            "with keys start, step, stop, got 0",
        ),
        (
            (
                "connections = [1, {start = 100, step = 100, stop = 300}]",
                "connections = [{start = 1, stop = 9}]",
            ),
            r"key 'connections' \(item 1\) key 'step': missing",
        ),
        (('driver = "native"', 'driver = "wrk"\nmode = "open"\nrates = [10]'), "no open-loop mode"),
        (('driver = "native"', 'mode = "open"'), "needs a list of request rates"),
        (('server_cpus = "0"', 'server_cpus = "zero"'), "is not a CPU list"),
        (('server_cpus = "0"', 'server_cpus = "4096"'), "not available here"),
        (
            ('server_cpus = "0"', 'server_cpus = "0"\narticle_server_cores = 0'),
            r"\[placement\] key 'article_server_cores': expected a whole number from 1 to 4096",
        ),
        (
            ('server_cpus = "0"', 'server_cpus = "0"\narticle_server_cores = "four"'),
            r"\[placement\] key 'article_server_cores'",
        ),
        (
            ('workloads = ["hello", "sha256?n=10"]', 'workloads = ["helo"]'),
            "unknown workload 'helo'",
        ),
    ],
)
def test_bad_suites_name_file_and_key(tmp_path, change, message):
    path = write(tmp_path, SUITE.replace(*change))
    with pytest.raises(InputError, match=message) as err:
        parse_suite(path)
    assert str(path) in str(err.value)


def test_plan_expands_levels_and_repetitions(tmp_path, fake_inventory):
    plan = build_plan(parse_suite(write(tmp_path, SUITE)), fake_inventory, None, None)
    (stack,) = plan.stacks
    assert stack.available and len(stack.cases) == 2
    levels = stack.cases[0].levels
    assert [(lv.value, lv.repetition) for lv in levels[:3]] == [(1, 0), (1, 1), (100, 0)]
    assert plan.level_count() == 2 * 4 * 2


def test_plan_filters_and_rejects_unknowns(tmp_path, fake_inventory):
    suite = parse_suite(write(tmp_path, SUITE))
    plan = build_plan(suite, fake_inventory, ["refserver"], ["sha256"])
    assert [c.spec.label for c in plan.stacks[0].cases] == ["sha256?n=10"]
    with pytest.raises(InputError, match="--stacks: 'node' is not among"):
        build_plan(suite, fake_inventory, ["node"], None)
    with pytest.raises(InputError, match="--workloads: 'json' is not in the suite"):
        build_plan(suite, fake_inventory, None, ["json"])
    bad = parse_suite(write(tmp_path, SUITE.replace('["refserver"]', '["nginx-lua"]')))
    with pytest.raises(InputError, match="unknown stack 'nginx-lua'"):
        build_plan(bad, fake_inventory, None, None)


def test_unavailable_stack_is_planned_with_reason(tmp_path, fake_inventory):
    text = SUITE.replace('["refserver"]', '["refserver", "missing"]')
    text = text.replace('workloads = ["hello", "sha256?n=10"]', 'workloads = ["hello"]')
    plan = build_plan(parse_suite(write(tmp_path, text)), fake_inventory, None, None)
    missing = plan.stacks[1]
    assert not missing.available and "apt-get install nosuchruntime" in missing.reason


def test_shipped_suites_parse():
    for path in SUITES_DIR.glob("*.toml"):
        parse_suite(path)


def test_per_workload_levels_durations_and_variants(tmp_path, fake_inventory):
    text = SUITE.replace('stacks = ["refserver"]', 'stacks = ["refserver", "ref-faulty"]')
    text += """
[levels]
"sha256?n=10" = [7]

[durations]
"sha256?n=10" = 9

[variants.ref-faulty]
stack = "refserver"
params = { fault = "constant" }
"""
    suite = parse_suite(write(tmp_path, text))
    assert suite.levels_for("sha256?n=10") == (7,) and suite.levels_for("hello")[0] == 1
    assert suite.load_for("sha256?n=10").duration_s == 9
    assert suite.load_for("hello").duration_s == 2
    plan = build_plan(suite, fake_inventory, None, None)
    variant = plan.stacks[1]
    assert variant.name == "ref-faulty" and variant.stack == "refserver"
    assert variant.params == {"fault": "constant"}
    bad = write(tmp_path, text.replace('"sha256?n=10" = 9', '"sha256?n=11" = 9'))
    with pytest.raises(InputError, match=r"\[durations\] key 'sha256\?n=11'"):
        parse_suite(bad)


def test_min_server_cores_leaves_a_stack_out_below_it(tmp_path, fake_inventory):
    """A stack the suite needs on more server cores than the placement gives is planned as
    unavailable, with why (it runs where the server has them); a name outside the suite's
    stacks or a count below 1 is refused."""
    text = SUITE.replace('stacks = ["refserver"]', 'stacks = ["refserver", "ref-faulty"]')
    text += """
[min_server_cores]
ref-faulty = 2

[variants.ref-faulty]
stack = "refserver"
params = { fault = "constant" }
"""
    suite = parse_suite(write(tmp_path, text))
    assert suite.server_cores == 1 and suite.min_server_cores == {"ref-faulty": 2}
    plan = build_plan(suite, fake_inventory, None, None)
    kept, left = plan.stacks
    assert kept.available and not kept.reason
    assert not left.available
    assert left.reason == "left out below 2 server cores ([min_server_cores]); the server has 1"
    assert plan.level_count() == sum(len(c.levels) for c in kept.cases)
    wide = parse_suite(write(tmp_path, text.replace("ref-faulty = 2", "ref-faulty = 1")))
    assert all(s.available for s in build_plan(wide, fake_inventory, None, None).stacks)
    with pytest.raises(InputError, match=r"\[min_server_cores\] key 'nosuch': not one of"):
        parse_suite(write(tmp_path, text.replace("ref-faulty = 2", "nosuch = 2")))
    with pytest.raises(
        InputError,
        match=r"min_server_cores\] key .ref-faulty.: expected a whole number from 1 to 1024",
    ):
        parse_suite(write(tmp_path, text.replace("ref-faulty = 2", "ref-faulty = 0")))


def test_max_server_cores_and_stack_workloads_plan_a_stand_in(tmp_path, fake_inventory):
    """A stand-in runs only where it is needed ([max_server_cores]: left out above, with why)
    and only on the workloads it is read on ([stack_workloads]); bad entries are refused
    naming the table and key."""
    text = SUITE.replace('stacks = ["refserver"]', 'stacks = ["refserver", "ref-faulty"]')
    text += """
[max_server_cores]
ref-faulty = 1

[stack_workloads]
ref-faulty = ["sha256?n=10"]

[variants.ref-faulty]
stack = "refserver"
params = { fault = "constant" }
"""
    suite = parse_suite(write(tmp_path, text))
    assert suite.max_server_cores == {"ref-faulty": 1}
    assert suite.stack_workloads == {"ref-faulty": ("sha256?n=10",)}
    kept, stand_in = build_plan(suite, fake_inventory, None, None).stacks
    assert stand_in.available and not stand_in.reason
    assert [c.spec.label for c in stand_in.cases] == ["sha256?n=10"]
    assert [c.spec.label for c in kept.cases] == ["hello", "sha256?n=10"]
    # --workloads choosing none of a stack's workloads leaves it out of the plan
    (only,) = build_plan(suite, fake_inventory, None, ["hello"]).stacks
    assert only.name == "refserver"
    two = text.replace('server_cpus = "0"', 'server_cpus = "0-1"').replace(
        'loader_cpus = "0"', 'loader_cpus = "0-1"'
    )
    wide = build_plan(parse_suite(write(tmp_path, two)), fake_inventory, None, None)
    assert not wide.stacks[1].available
    assert wide.stacks[1].reason == (
        "left out above 1 server core ([max_server_cores]); the server has 2"
    )
    for old, new, message in [
        ("ref-faulty = 1", "nosuch = 1", r"\[max_server_cores\] key 'nosuch': not one of"),
        (
            'ref-faulty = ["sha256?n=10"]',
            'ref-faulty = ["sha256?n=11"]',
            r"\[stack_workloads\] key 'ref-faulty': 'sha256\?n=11' is not one of the suite's",
        ),
        (
            'ref-faulty = ["sha256?n=10"]',
            'ref-faulty = ["hello", "hello"]',
            r"\[stack_workloads\] key 'ref-faulty': a workload is listed twice",
        ),
        ('ref-faulty = ["sha256?n=10"]', "ref-faulty = []", r"stack_workloads"),
        (
            "[max_server_cores]\nref-faulty = 1",
            "[max_server_cores]\nref-faulty = 1\n[min_server_cores]\nref-faulty = 2",
            r"\[max_server_cores\] key 'ref-faulty': 1 is below its \[min_server_cores\] 2",
        ),
    ]:
        with pytest.raises(InputError, match=message):
            parse_suite(write(tmp_path, text.replace(old, new)))


@pytest.mark.parametrize(
    "change, message",
    [
        (
            ("duration_s = 2", "duration_s = inf"),
            r"\[load\] key 'duration_s': expected a number from 0.1 to 86400, got inf",
        ),
        (("duration_s = 2", "duration_s = nan"), r"key 'duration_s': expected a number .* got nan"),
        (
            ("connections = [1, {start = 100, step = 100, stop = 300}]", "connections = nan"),
            r"\[load\] key 'connections': expected a non-empty list of numbers .* got nan",
        ),
        (
            ("connections = [1, {start = 100, step = 100, stop = 300}]", "connections = [inf]"),
            r"key 'connections' \(item 1\): expected a number above 0 and at most 10000000",
        ),
        (
            ("connections = [1, {start = 100, step = 100, stop = 300}]", "connections = []"),
            r"key 'connections': expected a non-empty list",
        ),
        (
            ("connections = [1, {start = 100, step = 100, stop = 300}]", "connections = [1.5]"),
            r"key 'connections': connections must be whole numbers",
        ),
        (
            ('workloads = ["hello", "sha256?n=10"]', 'workloads = ["sha256?n=²"]'),
            r"key 'workloads': sha256 n='²' is not a whole number \(use ASCII digits",
        ),
        (('workloads = ["hello", "sha256?n=10"]', 'workloads = ["sha256?n=٣"]'), "ASCII digits"),
        (
            (
                'workloads = ["hello", "sha256?n=10"]',
                'workloads = ["hello", "sha256?n=1", "sha256"]',
            ),
            r"key 'workloads': the workload 'sha256\?n=1' is listed twice",
        ),
        (
            ('workloads = ["hello", "sha256?n=10"]', "workloads = []"),
            "key 'workloads': expected a non-empty list of strings",
        ),
        (
            ('stacks = ["refserver"]', 'stacks = ["refserver", "refserver"]'),
            "key 'stacks': 'refserver' is listed twice",
        ),
        (
            # a path is a stack of your own: its folder must hold a manifest
            ('stacks = ["refserver"]', 'stacks = ["../x/victim"]'),
            r"key 'stacks': '../x/victim' \(.*/x/victim\) holds no stack.toml",
        ),
        (
            ('stacks = ["refserver"]', 'stacks = ["ref server"]'),
            r"key 'stacks': 'ref server' is not a valid name: use lowercase letters",
        ),
        (('stacks = ["refserver"]', 'stacks = ["Refserver"]'), "is not a valid name"),
        (('name = "t"', 'name = "t/../../x"'), r"key 'name': 't/../../x' is not a valid name"),
        (
            ("repeat = 2", "repeat = 1000000"),
            r"key 'repeat': expected a whole number from 1 to 100",
        ),
        (
            ("[slo]", "[limits]\nmax_error_rate = 1.5\n[slo]"),
            r"\[limits\] key 'max_error_rate': expected a number from 0 to 1, got 1.5",
        ),
        (
            ("latency_ms = 3000", "latency_ms = 3000\nmax_error_rate = 2"),
            r"\[slo\] key 'max_error_rate': expected a number from 0 to 1",
        ),
        (
            ("percentile = 99", "percentile = 0"),
            r"\[slo\] key 'percentile': expected a number above 0",
        ),
        (
            ("[slo]", '[variants."../x/victim"]\nstack = "refserver"\n[slo]'),
            r"\[variants\] key '../x/victim': '../x/victim' is not a valid name",
        ),
        (
            ("[slo]", '[variants.v]\nstack = "../victim"\n[slo]'),
            r"\[variants.v\] key 'stack': '../victim' is not a valid name",
        ),
        (
            ("[slo]", '[variants.v]\nstack = "refserver"\nparams = { fault = 1.5 }\n[slo]'),
            r"\[variants.v.params\] key 'fault': expected a string or a whole number or true or false",  # noqa: E501 - the message as printed
        ),
        (("[slo]", '[params."../x"]\nfault = "crash"\n[slo]'), r"\[params\] key '../x'"),
        (
            ("[slo]", '[params.refserver]\nfault = ["a"]\n[slo]'),
            r"\[params.refserver\] key 'fault': expected a string",
        ),
        (
            ("[slo]", '[levels]\n"hello" = []\n[slo]'),
            r"\[levels\] key 'hello': expected a non-empty",
        ),
        (
            ("[slo]", "[durations]\nhello = inf\n[slo]"),
            r"\[durations\] key 'hello': expected a number",
        ),
        (("[slo]", "script_iterations = -1\n[slo]"), r"\[placement\] key 'script_iterations'"),
        (
            ('driver = "native"', 'driver = "native"\nmode = "open"\nrates = [10]'),
            r"\[load\] key 'connections': open loop .* remove connections",
        ),
    ],
)
def test_bad_input_is_refused_naming_file_key_and_what_is_allowed(tmp_path, change, message):
    path = write(tmp_path, SUITE.replace(*change))
    with pytest.raises(InputError, match=message) as err:
        parse_suite(path)
    assert str(err.value).startswith(f"{path}: ")
    assert err.value.exit_code == 2


def test_suite_files_that_cannot_be_read_as_text(tmp_path):
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(SUITE.replace('name = "t"', 'name = "caf\xe9"').encode("latin-1"))
    with pytest.raises(InputError, match="latin1.toml: not UTF-8 text"):
        parse_suite(latin1)
    huge = tmp_path / "huge.toml"
    huge.write_text(SUITE + "#" * (1024 * 1024))
    with pytest.raises(InputError, match="huge.toml: larger than 1024 KiB"):
        parse_suite(huge)
    with pytest.raises(InputError, match="/dev/zero: larger than"):
        parse_suite(Path("/dev/zero"))


def test_suite_name_comes_from_a_valid_file_name(tmp_path):
    text = SUITE.replace('name = "t"\n', "")
    good = tmp_path / "my-suite.toml"
    good.write_text(text)
    assert parse_suite(good).name == "my-suite"
    bad = tmp_path / "My Suite.toml"
    bad.write_text(text)
    with pytest.raises(
        InputError,
        match=r"the file name 'My Suite' is not a valid suite name; "
        r"add name =",
    ):
        parse_suite(bad)


def test_script_timings_per_repetition(tmp_path):
    """script_timings: standalone timings in each repetition (default 1), bounded, and only
    beside script_iterations; a bad value is one message naming the key and what it allows."""
    timed = SUITE.replace('name = "t"', 'name = "t"\nscript_iterations = 100')
    assert parse_suite(write(tmp_path, timed)).script_timings == 1
    three = timed.replace("iterations = 100", "iterations = 100\nscript_timings = 3")
    suite = parse_suite(write(tmp_path, three))
    assert (suite.script_iterations, suite.script_timings) == (100, 3)
    for bad in ("0", "21", "1.5", '"2"'):
        path = write(tmp_path, three.replace("script_timings = 3", f"script_timings = {bad}"))
        with pytest.raises(InputError) as err:
            parse_suite(path)
        message = str(err.value)
        assert message.startswith(f"{path}: key 'script_timings': expected a whole number ")
        assert "from 1 to 20" in message and message.count("'script_timings'") == 1
    alone = write(tmp_path, SUITE.replace('name = "t"', 'name = "t"\nscript_timings = 2'))
    with pytest.raises(InputError, match="key 'script_timings': standalone timings need "):
        parse_suite(alone)


def test_defaults_come_from_the_records(tmp_path):
    from stackbench.config.loadspec import LoadSettings
    from stackbench.config.suite import Slo

    text = 'stacks = ["refserver"]\nworkloads = ["hello"]\n[slo]\n'
    suite = parse_suite(write(tmp_path, text))
    assert suite.load == LoadSettings() and suite.slo == Slo()
    assert suite.levels == (25,) and suite.max_error_rate == 0.01


def test_plan_checks_param_values_against_the_manifest_types(tmp_path, fake_inventory):
    def plan_with(extra: str):
        return build_plan(parse_suite(write(tmp_path, SUITE + extra)), fake_inventory, None, None)

    plan = plan_with('\n[params.refserver]\nfault = "status500"\n')
    assert plan.stacks[0].params == {"fault": "status500"}
    with pytest.raises(
        InputError,
        match=r"suite.toml: \[params.refserver\] key 'fault': "
        r"'status' is not allowed for parameter 'fault'; "
        r"expected one of: '', constant, status500",
    ):
        plan_with('\n[params.refserver]\nfault = "status"\n')
    with pytest.raises(InputError, match=r"key 'fault': 'crash\\nLoadModule x' is not allowed"):
        plan_with('\n[params.refserver]\nfault = "crash\\nLoadModule x"\n')
    with pytest.raises(
        InputError,
        match=r"\[params.refserver\] key 'colour': the stack "
        r"'refserver' has no parameter 'colour' "
        r"\(parameters: fault\)",
    ):
        plan_with('\n[params.refserver]\ncolour = "red"\n')
    with pytest.raises(InputError, match=r"\[variants.v.params\] key 'fault': 'nope'"):
        plan_with('\n[variants.v]\nstack = "refserver"\nparams = { fault = "nope" }\n')
    with pytest.raises(
        InputError,
        match=r"\[variants.refserver\]: 'refserver' is already the "
        "name of a stack",
    ):
        plan_with('\n[variants.refserver]\nstack = "crashing"\n')


def test_a_broken_manifest_only_makes_its_stack_unavailable(tmp_path):
    import shutil

    from stackbench.config.status import Availability
    from stackbench.lab.inventory import load_inventory
    from tests.conftest import FAKE_STACKS

    stacks = tmp_path / "stacks"
    shutil.copytree(FAKE_STACKS, stacks)
    (stacks / "refserver" / "stack.toml").write_text('name = "refserver"\ncolour = "red"\n')
    inventory = load_inventory(stacks_dir=stacks)
    broken = inventory["refserver"]
    assert broken.status.availability is Availability.INVALID and not broken.status.available
    assert "refserver/stack.toml: key 'colour': unknown key" in broken.status.reason
    assert inventory["crashing"].status.available
    with pytest.raises(InputError, match="key 'colour': unknown key"):
        _ = broken.manifest
    text = SUITE.replace('["refserver"]', '["refserver", "crashing"]')
    plan = build_plan(parse_suite(write(tmp_path, text)), inventory, None, None)
    assert [(s.name, s.available) for s in plan.stacks] == [
        ("refserver", False),
        ("crashing", True),
    ]
    assert "unknown key" in plan.stacks[0].reason
    with pytest.raises(InputError, match="unknown stack 'nosuch'"):
        load_inventory(["nosuch"], stacks_dir=stacks)


def test_core_counts_place_the_server_on_the_first_cores_and_the_loader_beside():
    four = frozenset({0, 1, 2, 3})
    one, two = core_counts([2, 1], None, "s.toml: [placement]", four)
    # the loader on the cores beyond the largest count, the same at every count
    assert (one.cores, one.placement) == (
        1,
        Placement(frozenset({0}), frozenset({2, 3}), frozenset({0})),
    )
    assert two.placement == Placement(frozenset({0, 1}), frozenset({2, 3}), frozenset({0}))
    assert not one.placement.shared and not two.placement.shared
    # on 2 cores, 2 server cores leave the loader none of its own: it shares them
    one, two = core_counts([1, 2], None, "s.toml: [placement]", frozenset({0, 1}))
    assert one.placement.loader == frozenset({1}) and not one.placement.shared
    assert two.placement.loader == frozenset({0, 1}) and two.placement.shared
    (only,) = core_counts([1], "server", "s.toml: [placement]", four)
    assert only.placement.loader == frozenset({0})
    with pytest.raises(
        InputError,
        match=r"key .server_cores.: 3 server cores asked, but this machine allows 2 \(0,1\)",
    ):
        core_counts([1, 3], None, "s.toml: [placement]", frozenset({0, 1}))
    with pytest.raises(InputError, match="loader_cpus: CPUs 7 are not available"):
        core_counts([1], "7", "s.toml: [placement]", four)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_each_stack_is_planned_at_each_core_count(tmp_path, fake_inventory):
    text = SUITE.replace('server_cpus = "0"\nloader_cpus = "0"', "server_cores = [1, 2]")
    text = text.replace('stacks = ["refserver"]', 'stacks = ["refserver", "ref-faulty"]')
    text += """
[min_server_cores]
ref-faulty = 2

[variants.ref-faulty]
stack = "refserver"
params = { fault = "constant" }
"""
    suite = parse_suite(write(tmp_path, text))
    assert [c.cores for c in suite.core_counts] == [1, 2] and suite.server_cores == 1
    plan = build_plan(suite, fake_inventory, None, None)
    names = [(s.name, s.available) for s in plan.stacks]
    assert names == [
        ("refserver.1c", True),
        ("refserver.2c", True),
        ("ref-faulty.1c", False),  # [min_server_cores]: left out below 2, run at 2
        ("ref-faulty.2c", True),
    ]
    assert [len(plan.placement_of(s).server) for s in plan.stacks] == [1, 2, 1, 2]
    # the estimate counts every core count: each is its own planned stack
    assert plan.level_count() == 3 * sum(len(c.levels) for c in plan.stacks[0].cases)
    settings = core_count_settings(suite)
    assert settings["refserver.2c"].stack == "refserver"
    assert len(settings["refserver.2c"].server) == 2
    # an article whose loader had cores of its own: the count that shares them departs from it
    if len(os.sched_getaffinity(0)) == 2:
        article = parse_suite(
            write(tmp_path, text.replace("[1, 2]", '[1, 2]\narticle_loader = "other-cores"'))
        )
        (shared,) = article.deviations
        assert shared.setting == "loader placement at 2 server cores"
        assert shared.ours == "the loader shares the server's cores"
    one = parse_suite(write(tmp_path, text.replace("[1, 2]", "[2]")))
    assert one.core_counts == () and one.server_cores == 2  # one count: a plain placement
    with pytest.raises(InputError, match=r"\[placement\] key 'server_cores': expected a non-empty"):
        parse_suite(write(tmp_path, text.replace("[1, 2]", "[]")))
