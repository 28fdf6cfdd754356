from pathlib import Path

import pytest

from stackbench.config.manifest import IoModel, discover, parse_manifest
from stackbench.config.paths import STACKS_DIR
from stackbench.config.workloads import CATALOG
from stackbench.errors import InputError
from stackbench.lab.availability import check_stack, version_tuple

GOOD = """
name = "demo"
description = "a demo"
language = "python"
io_model = "event-loop"
workloads = ["hello"]

[[requires]]
name = "python"
commands = ["python3"]
version_args = ["--version"]
min_version = "3.0"

[params]
workers = { type = "int", min = 1, max = 64, default = "{{server_core_count}}", help = "processes" }
mode = { type = "enum", values = ["fast", "safe"], default = "fast" }
heap = { type = "size", min = "16M", max = "8G", default = "64M" }
verbose = { type = "bool", default = false }
user = { type = "string", pattern = "[a-z_][a-z0-9_-]{0,31}", default = "www-data" }
backlog = { type = "int", min = 0, max = 4096, default = 511 }

[build]
command = ["true"]
inputs = ["*.py"]

[[template]]
src = "a.conf.in"
dest = "a.conf"

[[process]]
role = "server"
command = ["{{cmd.python}}", "-m", "http.server", "{{port}}"]
ready_tcp = "{{port}}"

[ready]
path = "/"
timeout_s = 5
"""


def write(tmp_path: Path, text: str, folder: str = "demo") -> Path:
    d = tmp_path / folder
    d.mkdir()
    (d / "stack.toml").write_text(text)
    return d / "stack.toml"


def test_parses_every_field(tmp_path):
    m = parse_manifest(write(tmp_path, GOOD))
    assert m.name == "demo" and m.io_model is IoModel.EVENT_LOOP
    assert m.requires[0].min_version == "3.0"
    assert m.param_defaults() == {
        "workers": "{{server_core_count}}",
        "mode": "fast",
        "heap": "64M",
        "verbose": "false",
        "user": "www-data",
        "backlog": "511",
    }
    assert m.build and m.build.inputs == ("*.py",)
    assert m.processes[0].ready_tcp == "{{port}}"
    assert m.ready.timeout_s == 5.0
    assert check_stack(m).available


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            GOOD.replace('language = "python"', 'language = "python"\nlanguag = "x"'),
            r"key 'languag': unknown key \(allowed: build, description, io_model, language, name, ",
        ),
        (
            GOOD.replace('"event-loop"', '"callbacks"'),
            "key 'io_model': 'callbacks' is not one of: process-per-request, process-pool",
        ),
        (GOOD.replace('name = "demo"', 'name = "other"'), "must equal the folder name"),
        (
            GOOD.replace('workloads = ["hello"]', 'workloads = "hello"'),
            "key 'workloads': expected a non-empty list of strings, got 'hello'",
        ),
        (
            GOOD.replace('workloads = ["hello"]', 'workloads = ["hello", "helo"]'),
            "key 'workloads': unknown workload 'helo'",
        ),
        (GOOD.replace('role = "server"\n', ""), r"\[\[process\]\] #1 key 'role': missing"),
        (
            GOOD.replace('role = "server"', 'rol = "server"'),
            r"\[\[process\]\] #1 key 'rol': unknown",
        ),
        (
            GOOD.replace(
                'command = ["{{cmd.python}}", "-m", "http.server", "{{port}}"]', "command = []"
            ),
            r"\[\[process\]\] #1 key 'command': expected a non-empty list of non-empty strings",
        ),
        (
            GOOD.replace('command = ["true"]', "command = []"),
            r"\[build\] key 'command': expected a non-empty list",
        ),
        (
            GOOD.replace('dest = "a.conf"', 'dest = "../../etc/cron.d/x"'),
            r"\[\[template\]\] #1 key 'dest': expected a file name in the stack folder",
        ),
        (
            GOOD.replace("timeout_s = 5", "timeout_s = inf"),
            r"\[ready\] key 'timeout_s': expected a number above 0 and at most 3600, got inf",
        ),
        (
            GOOD.replace('commands = ["python3"]', "commands = []"),
            r"\[\[requires\]\] #1 \('python'\): needs 'commands' or 'check'",
        ),
        ("name = [", "not valid TOML"),
        (
            GOOD.replace('"{{server_core_count}}", help', '"{{server_core_count}}\\n", help'),
            r"\[params.workers\] key 'default': control characters",
        ),
        (
            GOOD.replace('default = "fast"', 'default = "slow"'),
            r"\[params.mode\] key 'default': 'slow' is not allowed for parameter 'mode'; expected "
            "one of: fast, safe",
        ),
        (
            GOOD.replace('values = ["fast", "safe"]', 'values = ["fast", "a b"]'),
            r"\[params.mode\]: value 'a b' may only hold letters",
        ),
        (
            GOOD.replace('values = ["fast", "safe"]', "values = []"),
            r"\[params.mode\] key 'values': expected a non-empty list of strings",
        ),
        (
            GOOD.replace("min = 1, max = 64", "min = 65, max = 64"),
            r"\[params.workers\]: min must not exceed max",
        ),
        (GOOD.replace("min = 1, max = 64", "min = 1"), r"\[params.workers\] key 'max': missing"),
        (
            GOOD.replace("min = 1, max = 64", "min = 1.5, max = 64"),
            r"\[params.workers\] key 'min': expected a whole number",
        ),
        (
            GOOD.replace('type = "int", min = 1, max = 64', 'type = "integer"'),
            r"\[params.workers\] key 'type': 'integer' is not one of: int, enum, size, bool, string",  # noqa: E501 - the message as printed
        ),
        (
            GOOD.replace('default = "64M"', 'default = "64MB"'),
            r"key 'default': '64MB' is not allowed for parameter 'heap'; expected a size like 64M",
        ),
        (GOOD.replace('max = "8G"', 'max = "lots"'), r"\[params.heap\]: min and max must be sizes"),
        (
            GOOD.replace('pattern = "[a-z_][a-z0-9_-]{0,31}"', 'pattern = "[a-z"'),
            r"\[params.user\]: pattern is not a regular expression",
        ),
        (
            GOOD.replace("verbose = {", "port = {"),
            r"\[params\] key 'port': a parameter name is reserved for a variable stackbench sets",
        ),
        (
            GOOD.replace("verbose = {", "Verbose = {"),
            r"\[params\] key 'Verbose': a parameter name must",
        ),
        (
            GOOD.replace("default = false", "default = 1.5"),
            r"\[params.verbose\] key 'default': expected a string or a whole number or true or false",  # noqa: E501 - the message as printed
        ),
    ],
)
def test_bad_manifests_name_file_and_key(tmp_path, bad, message):
    path = write(tmp_path, bad)
    with pytest.raises(InputError, match=message) as err:
        parse_manifest(path)
    assert str(path) in str(err.value)


