"""The server's CPU falling while its load holds, with nothing seen taking it (issue 32):
hand-made per-second accounts and series, figures computed by hand."""

from dataclasses import replace

import msgspec
import pytest

from stackbench.config.measured import CoreSetUse
from stackbench.engine.cpu_drop import cpu_drop
from stackbench.engine.judge import Verdict, judge_level
from stackbench.store.records import LevelFlag
from tests.engine.test_judge import measured, result
from tests.measured import account, core_set, second

SERVER = ("server",)


def series(rates: list[float]):
    return tuple(second(i + 1, r) for i, r in enumerate(rates))


# 12 monitor intervals: the first and last are not judged, so 10 are; 3 of them at 0.67
STEADY_CPU = [0.97] * 12
HELD_CPU = [0.97, 0.97, 0.97, 0.67, 0.97, 0.67, 0.97, 0.67, 0.97, 0.97, 0.97, 0.97]
# 12 loader seconds: the first is not judged, so 11 are; 3 of them 30% short
STEADY_RATE = [10_000.0] * 12
HELD_RATE = [10_000, 10_000, 10_000, 7_000, 10_000, 7_000, 10_000, 7_000] + [10_000.0] * 4


def test_a_server_held_back_while_its_load_held_is_found_with_its_figures():
    found = cpu_drop(account(core_set(HELD_CPU)), SERVER, series(HELD_RATE))
    assert found is not None
    assert (found.fall.seconds, found.fall.of) == (3, 10)
    assert found.fall.typical == pytest.approx(0.97)
    assert found.fall.low == pytest.approx(0.67)
    # 3 seconds of 0.30 lost, over 10 seconds of 0.97
    assert found.fall.cpu_lost == pytest.approx(0.9 / 9.7)
    # 3 seconds of 3,000 short, over 11 seconds of 10,000
    assert found.requests_lost == pytest.approx(9_000 / 110_000)
    said = found.sentence()
    assert "core 0 (server) fell from 97% to 67% in 3 of 10 seconds" in said
    assert "lost 8.2% of its responses" in said


def test_a_steady_level_is_not_found():
    assert cpu_drop(account(core_set(STEADY_CPU)), SERVER, series(STEADY_RATE)) is None


def test_a_fall_another_process_explains_is_the_disturbed_rules_not_this_ones():
    other = [0.0, 0.0, 0.0, 0.3, 0.0, 0.3, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0]
    held = core_set(HELD_CPU, other_per_s=other)
    assert cpu_drop(account(held), SERVER, series(HELD_RATE)) is None


def test_counted_steal_explains_a_fall_too():
    steal = [0.0, 0.0, 0.0, 0.25, 0.0, 0.25, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0]
    held = core_set(HELD_CPU, steal_per_s=steal)
    assert cpu_drop(account(held), SERVER, series(HELD_RATE)) is None


def test_less_cpu_for_the_same_responses_harms_no_figure():
    assert cpu_drop(account(core_set(HELD_CPU)), SERVER, series(STEADY_RATE)) is None


def test_fewer_responses_without_a_cpu_fall_is_the_steadiness_rules():
    assert cpu_drop(account(core_set(STEADY_CPU)), SERVER, series(HELD_RATE)) is None


def test_a_server_that_is_not_cpu_bound_waits_by_itself():
    waiting = [x - 0.25 for x in HELD_CPU]  # typical 0.72 < 0.80
    assert cpu_drop(account(core_set(waiting)), SERVER, series(HELD_RATE)) is None


def test_one_short_second_within_the_band_is_noise():
    one = [0.97] * 5 + [0.80] + [0.97] * 6  # 0.17 of 9.7: 1.75%, within 2%
    rate = [10_000.0] * 5 + [8_000.0] + [10_000.0] * 6
    assert cpu_drop(account(core_set(one)), SERVER, series(rate)) is None


def test_only_the_servers_cores_are_judged():
    loader = core_set(HELD_CPU, roles=("loader",), cores=(1,))
    server = core_set(STEADY_CPU)
    assert cpu_drop(account(server, loader), SERVER, series(HELD_RATE)) is None
    found = cpu_drop(
        account(core_set(STEADY_CPU), core_set(HELD_CPU, cores=(1,))), SERVER, series(HELD_RATE)
    )
    assert found is not None and found.cores == (1,)


def test_a_level_without_an_account_or_a_series_is_not_judged():
    assert cpu_drop(None, SERVER, series(HELD_RATE)) is None
    assert cpu_drop(account(core_set(HELD_CPU)), SERVER, None) is None
    assert cpu_drop(account(core_set(HELD_CPU)), SERVER, ()) is None


def _judged(cores: CoreSetUse, rates: list[float]) -> Verdict:
    level = replace(result(), timeseries=series(rates))
    return judge_level(replace(measured(level), account=account(cores)), 0.01)


def test_the_judge_says_a_held_back_level_and_keeps_it_ok():
    verdict = _judged(core_set(HELD_CPU), HELD_RATE)
    assert verdict.status == "ok"
    (flag,) = verdict.flags
    assert flag.kind is LevelFlag.HELD_BACK
    assert flag.text.startswith("held back: the server's share of core 0 (server) fell from 97%")


def test_the_judge_leaves_a_disturbed_fall_to_the_disturbed_rule():
    """13% of the core used by another process over the level: disturbed, not held back."""
    busy = msgspec.structs.replace(core_set(HELD_CPU), other_s=1.56)
    verdict = _judged(busy, HELD_RATE)
    assert [f.kind for f in verdict.flags] == [LevelFlag.DISTURBED]
