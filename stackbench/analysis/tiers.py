"""Tiers: the stacks the verdicts do not separate, grouped, and said in one line. Pure.

This is the compact letter display used after multiple comparisons (Piepho, "An algorithm for
a letter-based representation of all-pairwise comparisons", J. Comp. Graph. Stat. 2004): two
stacks are *separated* when a decided verdict shows one better than the other, directly or
through a chain of them (a > b and b > c separate a and c). The tiers are the largest groups
of stacks of which no two are separated (the maximal cliques of "not separated"), so:

- a tier never holds two stacks the verdicts call different;
- two stacks that share no tier are separated, directly or through a chain;
- every stack is in a tier; a stack that the verdicts do not place on either side of a
  separated pair sits in both of their tiers (tiers may then overlap: a ? b ? c with a > c).

The line (`tier_line`) names the tiers best first in at most 80 characters:
`go-nethttp ? node  »  php-fpm-nginx (6.6–7.1×)`. `»` stands where every stack before it is
separated from every stack after it, followed by the range of their ratios; between two stacks
of one tier stands the verdict of the first against the second, in the marks of the rankings
(wording.SYMBOL). Pairs of a stretch without `»` that the verdicts separate though they are
not neighbours follow in brackets: `a ? b ? c [a > c]`.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

LINE_WIDTH = 80
CUT = "»"
SEPARATED_MARK = ">"
WORSE_MARK = "<"
ELLIPSIS = "…"
LEGEND = (
    "Tiers, best first: '»' separates tiers (every stack before it is shown better than "
    "every stack after it, by the ratios in parentheses); between two stacks of a tier "
    "stands the verdict of the first against the second: '≈' equivalent, '≳' real but "
    "within the threshold, '?' not enough evidence, '>' faster (p99: shorter). "
    "[a > c]: two stacks of a stretch without '»' that the verdicts separate; "
    "'name +n': n more stacks of its tier."
)


@dataclass(frozen=True)
class Tiers:
    """Stacks 0..size-1 in the order shown (best first) and what the verdicts separate."""

    size: int
    better: frozenset[tuple[int, int]]  # (i, j): i shown better than j, maybe by a chain
    groups: tuple[tuple[int, ...], ...]  # the tiers, each in order, by their first stack

    def apart(self, i: int, j: int) -> bool:
        return (i, j) in self.better or (j, i) in self.better

    def cut_after(self, k: int) -> bool:
        """Every stack up to k is separated from every stack after it."""
        return all(self.apart(i, j) for i in range(k + 1) for j in range(k + 1, self.size))

    @property
    def stretches(self) -> tuple[tuple[int, ...], ...]:
        """The runs of stacks between the cuts (where the line says '»')."""
        cuts = [k + 1 for k in range(self.size - 1) if self.cut_after(k)]
        bounds = [0, *cuts, self.size]
        return tuple(tuple(range(a, b)) for a, b in zip(bounds, bounds[1:], strict=False))

    def inner_apart(self, members: Sequence[int]) -> list[tuple[int, int]]:
        """Separated pairs of one stretch that are not neighbours (said in brackets)."""
        return [(i, j) for i in members for j in members if j > i + 1 and self.apart(i, j)]

    def sign(self, i: int, j: int) -> str:
        """'>' when i is shown better than j, '<' when worse (separated pairs only)."""
        return SEPARATED_MARK if (i, j) in self.better else WORSE_MARK


def closure(size: int, better: Iterable[tuple[int, int]]) -> list[list[bool]]:
    """reach[i][j]: a chain of "i better than j" verdicts leads from i to j (Warshall)."""
    reach = [[False] * size for _ in range(size)]
    for i, j in better:
        if i != j:
            reach[i][j] = True
    for k in range(size):
        for i in range(size):
            if reach[i][k]:
                row_k, row_i = reach[k], reach[i]
                for j in range(size):
                    row_i[j] = row_i[j] or row_k[j]
    return reach


def tiers(size: int, better: Iterable[tuple[int, int]]) -> Tiers:
    """The tiers of `size` stacks given the decided pairs (i, j): "i shown better than j"."""
    reach = closure(size, better)
    chained = frozenset((i, j) for i in range(size) for j in range(size) if reach[i][j])
    together = {
        i: {j for j in range(size) if j != i and not reach[i][j] and not reach[j][i]}
        for i in range(size)
    }
    groups = sorted(tuple(sorted(c)) for c in _maximal_cliques(together))
    return Tiers(size, chained, tuple(groups))


def _maximal_cliques(neighbours: dict[int, set[int]]) -> list[set[int]]:
    """Bron–Kerbosch with a pivot: every maximal clique of the graph, each once."""
    found: list[set[int]] = []

    def extend(clique: set[int], candidates: set[int], excluded: set[int]) -> None:
        if not candidates and not excluded:
            found.append(clique)
            return
        pivot = max(candidates | excluded, key=lambda v: len(neighbours[v] & candidates))
        for v in sorted(candidates - neighbours[pivot]):
            extend(clique | {v}, candidates & neighbours[v], excluded & neighbours[v])
            candidates = candidates - {v}
            excluded = excluded | {v}

    extend(set(), set(neighbours), set())
    return found


# --- the line --------------------------------------------------------------------------------
def times(ratio: float) -> str:
    """A ratio for the line: two decimals below 2 (1.05×), one below 10 (6.6×), else none."""
    if ratio < 2:
        return f"{ratio:.2f}"
    return f"{ratio:.1f}" if ratio < 10 else f"{ratio:.0f}"


def ratio_range(ratios: Sequence[float]) -> str:
    """'(6.6–7.1×)', or '(7.0×)' when both ends read the same."""
    low, high = times(min(ratios)), times(max(ratios))
    return f"({low}×)" if low == high else f"({low}–{high}×)"


@dataclass(frozen=True)
class _Stretch:
    """Stacks between two cuts, their marks, and the separated pairs that are not neighbours."""

    members: tuple[int, ...]
    marks: tuple[str, ...]  # between members[i] and members[i + 1]
    apart: tuple[tuple[int, int], ...]
    ratios: str  # against the stretch before ('' for the first)


def _stretches(
    t: Tiers, mark: Callable[[int, int], str], advantage: Callable[[int, int], float]
) -> list[_Stretch]:
    spans = t.stretches
    out = []
    for n, members in enumerate(spans):
        marks = tuple(
            t.sign(i, i + 1) if t.apart(i, i + 1) else mark(i, i + 1) for i in members[:-1]
        )
        before = spans[n - 1] if n else ()
        ratios = ratio_range([advantage(i, j) for i in before for j in members]) if n else ""
        out.append(_Stretch(members, marks, tuple(t.inner_apart(members)), ratios))
    return out


def _say(
    s: _Stretch,
    names: Sequence[str],
    sign: Callable[[int, int], str],
    short: bool,
    with_ratios: bool,
    with_apart: bool,
) -> str:
    if short and len(s.members) > 1:
        text = f"{names[s.members[0]]} +{len(s.members) - 1}"
    else:
        text = names[s.members[0]]
        for m, i in zip(s.marks, s.members[1:], strict=True):
            text += f" {m} {names[i]}"
        if with_apart and s.apart:
            pairs = ", ".join(f"{names[i]} {sign(i, j)} {names[j]}" for i, j in s.apart)
            text += f" [{pairs}]"
    return text + (f" {s.ratios}" if with_ratios and s.ratios else "")


def tier_line(
    t: Tiers,
    names: Sequence[str],
    mark: Callable[[int, int], str],
    advantage: Callable[[int, int], float],
    width: int = LINE_WIDTH,
) -> str:
    """The tiers in one line of at most `width` characters. `mark(i, i + 1)`: the symbol of
    the verdict of a stack against the next; `advantage(i, j)`: how many times i is better
    than j (i before j; at least 1 where separated). Too long, the line gives up in turn: the
    wide spacing around `»`, the brackets of separated pairs, the ratios, then names the
    first stack of each tier with more than one ('node +2', from the last tier back), and
    at the last cuts itself short with '…'."""
    if t.size == 0:
        return ""
    stretches = _stretches(t, mark, advantage)
    short = [False] * len(stretches)
    for gap, apart, ratios in (
        ("  ", True, True),
        (" ", True, True),
        (" ", False, True),
        (" ", False, False),
    ):
        line = _join(stretches, names, t.sign, short, gap, apart, ratios)
        if len(line) <= width:
            return line
    for k in reversed(range(len(stretches))):
        short[k] = True
        line = _join(stretches, names, t.sign, short, " ", False, False)
        if len(line) <= width:
            return line
    return line[: width - 1] + ELLIPSIS


def _join(
    stretches: Sequence[_Stretch],
    names: Sequence[str],
    sign: Callable[[int, int], str],
    short: Sequence[bool],
    gap: str,
    with_apart: bool,
    with_ratios: bool,
) -> str:
    return f"{gap}{CUT}{gap}".join(
        _say(s, names, sign, brief, with_ratios, with_apart)
        for s, brief in zip(stretches, short, strict=True)
    )
