"""The articles' figures in the report's tables: mean, p80, ab's two times per request, MiB/s
and CPU by role, in the detail table (summary.md, report.html) and results.csv/json."""

import csv
import io
import json

import pytest
from synthetic_run import add_case, add_level, settings, start_run

from stackbench.analysis.analysis import analyse
from stackbench.config.claims import COLUMNS, LEVEL_METRICS
from stackbench.report import tables, write_all
from stackbench.store.store import Store
from tests.measured import usage

MIB = 1024 * 1024


def _db_report_run(store: Store) -> int:
    """The db-report article's shape: ab, 20 clients, 2,000 requests in 1.705 s (1,173 req/s),
    21 MiB/s, Node at 80% of a core and MariaDB at 16%."""
    run = start_run(
        store, "db", run_settings=settings(driver="ab", repeat=1, levels=[20], duration_s=None)
    )
    case = add_case(store, run, "node", "db-report")
    duration = 2000 / 1173
    add_level(
        store,
        case,
        {
            "level_index": 0,
            "level_value": 20.0,
            "repetition": 0,
            "driver": "ab",
            "mode": "closed",
            "keepalive": "off",
            "started_at": 0.0,
            "duration_s": duration,
            "completed": 2000,
            "ok": 2000,
            "errors": {},
            "requests_per_s": 1173.0,
            "latency_us": {"p50": 16_000.0, "p80": 18_000.0, "mean": 17_000.0, "max": 40_000.0},
            "bytes_read": round(21 * MIB * duration),
            "status": "ok",
            "command": "ab -c 20",
            "usage": {"node": usage(80.0), "mariadb": usage(16.0), "loader": usage(30.0)},
        },
    )
    store.set_case_status(case, "ok")
    store.finish_run(run, "complete")
    return run


@pytest.fixture()
def store():
    s = Store(":memory:")
    yield s
    s.close()


def test_detail_table_has_the_articles_figures(store):
    a = analyse(store.load_run(_db_report_run(store)))
    t = tables.detail(a, a.workloads[0])
    row = dict(zip(t.header, t.rows[0], strict=True))
    assert row["mean"] == "17 ms" and row["p80"] == "18 ms" and row["p90"] == "–"
    assert row["time/req"] == "17.1 ms"  # 20 x 1.705 s / 2,000 (the article: 17)
    assert row["Tpq"] == "0.853 ms"  # 1.705 s / 2,000
    assert row["MiB/s"] == "21"
    assert row["server CPU"] == "80.0%" and row["services CPU"] == "16.0%"
    assert row["CPU by role"] == "node 80%, mariadb 16%"  # the stack first, the loader apart


def test_exports_carry_the_figures(store, tmp_path):
    out = write_all(store.load_run(_db_report_run(store)), tmp_path, formats={"csv", "json"})
    row = next(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert float(row["time_per_request_ms"]) == pytest.approx(20_000 / 1173)
    assert float(row["time_per_request_all_ms"]) == pytest.approx(1000 / 1173)
    assert float(row["transfer_mib_per_s"]) == pytest.approx(21.0, rel=1e-6)
    assert float(row["service_cpu_percent"]) == 16.0 and row["p80_us"] == "18000"
    assert int(row["bytes_read"]) == round(21 * MIB * 2000 / 1173)
    level = json.loads((out / "results.json").read_text())["levels"][0]
    assert level["transfer_mib_per_s"] == pytest.approx(21.0, rel=1e-6)
    assert level["service_cpu_percent"] == 16.0


def test_every_column_a_claims_file_may_name_has_a_renderer():
    assert set(COLUMNS) == set(tables.FIGURES)
    assert set(COLUMNS) <= set(LEVEL_METRICS)  # the claims' own metric names
