"""SQLite store: one file per results directory, every level committed as soon as it ends.

The tables are derived from the records in `records.py`: one column per record field, named
like the field, plus `id INTEGER PRIMARY KEY`. Column types follow the field's Python type:

    int, bool                            INTEGER  (bool as 0/1)
    float                                REAL
    str, Literal of strings              TEXT
    anything else (dict, tuple, record)  TEXT holding JSON
    X | None                             as X, nullable; every other column is NOT NULL

Reports read only from the store (`load_run`), so a report can be rewritten from any stored
run, including an interrupted one. A store written by another schema version is refused.

A write that fails because the disk is full (or the file cannot be written at all) raises
`EnvironmentProblem` naming the store; every record committed before it stays.
"""

import contextlib
import errno
import functools
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec
import msgspec.inspect as mi

from stackbench.config.estimate import PastLevel, setup_key
from stackbench.config.loadspec import DriverKind, KeepAlive, LoadSettings, Mode
from stackbench.errors import EnvironmentProblem, InputError
from stackbench.store.records import (
    CalibrationRecord,
    CalibrationRow,
    CaseRecord,
    CaseRow,
    Environment,
    JitWarmupRecord,
    LevelRecord,
    LevelRow,
    Record,
    RunRecord,
    RunRow,
    RunStatus,
    ScriptRecord,
    ScriptRow,
    Superseded,
    VerificationRecord,
    VerificationRow,
    dec_hook,
    enc_hook,
    machine_key,
)

__all__ = [
    "SCHEMA_VERSION",
    "CaseRow",
    "LevelRow",
    "RunData",
    "RunRow",
    "ScriptRow",
    "Store",
    "VerificationRow",
]

# 2: tables derived from records.py (column = field name, nested values as JSON).
# 3: runs record their owner process, scratch dir and selection (stale-run detection, resume);
#    levels record why they failed (error_class, error, log_tail).
# 4: cases record the parameters each stack resolved at start (effective_params).
# 5: levels record the bytes the load tool read (bytes_read), for the transfer rate.
# 6: cases record the JIT warm-up pass before their first level (jit_warmup).
# 7: multi-host levels record their hosts, the loaders' start skew and each loader's part.
# 8: calibrations: the machine's run-to-run spread (stackbench calibrate); levels record the
#    native loader's I/O engine (loader_engine).
# 9: levels record their cores accounted completely (cores).
# 10: runs record their --label.
# 11: a level measured again keeps its first measurement, marked superseded (by which level,
#     why); readers pass over it (load_run hands it apart).
SCHEMA_VERSION = 11

_SQL_TYPES: dict[type[mi.Type], str] = {
    mi.IntType: "INTEGER",
    mi.BoolType: "INTEGER",
    mi.FloatType: "REAL",
    mi.StrType: "TEXT",
    mi.LiteralType: "TEXT",
}


@dataclass(frozen=True)
class Column:
    name: str
    sql_type: str
    nullable: bool
    is_json: bool  # nested value, stored as JSON text

    def ddl(self) -> str:
        return f"{self.name} {self.sql_type}" + ("" if self.nullable else " NOT NULL")


def _column(name: str, info: mi.Type) -> Column:
    nullable = False
    if isinstance(info, mi.UnionType):
        rest = [t for t in info.types if not isinstance(t, mi.NoneType)]
        nullable = len(rest) < len(info.types)
        info = rest[0] if len(rest) == 1 else mi.AnyType()
    sql_type = _SQL_TYPES.get(type(info))
    return Column(name, sql_type or "TEXT", nullable, sql_type is None)


@functools.cache
def columns(record: type[Record]) -> tuple[Column, ...]:
    """The columns of a record's table, in field order (without the `id` key)."""
    info = mi.type_info(record)
    assert isinstance(info, mi.StructType)
    return tuple(_column(f.name, f.type) for f in info.fields)


R = TypeVar("R", bound=Record)
Row = TypeVar("Row", bound=Record)


