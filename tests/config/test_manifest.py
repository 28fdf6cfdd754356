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
workers = { default = "{{server_core_count}}", help = "processes" }

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
    assert m.param_defaults() == {"workers": "{{server_core_count}}"}
    assert m.build and m.build.inputs == ("*.py",)
    assert m.processes[0].ready_tcp == "{{port}}"
    assert m.ready.timeout_s == 5.0
    assert check_stack(m).available


@pytest.mark.parametrize("bad, message", [
    (GOOD.replace('language = "python"', 'language = "python"\nlanguag = "x"'),
     "unknown key 'languag'"),
    (GOOD.replace('"event-loop"', '"callbacks"'), "io_model 'callbacks' is not one of"),
    (GOOD.replace('name = "demo"', 'name = "other"'), "must equal the folder name"),
    (GOOD.replace('workloads = ["hello"]', 'workloads = "hello"'), "key 'workloads'"),
    (GOOD.replace('role = "server"', 'rol = "server"'), "missing key 'role'"),
    ("name = [", "not valid TOML"),
])
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
