"""One colour per stack, the same in the terminal, the HTML bars and the charts."""

from collections.abc import Sequence

PALETTE = ("#2563eb", "#ea580c", "#16a34a", "#dc2626", "#7c3aed", "#0891b2", "#ca8a04",
           "#db2777", "#4b5563", "#65a30d")
OTHER = "#4b5563"


def stack_color(stacks: Sequence[str], stack: str) -> str:
    """The colour of `stack` among the run's stacks (stable: the run's order)."""
    return PALETTE[list(stacks).index(stack) % len(PALETTE)] if stack in stacks else OTHER