def test_missing_requirement_is_unavailable_with_hint(tmp_path):
    text = GOOD.replace('commands = ["python3"]', 'commands = ["no-such-binary-xyz"]')
    text = text.replace('min_version = "3.0"', 'hint = "apt-get install xyz"')
    status = check_stack(parse_manifest(write(tmp_path, text)))
    assert not status.available
    assert "no-such-binary-xyz" in status.reason and status.hint == "apt-get install xyz"


def test_too_old_version_is_unavailable(tmp_path):
    text = GOOD.replace('min_version = "3.0"', 'min_version = "99.1"')
    status = check_stack(parse_manifest(write(tmp_path, text)))
    assert not status.available and "older than 99.1" in status.reason


def test_version_tuple():
    assert version_tuple('openjdk version "25.0.3" 2026-04-21') == (25, 0, 3)
    assert version_tuple("v20.20.2") == (20, 20, 2)
    assert version_tuple("none") is None


def test_every_shipped_manifest_parses_and_names_known_workloads():
    found = discover(STACKS_DIR)
    assert found, "no stacks shipped"
    for path in found.values():
        m = parse_manifest(path)
        unknown = set(m.workloads) - set(CATALOG)
        assert not unknown, f"{path}: unknown workloads {unknown}"


def test_jit_warmup_table_and_when_it_applies(tmp_path):
    text = GOOD + '\n[warmup]\nseconds = 4\nwhy = "a JIT"\nunless = { mode = ["safe"] }\n'
    m = parse_manifest(write(tmp_path, text))
    assert m.warmup is not None and m.warmup.seconds == 4 and m.warmup.why == "a JIT"
    assert m.warmup.applies({"mode": "fast"}) and not m.warmup.applies({"mode": "safe"})
    plain = GOOD.replace('name = "demo"', 'name = "plain"')
    assert parse_manifest(write(tmp_path, plain, "plain")).warmup is None


@pytest.mark.parametrize(
    "table, message",
    [
        (
            'seconds = 4\nwhy = "x"\nunless = { colour = ["red"] }',
            r"\[warmup\] key 'unless': 'colour' is not a parameter of this stack",
        ),
        ('seconds = 0\nwhy = "x"', r"seconds"),
        ("seconds = 4", r"why"),
        ('seconds = 4\nwhy = "x"\nhow = 1', r"how"),
    ],
)
def test_bad_warmup_tables_are_refused(tmp_path, table, message):
    with pytest.raises(InputError, match=message):
        parse_manifest(write(tmp_path, GOOD + "\n[warmup]\n" + table + "\n"))


def test_jit_stacks_declare_a_warmup_and_php_skips_it_with_the_jit_off():
    manifests = {name: parse_manifest(path) for name, path in discover(STACKS_DIR).items()}
    assert manifests["java-servlet"].warmup is not None
    assert manifests["node"].warmup is not None
    assert manifests["go-nethttp"].warmup is None  # compiled ahead of time
    php = manifests["php-fpm-nginx"].warmup
    assert php is not None and php.applies({"opcache_jit": "tracing"})
    assert not php.applies({"opcache_jit": "off"}) and not php.applies({"opcache_jit": "disable"})


