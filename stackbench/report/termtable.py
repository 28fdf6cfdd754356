"""Terminal output that fits the console (80 columns included) and never loses a word.

Every cell is a rich.text.Text, never a markup string: data such as `[epoll]` or a flag in
square brackets is printed as it is. Tables fit the width this way, in order:

1. long text columns (descriptions, reasons, advice) wrap at spaces; a word longer than its
   column folds onto the next line instead of being cut (overflow="fold" everywhere);
2. if the narrowest layout (each column at its longest word, or its longest line when it does
   not wrap) is still wider than the console, the table drops columns in the order each table
   declares (`Col.drop`: 1 first, then 2, ...), and says below the table which ones it hid.
   Columns with drop=0 (names, warnings, advice) are never dropped; a droppable column with
   nothing in it (every cell '–', e.g. intervals of a single repetition) is left out.

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
    drop: int = 0  # 0: never dropped; else dropped in increasing order when too wide
    wrap: bool = False  # long text: wraps at spaces
    min_width: int = MIN_TEXT_WIDTH  # of a wrapping column: narrower, drop other columns first


Cell = str | Text


def make_console(
    no_color: bool = False, stderr: bool = False, file: IO[str] | None = None
) -> Console:
    """The CLI's console. Rich itself turns colour and cursor movement off when the output is
    not a terminal, reads NO_COLOR and takes its width from the terminal or COLUMNS."""
    env_no_color = os.environ.get("NO_COLOR", "") != ""
    return Console(
        no_color=True if no_color or env_no_color else None,
        highlight=False,
        stderr=stderr,
        file=file,
    )


def text(value: Cell, style: str = "") -> Text:
    """A cell as literal text (square brackets included), optionally styled."""
    if isinstance(value, Text):
        return value
    return Text(value, style=style)


EMPTY = "–"  # a figure not measured (analysis.fmt.MISSING)
SEPARATOR = 2  # between two columns: right padding and the (blank) rule; no outer edge


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _lines(col: Col, cells: Sequence[Cell]) -> list[str]:
    return [line for c in cells for line in _plain(c).splitlines()] + [col.header]


def column_min_width(col: Col, cells: Sequence[Cell]) -> int:
    """The narrowest this column can be without cutting anything: its longest line when it
    does not wrap, else its longest word (at least col.min_width)."""
    lines = _lines(col, cells)
    if not col.wrap:
        return max(cell_len(line) for line in lines)
    words = [w for line in lines for w in line.split()]
    return max([col.min_width, *(cell_len(w) for w in words)])


def column_natural_width(col: Col, cells: Sequence[Cell]) -> int:
    return max(cell_len(line) for line in _lines(col, cells))


def narrowest(cols: Sequence[Col], rows: Sequence[Sequence[Cell]], keep: Sequence[int]) -> int:
    widths = [column_min_width(cols[i], [row[i] for row in rows]) for i in keep]
    return sum(widths) + SEPARATOR * (len(widths) - 1)


def column_widths(
    cols: Sequence[Col], rows: Sequence[Sequence[Cell]], keep: Sequence[int], width: int
) -> list[int]:
    """Every kept column's width, summing (with separators) to at most `width` when possible:
    natural widths if they fit; else each column at its minimum and the spare room shared
    among the wrapping columns in proportion to what they lack; else (a very narrow console)
    the widest columns narrowed first, their words folding. The widths are given to
    Rich as they are: its own shrinking can render a cell wider than its column, then crop."""
    mins = [column_min_width(cols[i], [row[i] for row in rows]) for i in keep]
    naturals = [column_natural_width(cols[i], [row[i] for row in rows]) for i in keep]
    room = width - SEPARATOR * (len(keep) - 1)
    if sum(naturals) <= room:
        return naturals
    if sum(mins) <= room:
        spare = room - sum(mins)
        lacking = [n - m for n, m in zip(naturals, mins, strict=True)]
        total = sum(lacking) or 1
        return [m + spare * lack // total for m, lack in zip(mins, lacking, strict=True)]
    widths = list(mins)
    while sum(widths) > room and max(widths) > 1:  # narrow the widest first: short columns
        widths[widths.index(max(widths))] -= 1  # (numbers, names) stay readable
    return widths


def _build(
    title: str,
    cols: Sequence[Col],
    rows: Sequence[Sequence[Cell]],
    keep: Sequence[int],
    row_styles: Sequence[str],
    widths: Sequence[int],
) -> Table:
    table = Table(
        title=Text(title, style="bold") if title else None,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        header_style="bold",
    )
    for i, w in zip(keep, widths, strict=True):
        c = cols[i]
        # A column narrower than its minimum (a very narrow console) must wrap, never crop.
        no_wrap = not c.wrap and w >= column_min_width(c, [row[i] for row in rows])
        table.add_column(
            Text(c.header), justify=c.justify, overflow="fold", no_wrap=no_wrap, width=w
        )
    for row, style in zip(rows, row_styles, strict=True):
        table.add_row(*(text(row[i]) for i in keep), style=style or None)
    return table


@dataclass(frozen=True)
class Fitted:
    table: Table
    hidden: list[str]  # headers of the columns dropped to fit
    widths: list[int]  # of the kept columns


def fit_table(
    console: Console,
    title: str,
    cols: Sequence[Col],
    rows: Sequence[Sequence[Cell]],
    row_styles: Sequence[str] | None = None,
    width: int | None = None,
) -> Fitted:
    """The table with as many columns as fit in `width` (default: the console's)."""
    width = width or console.width
    styles = list(row_styles) if row_styles is not None else [""] * len(rows)
    # A droppable column with nothing in it (every cell '–') is left out: no word is lost.
    keep = [
        i
        for i, c in enumerate(cols)
        if not (c.drop > 0 and rows and all(_plain(r[i]) in ("", EMPTY) for r in rows))
    ]
    droppable = sorted((c.drop, i) for i, c in enumerate(cols) if c.drop > 0 and i in keep)
    hidden: list[str] = []
    while narrowest(cols, rows, keep) > width and droppable:
        _, index = droppable.pop(0)
        keep.remove(index)
        hidden.append(cols[index].header)
    widths = column_widths(cols, rows, keep, width)
    return Fitted(_build(title, cols, rows, keep, styles, widths), hidden, widths)


def print_table(
    console: Console,
    title: str,
    cols: Sequence[Col],
    rows: Sequence[Sequence[Cell]],
    row_styles: Sequence[str] | None = None,
) -> None:
    fitted = fit_table(console, title, cols, rows, row_styles)
    console.print(fitted.table)
    if fitted.hidden:
        print_wrapped(
            console,
            f"(hidden to fit {console.width} columns: "
            f"{', '.join(fitted.hidden)}; widen the terminal or open the HTML "
            "report)",
            indent=1,
            style="dim",
        )


def print_wrapped(
    console: Console,
    body: str,
    first: str = "",
    indent: int = 4,
    style: str = "",
    first_style: str = "bold",
) -> None:
    """`first` then `body`, wrapped at spaces to the console width with a hanging indent; a
    word longer than a line is split, never cut."""
    lines = textwrap.wrap(
        body,
        width=console.width,
        initial_indent=" " * cell_len(first),
        subsequent_indent=" " * indent,
        break_on_hyphens=False,
    ) or [""]
    for i, line in enumerate(lines):
        out = Text()  # spans, not a base style: the style of `first` must not spread
        if i == 0:
            out.append(first, style=first_style)
        out.append(line[cell_len(first) :] if i == 0 else line, style=style)
        console.print(out, no_wrap=True, overflow="fold")


def print_notes(console: Console, notes: Sequence[tuple[str, str]], style: str = "") -> None:
    """Numbered notes under a table ('[1] loader-bound ...'), wrapped, hanging indent."""
    for mark, body in notes:
        print_wrapped(console, body, f"  {mark} ", indent=len(mark) + 3, style=style)


def print_commands(
    console: Console, heading: str, groups: Sequence[tuple[str, Sequence[str]]]
) -> None:
    """Commands to copy, after a table: `heading`, then per group a comment line naming it and
    its commands one a line. Never wrapped here (a long one runs past the edge; the terminal
    folds it without breaking the copy). Nothing at all when there are no groups."""
    if not groups:
        return
    console.print()
    console.print(Text(heading, style="bold"))
    for name, commands in groups:
        console.print(Text(f"# {name}", style="dim"), soft_wrap=True)
        for command in commands:
            console.print(Text(command), soft_wrap=True)
