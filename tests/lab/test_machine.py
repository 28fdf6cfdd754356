import resource

from stackbench.lab.machine import Verdict, all_checks, suite_limits


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


def test_small_suite_needs_nothing():
    assert not [c for c in suite_limits(4, keepalive_off=False, total_requests=100)
                if c.verdict is Verdict.FAIL]
