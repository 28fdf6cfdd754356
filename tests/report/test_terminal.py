"""The terminal at 80 columns: tables that fit, nothing cut, brackets kept, bars."""

import datetime
import io

import msgspec
import pytest
from rich.console import Console
from rich.text import Text
from synthetic_run import UNAVAILABLE_REASON, add_case, fill, settings, start_run

from stackbench.report.terminal import (
    RunFilter,
    bar_text,
    filter_run,
    level_line,
    level_lines,
    print_run,
    print_runs,
    run_summaries,
)
from stackbench.report.termtable import (
    Col,
    fit_table,
    make_console,
    narrowest,
    print_table,
    print_wrapped,
)
from stackbench.store.records import LevelFlag
from stackbench.store.store import Store


@pytest.fixture(scope="module")
def synthetic():
    store = Store(":memory:")
    run = fill(store)
    yield store, run
    store.close()


def _console(width=80):
    return Console(record=True, width=width, file=io.StringIO(), color_system=None)


def _words(text):
    return text.split()


def test_narrowest_layout_and_drop_order():
    cols = [Col("name"), Col("a", drop=2), Col("b", drop=1), Col("text", wrap=True, min_width=10)]
    rows = [["alpha", "x" * 10, "y" * 10, "short words only here"]]
    # name 5 + a 10 + b 10 + text 10 (min width, longer than any word) + 3 separators of 2
    assert narrowest(cols, rows, [0, 1, 2, 3]) == 5 + 10 + 10 + 10 + 6
    console = _console()
    assert fit_table(console, "", cols, rows, width=41).hidden == []
    assert fit_table(console, "", cols, rows, width=40).hidden == ["b"]
    assert fit_table(console, "", cols, rows, width=20).hidden == ["b", "a"]
    # columns that are never dropped stay even when the table cannot fit: text folds
    assert fit_table(console, "", cols, rows, width=5).hidden == ["b", "a"]
    # a droppable column with nothing in it is left out without a word
    empty = fit_table(console, "", cols, [["alpha", "–", "y", "text"]], width=80)
    assert empty.hidden == [] and len(empty.widths) == 3


ADVICE = "sudo sysctl -w net.ipv4.ip_local_port_range='1024 65535' net.ipv4.tcp_tw_reuse=1 [epoll]"


def test_cells_are_text_not_markup_and_words_are_kept():
    console = _console(60)
    print_table(console, "t", [Col("k"), Col("advice", wrap=True)], [["[bold]x[/]", ADVICE]])
    out = console.export_text()
    assert "[bold]x[/]" in out
    assert max(len(line) for line in out.splitlines()) <= 60
    assert set(_words(ADVICE)) <= set(_words(out))  # wrapped at spaces, every word whole


def test_a_word_wider_than_its_column_folds_instead_of_being_cut():
    console = _console(30)
    print_table(console, "t", [Col("k"), Col("advice", wrap=True)], [["k1", ADVICE]])
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 30
    assert "".join(ADVICE.split()) in "".join(out.split()).replace("k1", "", 1)
    # squeezed below its minimum, even a column that does not wrap folds rather than crops
    console = _console(12)
    print_table(console, "", [Col("name"), Col("value")], [["abcdefghij", "0123456789"]])
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 12
    squeezed = "".join(out.split())
    assert all(ch in squeezed for ch in "abcdefghij0123456789")


def test_wrapped_lines_keep_their_styles_apart():
    out = io.StringIO()
    console = Console(file=out, width=30, force_terminal=True, color_system="standard")
    print_wrapped(console, "body words that wrap onto a second line", "- ", indent=2)
    first, second = out.getvalue().splitlines()
    assert first == "\x1b[1m- \x1b[0mbody words that wrap onto a"  # only the mark is bold
    assert second == "  second line"


def test_bar_text_in_eighths():
    assert bar_text(0.5, 4) == "██  "
    assert bar_text(1 / 16, 2) == "▏ "
    assert bar_text(1.0, 3) == "███"
    assert bar_text(0.0, 2) == "  "
    assert bar_text(7.0, 2) == "██"  # clamped


