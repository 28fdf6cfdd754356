"""The reports and exports of a run whose disturbed first measurements were kept, superseded:
results.csv, the BMF export and results.json's levels and workloads are those of the run
without them; the only trace is one finding per superseded measurement (results.json's
findings, summary.md, the terminal), and `stackbench results` counts the standing levels."""

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from synthetic_run import SUPERSEDED_WHY, fill, supersede_some

from stackbench.report import write_all
from stackbench.report.terminal import print_run, run_summaries
from stackbench.store.store import Store

FORMATS = ["csv", "json", "bmf", "md"]


@pytest.fixture(scope="module")
def stores():
    """(the run as stored, the same run with superseded measurements), its id, how many."""
    plain, marked = Store(":memory:"), Store(":memory:")
    run = fill(plain)
    assert fill(marked) == run
    added = supersede_some(marked, run)
    with marked.db:  # the same run, finished at the same time
        marked.db.execute("UPDATE runs SET finished_at = ?", (plain.run(run).finished_at,))
    yield plain, marked, run, added
    plain.close()
    marked.close()


def _written(store: Store, run: int, out: Path) -> dict[str, str]:
    write_all(store.load_run(run), out, FORMATS)
    return {p.name: p.read_text() for p in out.iterdir() if p.is_file()}


def _traced(line: str) -> bool:
    return SUPERSEDED_WHY in line


def test_exports_are_those_of_the_run_without_them_but_one_finding_each(stores, tmp_path):
    plain, marked, run, added = stores
    before = _written(plain, run, tmp_path / "plain")
    after = _written(marked, run, tmp_path / "marked")
    assert after["results.csv"] == before["results.csv"]
    assert after["results.bmf.json"] == before["results.bmf.json"]
    doc_before, doc_after = json.loads(before["results.json"]), json.loads(after["results.json"])
    found_before, found_after = doc_before.pop("findings"), doc_after.pop("findings")
    for doc in (doc_before, doc_after):
        del doc["generated_at"]
    assert doc_after == doc_before
    assert [f for f in found_after if not _traced(f["text"])] == found_before
    assert sum(_traced(f["text"]) for f in found_after) == added
    assert all("superseded" not in level for level in doc_after["levels"])
    md_after = after["summary.md"].splitlines()
    assert [line for line in md_after if not _traced(line)] == before["summary.md"].splitlines()
    assert sum(_traced(line) for line in md_after) == added


def test_the_terminal_says_it_and_the_listing_counts_the_standing_levels(stores):
    plain, marked, run, added = stores

    def printed(store: Store) -> str:
        console = Console(record=True, width=400, file=io.StringIO(), color_system=None)
        print_run(console, store.load_run(run))
        return console.export_text()

    text = printed(marked)
    assert text.count("measured again: the first measurement (") == added - 1
    assert text.count("the run stopped before measuring it again") == 1
    assert [line for line in text.splitlines() if not _traced(line)] == [
        line for line in printed(plain).splitlines() if not _traced(line)
    ]
    assert [s.levels for s in run_summaries(marked)] == [s.levels for s in run_summaries(plain)]
