"""Make the screenshots in docs/img: a report's first screen and an 80-column terminal run.

    python tests/report/screenshots.py report results/run-N/report.html docs/img/report.png
    python tests/report/screenshots.py terminal TYPESCRIPT docs/img/terminal-80.png [AT [TITLE]]

TYPESCRIPT is what `script` recorded of `COLUMNS=80 stackbench run ...` on a terminal. The small
replay below does what a terminal does with Rich's output (new lines, carriage returns, erase
line, cursor up), so the transient progress line disappears as it does on screen; the colours
are kept. AT (0..1, default 1) replays only that share of the recording: the screen mid-run,
live progress line included. Both pictures are taken by headless Chromium, network blocked.
"""

import re
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Route, sync_playwright
from rich.console import Console
from rich.text import Text

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = re.compile(r"(\x1b\[[0-9;?]*[A-Za-z])|(\r?\n)|(\r)|([^\x1b\r\n]+)")


def replay(raw: str) -> list[str]:
    """The lines a terminal would show at the end (SGR colour codes kept in the text)."""
    lines, row, overwrite = [""], 0, False
    for csi, newline, carriage, text in TOKEN.findall(raw):
        if csi:
            if csi.endswith("m"):  # a colour: part of what follows
                lines[row] = csi if overwrite else lines[row] + csi
                overwrite = False
            elif csi.endswith("K"):
                lines[row] = ""
            elif csi.endswith("A"):
                row = max(0, row - int(csi[2:-1] or 1))
        elif newline:
            row += 1
            if row == len(lines):
                lines.append("")
            overwrite = False
        elif carriage:
            overwrite = True
        elif text:
            lines[row] = text if overwrite else lines[row] + text
            overwrite = False
    return lines


def _session(raw: str) -> str:
    """The command's output without the `script` header and footer lines."""
    body = [line for line in replay(raw) if not line.startswith(("Script started", "Script done"))]
    while body and not Text.from_ansi(body[-1]).plain.strip():
        body.pop()
    return "\n".join(body)


def _blocked(route: Route) -> None:
    if route.request.url.startswith("file://"):
        route.continue_()
    else:
        route.abort()


def shoot(url: str, out: Path, width: int, height: int, selector: str | None = None) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.route("**/*", _blocked)
        page.goto(url)
        if selector:
            page.locator(selector).screenshot(path=str(out))
        else:
            page.screenshot(path=str(out))
        browser.close()


def terminal(
    typescript: Path,
    out: Path,
    at: float = 1.0,
    title: str = "COLUMNS=80 stackbench run suites/quick.toml",
    last_lines: int = 72,
) -> None:
    with open(typescript, encoding="utf-8", errors="replace", newline="") as f:  # keep \r
        raw = f.read()
    cut = int(len(raw) * at)
    end_of_frame = raw.find("\r", cut)  # never cut a line of the live display in half
    text = _session(raw[: end_of_frame if at < 1 and end_of_frame > 0 else cut])
    shown = "\n".join(text.splitlines()[-last_lines:])
    console = Console(
        record=True,
        width=80,
        force_terminal=True,
        color_system="truecolor",
        file=open("/dev/null", "w"),  # noqa: SIM115 - recorded, not shown
    )
    console.print(Text.from_ansi(shown), soft_wrap=True)
    svg = console.export_svg(title=title)
    box = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg)
    width, height = (float(box.group(1)), float(box.group(2))) if box else (1000.0, 1400.0)
    page = (
        f'<!DOCTYPE html><html><body style="margin:0;background:#fff">'
        f'<div id="t" style="width:{width}px;height:{height}px">{svg}</div></body></html>'
    )
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "terminal.html"
        html.write_text(page, encoding="utf-8")
        shoot(html.as_uri(), out, int(width) + 20, int(height) + 20, "#t")


def main() -> None:
    kind, source, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    if kind == "report":
        shoot(source.resolve().as_uri(), out, 1280, 1000)
    elif kind == "terminal":
        terminal(source, out, float(sys.argv[4]) if len(sys.argv) > 4 else 1.0, *sys.argv[5:6])
    else:
        raise SystemExit("usage: screenshots.py report|terminal SOURCE OUT.png")


if __name__ == "__main__":
    main()