@dataclass(frozen=True)
class Table(Generic[R, Row]):
    """A table holding one record type; reading gives `row` (the record plus its id)."""

    name: str
    record: type[R]
    row: type[Row]
    parent: tuple[str, str] | None = None  # (column, table): a foreign key

    @property
    def columns(self) -> tuple[Column, ...]:
        return columns(self.record)

    def ddl(self) -> str:
        lines = ["id INTEGER PRIMARY KEY", *(c.ddl() for c in self.columns)]
        if self.parent is not None:
            column, table = self.parent
            lines.append(f"FOREIGN KEY ({column}) REFERENCES {table}(id)")
            index = f"CREATE INDEX IF NOT EXISTS {self.name}_{column} ON {self.name}({column});"
        else:
            index = ""
        body = ",\n    ".join(lines)
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n    {body}\n);\n{index}"

    def values(self, record: R) -> tuple[object, ...]:
        return tuple(_to_sql(c, getattr(record, c.name)) for c in self.columns)

    def insert_sql(self) -> str:
        names = [c.name for c in self.columns]
        return (
            f"INSERT INTO {self.name} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"
        )

    def decode(self, row: sqlite3.Row) -> Row:
        values: dict[str, Any] = {"id": row["id"]}
        for c in self.columns:
            value = row[c.name]
            values[c.name] = json.loads(value) if c.is_json and value is not None else value
        # strict=False: SQLite gives 0/1 for a bool column.
        return msgspec.convert(values, self.row, strict=False, dec_hook=dec_hook)


def _to_sql(column: Column, value: object) -> object:
    if value is None or not column.is_json:
        return value
    # The standard json module keeps inf/NaN (as Infinity/NaN), which a figure may be.
    return json.dumps(msgspec.to_builtins(value, enc_hook=enc_hook))


RUNS = Table("runs", RunRecord, RunRow)
CASES = Table("cases", CaseRecord, CaseRow, ("run_id", "runs"))
VERIFICATIONS = Table("verifications", VerificationRecord, VerificationRow, ("run_id", "runs"))
LEVELS = Table("levels", LevelRecord, LevelRow, ("case_id", "cases"))
SCRIPTS = Table("scripts", ScriptRecord, ScriptRow, ("run_id", "runs"))
CALIBRATIONS = Table("calibrations", CalibrationRecord, CalibrationRow, ("run_id", "runs"))
TABLES: tuple[Table[Any, Any], ...] = (RUNS, CASES, VERIFICATIONS, LEVELS, SCRIPTS, CALIBRATIONS)


def ddl() -> str:
    return "\n".join(t.ddl() for t in TABLES)


