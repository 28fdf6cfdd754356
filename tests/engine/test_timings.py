"""engine.runner.timings_due: one standalone timing per repetition (it ran once per stack
whatever `repeat` said, issue 31)."""

from stackbench.engine.runner import timings_due


def test_one_timing_per_repetition_each_on_its_rounds_fresh_start():
    assert [timings_due(r, 3) for r in range(3)] == [1, 2, 3]
    assert timings_due(None, 3) == 3  # not interleaved: all in the one round
    assert timings_due(None, 1) == 1
    assert timings_due(5, 3) == 3  # rounds added by --until-decided time nothing more