def test_run_view_fits_80_columns_and_loses_nothing(synthetic):
    store, run = synthetic
    console = _console(80)
    print_run(console, store.load_run(run))
    out = console.export_text()
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    joined = " ".join(_words(out))
    assert " ".join(_words(UNAVAILABLE_REASON)) in joined  # wrapped, brackets and all
    assert "[epoll]" in out
    assert "invalid: error rate 3.0% > 1.0%" in joined
    assert "hidden to fit 80 columns: CPU, p50" in joined  # dropped columns are named
    # the at-a-glance summary ends the output: per workload and figure its tier line, the
    # bars with % of best, and the pairs; the verdicts in words only with verbose
    glance = out[out.index("At a glance") :]
    assert "\ngo-nethttp  »  node (1.98×)  »  php-fpm-nginx (2.6×)\n" in glance
    assert "100%" in glance and "█" in glance
    assert glance.count("p99 latency, at 100 connections") == 2
    assert "node vs php-fpm-nginx  2.56×    2.49–2.64×  > faster" in glance
    assert "shown faster than every other" not in glance


def test_verbose_says_the_verdicts_in_words(synthetic):
    store, run = synthetic
    console = _console(80)
    print_run(console, store.load_run(run), verbose=True)
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 80
    glance = " ".join(_words(out[out.index("At a glance") :]))
    assert "→ go-nethttp is the best, shown faster than every other" in glance


def test_wide_terminal_keeps_every_column(synthetic):
    store, run = synthetic
    console = _console(160)
    print_run(console, store.load_run(run))
    out = console.export_text()
    assert "hidden to fit" not in out
    header = next(line for line in out.splitlines() if line.startswith("stack "))
    assert _words(header) == [
        "stack",
        "conns",
        "req/s",
        "95%",
        "CI",
        "%",
        "best",
        "p50",
        "p99",
        "errors",
        "CPU",
        "notes",
    ]


ARTICLE_COLUMNS = ("time_per_request_all", "p80", "errors")  # the pool/cluster article's


def test_article_columns_join_the_table_when_there_is_room(synthetic):
    store, run = synthetic
    console = _console(200)
    print_run(console, store.load_run(run), ARTICLE_COLUMNS)
    out = console.export_text()
    assert "hidden to fit" not in out
    header = next(line for line in out.splitlines() if line.startswith("stack "))
    assert _words(header) == [
        "stack",
        "conns",
        "req/s",
        "95%",
        "CI",
        "%",
        "best",
        "p50",
        "p99",
        "Tpq",
        "p80",
        "failed",
        "errors",
        "CPU",
        "notes",
    ]
    assert "Tpq: ab's time per request across all concurrent requests" in out  # the legend
    # go-nethttp hello at 25 connections: Tpq = 5 s / completed, about 1 / its req/s in ms
    words = next(
        _words(line) for line in out.splitlines() if _words(line)[:2] == ["go-nethttp", "25"]
    )
    # stack conns req/s CI %best p50 "ms" p99 "ms" Tpq "ms" ...
    assert words[10] == "ms"
    tpq = float(words[9])
    assert tpq == pytest.approx(1000 / float(words[2].replace(",", "")), rel=0.01)


def test_article_columns_fit_80_columns_dropped_last_first(synthetic):
    store, run = synthetic
    console = _console(80)
    print_run(console, store.load_run(run), ARTICLE_COLUMNS)
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 80
    # the table's own optional columns give way first; the article's figures stay
    assert "hidden to fit 80 columns: CPU, p50, 95% CI, % best;" in " ".join(_words(out))
    header = next(line for line in out.splitlines() if line.startswith("stack "))
    assert _words(header) == [
        "stack",
        "conns",
        "req/s",
        "p99",
        "Tpq",
        "p80",
        "failed",
        "errors",
        "notes",
    ]
    # narrower still: the article's columns go from the last named to the first
    console = _console(64)
    print_run(console, store.load_run(run), ARTICLE_COLUMNS)
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 64
    assert "% best, failed" in " ".join(_words(out))
    header = next(line for line in out.splitlines() if line.startswith("stack "))
    assert "Tpq" in header and "failed" not in header


def test_filter_run_by_stack_and_workload(synthetic):
    store, run = synthetic
    data = filter_run(store.load_run(run), ["node"], ["sha256"])
    assert {(c.stack, c.label) for c in data.cases} == {("node", "sha256?n=10")}
    assert {r.case_id for r in data.levels} == {data.cases[0].id}
    with pytest.raises(Exception, match="no case for stack rust"):
        filter_run(store.load_run(run), ["rust"], None)


