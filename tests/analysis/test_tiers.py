"""Tiers: by hand on the cases a reader meets, then as properties over any set of verdicts."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from stackbench.analysis.tiers import LINE_WIDTH, closure, ratio_range, tier_line, tiers

BOUNDED = settings(max_examples=200, deadline=None)


def _line(n, better, names=None, marks=None, values=None, width=LINE_WIDTH):
    t = tiers(n, better)
    names = names or [chr(ord("a") + i) for i in range(n)]
    values = values or [float(2 ** (n - i)) for i in range(n)]
    return t, tier_line(
        t,
        names,
        lambda i, j: (marks or {}).get((i, j), "?"),
        lambda i, j: values[i] / values[j],
        width,
    )


def test_the_issue_example():
    # go-nethttp ? node (undecided), both shown faster than php-fpm-nginx
    t, line = _line(
        3,
        [(0, 2), (1, 2)],
        ["go-nethttp", "node", "php-fpm-nginx"],
        values=[7100.0, 6600.0, 1000.0],
    )
    assert t.groups == ((0, 1), (2,))
    assert line == "go-nethttp ? node  »  php-fpm-nginx (6.6–7.1×)"


def test_a_chain_separates_what_no_direct_verdict_does():
    # a > b and b > c decided, a ? c undecided (a was noisy): the chain separates a and c
    t, line = _line(3, [(0, 1), (1, 2)], values=[4.0, 2.0, 1.0])
    assert t.groups == ((0,), (1,), (2,))
    assert line == "a  »  b (2.0×)  »  c (2.0×)"


def test_equivalent_and_within_the_threshold_keep_their_marks():
    marks = {(0, 1): "≈", (1, 2): "≳"}
    t, line = _line(3, [], marks=marks)
    assert t.groups == ((0, 1, 2),)
    assert line == "a ≈ b ≳ c"


def test_overlapping_tiers_say_the_separated_pair_in_brackets():
    # a > c decided, b undecided against both: b sits in both tiers, no '»' can be drawn
    t, line = _line(3, [(0, 2)])
    assert t.groups == ((0, 1), (1, 2))
    assert line == "a ? b ? c [a > c]"
    t, line = _line(4, [(0, 2), (0, 3), (1, 3), (2, 3)], values=[8.0, 6.0, 4.0, 1.0])
    assert t.groups == ((0, 1), (1, 2), (3,))
    assert line == "a ? b ? c [a > c]  »  d (4.0–8.0×)"


def test_a_line_too_long_gives_up_spacing_ratios_then_names():
    names = [f"stack-{i:04d}" for i in range(8)]  # 10 characters each
    better = [(i, j) for i in range(8) for j in range(i + 1, 8) if j // 2 != i // 2]
    t, line = _line(8, better, names, values=[float(100 - i) for i in range(8)])
    assert t.groups == ((0, 1), (2, 3), (4, 5), (6, 7))
    # bare, 4 tiers 'x ? y' of 23 and 3 ' » ' make 101; each shortened tier 'x +1' saves 10:
    # three of them, from the last back, bring it to 71
    assert line == "stack-0000 ? stack-0001 » stack-0002 +1 » stack-0004 +1 » stack-0006 +1"
    # with nothing left to give, it is cut short, never longer than the width
    t, line = _line(3, [(0, 1), (1, 2)], ["x" * 50, "y" * 50, "z" * 50])
    assert line == "x" * 50 + " » " + "y" * 26 + "…"


def test_ratio_range_reads_one_figure_when_both_ends_agree():
    assert ratio_range([6.62, 7.08]) == "(6.6–7.1×)"
    assert ratio_range([7.01, 6.98]) == "(7.0×)"
    assert ratio_range([1.031, 1.049]) == "(1.03–1.05×)"
    assert ratio_range([12.2, 14.9]) == "(12–15×)"


def test_no_stack_and_one_stack():
    assert _line(0, [])[1] == ""
    t, line = _line(1, [])
    assert t.groups == ((0,),) and line == "a"


# --- properties ------------------------------------------------------------------------------
@st.composite
def verdicts(draw, max_size=9):
    """n stacks and any set of decided pairs (i better than j), consistent with an order or
    not: the properties hold whatever the verdicts say."""
    n = draw(st.integers(1, max_size))
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    better = draw(st.lists(st.sampled_from(pairs), max_size=len(pairs))) if pairs else []
    return n, better


def _chained(n, better):
    """Separated by a decided verdict or a chain of them, computed apart (breadth first)."""
    reach = {i: set() for i in range(n)}
    for i in range(n):
        frontier = [i]
        while frontier:
            k = frontier.pop()
            for a, b in better:
                if a == k and b not in reach[i]:
                    reach[i].add(b)
                    frontier.append(b)
    return lambda i, j: j in reach[i] or i in reach[j]


@BOUNDED
@given(verdicts())
def test_a_tier_never_holds_two_stacks_the_verdicts_call_different(case):
    n, better = case
    t = tiers(n, better)
    for group in t.groups:
        for i, j in itertools.combinations(group, 2):
            assert (i, j) not in better and (j, i) not in better
            assert not _chained(n, better)(i, j)


@BOUNDED
@given(verdicts())
def test_stacks_in_different_tiers_are_separated_directly_or_by_a_chain(case):
    n, better = case
    t = tiers(n, better)
    apart = _chained(n, better)
    for i, j in itertools.combinations(range(n), 2):
        if not any(i in g and j in g for g in t.groups):
            assert apart(i, j)


@BOUNDED
@given(verdicts())
def test_every_stack_has_a_tier_and_no_tier_is_inside_another(case):
    n, better = case
    t = tiers(n, better)
    assert set().union(*map(set, t.groups)) == set(range(n))
    for g, h in itertools.permutations(t.groups, 2):
        assert not set(g) <= set(h)


@BOUNDED
@given(verdicts(max_size=6))
def test_closure_is_transitive(case):
    n, better = case
    reach = closure(n, better)
    for i, j, k in itertools.product(range(n), repeat=3):
        if reach[i][j] and reach[j][k] and i != k:
            assert reach[i][k]


NAMES = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz-"), min_size=1, max_size=20)


@BOUNDED
@given(verdicts(max_size=12), st.lists(NAMES, min_size=12, max_size=12, unique=True))
def test_the_line_fits_80_characters_and_every_cut_is_a_separation(case, names):
    n, better = case
    t = tiers(n, better)
    values = [float(100 - i) for i in range(n)]
    line = tier_line(t, names[:n], lambda i, j: "?", lambda i, j: values[i] / values[j])
    assert len(line) <= LINE_WIDTH
    assert "\n" not in line
    assert line.startswith(names[0][: LINE_WIDTH - 1])
    apart = _chained(n, better)
    for k in range(n - 1):
        if t.cut_after(k):  # the line says '»' here: every pair across it is separated
            assert all(apart(i, j) for i in range(k + 1) for j in range(k + 1, n))
    # a line that did not have to shorten any tier names every stack
    if "+" not in line and "…" not in line:
        assert all(name in line for name in names[:n])
