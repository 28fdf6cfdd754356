"""The self-contained report.html: inline CSS, inline SVG, a few lines of inline JS, no fetches.

`build_html` returns the page and the charts it contains (name -> svg) so they can also be
written as standalone .svg files.
"""

import time
from dataclasses import dataclass, field
from html import escape

from stackbench.analysis import fmt, stats
from stackbench.analysis.analysis import Analysis, CaseView, WorkloadView
from stackbench.analysis.findings import RANKING_LEGEND, Finding, slo_text
from stackbench.report import charts, tables
from stackbench.report.svg import XYChart, render_bars, render_xy
from stackbench.report.tables import TextTable

CSS = """
:root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f9fafb;--accent:#2563eb}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:24px}
header{background:#111827;color:#f9fafb;padding:20px 24px}
header h1{margin:0 0 4px;font-size:22px}header p{margin:0;color:#d1d5db}
h2{margin:36px 0 12px;padding-bottom:6px;border-bottom:2px solid var(--line);font-size:20px}
h3{margin:24px 0 8px;font-size:16px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px;
min-width:150px}
.card b{display:block;font-size:18px}.card span{color:var(--muted);font-size:12px}
nav a{margin-right:14px;color:var(--accent);text-decoration:none}
figure{background:#fff;border:1px solid var(--line);border-radius:8px;margin:16px 0;padding:12px}
figure svg{max-width:100%;height:auto;display:block}
figcaption{color:var(--muted);font-size:12px;margin-top:6px}
.grid{display:flex;flex-wrap:wrap;gap:12px}.grid>figure{margin:0}
table{border-collapse:collapse;margin:8px 0;font-size:13px;background:#fff}
th,td{border-bottom:1px solid var(--line);padding:4px 10px;text-align:right;white-space:nowrap}
th:first-child,td:first-child,table.text th,table.text td{text-align:left}
table.text td{white-space:normal}
th{background:#f3f4f6;font-weight:600}
tbody tr:nth-child(even){background:#fafafa}
.wrap{overflow-x:auto}
ul.findings{list-style:none;padding:0}
ul.findings li{background:#fff;border-left:4px solid #93c5fd;margin:6px 0;padding:6px 10px}
ul.findings li.warn{border-color:#f59e0b}ul.findings li.error{border-color:#dc2626}
.tag{display:inline-block;background:#eef2ff;color:#3730a3;border-radius:4px;padding:0 6px;
font-size:12px;margin-right:6px}
.switch{margin:0 0 6px}.switch button{border:1px solid var(--line);background:#fff;
border-radius:4px;padding:2px 10px;cursor:pointer;font-size:12px}
.switch button.active{background:var(--accent);color:#fff;border-color:var(--accent)}
details{background:#fff;border:1px solid var(--line);border-radius:8px;margin:10px 0;
padding:8px 12px}
summary{cursor:pointer;font-weight:600}
.bad{color:#b91c1c}.muted{color:var(--muted)}
footer{color:var(--muted);font-size:12px;margin:40px 0 20px}
pre{white-space:pre-wrap;font-size:12px;background:#f3f4f6;padding:8px;border-radius:6px}
"""

JS = """
document.querySelectorAll('[data-legend]').forEach(function(item){
  item.addEventListener('click',function(){
    var fig=item.closest('figure'),name=item.getAttribute('data-legend');
    var hide=item.style.opacity!=='0.35';
    fig.querySelectorAll('[data-series]').forEach(function(g){
      if(g.getAttribute('data-series')===name){g.style.display=hide?'none':'';}});
    fig.querySelectorAll('[data-legend]').forEach(function(l){
      if(l.getAttribute('data-legend')===name){l.style.opacity=hide?'0.35':'1';}});
  });
});
document.querySelectorAll('[data-scale]').forEach(function(btn){
  btn.addEventListener('click',function(){
    var fig=btn.closest('figure');
    fig.querySelectorAll('[data-variant]').forEach(function(v){
      v.hidden=v.getAttribute('data-variant')!==btn.getAttribute('data-scale');});
    fig.querySelectorAll('[data-scale]').forEach(function(b){
      b.classList.toggle('active',b===btn);});
  });
});
"""


@dataclass
class _Page:
    """Accumulates the charts while the page is built (names are unique per report)."""

    charts: dict[str, str] = field(default_factory=dict)

    def chart(self, name: str, svg: str) -> str:
        self.charts[fmt.slug(name)] = svg
        return svg


