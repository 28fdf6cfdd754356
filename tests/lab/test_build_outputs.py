"""A build that writes beside the sources ([build] outputs, npm's node_modules) is built again
when its cached marker is there but an output is not (a fresh checkout, a deleted folder)."""

import sys
from pathlib import Path

import pytest

from stackbench.config.manifest import parse_manifest
from stackbench.errors import InputError
from stackbench.lab import build

MANIFEST = """
description = "a stack whose build writes beside its sources"
language = "python"
io_model = "event-loop"
workloads = ["hello"]

[[requires]]
name = "python3"
commands = ["{python}"]

[build]
command = [
  "{python}", "-c",
  "import os; os.makedirs('deps', exist_ok=True); open('deps/count', 'a').write('x')",
]
inputs = ["stack.toml"]
outputs = ["deps"]

[[process]]
role = "server"
command = ["{python}", "-c", "pass"]

[ready]
path = "/hello"
"""


def _manifest(folder: Path, outputs: str = '["deps"]') -> Path:
    folder.mkdir(parents=True)
    text = MANIFEST.replace("{python}", sys.executable).replace('["deps"]', outputs)
    (folder / "stack.toml").write_text(text)
    return folder / "stack.toml"


def test_a_missing_output_is_built_again(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STACKBENCH_BUILD_DIR", str(tmp_path / "cache"))
    manifest = parse_manifest(_manifest(tmp_path / "stacks" / "mine"), catalog=False)
    variables = {"build_dir": str(build.build_dir_for(manifest))}
    build.ensure_built(manifest, variables, {})
    build.ensure_built(manifest, variables, {})  # cached: not run again
    deps = manifest.stack_dir / "deps"
    assert (deps / "count").read_text() == "x"
    (deps / "count").unlink()
    deps.rmdir()
    assert build.missing_outputs(manifest) == ["deps"]
    build.ensure_built(manifest, variables, {})
    assert (deps / "count").read_text() == "x" and build.missing_outputs(manifest) == []


@pytest.mark.parametrize("outputs", ['["../../elsewhere"]', '["/tmp/x"]', '[".."]'])
def test_an_output_outside_the_stacks_folder_is_refused(tmp_path, outputs) -> None:
    path = _manifest(tmp_path / "stacks" / "mine", outputs)
    with pytest.raises(InputError, match=r"\[build\] key 'outputs' #1"):
        parse_manifest(path, catalog=False)


def test_the_node_stacks_declare_their_node_modules() -> None:
    root = Path(__file__).resolve().parents[2] / "stacks"
    for name in ("node", "node-cluster", "node-nginx"):
        m = parse_manifest(root / name / "stack.toml")
        assert m.build is not None
        assert [(m.stack_dir / o).resolve() for o in m.build.outputs] == [
            (root / "node" / "node_modules").resolve()
        ]
