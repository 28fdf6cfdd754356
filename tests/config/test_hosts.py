from pathlib import Path

import pytest

from stackbench.config.hosts import Host, hosts_from_table, load_hosts, parse_hosts_file
from stackbench.config.paths import REPO_ROOT
from stackbench.config.toml import read_toml
from stackbench.errors import InputError

GOOD = """
[hosts.h1]
address = "10.231.0.11"
identity = "/run/stackbench-testhosts/id_ed25519"
known_hosts = "/run/stackbench-testhosts/known_hosts"
stackbench = "/work/main/.venv/bin/stackbench"

[hosts.bench-2]
address = "bench-2.example.org"
user = "bench"
port = 2222
checkout = "/opt/stackbench"

[hosts.v6]
address = "fd00::2"
stackbench = ["/usr/bin/env", "PYTHONPATH=/opt/sb", "/usr/bin/python3", "-m", "stackbench"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    return path


def error(tmp_path: Path, text: str) -> str:
    with pytest.raises(InputError) as exc:
        parse_hosts_file(write(tmp_path, text))
    return str(exc.value)


def test_good_file(tmp_path):
    hosts = parse_hosts_file(write(tmp_path, GOOD)).hosts
    assert list(hosts) == ["h1", "bench-2", "v6"]
    assert hosts["h1"] == Host(
        name="h1",
        address="10.231.0.11",
        user="root",
        port=22,
        identity=Path("/run/stackbench-testhosts/id_ed25519"),
        known_hosts=Path("/run/stackbench-testhosts/known_hosts"),
        checkout=REPO_ROOT,
        stackbench=("/work/main/.venv/bin/stackbench",),
    )
    bench = hosts["bench-2"]
    assert (bench.user, bench.port, bench.identity, bench.known_hosts) == (
        "bench",
        2222,
        None,
        None,
    )
    # The default command is the checkout's launcher, wherever the checkout is.
    assert bench.stackbench == ("/opt/stackbench/.venv/bin/stackbench",)
    assert hosts["v6"].stackbench[:2] == ("/usr/bin/env", "PYTHONPATH=/opt/sb")
    assert hosts["h1"].label == "h1 (root@10.231.0.11:22)"


def test_records_are_frozen(tmp_path):
    hosts = parse_hosts_file(write(tmp_path, GOOD)).hosts
    with pytest.raises(AttributeError):
        hosts["h1"].port = 23  # type: ignore[misc]
    with pytest.raises(TypeError):
        hosts["x"] = hosts["h1"]  # type: ignore[index]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            '[hosts.h1]\naddress = "10.0.0.1"\npassword = "x"\n',
            "[hosts.h1] key 'password': unknown key (allowed: address, checkout, identity, "
            "known_hosts, port, stackbench, user)",
        ),
        ('[hosts.h1]\nuser = "root"\n', "[hosts.h1] key 'address': missing"),
        (
            '[hosts.h1]\naddress = "10.0.0.1"\nport = 70000\n',
            "[hosts.h1] key 'port': expected a whole number from 1 to 65535, got 70000",
        ),
        ('[hosts.H1]\naddress = "10.0.0.1"\n', "'H1' is not a valid name"),
        ('[hosts."../x"]\naddress = "10.0.0.1"\n', "'../x' is not a valid name"),
        ('[hosts.h1]\naddress = "-oProxyCommand=sh"\n', "is not an IP address or a host name"),
        ('[hosts.h1]\naddress = "10.0.0.256"\n', "is not an IP address or a host name"),
        ('[hosts.h1]\naddress = "a b"\n', "is not an IP address or a host name"),
        ('[hosts.h1]\naddress = "10.0.0.1"\nuser = "-l"\n', "key 'user': '-l' is not a user name"),
        (
            '[hosts.h1]\naddress = "10.0.0.1"\nidentity = "id_ed25519"\n',
            "key 'identity': 'id_ed25519' is not an absolute path",
        ),
        (
            '[hosts.h1]\naddress = "10.0.0.1"\nknown_hosts = "/a b/known"\n',
            "key 'known_hosts': '/a b/known' contains whitespace",
        ),
        ('[hosts.h1]\naddress = "10.0.0.1"\nidentity = "/root/%d/key"\n', "contains whitespace"),
        ('[hosts.h1]\naddress = "10.0.0.1"\nstackbench = []\n', "key 'stackbench'"),
        (
            '[hosts.h1]\naddress = "10.0.0.1"\nstackbench = ["-oX", "y"]\n',
            "key 'stackbench': '-oX' is an option, not a program",
        ),
        ('[hosts.h1]\naddress = "10.0.0.1"\nstackbench = "/bin/sb\\nrm"\n', "control character"),
        ("[hosts]\n", "no host; add at least one [hosts.NAME] table"),
        ('address = "10.0.0.1"\n', "key 'address': unknown key (allowed: hosts)"),
    ],
)
def test_bad_file_names_the_key_and_the_fix(tmp_path, text, expected):
    message = error(tmp_path, text)
    assert message.startswith(str(tmp_path / "hosts.toml") + ": ")
    assert expected in message


def test_addresses_accepted():
    for address in ("10.231.0.11", "fd00::2", "localhost", "bench-1.example.org", "b1"):
        table = {"h": {"address": address}}
        assert hosts_from_table(table, Path("s.toml")).hosts["h"].address == address


def test_suite_hosts_table(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'stacks = ["go-nethttp"]\nworkloads = ["hello"]\n[hosts.server]\naddress = "10.0.0.2"\n'
    )
    hosts = load_hosts(None, suite)
    assert list(hosts.hosts) == ["server"]
    assert hosts.source == f"{suite}: [hosts]"
    _text, data = read_toml(suite, "suite file")
    with pytest.raises(InputError, match=r"suite.toml: \[hosts.server\] key 'port'"):
        hosts_from_table({"server": {"address": "10.0.0.2", "port": "x"}}, suite)
    assert hosts_from_table(data["hosts"], suite).hosts["server"].port == 22


def test_load_hosts_needs_a_source(tmp_path):
    with pytest.raises(InputError, match="pass --hosts FILE"):
        load_hosts(None, None)
    suite = tmp_path / "suite.toml"
    suite.write_text('stacks = ["go-nethttp"]\nworkloads = ["hello"]\n')
    with pytest.raises(InputError, match=r"suite.toml: no \[hosts\] table"):
        load_hosts(None, suite)
    hosts_file = write(tmp_path, GOOD)
    assert load_hosts(hosts_file, suite).source == str(hosts_file)
