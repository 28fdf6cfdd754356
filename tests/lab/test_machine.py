from pathlib import Path

import pytest

from stackbench.lab.machine import (
    Check,
    PortSettings,
    Verdict,
    all_checks,
    check_governor,
    check_turbo,
    may_raise_hard_limits,
    nofile_ceiling,
    ports_needed,
    suite_limits,
)


def test_every_machine_check_gives_a_verdict_and_advice_when_not_ok():
    for check in all_checks():
        assert check.verdict in Verdict
        if check.verdict is not Verdict.OK:
            assert check.advice


def test_suite_needing_more_descriptors_than_the_limit_can_reach_names_the_limit():
    ceiling = nofile_ceiling()
    checks = suite_limits(ceiling + 1000, keepalive_off=False)
    (nofile,) = [c for c in checks if c.name == "open files for this suite"]
    assert nofile.verdict is Verdict.FAIL and "ulimit -Hn" in nofile.advice
    assert f"more than RLIMIT_NOFILE can be raised to here ({ceiling:,}" in nofile.hint
    assert nofile.commands == (f"ulimit -Hn {(ceiling + 1000 + 512) * 2}",)
    assert not [
        c
        for c in suite_limits(ceiling - 512, keepalive_off=False)
        if c.name == "open files for this suite"
    ]


def test_the_hard_limit_can_be_raised_only_with_cap_sys_resource():
    # CapEff as /proc/self/status shows it: root's full set, and one without bit 24 (this
    # project's container drops CAP_SYS_RESOURCE)
    assert may_raise_hard_limits("Name:\tx\nCapEff:\t000001ffffffffff\n")
    assert not may_raise_hard_limits("Name:\tx\nCapEff:\t000001fffeffffff\n")
    assert not may_raise_hard_limits("Name:\tx\n")


PORTS = PortSettings(ports=28232, fin_timeout_s=60.0, max_orphans=131072)


def test_ports_held_without_keepalive_count_the_orphans_of_timeouts():
    # 10,000 connections, 3-s timeout: 10,000 open + min(10,000 x 20, 131,072) orphans
    assert ports_needed(10_000, 3.0, PORTS) == 141_072
    assert ports_needed(1_000, 3.0, PORTS) == 21_000
    # a timeout longer than tcp_fin_timeout leaves no orphan per timeout period
    assert ports_needed(20_000, 120.0, PORTS) == 20_000


def test_a_level_that_could_exhaust_the_ports_says_so_in_one_sentence():
    (ports,) = [
        c
        for c in suite_limits(10_000, keepalive_off=True, timeout_s=3.0, sources=1, ports=PORTS)
        if c.name == "ephemeral ports for this suite"
    ]
    assert ports.verdict is Verdict.WARN
    assert ports.hint.startswith(
        "the largest level, 10,000 connections without keep-alive and a 3-s timeout, can hold "
        "up to 141,072 local ports (each timed-out connection keeps its port up to "
        "tcp_fin_timeout, 60 s), more than the 28,232 this machine offers,"
    )
    # the native loader toward loopback spreads over 64 source addresses: enough
    spread = suite_limits(10_000, keepalive_off=True, timeout_s=3.0, sources=64, ports=PORTS)
    assert not [c for c in spread if c.name == "ephemeral ports for this suite"]
    # with keep-alive, no check of ports
    kept = suite_limits(10_000, keepalive_off=False, timeout_s=3.0, sources=1, ports=PORTS)
    assert not [c for c in kept if c.name == "ephemeral ports for this suite"]


def test_every_command_is_a_whole_shell_line():
    """Commands are printed one a line to be pasted: each must stand alone."""
    checks = [*all_checks(), *suite_limits(10**7, keepalive_off=True, ports=PORTS)]
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
    assert not [c for c in suite_limits(4, keepalive_off=False) if c.verdict is Verdict.FAIL]
