"""A suite's [external.NAME] table: a server the user runs, parsed into one record, refused
with one message naming the table and key when its url, name, processes or workloads are
wrong."""

from pathlib import Path

import pytest

from stackbench.config.external import ExternalStack
from stackbench.config.plan import build_plan
from stackbench.config.suite import parse_suite, resolve_hosts
from stackbench.errors import InputError
from stackbench.lab.inventory import load_inventory


def suite_file(folder: Path, external: str, stacks: str = '["node"]', extra: str = "") -> Path:
    path = folder / "ext.toml"
    path.write_text(
        f'stacks = {stacks}\nworkloads = ["hello"]\n{extra}\n'
        "[load]\nconnections = [5]\nduration_s = 2\n"
        f"[external.mine]\n{external}\n"
    )
    return path


def test_an_external_table_adds_a_stack_after_the_listed_ones(tmp_path) -> None:
    suite = parse_suite(
        suite_file(tmp_path, 'url = "http://127.0.0.1:8080/"\nworkloads = ["hello"]\npids = [42]')
    )
    assert suite.stacks == ("node", "mine")
    assert suite.external == {
        "mine": ExternalStack("mine", "http://127.0.0.1:8080", "127.0.0.1", 8080, ("hello",), (42,))
    }
    plan = build_plan(suite, load_inventory(["node"]), None, None)
    planned = {st.name: st for st in plan.stacks}
    assert planned["mine"].external == suite.external["mine"]
    assert planned["mine"].available and planned["mine"].params == {}
    assert [c.spec.label for c in planned["mine"].cases] == ["hello"]
    assert planned["node"].external is None


def test_what_an_external_stack_cannot_measure_is_said_once_per_reason() -> None:
    bare = ExternalStack("x", "http://127.0.0.1:1", "127.0.0.1", 1, ("hello",))
    lines = bare.not_measured()
    assert lines[0] == (
        "server CPU and memory: not measured, no pids or unit given for external stack x"
    )
    assert any("not independent starts" in line for line in lines)
    sampled = ExternalStack("x", "http://127.0.0.1:1", "127.0.0.1", 1, ("hello",), unit="a.service")
    assert not any(line.startswith("server CPU") for line in sampled.not_measured())


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'url = "http://10.0.0.5:8080"\nworkloads = ["hello"]',
            "is not a loopback address.*server_host",
        ),
        ('url = "https://127.0.0.1:8080"\nworkloads = ["hello"]', "not a base URL of the form"),
        ('url = "http://127.0.0.1:8080/api"\nworkloads = ["hello"]', "no path"),
        ('url = "http://localhost:8080"\nworkloads = ["hello"]', "an IPv4 address"),
        ('url = "http://127.0.0.1:99999"\nworkloads = ["hello"]', "not between 1 and 65535"),
        ('url = "http://127.0.0.1:8080"\nworkloads = ["nope"]', "unknown workload 'nope'"),
        ('url = "http://127.0.0.1:8080"\nworkloads = ["db"]', "needs mariadb"),
        ('url = "http://127.0.0.1:8080"\nworkloads = []', "key 'workloads'"),
        ('url = "http://127.0.0.1:8080"\nworkloads = ["hello"]\npids = [1]', "key 'pids'"),
        (
            'url = "http://127.0.0.1:8080"\nworkloads = ["hello"]\npids = [7, 7]',
            "7 is listed twice",
        ),
        (
            'url = "http://127.0.0.1:8080"\nworkloads = ["hello"]\npids = [7]\nunit = "a.service"',
            "give pids or unit, not both",
        ),
        ('url = "http://127.0.0.1:8080"\nworkloads = ["hello"]\nunit = "a b"', "service unit"),
        ('url = "http://127.0.0.1:8080"\nworkloads = ["hello"]\nport = 3', "port"),
        ('workloads = ["hello"]', "url"),
    ],
)
def test_bad_external_tables_name_the_table_and_the_key(tmp_path, table, message) -> None:
    with pytest.raises(InputError, match=message) as caught:
        parse_suite(suite_file(tmp_path, table))
    assert "ext.toml" in str(caught.value) and "external" in str(caught.value)


