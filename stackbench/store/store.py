"""SQLite store: one file per results directory, every level committed as soon as it ends.

DDL lives here and only here. Reports read only from the store (`load_run`), so a report can
be rewritten from any stored run, including an interrupted one.
"""

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackbench.errors import InputError

SCHEMA_VERSION = 1

DDL = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    suite_name TEXT NOT NULL,
    suite_path TEXT NOT NULL,
    suite_text TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    environment_json TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL            -- running | complete | interrupted | failed
);
CREATE TABLE IF NOT EXISTS cases (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    stack TEXT NOT NULL,
    workload TEXT NOT NULL,         -- catalog name, e.g. sha256
    label TEXT NOT NULL,            -- with parameters, e.g. sha256?n=1000
    path TEXT NOT NULL,
    params_json TEXT NOT NULL,      -- stack parameters in force
    status TEXT NOT NULL,           -- pending | ok | failed | unavailable
    reason TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS verifications (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    stack TEXT NOT NULL,
    workload TEXT NOT NULL,
    ok INTEGER NOT NULL,
    checked INTEGER NOT NULL,
    failures_json TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS levels (
    id INTEGER PRIMARY KEY,
    case_id INTEGER NOT NULL REFERENCES cases(id),
    level_index INTEGER NOT NULL,
    level_value REAL NOT NULL,      -- connections (closed loop) or requests/s (open loop)
    repetition INTEGER NOT NULL,
    driver TEXT NOT NULL,
    mode TEXT NOT NULL,
    keepalive TEXT NOT NULL,
    started_at REAL NOT NULL,
    duration_s REAL NOT NULL,
    completed INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    errors_total INTEGER NOT NULL,
    errors_json TEXT NOT NULL,
    requests_per_s REAL NOT NULL,
    latency_json TEXT NOT NULL,     -- microseconds, only what the driver measured
    connect_json TEXT,
    histogram TEXT,                 -- HdrHistogram V2 compressed, base64
    timeseries_json TEXT,
    open_loop_json TEXT,
    loader_user_s REAL,
    loader_sys_s REAL,
    usage_json TEXT NOT NULL,       -- per role: cpu user/sys, rss, threads, ctx switches
    flags_json TEXT NOT NULL,       -- e.g. ["loader-bound", "invalid: error rate 5%"]
    status TEXT NOT NULL,           -- ok | invalid | failed
    command TEXT NOT NULL,
    raw_output TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS levels_case ON levels(case_id);
CREATE TABLE IF NOT EXISTS scripts (  -- standalone timings (no HTTP), see stackbench script
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    stack TEXT NOT NULL,
    label TEXT NOT NULL,
    iterations INTEGER NOT NULL,
    wall_s REAL,
    user_s REAL,
    sys_s REAL,
    outcome TEXT NOT NULL           -- ok / not checked (...) / the error
);
"""


@dataclass(frozen=True)
class RunRow:
    id: int
    suite_name: str
    suite_path: str
    suite_text: str
    settings: dict[str, Any]
    environment: dict[str, Any]
    started_at: float
    finished_at: float | None
    status: str


@dataclass(frozen=True)
class CaseRow:
    id: int
    stack: str
    workload: str
    label: str
    path: str
    params: dict[str, str]
    status: str
    reason: str


@dataclass(frozen=True)
class LevelRow:
    id: int
    case_id: int
    level_index: int
    level_value: float
    repetition: int
    driver: str
    mode: str
    keepalive: str
    duration_s: float
    completed: int
    ok: int
    errors_total: int
    errors: dict[str, int]
    requests_per_s: float
    latency_us: dict[str, float]
    connect_us: dict[str, float] | None
    histogram: str | None
    timeseries: list[dict[str, float]] | None
    open_loop: dict[str, Any] | None
    loader_cpu_s: tuple[float, float] | None
    usage: dict[str, dict[str, float]]
    flags: list[str]
    status: str
    command: str


@dataclass(frozen=True)
class VerificationRow:
    stack: str
    workload: str
    ok: bool
    checked: int
    failures: list[str]


@dataclass(frozen=True)
class ScriptRow:
    stack: str
    label: str
    iterations: int
    wall_s: float | None
    user_s: float | None
    sys_s: float | None
    outcome: str


@dataclass(frozen=True)
class RunData:
    run: RunRow
    cases: list[CaseRow]
    levels: list[LevelRow]
    verifications: list[VerificationRow]
    scripts: list[ScriptRow] = field(default_factory=list)

    def levels_of(self, case_id: int) -> list[LevelRow]:
        return [lv for lv in self.levels if lv.case_id == case_id]


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class Store:
    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.db = sqlite3.connect(str(path), timeout=30)
        self.db.row_factory = sqlite3.Row
        if str(path) != ":memory:":
            # WAL: a reader (stackbench results) never blocks the run that writes.
            self.db.execute("PRAGMA journal_mode=WAL")
        self._migrate()

    def _migrate(self) -> None:
        with self.db:
            self.db.executescript(DDL)
            row = self.db.execute("SELECT version FROM schema_version").fetchone()
            if row is None:
                self.db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            elif row["version"] != SCHEMA_VERSION:
                raise InputError(f"{self.path}: store schema version {row['version']}, this "
                                 f"stackbench reads version {SCHEMA_VERSION}; use another --out")

    def close(self) -> None:
        self.db.close()

    # --- writing -------------------------------------------------------------------------
    def start_run(self, suite_name: str, suite_path: str, suite_text: str,
                  settings: dict[str, Any], environment: dict[str, Any]) -> int:
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs (suite_name, suite_path, suite_text, settings_json, "
                "environment_json, started_at, status) VALUES (?, ?, ?, ?, ?, ?, 'running')",
                (suite_name, suite_path, suite_text, json.dumps(settings),
                 json.dumps(environment), time.time()))
        return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, status: str) -> None:
        with self.db:
            self.db.execute("UPDATE runs SET finished_at = ?, status = ? WHERE id = ?",
                            (time.time(), status, run_id))

    def add_case(self, run_id: int, stack: str, workload: str, label: str, path: str,
                 params: dict[str, str], status: str = "pending", reason: str = "") -> int:
        with self.db:
            cur = self.db.execute(
                "INSERT INTO cases (run_id, stack, workload, label, path, params_json, status, "
                "reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, stack, workload, label, path, json.dumps(params), status, reason))
        return int(cur.lastrowid or 0)

    def set_case_status(self, case_id: int, status: str, reason: str = "") -> None:
        with self.db:
            self.db.execute("UPDATE cases SET status = ?, reason = ? WHERE id = ?",
                            (status, reason, case_id))

    def fail_pending_cases(self, case_ids: Iterable[int], reason: str) -> None:
        """Cases not finished yet fail with `reason`; finished ones keep their status."""
        with self.db:
            self.db.executemany(
                "UPDATE cases SET status = 'failed', reason = ? "
                "WHERE id = ? AND status = 'pending'",
                [(reason, cid) for cid in case_ids])

    def add_verification(self, run_id: int, stack: str, workload: str, ok: bool, checked: int,
                         failures: list[str]) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO verifications (run_id, stack, workload, ok, checked, failures_json, "
                "at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, stack, workload, int(ok), checked, json.dumps(failures), time.time()))

    def add_script(self, run_id: int, stack: str, label: str, iterations: int,
                   times: tuple[float, float, float] | None, outcome: str) -> None:
        wall, user, sys = times if times else (None, None, None)
        with self.db:
            self.db.execute(
                "INSERT INTO scripts (run_id, stack, label, iterations, wall_s, user_s, sys_s, "
                "outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, stack, label, iterations, wall, user, sys, outcome))

    def add_level(self, case_id: int, row: dict[str, Any]) -> int:
        """Insert one finished level and commit at once (an interrupted run keeps it)."""
        cpu = row.get("loader_cpu_s")
        values = {
            "case_id": case_id,
            "level_index": row["level_index"],
            "level_value": row["level_value"],
            "repetition": row["repetition"],
            "driver": row["driver"],
            "mode": row["mode"],
            "keepalive": row["keepalive"],
            "started_at": row["started_at"],
            "duration_s": row["duration_s"],
            "completed": row["completed"],
            "ok": row["ok"],
            "errors_total": sum(row["errors"].values()),
            "errors_json": json.dumps(row["errors"]),
            "requests_per_s": row["requests_per_s"],
            "latency_json": json.dumps(row["latency_us"]),
            "connect_json": _dumps(row.get("connect_us")),
            "histogram": row.get("histogram"),
            "timeseries_json": _dumps(row.get("timeseries")),
            "open_loop_json": _dumps(row.get("open_loop")),
            "loader_user_s": cpu[0] if cpu else None,
            "loader_sys_s": cpu[1] if cpu else None,
            "usage_json": json.dumps(row.get("usage", {})),
            "flags_json": json.dumps(row.get("flags", [])),
            "status": row["status"],
            "command": row.get("command", ""),
            "raw_output": row.get("raw_output", ""),
        }
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        with self.db:
            cur = self.db.execute(f"INSERT INTO levels ({cols}) VALUES ({marks})",
                                  tuple(values.values()))
        return int(cur.lastrowid or 0)

    # --- reading -------------------------------------------------------------------------
    def runs(self) -> list[RunRow]:
        rows = self.db.execute("SELECT * FROM runs ORDER BY id").fetchall()
        return [_run_row(r) for r in rows]

    def resolve_run(self, ref: str) -> int:
        """A run id, or 'last'."""
        if ref == "last":
            row = self.db.execute("SELECT MAX(id) AS id FROM runs").fetchone()
            if row is None or row["id"] is None:
                raise InputError(f"{self.path}: no runs stored yet")
            return int(row["id"])
        if not ref.isdigit():
            raise InputError(f"run '{ref}': give a run number (see 'stackbench results') or 'last'")
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (int(ref),)).fetchone() is None:
            raise InputError(f"run {ref} is not in {self.path} (see 'stackbench results')")
        return int(ref)

    def level(self, level_id: int) -> LevelRow:
        return _level_row(self.db.execute("SELECT * FROM levels WHERE id = ?",
                                          (level_id,)).fetchone())

    def load_run(self, run_id: int) -> RunData:
        run = _run_row(self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone())
        cases = [
            CaseRow(r["id"], r["stack"], r["workload"], r["label"], r["path"],
                    json.loads(r["params_json"]), r["status"], r["reason"])
            for r in self.db.execute("SELECT * FROM cases WHERE run_id = ? ORDER BY id",
                                     (run_id,))
        ]
        levels = [
            _level_row(r) for r in self.db.execute(
                "SELECT l.* FROM levels l JOIN cases c ON c.id = l.case_id WHERE c.run_id = ? "
                "ORDER BY l.case_id, l.level_index, l.repetition", (run_id,))
        ]
        verifications = [
            VerificationRow(r["stack"], r["workload"], bool(r["ok"]), r["checked"],
                            json.loads(r["failures_json"]))
            for r in self.db.execute("SELECT * FROM verifications WHERE run_id = ? ORDER BY id",
                                     (run_id,))
        ]
        scripts = [
            ScriptRow(r["stack"], r["label"], r["iterations"], r["wall_s"], r["user_s"],
                      r["sys_s"], r["outcome"])
            for r in self.db.execute("SELECT * FROM scripts WHERE run_id = ? ORDER BY id",
                                     (run_id,))
        ]
        return RunData(run, cases, levels, verifications, scripts)


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _run_row(r: sqlite3.Row) -> RunRow:
    return RunRow(r["id"], r["suite_name"], r["suite_path"], r["suite_text"],
                  json.loads(r["settings_json"]), json.loads(r["environment_json"]),
                  r["started_at"], r["finished_at"], r["status"])


def _level_row(r: sqlite3.Row) -> LevelRow:
    cpu = None
    if r["loader_user_s"] is not None:
        cpu = (r["loader_user_s"], r["loader_sys_s"])
    return LevelRow(
        id=r["id"], case_id=r["case_id"], level_index=r["level_index"],
        level_value=r["level_value"], repetition=r["repetition"], driver=r["driver"],
        mode=r["mode"], keepalive=r["keepalive"], duration_s=r["duration_s"],
        completed=r["completed"], ok=r["ok"], errors_total=r["errors_total"],
        errors=json.loads(r["errors_json"]), requests_per_s=r["requests_per_s"],
        latency_us=json.loads(r["latency_json"]), connect_us=_loads(r["connect_json"]),
        histogram=r["histogram"], timeseries=_loads(r["timeseries_json"]),
        open_loop=_loads(r["open_loop_json"]), loader_cpu_s=cpu,
        usage=json.loads(r["usage_json"]), flags=json.loads(r["flags_json"]),
        status=r["status"], command=r["command"],
    )