ALTERNATIVES = (
    GOOD.replace('workloads = ["hello"]', 'workloads = ["hello"]\nports = ["side_port"]')
    + """
[[process]]
role = "side"
when = { mode = ["safe"], verbose = ["yes", "false"] }
command = ["{{cmd.python}}", "{{side_port}}"]
ready_tcp = "127.0.0.1:{{side_port}}"
"""
)


def test_extra_ports_and_alternative_processes_parse(tmp_path):
    m = parse_manifest(write(tmp_path, ALTERNATIVES))
    assert m.ports == ("side_port",)
    server, side = m.processes
    assert server.when == {}
    # Written as the resolved parameters are: a bool as on/off.
    assert side.when == {"mode": ("safe",), "verbose": ("on", "off")}
    assert server.starts_with({"mode": "fast"})
    assert side.starts_with({"mode": "safe", "verbose": "off"})
    assert not side.starts_with({"mode": "fast", "verbose": "off"})
    assert not side.starts_with({"mode": "safe"})  # a parameter missing is not a match
    plain = GOOD.replace('name = "demo"', 'name = "plain"')
    assert parse_manifest(write(tmp_path, plain, "plain")).ports == ()


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            'ports = ["side_port"]',
            'ports = ["side"]',
            r"key 'ports' #1 \('side'\): a port name .* "
            r"ending in '_port'",
        ),
        ('ports = ["side_port"]', 'ports = ["Side_port"]', r"key 'ports' #1 .*: a port name"),
        (
            'ports = ["side_port"]',
            'ports = ["db_port"]',
            r"key 'ports' #1 \('db_port'\): the name is already a variable stackbench sets",
        ),
        (
            'ports = ["side_port"]',
            'ports = ["side_port", "side_port"]',
            r"key 'ports' #2 \('side_port'\): listed twice",
        ),
        ('ports = ["side_port"]', 'ports = "side_port"', r"key 'ports': expected"),
        (
            'ports = ["side_port"]',
            f"ports = {[f'p{i}_port' for i in range(17)]}",
            r"key 'ports': 17 names; a stack may ask for at most 16 extra ports",
        ),
        (
            'when = { mode = ["safe"], verbose = ["yes", "false"] }',
            'when = { colour = ["red"] }',
            r"\[\[process\]\] #2 \('side'\) key 'when': 'colour' is not a parameter of this stack "
            r"\(parameters: workers, mode, heap, verbose, user, backlog\)",
        ),
        (
            'when = { mode = ["safe"], verbose = ["yes", "false"] }',
            'when = { mode = ["slow"] }',
            r"\[\[process\]\] #2 \('side'\) key 'when.mode': 'slow' is not allowed for parameter "
            r"'mode'; expected one of: fast, safe",
        ),
        (
            'when = { mode = ["safe"], verbose = ["yes", "false"] }',
            "when = { mode = [] }",
            r"\[\[process\]\] #2 key 'when'",
        ),
    ],
)
def test_bad_ports_and_when_keys_name_file_and_key(tmp_path, old, new, message):
    assert old in ALTERNATIVES
    path = write(tmp_path, ALTERNATIVES.replace(old, new))
    with pytest.raises(InputError, match=message) as err:
        parse_manifest(path)
    assert str(path) in str(err.value)


def test_a_port_name_may_not_be_a_parameter_of_the_stack(tmp_path):
    text = ALTERNATIVES.replace("backlog = {", "side_port = {")
    with pytest.raises(InputError, match=r"'side_port'\): the name is already a parameter"):
        parse_manifest(write(tmp_path, text))


def test_node_nginx_runs_node_on_a_socket_or_a_tcp_port_by_upstream():
    m = parse_manifest(STACKS_DIR / "node-nginx" / "stack.toml")
    assert m.ports == ("node_port",)
    assert m.param_defaults()["upstream"] == "unix"
    for upstream in ("unix", "tcp"):
        (node,) = [
            p for p in m.processes if p.role == "node" and p.starts_with({"upstream": upstream})
        ]
        assert (node.ready_unix is not None) == (upstream == "unix")
        assert (node.ready_tcp == "127.0.0.1:{{node_port}}") == (upstream == "tcp")
        assert [p.role for p in m.processes if p.starts_with({"upstream": upstream})] == [
            "node",
            "nginx",
        ]


def test_php_fpm_nginx_listens_on_a_socket_or_a_tcp_port_by_fastcgi():
    m = parse_manifest(STACKS_DIR / "php-fpm-nginx" / "stack.toml")
    assert m.ports == ("fpm_port",)
    assert m.param_defaults()["fastcgi"] == "unix"
    for fastcgi in ("unix", "tcp"):
        (fpm,) = [
            p for p in m.processes if p.role == "php-fpm" and p.starts_with({"fastcgi": fastcgi})
        ]
        assert (fpm.ready_unix is not None) == (fastcgi == "unix")
        assert (fpm.ready_tcp == "127.0.0.1:{{fpm_port}}") == (fastcgi == "tcp")
        assert fpm.command[-1] == (
            fpm.ready_unix or fpm.ready_tcp
        )  # where start-php-fpm.sh listens
        assert [p.role for p in m.processes if p.starts_with({"fastcgi": fastcgi})] == [
            "php-fpm",
            "nginx",
        ]
