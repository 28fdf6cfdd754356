import resource
from pathlib import Path

import pytest

from stackbench.lab.machine import (
    Check,
    Verdict,
    all_checks,
    check_governor,
    check_turbo,
    suite_limits,
)


def test_every_machine_check_gives_a_verdict_and_advice_when_not_ok():
    for check in all_checks():
        assert check.verdict in Verdict
        if check.verdict is not Verdict.OK:
            assert check.advice


def test_suite_needing_more_descriptors_than_the_hard_limit_names_the_limit():
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    checks = suite_limits(hard + 1000, keepalive_off=False, total_requests=None)
    (nofile,) = [c for c in checks if c.name == "open files for this suite"]
    assert nofile.verdict is Verdict.FAIL and "ulimit -Hn" in nofile.advice
    assert nofile.commands == (f"ulimit -Hn {(hard + 1000 + 512) * 2}",)


def test_every_command_is_a_whole_shell_line():
    """Commands are printed one a line to be pasted: each must stand alone."""
    checks = [*all_checks(), *suite_limits(10**7, keepalive_off=True, total_requests=None)]
    for check in checks:
        for command in check.commands:
            assert command == command.strip() and "\n" not in command
            assert not command.startswith("sudo ")  # stackbench runs as root


def test_advice_in_one_line_ends_with_the_commands():
    check = Check("x", Verdict.WARN, "v", "do this", ("a 1", "b 2"))
    assert check.advice == "do this: a 1; b 2"
    assert Check("x", Verdict.WARN, "v", "just words").advice == "just words"


def _sysfs(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content + "\n")
    return root


def test_governor_and_turbo_not_visible_in_a_vm(tmp_path: Path):
    governor = check_governor([0, 1], tmp_path)
    turbo = check_turbo(tmp_path)
    assert governor.verdict is Verdict.OK and governor.value.startswith("not visible here")
    assert turbo.verdict is Verdict.OK and turbo.value.startswith("not visible here")


def test_a_powersave_core_is_named_with_the_fix(tmp_path: Path):
    root = _sysfs(
        tmp_path,
        {
            "cpu0/cpufreq/scaling_governor": "performance",
            "cpu1/cpufreq/scaling_governor": "powersave",
        },
    )
    check = check_governor([0, 1], root)
    assert check.verdict is Verdict.WARN and check.value == "CPU 1 powersave"
    assert "scaling_governor" in check.commands[0]
    root = _sysfs(tmp_path, {"cpu1/cpufreq/scaling_governor": "performance"})
    assert check_governor([0, 1], root).verdict is Verdict.OK


@pytest.mark.parametrize(
    ("files", "verdict", "command"),
    [
        ({"intel_pstate/no_turbo": "0"}, Verdict.WARN, "echo 1 > {root}/intel_pstate/no_turbo"),
        ({"intel_pstate/no_turbo": "1"}, Verdict.OK, None),
        ({"cpufreq/boost": "1"}, Verdict.WARN, "echo 0 > {root}/cpufreq/boost"),
        ({"cpufreq/boost": "0"}, Verdict.OK, None),
        ({"cpufreq/policy0/boost": "1"}, Verdict.WARN, "echo 0 | tee {root}/cpufreq/policy*/boost"),
    ],
)
def test_turbo_where_visible(tmp_path: Path, files, verdict, command):
    check = check_turbo(_sysfs(tmp_path, files))
    assert check.verdict is verdict
    assert check.commands == ((command.format(root=tmp_path),) if command else ())


def test_small_suite_needs_nothing():
    assert not [
        c
        for c in suite_limits(4, keepalive_off=False, total_requests=100)
        if c.verdict is Verdict.FAIL
    ]