def test_the_name_must_not_clash_with_any_other_stack_of_the_suite(tmp_path) -> None:
    ok = 'url = "http://127.0.0.1:8080"\nworkloads = ["hello"]'
    path = tmp_path / "ext.toml"
    for clash, what in [("node", "a catalog stack"), ("v", "a variant")]:
        path.write_text(
            'stacks = ["node"]\nworkloads = ["hello"]\n[variants.v]\nstack = "node"\n'
            f"[external.{clash}]\n{ok}\n"
        )
        with pytest.raises(InputError, match=f"'{clash}' is already {what}"):
            parse_suite(path)
    path.write_text(f'stacks = ["node"]\nworkloads = ["hello"]\n[external."Bad"]\n{ok}\n')
    with pytest.raises(InputError, match="external"):
        parse_suite(path)


def test_a_suite_workload_the_external_stack_does_not_serve_is_refused_by_the_plan(
    tmp_path,
) -> None:
    path = suite_file(tmp_path, 'url = "http://127.0.0.1:8080"\nworkloads = ["sha256"]')
    with pytest.raises(InputError, match=r"\[external.mine\] key 'workloads': .*'hello'"):
        build_plan(parse_suite(path), load_inventory(["node"]), None, None)


def test_params_for_an_external_stack_are_refused(tmp_path) -> None:
    path = suite_file(
        tmp_path,
        'url = "http://127.0.0.1:8080"\nworkloads = ["hello"]',
        extra="[params.mine]\nworkers = 2",
    )
    with pytest.raises(InputError, match=r"\[params.mine\]: an external stack has no param"):
        build_plan(parse_suite(path), load_inventory(["node"]), None, None)


HOSTS = '[hosts.h1]\naddress = "10.0.0.1"\n[hosts.h2]\naddress = "10.0.0.2"'


def test_on_a_multi_host_run_an_external_server_is_on_the_server_host(tmp_path) -> None:
    path = suite_file(
        tmp_path,
        'url = "http://10.0.0.1:8080"\nworkloads = ["hello"]\npids = [42]',
        extra=f'{HOSTS}\n[placement]\nserver_host = "h1"\nloader_hosts = ["h2"]',
    )
    suite = parse_suite(path)
    assert suite.external["mine"].address == "10.0.0.1"
    assert resolve_hosts(suite, None) is not None


@pytest.mark.parametrize(
    ("url", "placement", "message", "when"),
    [
        # the loaders on other hosts cannot reach this machine's loopback
        ("127.0.0.1", 'server_host = "h1"', "is a loopback address, which the loaders", "parse"),
        # loaders elsewhere need a server host (the placement's own rule)
        ("10.0.0.1", 'loader_hosts = ["h2"]', "set server_host too", "parse"),
        # another address than the server host's: no agent there finds its processes
        ("10.0.0.2", 'server_host = "h1"', "10.0.0.2 is not the address of server_host h1", "run"),
    ],
)
def test_a_multi_host_external_server_elsewhere_is_refused(
    tmp_path, url, placement, message, when
) -> None:
    path = suite_file(
        tmp_path,
        f'url = "http://{url}:8080"\nworkloads = ["hello"]',
        extra=f"{HOSTS}\n[placement]\n{placement}",
    )
    with pytest.raises(InputError, match=message) as refused:
        resolve_hosts(parse_suite(path), None)
    assert refused.value.exit_code == 2 and str(path) in str(refused.value)
    if when == "run":  # the hosts file is read when the run starts
        parse_suite(path)


def test_a_suite_may_name_external_stacks_only_but_not_no_stack_at_all(tmp_path) -> None:
    table = 'url = "http://127.0.0.1:8080"\nworkloads = ["hello"]'
    assert parse_suite(suite_file(tmp_path, table, stacks="[]")).stacks == ("mine",)
    path = tmp_path / "none.toml"
    path.write_text('stacks = []\nworkloads = ["hello"]\n')
    with pytest.raises(InputError, match=r"key 'stacks': expected a non-empty list of stacks"):
        parse_suite(path)


def test_an_external_stack_may_serve_the_suites_own_endpoints(tmp_path) -> None:
    path = tmp_path / "own.toml"
    path.write_text(
        'stacks = ["node"]\nworkloads = ["greet", "hello"]\n'
        '[endpoints.greet]\npath = "/hello"\n'
        '[external.mine]\nurl = "http://127.0.0.1:8080"\nworkloads = ["hello", "greet"]\n'
        '[external.plain]\nurl = "http://127.0.0.1:8081"\nworkloads = ["hello"]\n'
    )
    plan = build_plan(parse_suite(path), load_inventory(["node"]), None, None)
    served = {st.name: [c.spec.name for c in st.cases] for st in plan.stacks}
    assert served == {"node": ["hello"], "mine": ["greet", "hello"], "plain": ["hello"]}