def layout() -> str:
    """Fingerprint of the tables: a record that gained a field without a SCHEMA_VERSION bump
    is still told apart from the stores written before (instead of failing mid-run)."""
    return hashlib.sha256(ddl().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RunData:
    """A stored run as every reader takes it: `levels` are the standing measurements only;
    a measurement the level was measured again after is in `superseded`, which no figure,
    verdict, claim or export reads: the report's findings say the level was measured again,
    and a run's allowance of load counts its seconds (engine/claim_rounds.py)."""

    run: RunRow
    cases: list[CaseRow]
    levels: list[LevelRow]
    verifications: list[VerificationRow]
    scripts: list[ScriptRow] = field(default_factory=list)
    # The latest calibration of the machine the run was made on (None: not calibrated).
    calibration: CalibrationRow | None = None
    superseded: list[LevelRow] = field(default_factory=list)

    def levels_of(self, case_id: int) -> list[LevelRow]:
        return [lv for lv in self.levels if lv.case_id == case_id]


class Store:
    """The store at `path`. `create=False` (the commands that only read): the file must
    exist and be a stackbench store; nothing is created, not even its tables."""

    def __init__(self, path: Path | str, create: bool = True) -> None:
        self.path = path
        db: sqlite3.Connection | None = None
        try:
            db = self.db = _connect(path, create)
            if str(path) != ":memory:":
                # WAL: a reader (stackbench results) never blocks the run that writes.
                db.execute("PRAGMA journal_mode=WAL")
            self._migrate(create)
        except InputError:
            if db is not None:
                db.close()
            raise
        except sqlite3.DatabaseError as exc:
            if db is not None:
                db.close()
            if isinstance(exc, sqlite3.OperationalError) or disk_full(exc):
                raise write_failure(path, exc) from exc  # cannot open, read-only, full
            raise InputError(
                f"{path}: not a stackbench store ({exc}); use another --out or move the file away"
            ) from exc

    def _migrate(self, create: bool) -> None:
        with self.db:
            if (
                not create
                and self.db.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'schema_version'"
                ).fetchone()
                is None
            ):
                raise InputError(
                    f"{self.path}: not a stackbench store (no schema_version "
                    "table); give the --out of a stackbench run"
                )
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER NOT NULL, layout TEXT NOT NULL)"
            )
            row = self.db.execute("SELECT * FROM schema_version").fetchone()
            if row is None:
                self.db.executescript(ddl())
                self.db.execute(
                    "INSERT INTO schema_version VALUES (?, ?)", (SCHEMA_VERSION, layout())
                )
                return
        if row["version"] == 7:
            row = self._migrate_7_to_8()
        if row["version"] == 8:
            row = self._migrate_8_to_9()
        if row["version"] == 9:
            row = self._migrate_9_to_10()
        if row["version"] == 10:
            row = self._migrate_10_to_11()
        if row["version"] != SCHEMA_VERSION:
            raise InputError(
                f"{self.path}: store schema version {row['version']}, this "
                f"stackbench reads version {SCHEMA_VERSION}; use another --out "
                "(the old results stay readable by the stackbench that wrote them)"
            )
        if row["layout"] != layout():
            raise InputError(
                f"{self.path}: written by a stackbench whose records had other "
                "fields (same schema version, different columns); use another "
                "--out"
            )

    def _migrate_7_to_8(self) -> sqlite3.Row:
        """Version 8 adds the calibrations table and the levels' loader_engine column: a
        version-7 store gains both in place (its levels' engine unknown: NULL)."""
        with self._commit() as db:
            db.executescript(CALIBRATIONS.ddl())
            db.execute("ALTER TABLE levels ADD COLUMN loader_engine TEXT")
            db.execute("UPDATE schema_version SET version = 8")
        row: sqlite3.Row = self.db.execute("SELECT * FROM schema_version").fetchone()
        return row

    def _migrate_8_to_9(self) -> sqlite3.Row:
        """Version 9 adds the levels' core account (`cores`): a version-8 store gains the
        column in place (its levels not accounted: NULL)."""
        with self._commit() as db:
            db.execute("ALTER TABLE levels ADD COLUMN cores TEXT")
            db.execute("UPDATE schema_version SET version = 9")
        row: sqlite3.Row = self.db.execute("SELECT * FROM schema_version").fetchone()
        return row

    def _migrate_9_to_10(self) -> sqlite3.Row:
        """Version 10 adds the runs' `label` (run --label): a version-9 store gains the
        column in place (its runs unlabelled: '')."""
        with self._commit() as db:
            db.execute("ALTER TABLE runs ADD COLUMN label TEXT NOT NULL DEFAULT ''")
            db.execute("UPDATE schema_version SET version = 10")
        row: sqlite3.Row = self.db.execute("SELECT * FROM schema_version").fetchone()
        return row

    def _migrate_10_to_11(self) -> sqlite3.Row:
        """Version 11 adds the levels' `superseded` mark: a version-10 store gains the column
        in place (its levels all stand: NULL; a measurement it measured again is gone)."""
        with self._commit() as db:
            db.execute("ALTER TABLE levels ADD COLUMN superseded TEXT")
            db.execute(
                "UPDATE schema_version SET version = ?, layout = ?", (SCHEMA_VERSION, layout())
            )
        row: sqlite3.Row = self.db.execute("SELECT * FROM schema_version").fetchone()
        return row

    def close(self) -> None:
        self.db.close()

    # --- writing -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _commit(self) -> Iterator[sqlite3.Connection]:
        """One transaction, committed on leaving; a full disk becomes an EnvironmentProblem
        (what was committed before stays: SQLite rolls back only this transaction)."""
        try:
            with self.db:
                yield self.db
        except sqlite3.OperationalError as exc:
            raise write_failure(self.path, exc) from exc
        except OSError as exc:
            raise write_failure(self.path, exc) from exc

    def _insert(self, table: Table[R, Any], record: R) -> int:
        """Insert one record and commit at once (an interrupted run keeps it)."""
        with self._commit() as db:
            cur = db.execute(table.insert_sql(), table.values(record))
        return int(cur.lastrowid or 0)

    def start_run(self, record: RunRecord) -> int:
        return self._insert(RUNS, record)

    def finish_run(self, run_id: int, status: RunStatus) -> None:
        with self._commit() as db:
            db.execute(
                "UPDATE runs SET finished_at = ?, status = ? WHERE id = ?",
                (time.time(), status, run_id),
            )

    def reopen_run(
        self,
        run_id: int,
        owner_pid: int,
        owner_started_at: float,
        owner_host: str,
        scratch_dir: str,
    ) -> None:
        """`run --resume`: the run is running again, owned by this process."""
        with self._commit() as db:
            db.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, owner_pid = ?, "
                "owner_started_at = ?, owner_host = ?, scratch_dir = ?, "
                "resumed = resumed + 1 WHERE id = ?",
                (owner_pid, owner_started_at, owner_host, scratch_dir, run_id),
            )

    def add_case(self, record: CaseRecord) -> int:
        return self._insert(CASES, record)

    def set_case_status(self, case_id: int, status: str, reason: str = "") -> None:
        with self._commit() as db:
            db.execute(
                "UPDATE cases SET status = ?, reason = ? WHERE id = ?", (status, reason, case_id)
            )

    def set_effective_params(self, case_ids: Iterable[int], params: dict[str, str]) -> None:
        """The parameters a stack resolved when it started, on each of its cases."""
        self._set_case_field(case_ids, "effective_params", params)

    def set_jit_warmup(self, case_id: int, record: JitWarmupRecord) -> None:
        self._set_case_field([case_id], "jit_warmup", record)

    def _set_case_field(self, case_ids: Iterable[int], name: str, value: object) -> None:
        (column,) = [c for c in CASES.columns if c.name == name]  # a field of CaseRecord
        encoded = _to_sql(column, value)
        with self._commit() as db:
            db.executemany(
                f"UPDATE cases SET {column.name} = ? WHERE id = ?",
                [(encoded, cid) for cid in case_ids],
            )

    def fail_pending_cases(self, case_ids: Iterable[int], reason: str) -> None:
        """Cases not finished yet fail with `reason`; finished ones keep their status."""
        with self._commit() as db:
            db.executemany(
                "UPDATE cases SET status = 'failed', reason = ? "
                "WHERE id = ? AND status = 'pending'",
                [(reason, cid) for cid in case_ids],
            )

    def add_verification(self, record: VerificationRecord) -> None:
        self._insert(VERIFICATIONS, record)

    def add_script(self, record: ScriptRecord) -> None:
        self._insert(SCRIPTS, record)

    def add_level(self, record: LevelRecord) -> int:
        """Insert one level and commit at once. A standing level is the one that replaced
        any superseded measurement of the same level still waiting for it (`Superseded.by`),
        in the same transaction: after a resume too, whichever measurement stands last."""
        with self._commit() as db:
            cur = db.execute(LEVELS.insert_sql(), LEVELS.values(record))
            level_id = int(cur.lastrowid or 0)
            if record.stands:
                _link_superseded(db, record, level_id)
        return level_id

    def add_calibration(self, record: CalibrationRecord) -> int:
        return self._insert(CALIBRATIONS, record)

    # --- reading -------------------------------------------------------------------------
    def _select(
        self, table: Table[Any, Row], where: str, params: tuple[object, ...], order: str = "id"
    ) -> list[Row]:
        rows = self.db.execute(
            f"SELECT * FROM {table.name} WHERE {where} ORDER BY {order}", params
        ).fetchall()
        return [table.decode(r) for r in rows]

    def runs(self) -> list[RunRow]:
        return self._select(RUNS, "1", ())

    def running_runs(self) -> list[RunRow]:
        """Runs whose status is still "running" (alive, or left so by a killed process)."""
        return self._select(RUNS, "status = 'running'", ())

    def run(self, run_id: int) -> RunRow:
        (row,) = self._select(RUNS, "id = ?", (run_id,))
        return row

    def resolve_run(self, ref: str) -> int:
        """A run id, 'last', or 'last~N': the Nth run before the last (git's notation), so
        that a CI job compares each run with the one before (`compare last~1 last`)."""
        back = ref.removeprefix("last~")
        if ref == "last" or (back != ref and back.isdigit() and len(back) <= 6):
            offset = 0 if ref == "last" else int(back)
            row = self.db.execute(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (offset,)
            ).fetchone()
            if row is None:
                stored = self.db.execute("SELECT COUNT(*) AS n FROM runs").fetchone()["n"]
                raise InputError(f"run '{ref}': {self.path} holds {stored} run(s)")
            return int(row["id"])
        if not ref.isdigit():
            labelled = self.db.execute(
                "SELECT id FROM runs WHERE label = ? ORDER BY id DESC LIMIT 1", (ref,)
            ).fetchone()
            if labelled is not None:
                return int(labelled["id"])
            raise InputError(
                f"run '{ref}': give a run number (see 'stackbench results'), 'last', "
                "'last~N' (the Nth run before the last) or a run's --label"
            )
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (int(ref),)).fetchone() is None:
            raise InputError(f"run {ref} is not in {self.path} (see 'stackbench results')")
        return int(ref)

    def calibration(self, machine: str) -> CalibrationRow | None:
        """The latest calibration of `machine` (records.machine_key), None if there is none."""
        rows = self._select(CALIBRATIONS, "machine = ?", (machine,), "at DESC, id DESC")
        return rows[0] if rows else None

    def past_levels(self, machine: str) -> list[PastLevel]:
        """Every valid standing level measured on `machine` (records.machine_key), as the
        plan's time estimate reads them: which stack, workload, setup and level gave which
        rate; and, for the design check's spread between fresh starts, in which run of which
        suite, which repetition."""
        rows = self.db.execute(
            "SELECT r.environment, r.settings, r.suite_name, r.id AS run_id, c.stack, c.label, "
            "l.level_value, l.requests_per_s, l.started_at, l.repetition "
            "FROM levels l JOIN cases c ON l.case_id = c.id "
            "JOIN runs r ON c.run_id = r.id WHERE l.status = 'ok' AND l.requests_per_s > 0 "
            "AND l.superseded IS NULL ORDER BY l.id"
        ).fetchall()
        setups: dict[str, str | None] = {}  # a run's settings text -> its setup_key
        here: dict[str, bool] = {}  # a run's environment text -> made on `machine`
        out = []
        for row in rows:
            env = row["environment"]
            if env not in here:
                here[env] = machine_key(msgspec.json.decode(env, type=Environment)) == machine
            if not here[env]:
                continue
            text = row["settings"]
            if text not in setups:
                setups[text] = _setup_of(text)
            setup = setups[text]
            if setup is not None:
                out.append(
                    PastLevel(
                        row["stack"],
                        row["label"],
                        setup,
                        row["level_value"],
                        row["requests_per_s"],
                        row["started_at"],
                        row["suite_name"],
                        row["run_id"],
                        row["repetition"],
                    )
                )
        return out

    def script_iteration_s(self, machine: str) -> dict[tuple[str, str], float]:
        """(stack, label) -> the latest standalone timing's seconds per iteration on
        `machine`."""
        rows = self.db.execute(
            "SELECT r.environment, s.stack, s.label, s.wall_s, s.iterations FROM scripts s "
            "JOIN runs r ON s.run_id = r.id WHERE s.wall_s IS NOT NULL AND s.iterations > 0 "
            "ORDER BY r.id"
        ).fetchall()
        out = {}
        for row in rows:
            env = msgspec.json.decode(row["environment"], type=Environment)
            if machine_key(env) == machine:
                out[(row["stack"], row["label"])] = row["wall_s"] / row["iterations"]
        return out

    def level(self, level_id: int) -> LevelRow:
        (row,) = self._select(LEVELS, "id = ?", (level_id,))
        return row

    def load_run(self, run_id: int) -> RunData:
        """The run as its readers take it: the standing levels apart from the superseded."""
        run = self.run(run_id)
        levels = self._select(
            LEVELS,
            "case_id IN (SELECT id FROM cases WHERE run_id = ?)",
            (run_id,),
            "case_id, level_index, repetition, id",
        )
        return RunData(
            run,
            self._select(CASES, "run_id = ?", (run_id,)),
            [lv for lv in levels if lv.stands],
            self._select(VERIFICATIONS, "run_id = ?", (run_id,)),
            self._select(SCRIPTS, "run_id = ?", (run_id,)),
            self.calibration(machine_key(run.environment)),
            [lv for lv in levels if not lv.stands],
        )