def table_html(t: TextTable, cls: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                   for row in t.rows)
    return (f'<div class="wrap"><table class="{cls}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _figure(page: _Page, name: str, variants: dict[str, XYChart], table: TextTable | None,
            caption: str) -> str:
    """A chart (with linear/log variants behind a switch) and its figures underneath."""
    parts = ["<figure>"]
    if len(variants) > 1:
        buttons = "".join(f'<button type="button" data-scale="{escape(k)}"'
                          f'{" class=active" if i == 0 else ""}>{escape(k)}</button>'
                          for i, k in enumerate(variants))
        parts.append(f'<div class="switch">y axis: {buttons}</div>')
    for i, (variant, chart) in enumerate(variants.items()):
        svg = page.chart(f"{name}-{variant}" if len(variants) > 1 else name, render_xy(chart))
        parts.append(f'<div data-variant="{escape(variant)}"{" hidden" if i else ""}>{svg}</div>')
    if table is not None:
        parts.append(table_html(table))
    parts.append(f"<figcaption>{escape(caption)}</figcaption></figure>")
    return "".join(parts)


def _cards(a: Analysis) -> str:
    run = a.data.run
    items = [(run.status, "run status"), (str(len(a.stacks)), "stacks"),
             (str(len(a.workloads)), "workloads"), (str(a.repeat), "repetitions per level"),
             (str(a.settings.get("mode", "?")) + " loop", a.level_label),
             (slo_text(a), "service level objective")]
    return '<div class="cards">' + "".join(
        f'<div class="card"><b>{escape(v)}</b><span>{escape(k)}</span></div>'
        for v, k in items) + "</div>"


def _glance(a: Analysis) -> str:
    out = ("<h2>At a glance</h2><p class=muted>Highest median throughput of each stack (req/s "
           f"@ {escape(a.level_label)}) over its valid levels.</p>"
           + table_html(tables.at_a_glance(a)))
    if a.slo is not None:
        out += (f"<p class=muted>Highest median throughput within the SLO ({escape(slo_text(a))})"
                ":</p>" + table_html(tables.at_a_glance(a, within_slo=True)))
    return out


def _findings(found: list[Finding], workload: str | None) -> str:
    items = [f for f in found if f.workload == workload]
    if not items:
        return ""
    return '<ul class="findings">' + "".join(
        f'<li class="{escape(f.severity)}">{escape(f.text)}</li>' for f in items) + "</ul>"


CHART_NOTE = ("Dots: each repetition; markers: median (a ring: level not valid, not ranked); "
              "bars: 95% bootstrap CI of the median; line: LOWESS trend. Click a legend entry "
              "to hide or show a stack; hover a point for its figures.")


def _workload_section(page: _Page, a: Analysis, w: WorkloadView, found: list[Finding]) -> str:
    sid = fmt.slug(w.label)
    out = [f'<section id="w-{sid}"><h2>{escape(w.label)}</h2>', _findings(found, w.label)]
    if w.not_measured:
        out.append("<h3>Not measured</h3>" + table_html(tables.not_measured(w), "text"))
    if not w.cases:
        return "".join(out) + "<p class=muted>No levels were measured.</p></section>"
    out.append(_figure(page, f"{sid}-throughput",
                       {"linear": charts.throughput(a, w)},
                       tables.pivot(w, tables.METRICS["req/s"]), "Throughput: " + CHART_NOTE))
    for key in charts.latency_keys(a, w):
        out.append(_figure(page, f"{sid}-{key}",
                           {"linear": charts.latency(a, w, key),
                            "log": charts.latency(a, w, key, log_y=True)},
                           tables.pivot(w, tables.latency_cell(key)),
                           f"{key} latency. – means the driver did not measure it. "
                           + CHART_NOTE))
    out.append(_spectrum_section(page, a, w, sid))
    out.append(_figure(page, f"{sid}-errors", {"linear": charts.error_rate(a, w)},
                       tables.pivot(w, tables.METRICS["error rate"]), "Error rate: failed "
                       "attempts / attempts."))
    out.append(_cpu_section(page, a, w, sid))
    out.append("<details><summary>All figures (medians over repetitions)</summary>"
               + table_html(tables.detail(a, w)) + "</details>")
    out.append(_timeseries_section(page, a, w, sid))
    return "".join(out) + "</section>"


def _spectrum_section(page: _Page, a: Analysis, w: WorkloadView, sid: str) -> str:
    figs = []
    for i, value in enumerate(w.level_values):
        chart = charts.spectrum(a, w, value)
        if chart.series:
            svg = page.chart(f"{sid}-spectrum-{i}", render_xy(chart))
            figs.append(f"<figure>{svg}</figure>")
    if not figs:
        return ""
    return ("<details><summary>Latency percentile spectrum at each level (medians over "
            "repetitions; only the percentiles the driver measured)</summary>"
            + "".join(figs) + "</details>")


