"""The program named in a command to copy is one that runs this stackbench."""

from pathlib import Path

from stackbench.commands.invocation import program


def test_the_name_alone_when_path_finds_this_program(tmp_path: Path) -> None:
    exe = tmp_path / "stackbench"
    exe.write_text("")
    assert program(str(exe), on_path=str(exe)) == "stackbench"


def test_the_path_it_was_started_by_when_path_finds_another_or_none(tmp_path: Path) -> None:
    ours, other = tmp_path / "venv" / "stackbench", tmp_path / "stackbench"
    ours.parent.mkdir()
    ours.write_text("")
    other.write_text("")
    assert program(str(ours), on_path=str(other)) == str(ours)
    assert program(".venv/bin/stackbench", on_path="") == ".venv/bin/stackbench"


def test_a_path_with_a_space_is_quoted(tmp_path: Path) -> None:
    assert program("/opt/my tools/stackbench", on_path="") == "'/opt/my tools/stackbench'"


def test_the_name_when_started_as_a_module_or_by_name() -> None:
    assert program("/usr/lib/python3/stackbench/__main__.py", on_path="") == "stackbench"
    assert program("stackbench", on_path="") == "stackbench"