def test_runs_list_filters(synthetic):
    store, run = synthetic
    other = start_run(store, "quick", run_settings=settings(repeat=1))
    add_case(store, other, "rust-hyper", "hello", status="ok")
    summaries = {s.run.id: s for s in run_summaries(store)}
    assert summaries[run].levels == 3 * 2 * 3 * 5
    assert summaries[other].stacks == ("rust-hyper",)
    for run_filter, expected in (
        (RunFilter(suite="quick"), [other]),
        (RunFilter(stacks=("node",)), [run]),
        (RunFilter(workloads=("sha256",)), [run]),  # a name matches its labels
        (RunFilter(since=datetime.datetime.now() + datetime.timedelta(days=1)), []),
        (RunFilter(until=datetime.datetime.now() + datetime.timedelta(days=1)), [run, other]),
    ):
        console = _console(80)
        print_runs(console, store, run_filter)
        out = console.export_text()
        shown = [int(line.split()[0]) for line in out.splitlines() if line.strip()[:1].isdigit()]
        assert shown == expected, run_filter
        assert max(len(line) for line in out.splitlines()) <= 80


def test_no_color_console(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = io.StringIO()
    console = make_console(no_color=True, file=out)
    console.force_terminal = True  # even on a terminal
    console.print(Text("x", style="red"))
    assert "\x1b[31" not in out.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    assert make_console().no_color


def test_a_finished_level_fits_80_columns_and_keeps_every_figure(synthetic):
    store, run = synthetic
    data = store.load_run(run)
    cases = {c.id: c for c in data.cases}
    worst = msgspec.structs.replace(
        data.levels[0],
        errors={"timeout": 123_456},
        status="invalid",
        level_value=10_000.0,
        flags=(
            LevelFlag.STARVED.detail(
                "a request was still unanswered after 3.0 s at the end (longest "
                "answered: 0.18 s; 300 in flight at the end)"
            ),
            LevelFlag.LOADER_BOUND.alone,
        ),
    )
    rows = [
        *((cases[r.case_id].stack, cases[r.case_id].label, r) for r in data.levels),
        ("php-fpm-nginx-with-a-long-name", "db-html-report?rows=10", worst),
    ]
    for stack, label, row in rows:
        lines = level_lines(stack, label, row, 80, new_case=True)
        assert all(len(line) <= 80 for line in lines), lines
        assert lines[0] == f"{stack} {label}" and lines[1].startswith("  c=")
        assert sorted(" ".join(lines).split()) == sorted(level_line(stack, label, row).split())
        assert level_lines(stack, label, row, 80, new_case=False) == lines[1:]
    one = level_lines("go", "hello", data.levels[0], 80, new_case=True)
    assert len(one) == 2  # a plain level: one line under its case


def test_no_table_splits_a_word_at_80_columns_standalone_timing_included():
    from stackbench.analysis.analysis import analyse
    from stackbench.report import tables
    from stackbench.report.glance import glance, pair_cells
    from stackbench.store.records import ScriptRecord

    store = Store(":memory:")
    run = fill(store)
    for stack in ("node-cluster", "php-apache", "java-virtual-threads"):
        store.add_script(
            ScriptRecord(
                run_id=run,
                stack=stack,
                label="db-html-report?rows=10",
                iterations=1000,
                wall_s=12.3456,
                user_s=10.123,
                sys_s=1.234,
                outcome="not checked (body depends on the database)",
            )
        )
    data = store.load_run(run)
    console = _console(80)
    print_run(console, data)
    out = console.export_text()
    assert max(len(line) for line in out.splitlines()) <= 80
    tokens = set(_words(out))
    a = analyse(data)
    timing = tables.script_timings(a)
    pairs = [pair_cells(p) for g in glance(a) for m in (g.throughput, g.latency) for p in m.shown]
    kept = {"stack", "workload", "per iteration", "output"}  # the rest is hidden, and named
    cells = [c for row in timing.rows for h, c in zip(timing.header, row, strict=True) if h in kept]
    assert len(cells) == 3 * len(kept) and pairs  # three timings' kept cells; the pairs
    for cell in [*cells, *(c for row in pairs for c in row)]:
        assert set(_words(cell)) <= tokens, cell  # every word whole, on one line
    assert "hidden to fit 80 columns: sys, user, iterations, real;" in " ".join(_words(out))
