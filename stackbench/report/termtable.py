"""Terminal output that fits the console (80 columns included) and never loses a word.

Every cell is a rich.text.Text, never a markup string: data such as `[epoll]` or a flag in
square brackets is printed as it is. Tables fit the width this way, in order:

1. long text columns (descriptions, reasons, advice) wrap at spaces; a word longer than its
   column folds onto the next line instead of being cut (overflow="fold" everywhere);
2. if the narrowest layout (each column at its longest word, or its longest line when it does
   not wrap) is still wider than the console, the table drops columns in the order each table
   declares (`Col.drop`: 1 first, then 2, ...), and says below the table which ones it hid.
   Columns with drop=0 (names, warnings, advice) are never dropped.

`make_console` is the one place that decides colour: --no-color, the NO_COLOR environment
variable (https://no-color.org) and a console that is not a terminal all give plain text.
"""

import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

Justify = Literal["left", "right", "center"]
MIN_TEXT_WIDTH = 16  # a wrapping text column narrower than this reads one word per line


@dataclass(frozen=True)
class Col:
    header: str
    justify: Justify = "left"
    drop: int = 0           # 0: never dropped; else dropped in increasing order when too wide
    wrap: bool = False      # long text: wraps at spaces
    min_width: int = MIN_TEXT_WIDTH  # of a wrapping column: narrower, drop other columns first


Cell = str | Text


def make_console(no_color: bool = False, stderr: bool = False,
                 file: IO[str] | None = None) -> Console:
    """The CLI's console. Rich itself turns colour and cursor movement off when the output is
    not a terminal, reads NO_COLOR and takes its width from the terminal or COLUMNS."""
    env_no_color = os.environ.get("NO_COLOR", "") != ""
    return Console(no_color=True if no_color or env_no_color else None, highlight=False,
                   stderr=stderr, file=file)


def text(value: Cell, style: str = "") -> Text:
    """A cell as literal text (square brackets included), optionally styled."""
    if isinstance(value, Text):
        return value
    return Text(value, style=style)


def _build(title: str, cols: Sequence[Col], rows: Sequence[Sequence[Cell]],
           keep: Sequence[int], row_styles: Sequence[str]) -> Table:
    table = Table(title=Text(title, style="bold") if title else None, title_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                  header_style="bold")
    for i in keep:
        c = cols[i]
        table.add_column(Text(c.header), justify=c.justify, overflow="fold", no_wrap=not c.wrap,
                         min_width=c.min_width if c.wrap else None)
    for row, style in zip(rows, row_styles, strict=True):
        table.add_row(*(text(row[i]) for i in keep), style=style or None)
    return table


@dataclass(frozen=True)
class Fitted:
    table: Table
    hidden: list[str]  # headers of the columns dropped to fit


SEPARATOR = 2  # between two columns: right padding and the (blank) rule; no outer edge


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def column_min_width(col: Col, cells: Sequence[Cell]) -> int:
    """The narrowest this column can be without cutting anything: its longest line when it
    does not wrap, else its longest word (at least col.min_width)."""
    lines = [line for c in cells for line in _plain(c).splitlines()] + [col.header]
    if not col.wrap:
        return max(cell_len(line) for line in lines)
    words = [w for line in lines for w in line.split()]
    return max([col.min_width, *(cell_len(w) for w in words)])


def narrowest(cols: Sequence[Col], rows: Sequence[Sequence[Cell]], keep: Sequence[int]) -> int:
    widths = [column_min_width(cols[i], [row[i] for row in rows]) for i in keep]
    return sum(widths) + SEPARATOR * (len(widths) - 1)


def fit_table(console: Console, title: str, cols: Sequence[Col], rows: Sequence[Sequence[Cell]],
              row_styles: Sequence[str] | None = None, width: int | None = None) -> Fitted:
    """The table with as many columns as fit in `width` (default: the console's)."""
    width = width or console.width
    styles = list(row_styles) if row_styles is not None else [""] * len(rows)
    keep = list(range(len(cols)))
    droppable = sorted((c.drop, i) for i, c in enumerate(cols) if c.drop > 0)
    hidden: list[str] = []
    while narrowest(cols, rows, keep) > width and droppable:
        _, index = droppable.pop(0)
        keep.remove(index)
        hidden.append(cols[index].header)
    return Fitted(_build(title, cols, rows, keep, styles), hidden)


def print_table(console: Console, title: str, cols: Sequence[Col],
                rows: Sequence[Sequence[Cell]], row_styles: Sequence[str] | None = None) -> None:
    fitted = fit_table(console, title, cols, rows, row_styles)
    console.print(fitted.table)
    if fitted.hidden:
        print_wrapped(console, f"(hidden to fit {console.width} columns: "
                      f"{', '.join(fitted.hidden)}; widen the terminal or open the HTML "
                      "report)", indent=1, style="dim")


def print_wrapped(console: Console, body: str, first: str = "", indent: int = 4,
                  style: str = "", first_style: str = "bold") -> None:
    """`first` then `body`, wrapped at spaces to the console width with a hanging indent; a
    word longer than a line is split, never cut."""
    lines = textwrap.wrap(body, width=console.width, initial_indent=" " * cell_len(first),
                          subsequent_indent=" " * indent, break_on_hyphens=False) or [""]
    for i, line in enumerate(lines):
        out = Text(first, style=first_style) if i == 0 else Text()
        out.append(line[cell_len(first):] if i == 0 else line, style=style)
        console.print(out, no_wrap=True, overflow="fold")


def print_notes(console: Console, notes: Sequence[tuple[str, str]], style: str = "") -> None:
    """Numbered notes under a table ('[1] loader-bound ...'), wrapped, hanging indent."""
    for mark, body in notes:
        print_wrapped(console, body, f"  {mark} ", indent=len(mark) + 3, style=style)
