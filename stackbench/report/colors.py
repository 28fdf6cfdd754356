"""One look per stack, the same in the terminal, the HTML bars and every chart: a colour from
the Okabe–Ito palette (designed to stay apart for the three kinds of colour-vision deficiency;
tests/report/test_colors.py checks it by simulation), plus a marker and a line style, so that
colour is never the only cue. Stacks take them in the run's order; an eighth stack repeats a
colour but not its marker.

Yellow (#F0E442) is left out of Okabe–Ito's eight: on a white page it is barely visible.
"""

from collections.abc import Sequence
from dataclasses import dataclass

PALETTE = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",
)  # black
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")
LINESTYLES = ("-", "--", "-.", ":")
HATCHES = ("", "//", "..", "\\\\", "xx", "--", "++")
OTHER = "#6b7280"  # a stack that is not among the run's stacks


@dataclass(frozen=True)
class StackStyle:
    color: str
    marker: str
    linestyle: str
    hatch: str  # for bars: a second cue besides the colour


def stack_style(stacks: Sequence[str], stack: str) -> StackStyle:
    """The look of `stack` among the run's stacks (stable: the run's order)."""
    if stack not in stacks:
        return StackStyle(OTHER, "o", "-", "")
    i = list(stacks).index(stack)
    return StackStyle(
        PALETTE[i % len(PALETTE)],
        MARKERS[i % len(MARKERS)],
        LINESTYLES[i % len(LINESTYLES)],
        HATCHES[i % len(HATCHES)],
    )


def stack_color(stacks: Sequence[str], stack: str) -> str:
    """The colour of `stack` among the run's stacks (stable: the run's order)."""
    return stack_style(stacks, stack).color
