"""A suite's other hosts: [placement] server_host / loader_hosts, [hosts] tables or hosts_file,
checked when the run starts (resolve_hosts), with messages naming the file, key and fix."""

from pathlib import Path

import pytest

from stackbench.config.suite import parse_suite, resolve_hosts
from stackbench.errors import InputError

SUITE = """
name = "t"
stacks = ["refserver"]
workloads = ["hello"]

[load]
connections = [4, 20]

[placement]
server_host = "h1"
loader_hosts = ["h2", "h3"]
server_cpus = "0"
loader_cpus = "0"
"""
HOSTS = """
[hosts.h1]
address = "10.0.0.1"
[hosts.h2]
address = "10.0.0.2"
[hosts.h3]
address = "bench-3.example"
"""


def write(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_inline_hosts_and_placement(tmp_path):
    suite = parse_suite(write(tmp_path, SUITE + HOSTS))
    p = suite.placement
    assert (p.server_host, p.loader_hosts, p.remote) == ("h1", ("h2", "h3"), True)
    assert p.hosts() == ("h1", "h2", "h3") and not p.shared
    hosts = resolve_hosts(suite, None)
    assert hosts is not None and hosts.hosts["h3"].address == "bench-3.example"


def test_a_hosts_file_relative_to_the_suite_and_the_flag_winning(tmp_path):
    write(tmp_path, HOSTS, "hosts.toml")
    suite = parse_suite(write(tmp_path, 'hosts_file = "hosts.toml"\n' + SUITE))
    hosts = resolve_hosts(suite, None)
    assert hosts is not None and hosts.source == str(tmp_path / "hosts.toml")
    other = write(tmp_path, HOSTS.replace("10.0.0.1", "10.9.9.9"), "other.toml")
    flagged = resolve_hosts(suite, other)
    assert flagged is not None and flagged.hosts["h1"].address == "10.9.9.9"


def test_a_one_machine_suite_needs_no_hosts(tmp_path):
    suite = parse_suite(write(tmp_path, SUITE.split("[placement]")[0]))
    assert not suite.placement.remote and resolve_hosts(suite, None) is None


@pytest.mark.parametrize(
    "text, message",
    [
        (
            SUITE,
            r"\[placement\]: server_host/loader_hosts name other hosts, but the suite has no "
            r"\[hosts\] tables or hosts_file",
        ),
        (
            SUITE + HOSTS.replace("[hosts.h3]", "[hosts.h4]"),
            r"\[placement\]: host 'h3' is not in .*\(hosts: h1, h2, h4\)",
        ),
        (
            'hosts_file = "/nonexistent/hosts.toml"\n' + SUITE,
            r"/nonexistent/hosts.toml: no such hosts file .*testhosts.sh up 3",
        ),
        (
            SUITE.replace("connections = [4, 20]", "connections = [1, 20]") + HOSTS,
            r"loader_hosts: a level of 1 connections cannot be split over 2 loaders",
        ),
        (
            SUITE.replace("[load]", '[load]\ndriver = "wrk"') + HOSTS,
            r'loader_hosts: 2 loaders need \[load\] driver = "native"',
        ),
    ],
)
def test_hosts_checked_when_the_run_starts(tmp_path, text, message):
    suite = parse_suite(write(tmp_path, text))
    with pytest.raises(InputError, match=message) as err:
        resolve_hosts(suite, None)
    assert err.value.exit_code == 2


@pytest.mark.parametrize(
    "change, message",
    [
        (
            ('server_host = "h1"\n', ""),
            r"loader_hosts: loaders on other hosts cannot reach a server "
            "on this machine's loopback; set server_host too",
        ),
        (('["h2", "h3"]', '["h2", "h2"]'), r"loader_hosts: a host is listed twice"),
        (
            ('server_host = "h1"', 'server_host = "../h1"'),
            r"key 'server_host': '../h1' is not a "
            "valid name",
        ),
        (
            ('name = "t"', 'name = "t"\nhosts_file = "x.toml"'),
            r"give \[hosts.NAME\] tables or a "
            "hosts_file, not both",
        ),
    ],
)
def test_bad_placements_are_refused_when_parsed(tmp_path, change, message):
    with pytest.raises(InputError, match=message):
        parse_suite(write(tmp_path, SUITE.replace(*change) + HOSTS))


def test_remote_cores_are_not_checked_against_this_machine(tmp_path):
    text = SUITE.replace('server_cpus = "0"', 'server_cpus = "63"') + HOSTS
    assert parse_suite(write(tmp_path, text)).placement.server == frozenset({63})


SERVICES_APART = SUITE.replace(
    'loader_hosts = ["h2", "h3"]', 'loader_hosts = ["h2"]\nservices_host = "h3"'
)


def test_services_on_a_host_of_their_own(tmp_path):
    text = SERVICES_APART.replace('workloads = ["hello"]', 'workloads = ["mysql-row"]')
    p = parse_suite(write(tmp_path, text + HOSTS)).placement
    assert p.services_apart and p.hosts() == ("h1", "h3", "h2")
    same = parse_suite(write(tmp_path, SERVICES_APART.replace('"h3"', '"h1"') + HOSTS))
    assert not same.placement.services_apart  # with the server: as without the key


@pytest.mark.parametrize(
    "change, message",
    [
        (
            ('server_host = "h1"\n', ""),
            r"services_host: services on another host are reached over "
            "the network by a server on another host; set server_host",
        ),
        (
            ('workloads = ["hello"]', 'workloads = ["memcache-get", "redis-get"]'),
            r'services_host = "h3" would put memcached \(for memcache-get\) on that host\'s network '  # noqa: E501 - the message as printed
            r"address, and memcached has no authentication.*memcached_on_network = true",
        ),
        (
            ('services_host = "h3"', 'services_host = "h1"\nmemcached_on_network = true'),
            r"memcached_on_network: only means something with the services on a host of their own",
        ),
    ],
)
def test_services_apart_refused_when_unsafe_or_meaningless(tmp_path, change, message):
    text = (
        SERVICES_APART.replace('loader_hosts = ["h2"]\n', "")
        if "server_host" in change[0]
        else SERVICES_APART
    )
    with pytest.raises(InputError, match=message):
        parse_suite(write(tmp_path, text.replace(*change) + HOSTS))


def test_memcached_on_the_network_when_the_suite_accepts_it(tmp_path):
    text = SERVICES_APART.replace('workloads = ["hello"]', 'workloads = ["memcache-get"]')
    text = text.replace('services_host = "h3"', 'services_host = "h3"\nmemcached_on_network = true')
    assert parse_suite(write(tmp_path, text + HOSTS)).placement.memcached_on_network
