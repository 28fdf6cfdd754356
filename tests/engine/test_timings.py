"""config.plan.timings_due / timings_in: the standalone timings the runner makes, script_timings
in each repetition (it ran once per stack whatever `repeat` said, issue 31), and what each
round adds (what the plan's time counts)."""

from stackbench.config.plan import timings_due, timings_in


def test_one_timing_per_repetition_each_on_its_rounds_fresh_start():
    assert [timings_due(r, 3) for r in range(3)] == [1, 2, 3]
    assert timings_due(None, 3) == 3  # not interleaved: all in the one round
    assert timings_due(None, 1) == 1
    assert timings_due(5, 3) == 3  # rounds added by --until-decided time nothing more


def test_script_timings_a_repetition():
    assert [timings_due(r, 3, 2) for r in range(3)] == [2, 4, 6]
    assert timings_due(None, 3, 2) == 6
    assert timings_due(7, 3, 2) == 6


def test_each_round_adds_its_own_and_a_round_past_repeat_none():
    assert [timings_in(r, 3, 2) for r in range(5)] == [2, 2, 2, 0, 0]
    assert timings_in(None, 3, 2) == 6  # the one round of a run that does not interleave
    # the rounds add up to what is due by the end, whatever the counts
    for repeat in (1, 2, 5):
        for per in (1, 3):
            added = sum(timings_in(r, repeat, per) for r in range(repeat + 2))
            assert added == timings_due(repeat + 1, repeat, per) == repeat * per