def _cpu_section(page: _Page, a: Analysis, w: WorkloadView, sid: str) -> str:
    figs = []
    for c in w.cases:
        chart = charts.cpu_split(a, c)
        if chart.bars and any(b.parts for b in chart.bars):
            svg = page.chart(f"{sid}-cpu-{c.stack}", render_bars(chart))
            figs.append(f"<figure>{svg}</figure>")
    if not figs:
        return ""
    return ("<h3>CPU split per role</h3><p class=muted>Median CPU per role at each level "
            "(100% = one core busy): the stack's own processes, its services and the load "
            "generator.</p><div class=grid>" + "".join(figs) + "</div>")


def _timeseries_section(page: _Page, a: Analysis, w: WorkloadView, sid: str) -> str:
    blocks = []
    for c in w.cases:
        for g in c.aggregates:
            rows = c.rows_at(g.level_index)
            if not any(r.timeseries for r in rows):
                continue
            svg = page.chart(f"{sid}-ts-{c.stack}-{g.level_index}",
                             render_xy(charts.timeseries(a, c, g.level_index)))
            title = (f"{c.stack} @ {fmt.level(g.level_value)} {a.level_label} — "
                     f"{_jitter_text(c, g.level_index)}")
            blocks.append(f"<details><summary>{escape(title)}</summary>"
                          f"<figure>{svg}</figure></details>")
    if not blocks:
        return ""
    return "<h3>Per-second time series</h3>" + "".join(blocks)


def _jitter_text(c: CaseView, level_index: int) -> str:
    parts = []
    for r in c.rows_at(level_index):
        j = stats.jitter(stats.completed_series(r))
        if j is None:
            parts.append(f"rep {r.repetition + 1}: too short for jitter")
        else:
            spread = fmt.ratio(j.max_over_min) if j.max_over_min else f"{j.zero_seconds} stalled s"
            parts.append(f"rep {r.repetition + 1}: CV {j.cv:.1%}, max/min {spread}")
    return "; ".join(parts)


def _run_wide(a: Analysis, found: list[Finding]) -> str:
    out = []
    if a.failed_verifications:
        out.append("<h2 id=verification>Verification failures</h2>" + table_html(TextTable(
            ["stack", "workload", "checked", "failures"],
            [[v.stack, v.workload, str(v.checked), "; ".join(v.failures)]
             for v in a.failed_verifications]), "text"))
    unavailable = {c.stack: c.reason for c in a.data.cases if c.status == "unavailable"}
    if unavailable:
        out.append("<h2 id=unavailable>Unavailable stacks</h2>" + table_html(
            TextTable(["stack", "reason"], [[s, r] for s, r in unavailable.items()]), "text"))
    notes = tables.case_notes(a)
    if notes:
        out.append("<h2 id=notes>Sweep notes</h2>" + table_html(notes, "text"))
    timings = tables.script_timings(a)
    if timings:
        out.append("<h2 id=script>Standalone timing (no HTTP)</h2><p class=muted>The workload's "
                   "code run in one process of each stack's runtime, as the original article "
                   "did before putting a server in front.</p>" + table_html(timings, "text"))
    out.append("<h2 id=environment>Environment</h2>" + table_html(tables.environment(a), "text")
               + "<h3>Settings</h3>" + table_html(tables.settings(a), "text"))
    if a.data.run.suite_text:
        out.append(f"<details><summary>Suite file ({escape(a.data.run.suite_path)})</summary>"
                   f"<pre>{escape(a.data.run.suite_text)}</pre></details>")
    return "".join(out)


def build_html(a: Analysis, found: list[Finding]) -> tuple[str, dict[str, str]]:
    page = _Page()
    run = a.data.run
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.started_at))
    nav = "".join(f'<a href="#w-{fmt.slug(w.label)}">{escape(w.label)}</a>' for w in a.workloads)
    sections = "".join(_workload_section(page, a, w, found) for w in a.workloads)
    body = (f"<header><h1>stackbench — {escape(run.suite_name)} (run {run.id})</h1>"
            f"<p>{escape(started)} · {escape(str(a.data.run.environment.get('cpu_model', '')))}"
            f" · {escape(str(a.data.run.environment.get('hostname', '')))}</p></header>"
            f"<main>{_cards(a)}<nav>{nav}<a href=\"#environment\">environment</a></nav>"
            f"{_glance(a)}"
            f"<h2>Findings</h2>{_findings(found, None) or ''}"
            f"<p class=muted>Per workload below. Figures are medians over repetitions, with the "
            f"95% bootstrap confidence interval in brackets when there are several. "
            f"{escape(RANKING_LEGEND)}</p>"
            f"{sections}{_run_wide(a, found)}"
            f"<footer>Generated by stackbench from the run's SQLite store. Self-contained: "
            f"no external resources.</footer></main>")
    html = (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content=\"width=device-width, initial-scale=1\">"
            f"<title>stackbench run {run.id}: {escape(run.suite_name)}</title>"
            f"<style>{CSS}</style></head><body>{body}<script>{JS}</script></body></html>")
    return html, page.charts