def _link_superseded(db: sqlite3.Connection, record: LevelRecord, by: int) -> None:
    """Mark level `by` as the replacement of every superseded measurement of the same level
    (case, level, repetition) that has none yet."""
    (column,) = [c for c in LEVELS.columns if c.name == "superseded"]
    rows = db.execute(
        "SELECT id, superseded FROM levels WHERE case_id = ? AND level_index = ? "
        "AND repetition = ? AND superseded IS NOT NULL",
        (record.case_id, record.level_index, record.repetition),
    ).fetchall()
    for row in rows:
        mark = msgspec.convert(json.loads(row["superseded"]), Superseded)
        if mark.by is None:
            linked = msgspec.structs.replace(mark, by=by)
            db.execute(
                "UPDATE levels SET superseded = ? WHERE id = ?",
                (_to_sql(column, linked), row["id"]),
            )


def _setup_of(settings_json: str) -> str | None:
    """A stored run's setup_key, from its settings (None: a record this version cannot
    read)."""
    try:
        stored = json.loads(settings_json)
        return setup_key(
            LoadSettings(
                driver=DriverKind(stored["driver"]),
                mode=Mode(stored["mode"]),
                keepalive=KeepAlive(stored["keepalive"]),
            )
        )
    except (ValueError, KeyError, TypeError):
        return None


def _connect(path: Path | str, create: bool) -> sqlite3.Connection:
    """A connection; without `create`, to an existing file only (SQLite's mode=rw)."""
    if create or str(path) == ":memory:":
        db = sqlite3.connect(str(path), timeout=30)
    else:
        db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=rw", timeout=30, uri=True)
    db.row_factory = sqlite3.Row
    return db


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def disk_full(exc: BaseException) -> bool:
    """The disk (or the user's quota) is full: an OSError ENOSPC/EDQUOT, or SQLite's FULL."""
    if isinstance(exc, sqlite3.Error):
        return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def write_failure(path: Path | str, exc: BaseException) -> EnvironmentProblem:
    """The store could not be written: the disk is full, the file is read-only, locked..."""
    if disk_full(exc):
        return EnvironmentProblem(
            f"{path}: the disk is full ({exc}); every level finished before this point is "
            "kept. Free some space, then continue with 'stackbench run --resume N' (see "
            "'stackbench results')"
        )
    return EnvironmentProblem(
        f"{path}: cannot write the results store ({exc}); check the "
        "file's permissions and the disk, or use another --out"
    )
