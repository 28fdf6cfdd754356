"""A suite's `stacks` entry that is a folder: the user's own stack, named by its manifest or
its folder, refused with one message when it is missing, broken or takes a catalog name."""

import re
from pathlib import Path

import pytest
from rich.console import Console

from stackbench.commands.new_stack import RUNTIMES, new_stack
from stackbench.config.manifest import parse_manifest
from stackbench.config.suite import parse_suite
from stackbench.errors import InputError
from stackbench.lab.inventory import load_inventory

QUIET = Console(file=open("/dev/null", "w"))  # noqa: SIM115 - lives as long as the tests


def suite_file(folder: Path, stacks: str) -> Path:
    path = folder / "mine.toml"
    path.write_text(
        f'name = "mine"\ndescription = "d"\nstacks = {stacks}\nworkloads = ["hello"]\n'
        "[load]\nconnections = [5]\nduration_s = 2\n"
    )
    return path


@pytest.mark.parametrize("like", RUNTIMES)
def test_new_stack_writes_a_manifest_that_parses_with_the_folder_name(tmp_path, like) -> None:
    manifest = parse_manifest(new_stack(QUIET, tmp_path / "my-app", like), catalog=False)
    assert manifest.name == "my-app"
    assert manifest.workloads == ("hello",)
    assert manifest.ready.path == "/hello"


def test_new_stack_refuses_a_folder_that_holds_a_stack(tmp_path) -> None:
    new_stack(QUIET, tmp_path / "app", "node")
    with pytest.raises(InputError, match="already holds a stack.toml"):
        new_stack(QUIET, tmp_path / "app", "go")


def test_a_folder_entry_is_read_from_the_suite_files_folder(tmp_path) -> None:
    new_stack(QUIET, tmp_path / "apps" / "svc", "python")
    suite = parse_suite(suite_file(tmp_path, '["./apps/svc", "go-nethttp"]'))
    assert suite.stacks == ("svc", "go-nethttp")
    assert suite.stack_folders == {"svc": (tmp_path / "apps" / "svc").resolve()}
    inventory = load_inventory(own=suite.own_stacks)
    assert inventory["svc"].manifest is not None
    assert inventory["svc"].manifest.stack_dir == (tmp_path / "apps" / "svc").resolve()
    assert "go-nethttp" in inventory  # the catalog is still there


def test_the_manifest_name_wins_over_the_folder_name(tmp_path) -> None:
    manifest = new_stack(QUIET, tmp_path / "checkout", "node")
    manifest.write_text(manifest.read_text().replace('name = "checkout"', 'name = "api-v2"'))
    assert parse_suite(suite_file(tmp_path, '["./checkout"]')).stacks == ("api-v2",)


@pytest.mark.parametrize(
    ("stacks", "message"),
    [
        ('["./nowhere"]', r"'./nowhere' \(.*nowhere\) holds no stack.toml: give the folder"),
        ('["./node"]', r"is named 'node', the name of a catalog stack .*: set another `name`"),
        ('["./a", "a"]', "'a' is listed twice"),
        ('["./Bad Name"]', "the folder name"),
    ],
)
def test_bad_folder_entries_name_the_suite_key_and_the_fix(tmp_path, stacks, message) -> None:
    new_stack(QUIET, tmp_path / "node", "node")  # a folder named like a catalog stack
    new_stack(QUIET, tmp_path / "a", "go")
    (tmp_path / "Bad Name").mkdir()
    template = (tmp_path / "a" / "stack.toml").read_text()
    unnamed = re.sub(r"(?m)^name = .*$", "", template, count=1)
    (tmp_path / "Bad Name" / "stack.toml").write_text(unnamed)
    with pytest.raises(InputError, match=message) as caught:
        parse_suite(suite_file(tmp_path, stacks))
    assert "mine.toml" in str(caught.value) and "key 'stacks'" in str(caught.value)


def test_a_catalog_manifest_must_still_match_its_folder(tmp_path) -> None:
    folder = tmp_path / "stacks" / "x"
    folder.mkdir(parents=True)
    new_stack(QUIET, tmp_path / "y", "node")
    (folder / "stack.toml").write_text((tmp_path / "y" / "stack.toml").read_text())
    with pytest.raises(InputError, match="must equal the folder name 'x'"):
        parse_manifest(folder / "stack.toml")
