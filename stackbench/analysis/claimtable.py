"""The claim table as plain strings: claim, article figure, ours, status, why.

Free of any output format (no Rich, no HTML, no Markdown): the terminal, summary.md and the
HTML report each place these strings themselves (and escape them as their format needs).
"""

from collections.abc import Iterable, Sequence

from stackbench.analysis.claims import ClaimResult, ClaimStatus, Measured, Readiness
from stackbench.config.claims import Figure

HEADER = ("claim", "article", "ours", "status", "why")
READINESS_HEADER = ("claim", "testable here", "why not")
MAX_FIGURES = 8
MISSING = "–"


def claim_rows(
    results: Iterable[ClaimResult], max_figures: int = MAX_FIGURES
) -> list[tuple[str, str, str, str, str]]:
    """One row per claim, in the claims file's order."""
    return [
        (
            claim_text(r),
            format_article(r, max_figures),
            format_ours(r.ours, max_figures),
            r.status.value,
            r.why,
        )
        for r in results
    ]


def readiness_rows(readiness: Iterable[Readiness]) -> list[tuple[str, str, str]]:
    """For --dry-run: which claims this plan can test, and why not the others."""
    return [(r.claim.id, "yes" if r.testable else "no", "; ".join(r.reasons)) for r in readiness]


def status_counts(results: Iterable[ClaimResult]) -> dict[str, int]:
    """Each status ('confirmed', 'refuted', 'not enough evidence', 'untestable') -> how many,
    for a one-line summary."""
    counts = {status.value: 0 for status in ClaimStatus}
    for r in results:
        counts[r.status.value] += 1
    return counts


def claim_text(result: ClaimResult) -> str:
    """'id: what the article says', and the premise we add when the test needs one the
    article does not state."""
    text = f"{result.claim.id}: {result.claim.says}"
    assumes = result.claim.assumes
    return text + (f" (Our assumption, not the article's words: {assumes})" if assumes else "")


def format_article(result: ClaimResult, max_figures: int = MAX_FIGURES) -> str:
    """The article's figures as printed, then the band the test judges ours against (what
    the test checks alone when the article gives no figure)."""
    if not result.article:
        return result.expectation
    figures = _limited([format_figure(f) for f in result.article], max_figures)
    return f"{figures}; tested: {result.expectation}" if result.expectation else figures


def format_figure(figure: Figure) -> str:
    return f"{figure.label} {format_value(figure.value, figure.unit)}"


def format_ours(ours: Sequence[Measured], max_figures: int = MAX_FIGURES) -> str:
    if not ours:
        return MISSING
    return _limited([format_measured(m) for m in ours], max_figures)


def format_measured(m: Measured) -> str:
    if m.value is None:
        return f"{m.label} {'none' if m.unit == 'connections' else MISSING}"
    text = format_value(m.value, m.unit)
    if m.low is not None and m.high is not None and not m.low == m.high == m.value:
        text += (
            f" [{format_value(m.low, m.unit, with_unit=False)}–"
            f"{format_value(m.high, m.unit, with_unit=False)}]"
        )
    return f"{m.label} {text}"


def format_value(value: float, unit: str, with_unit: bool = True) -> str:
    """A figure in its unit: req/s with thousands separators, ratios with two decimals, a
    fraction (an error rate) as a percent."""
    if unit == "×":
        number, suffix = f"{value:.2f}", "×"
    elif unit == "fraction":  # an error rate, 0..1
        number, suffix = _percent(value), ""
    elif unit == "%":
        number, suffix = f"{value:.3g}", "%"
    elif unit in ("req/s", "connections", "requests", "failed requests"):
        number, suffix = _count(value), f" {unit}"
    elif unit in ("ms", "s"):
        number, suffix = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}", f" {unit}"
    elif unit == "% of a core":
        number, suffix = f"{value:.0f}", "% of a core"
    else:
        number, suffix = f"{value:,.4g}", f" {unit}"
    return number + suffix if with_unit else number


def as_text(results: Sequence[ClaimResult], max_figures: int = MAX_FIGURES) -> list[str]:
    """The table as plain lines, one block per claim (columns would be too wide to align)."""
    lines: list[str] = []
    for claim, article, ours, status, why in claim_rows(results, max_figures):
        lines += [
            f"[{status}] {claim}",
            f"    article: {article}",
            f"    ours:    {ours}",
            f"    why:     {why}",
        ]
    counts = status_counts(results)
    lines.append(", ".join(f"{n} {status}" for status, n in counts.items()))
    return lines


def counts_sentence(results: Sequence[ClaimResult]) -> str:
    """'3 confirmed, 1 refuted, 2 not enough evidence, 9 untestable here.' ('' without
    claims)."""
    if not results:
        return ""
    counts = status_counts(results)
    return (
        f"{counts['confirmed']} confirmed, {counts['refuted']} refuted, "
        f"{counts['not enough evidence']} not enough evidence, "
        f"{counts['untestable']} untestable here."
    )


def as_markdown(results: Sequence[ClaimResult]) -> list[str]:
    """The claim table as Markdown lines (cells escaped for a pipe table)."""
    if not results:
        return []
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in claim_rows(results)]
    return lines


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _limited(items: list[str], max_items: int) -> str:
    if len(items) <= max_items:
        return "; ".join(items)
    return "; ".join(items[:max_items]) + f"; … ({len(items) - max_items} more)"


def _count(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:.3g}"


def _percent(fraction: float) -> str:
    if fraction == 0:
        return "0%"
    pct = 100.0 * fraction
    return f"{pct:.2g}%" if pct < 1 else f"{pct:.1f}%"
