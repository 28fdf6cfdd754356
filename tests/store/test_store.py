"""The store: records in, the same records out; tables derived from the record definitions."""

import errno
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from stackbench.config.measured import CoreAccount, CoreSetUse, CpuUser
from stackbench.errors import InputError
from stackbench.store.records import (
    NOT_IN_CSV,
    CaseRecord,
    Environment,
    Flag,
    LevelFlag,
    LevelRecord,
    PlacementSettings,
    RunRecord,
    RunSettings,
    ScriptRecord,
    SloSettings,
    Superseded,
    VerificationRecord,
    flat_fields,
    is_error_rate_flag,
)
from stackbench.store.store import (
    LEVELS,
    SCHEMA_VERSION,
    Store,
    Table,
    columns,
    disk_full,
    write_failure,
)
from tests.measured import open_loop, second, usage


def settings(**extra: object) -> RunSettings:
    values: dict[str, object] = dict(
        mode="closed",
        level_kind="connections",
        keepalive="on",
        driver="native",
        duration_s=5.0,
        requests=None,
        requests_per_connection=None,
        warmup_s=1.0,
        timeout_s=3.0,
        pause_s=1.0,
        repeat=1,
        threads=0,
        pipeline=1,
        jit_warmup=True,
        levels=(25.0, 100.0),
        max_error_rate=0.01,
        variant="",
        description="",
        slo=None,
        search=None,
        script_iterations=0,
        variants={},
        workload_levels={},
        workload_durations={},
        placement=PlacementSettings(server=(0,), loader=(1,), services=(0,)),
    )
    values.update(extra)
    return RunSettings(**values)  # type: ignore[arg-type]


def run_record(**extra: object) -> RunRecord:
    values: dict[str, object] = dict(
        suite_name="quick",
        suite_path="suites/quick.toml",
        suite_text="name='quick'",
        settings=settings(),
        environment=Environment(cores=2),
        started_at=1.0,
    )
    values.update(extra)
    return RunRecord(**values)  # type: ignore[arg-type]


def level(case_id: int, index: int, **extra: object) -> LevelRecord:
    values: dict[str, object] = dict(
        case_id=case_id,
        level_index=index,
        level_value=25.0,
        repetition=0,
        driver="native",
        mode="closed",
        keepalive="on",
        started_at=1.0,
        duration_s=5.0,
        completed=1000,
        ok=998,
        errors={"timeout": 2},
        requests_per_s=200.0,
        latency_us={"p50": 100.0, "p99": 900.0},
        usage={"server": usage(95.0)},
        status="ok",
        command="stackbench-load ...",
    )
    values.update(extra)
    return LevelRecord(**values)  # type: ignore[arg-type]


def case(run: int, workload: str = "sha256") -> CaseRecord:
    return CaseRecord(
        run_id=run,
        stack="node",
        workload=workload,
        label=f"{workload}?n=1",
        path=f"/{workload}?n=1",
        params={"workers": "1"},
    )


def test_every_record_comes_back_as_written():
    store = Store(":memory:")
    slo = SloSettings(
        percentile=99, latency_ms=5, max_error_rate=0.01, stop_after_failures=2, gate=True
    )
    written_run = run_record(settings=settings(slo=slo))
    run = store.start_run(written_run)
    cid = store.add_case(case(run))
    store.add_verification(
        VerificationRecord(
            run_id=run, stack="node", workload="sha256", ok=True, checked=5, failures=(), at=2.0
        )
    )
    store.add_script(
        ScriptRecord(
            run_id=run,
            stack="node",
            label="sha256?n=1",
            iterations=10,
            wall_s=None,
            user_s=None,
            sys_s=None,
            outcome="exited 1",
        )
    )
    written = level(
        cid,
        0,
        histogram="HISTFAAA",
        loader_cpu_s=(1.0, 0.5),
        timeseries=(second(1, 10, p50_us=80, histogram="HISTFAAB"),),
        flags=(LevelFlag.LOADER_BOUND.alone,),
        open_loop=open_loop(500.0, sustained=False, unsent=9),
        raw_output="{...}",
    )
    level_id = store.add_level(written)
    store.set_case_status(cid, "ok")
    store.finish_run(run, "complete")

    data = store.load_run(store.resolve_run("last"))
    assert data.run.status == "complete" and data.run.finished_at is not None
    assert data.run.settings == written_run.settings and data.run.settings.slo == slo
    assert data.run.environment == Environment(cores=2) and data.run.id == run
    (c,) = data.cases
    assert (c.id, c.status, c.params) == (cid, "ok", {"workers": "1"})
    (lv,) = data.levels_of(cid)
    assert lv.id == level_id and store.level(level_id) == lv
    # The row is the record plus its id: every field comes back equal, types included.
    assert written == LevelRecord(**{f: getattr(lv, f) for f in LevelRecord.__struct_fields__})
    assert lv.loader_cpu_s == (1.0, 0.5) and lv.flags == (Flag(LevelFlag.LOADER_BOUND),)
    assert lv.errors_total == 2 and lv.error_rate == pytest.approx(2 / 1002)
    (v,) = data.verifications
    assert v.ok is True and v.checked == 5 and v.failures == ()
    (s,) = data.scripts
    assert s.wall_s is None and s.outcome == "exited 1"


def test_infinite_and_missing_figures_survive_the_round_trip():
    store = Store(":memory:")
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    store.add_level(
        level(
            cid,
            0,
            latency_us={"p50": math.inf},
            connect_us=None,
            usage={"server": usage(math.nan, rss_max_bytes=2**40)},
        )
    )
    (lv,) = store.load_run(run).levels
    assert lv.latency_us == {"p50": math.inf} and lv.connect_us is None
    assert math.isnan(lv.usage["server"].cpu_percent)
    assert lv.usage["server"].rss_max_bytes == 2**40


def test_usage_and_seconds_are_stored_as_before_and_read_back_typed():
    """The JSON of a level's usage and per-second series is what stores of this schema
    version always held (role -> figures; one object per second): a store written before the
    records were typed reads back as typed records."""
    store = Store(":memory:")
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    level_id = store.add_level(level(cid, 0))
    old_usage = {
        "server": {
            "cpu_user_s": 0.5,
            "cpu_sys_s": 0.25,
            "cpu_percent": 15.0,
            "rss_max_bytes": 31457280,
            "rss_mean_bytes": 30000000,
            "threads_max": 4,
            "processes_max": 2,
            "ctx_voluntary": 1200,
            "ctx_involuntary": 7,
        }
    }
    old_seconds = [
        {
            "t_s": 1,
            "completed": 980,
            "errors": 0,
            "p50_us": 812,
            "p99_us": 2400,
            "p90_us": 1500,
            "max_us": 9000,
            "duration_s": 1.0,
            "partial": False,
            "histogram": "HISTFAAB",
        }
    ]
    store.db.execute(
        "UPDATE levels SET usage = ?, timeseries = ? WHERE id = ?",
        (json.dumps(old_usage), json.dumps(old_seconds), level_id),
    )
    lv = store.level(level_id)
    assert lv.usage["server"] == usage(
        15.0,
        cpu_user_s=0.5,
        cpu_sys_s=0.25,
        rss_max_bytes=31457280,
        rss_mean_bytes=30000000,
        threads_max=4,
        processes_max=2,
        ctx_voluntary=1200,
        ctx_involuntary=7,
    )
    assert lv.timeseries == (
        second(1, 980, p50_us=812, p90_us=1500, p99_us=2400, max_us=9000, histogram="HISTFAAB"),
    )
    # and written back the same way
    again = store.add_level(
        msgspec.structs.replace(level(cid, 1), usage=lv.usage, timeseries=lv.timeseries)
    )
    raw = store.db.execute("SELECT usage, timeseries FROM levels WHERE id = ?", (again,)).fetchone()
    assert (json.loads(raw[0]), json.loads(raw[1])) == (old_usage, old_seconds)


def test_flags_are_stored_as_texts_as_before_and_read_back_as_records():
    """A level's flags column holds the texts stores have always held ("loader-bound",
    "kind: detail", a load tool's own warning): an old row reads back typed, and a typed
    flag is written back as the same text."""
    store = Store(":memory:")
    cid = store.add_case(case(store.start_run(run_record())))
    level_id = store.add_level(level(cid, 0))
    old_flags = [
        "raised RLIMIT_NOFILE",
        "loader-bound",
        "invalid: error rate 2.0% > 1.0%",
        "failed: server-exited: node process 'server' killed by signal 9 (SIGKILL)",
    ]
    store.db.execute("UPDATE levels SET flags = ? WHERE id = ?", (json.dumps(old_flags), level_id))
    lv = store.level(level_id)
    assert lv.flags == (
        Flag(None, "raised RLIMIT_NOFILE"),
        Flag(LevelFlag.LOADER_BOUND),
        Flag(LevelFlag.INVALID, "error rate 2.0% > 1.0%"),
        Flag(LevelFlag.FAILED, "server-exited: node process 'server' killed by signal 9 (SIGKILL)"),
    )
    assert is_error_rate_flag(lv.flags[2]) and not is_error_rate_flag(lv.flags[3])
    again = store.add_level(msgspec.structs.replace(level(cid, 1), flags=lv.flags))
    raw = store.db.execute("SELECT flags FROM levels WHERE id = ?", (again,)).fetchone()
    assert json.loads(raw[0]) == old_flags


def test_an_open_loop_schedule_is_stored_as_before_and_read_back_typed():
    """The open_loop column holds the loader's document object, as it always did (then as a
    plain dict): an old row reads back as an OpenLoop record, written back the same."""
    store = Store(":memory:")
    cid = store.add_case(case(store.start_run(run_record())))
    level_id = store.add_level(level(cid, 0))
    old = {
        "target_rate": 500.0,
        "achieved_rate": 491.0,
        "sustained": False,
        "waited": 9,
        "wait_us": {"p50": 3, "p99": 40, "max": 900},
        "scheduled": 500,
        "unsent": 9,
    }
    store.db.execute("UPDATE levels SET open_loop = ? WHERE id = ?", (json.dumps(old), level_id))
    schedule = store.level(level_id).open_loop
    assert schedule is not None and not schedule.sustained and schedule.wait_us.p99 == 40
    again = store.add_level(msgspec.structs.replace(level(cid, 1), open_loop=schedule))
    raw = store.db.execute("SELECT open_loop FROM levels WHERE id = ?", (again,)).fetchone()
    assert json.loads(raw[0]) == old


def test_each_level_is_committed_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    writer = Store(path)
    run = writer.start_run(run_record())
    cid = writer.add_case(case(run, "hello"))
    writer.add_level(level(cid, 0))
    # A second connection (another process, or after a crash) sees it without any close().
    reader = Store(path)
    assert len(reader.load_run(run).levels) == 1
    assert reader.load_run(run).run.status == "running"


def test_fail_pending_cases_keeps_finished_ones():
    store = Store(":memory:")
    run = store.start_run(run_record())
    done = store.add_case(case(run, "hello"))
    pending = store.add_case(case(run, "sha256"))
    store.set_case_status(done, "ok")
    store.fail_pending_cases([done, pending], "stack crashed")
    statuses = {c.id: (c.status, c.reason) for c in store.load_run(run).cases}
    assert statuses == {done: ("ok", ""), pending: ("failed", "stack crashed")}


def test_level_table_columns_are_the_record_fields():
    cols = {c.name: c for c in columns(LevelRecord)}
    assert list(cols) == list(LevelRecord.__struct_fields__)
    assert cols["completed"].ddl() == "completed INTEGER NOT NULL"
    assert cols["requests_per_s"].ddl() == "requests_per_s REAL NOT NULL"
    assert cols["status"].ddl() == "status TEXT NOT NULL"  # a Literal of strings
    assert cols["histogram"].ddl() == "histogram TEXT" and not cols["histogram"].is_json
    assert cols["latency_us"].is_json and not cols["latency_us"].nullable
    assert cols["loader_cpu_s"].is_json and cols["loader_cpu_s"].nullable
    assert "FOREIGN KEY (case_id) REFERENCES cases(id)" in LEVELS.ddl()


class ExtendedLevel(LevelRecord, frozen=True, kw_only=True):
    """A level record that gained two fields (what one edit in records.py amounts to)."""

    queue_depth: int | None = None
    per_second: tuple[dict[str, float], ...] = ()


class ExtendedLevelRow(ExtendedLevel, frozen=True, kw_only=True):
    id: int


def test_a_new_record_field_reaches_table_insert_read_back_and_csv():
    table = Table("levels", ExtendedLevel, ExtendedLevelRow, ("case_id", "cases"))
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.executescript("CREATE TABLE cases (id INTEGER PRIMARY KEY);" + table.ddl())
    written = ExtendedLevel(
        **{f: getattr(level(1, 0), f) for f in LevelRecord.__struct_fields__},
        queue_depth=7,
        per_second=({"t_s": 1.0},),
    )
    db.execute(table.insert_sql(), table.values(written))
    (row,) = db.execute("SELECT * FROM levels").fetchall()
    back = table.decode(row)
    assert back.queue_depth == 7 and back.per_second == ({"t_s": 1.0},) and back.id == 1
    assert "queue_depth" in flat_fields(ExtendedLevel)
    assert "per_second" not in flat_fields(ExtendedLevel)  # nested: JSON only, no CSV cell


def test_a_store_of_another_schema_version_is_refused(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # what stackbench 0.1 (schema 1) wrote
        db.executescript(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);"
            "INSERT INTO schema_version VALUES (1);"
            "CREATE TABLE runs (id INTEGER PRIMARY KEY, settings_json TEXT);"
        )
    with pytest.raises(
        InputError,
        match=rf"schema version 1.*reads version {SCHEMA_VERSION}"
        r".*use another --out",
    ):
        Store(path)


def test_a_store_with_other_columns_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE schema_version SET layout = 'older'")
    with pytest.raises(InputError, match="other fields.*use another --out"):
        Store(path)


def test_a_file_that_is_not_a_store_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a database " * 100)
    with pytest.raises(InputError, match=f"{path}: not a stackbench store"):
        Store(path)


def test_a_resumed_run_is_running_again_under_its_new_owner():
    store = Store(":memory:")
    run = store.start_run(
        run_record(
            owner_pid=1,
            owner_started_at=1.0,
            owner_host="a",
            scratch_dir="/tmp/stackbench-old",
            only_stacks=("node",),
            only_workloads=("hello",),
        )
    )
    store.finish_run(run, "interrupted")
    assert store.running_runs() == []
    store.reopen_run(run, 2, 2.0, "b", "/tmp/stackbench-new")
    (row,) = store.running_runs()
    assert (row.id, row.status, row.finished_at, row.resumed) == (run, "running", None, 1)
    assert (row.owner_pid, row.owner_started_at, row.owner_host, row.scratch_dir) == (
        2,
        2.0,
        "b",
        "/tmp/stackbench-new",
    )
    assert row.only_stacks == ("node",) and row.only_workloads == ("hello",)


def test_a_level_keeps_why_it_failed():
    store = Store(":memory:")
    cid = store.add_case(case(store.start_run(run_record())))
    store.add_level(
        level(
            cid,
            0,
            status="failed",
            error_class="server-exited",
            error="node process 'server' killed by signal 9 (SIGKILL)",
            log_tail="listening\nFATAL",
            completed=0,
        )
    )
    (lv,) = store.load_run(1).levels
    assert (lv.status, lv.error_class, lv.log_tail) == (
        "failed",
        "server-exited",
        "listening\nFATAL",
    )
    assert "log_tail" in NOT_IN_CSV  # a multi-line text: in the store and results.json only


def test_a_full_disk_is_told_apart_from_other_write_failures():
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    assert disk_full(full) and disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not disk_full(OSError(errno.EACCES, "Permission denied"))
    locked = sqlite3.OperationalError("database is locked")
    locked.sqlite_errorcode = sqlite3.SQLITE_BUSY  # type: ignore[attr-defined]
    assert not disk_full(locked)
    assert "the disk is full" in str(write_failure("/r/s.sqlite", full))
    assert "--resume" in str(write_failure("/r/s.sqlite", full))
    assert str(write_failure("/r/s.sqlite", locked)).startswith(
        "/r/s.sqlite: cannot write the results store (database is locked)"
    )


FILL_THE_DISK = """
import json, subprocess, sys
from pathlib import Path
from stackbench.errors import EnvironmentProblem
from stackbench.store.store import Store
from tests.store.test_store import case, level, run_record

disk = Path(sys.argv[1])
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=True)
store = Store(disk / "s.sqlite")
run = store.start_run(run_record())
cid = store.add_case(case(run))
written, message = 0, ""
try:
    while written < 1000:
        store.add_level(level(cid, written, raw_output="x" * 50_000))
        written += 1
except EnvironmentProblem as exc:
    message = str(exc)
store.close()
kept = len(Store(disk / "s.sqlite").load_run(run).levels)
print(json.dumps({"written": written, "kept": kept, "message": message}))
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="needs root and unshare to mount a private tmpfs",
)
def test_a_full_disk_ends_with_a_message_and_keeps_every_committed_level(tmp_path):
    """A 1 MiB tmpfs (in a private mount namespace, gone with the process) fills up."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            sys.executable,
            "-c",
            FILL_THE_DISK,
            str(disk),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert 1 <= result["written"] < 1000
    assert result["kept"] == result["written"]
    assert result["message"].startswith(f"{disk / 's.sqlite'}: the disk is full")


def test_a_levels_core_account_is_stored_and_read_back_typed():
    account = CoreAccount(
        method="cgroup v2 (cpu.stat)",
        sampled="",
        irq_time_apart=False,
        elapsed_s=12.0,
        sets=(
            CoreSetUse(
                cores=(0,),
                roles=("server",),
                busy_s=11.9,
                interrupts_s=3.0,
                roles_s=10.2,
                stackbench_s=0.1,
                kernel_threads_s=0.05,
                named_other_s=1.2,
                unseen_s=0.35,
                other_s=1.55,
                steal_s=0.02,
                roles_per_s=(0.85, 0.86),
                other_per_s=(0.13, -0.01),
                steal_per_s=(0.0, 0.002),
            ),
        ),
        top=(CpuUser(pid=9, name="burn", kernel_thread=False, cpu_s=1.2),),
    )
    store = Store(":memory:")
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    lv = store.level(store.add_level(level(cid, 0, cores=account)))
    assert lv.cores == account
    assert store.level(store.add_level(level(cid, 1))).cores is None


def test_a_version_8_store_gains_the_core_account_column(tmp_path):
    path = tmp_path / "v8.sqlite"
    store = Store(path)
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    store.add_level(level(cid, 0))
    store.close()
    with sqlite3.connect(path) as db:  # the store as stackbench wrote it at version 8
        db.execute("ALTER TABLE levels DROP COLUMN superseded")
        db.execute("ALTER TABLE levels DROP COLUMN cores")
        db.execute("ALTER TABLE runs DROP COLUMN label")
        db.execute("UPDATE schema_version SET version = 8, layout = 'v8'")
    migrated = Store(path)
    (lv,) = migrated.load_run(run).levels
    assert lv.cores is None and lv.requests_per_s == 200.0
    lv2 = migrated.level(migrated.add_level(level(cid, 1)))
    assert lv2.level_index == 1
    migrated.close()
    Store(path).close()  # and it opens again as a store of this version


def test_past_levels_are_this_machines_valid_levels_with_their_setup(tmp_path):
    """What the plan's time estimate reads (config/estimate.py): rate, level and setup of every
    valid level measured on the machine asked for, none of another machine's."""
    store = Store(tmp_path / "s.sqlite")
    here = Environment(hostname="h", cpu_model="cpu", cores=2)
    ab = settings(driver="ab", keepalive="off", duration_s=None, requests=1000)
    run = store.start_run(run_record(environment=here, settings=ab))
    other = store.start_run(run_record(environment=Environment(hostname="x", cores=2)))
    for r in (run, other):
        c = store.add_case(case(r))
        store.add_level(level(c, 0, level_value=20.0, requests_per_s=250.0, started_at=5.0))
        store.add_level(level(c, 1, requests_per_s=0.0))  # nothing answered: no rate
        store.add_level(level(c, 2, status="failed"))
        store.add_script(
            ScriptRecord(
                run_id=r,
                stack="node",
                label="sha256?n=1",
                iterations=100,
                wall_s=0.5,
                user_s=0.4,
                sys_s=0.1,
                outcome="ok",
            )
        )
    machine = "h/cpu/2"
    (past,) = store.past_levels(machine)
    assert (past.stack, past.label, past.setup) == ("node", "sha256?n=1", "ab/closed/keepalive-off")
    assert (past.value, past.requests_per_s, past.at) == (20.0, 250.0, 5.0)
    assert store.script_iteration_s(machine) == {("node", "sha256?n=1"): 0.005}
    assert store.past_levels("nowhere/else/1") == []


def test_runs_are_named_by_number_last_or_last_tilde_n(tmp_path) -> None:
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(InputError, match="holds 0 run"):
        store.resolve_run("last")
    ids = [store.start_run(run_record()) for _ in range(3)]
    assert store.resolve_run("last") == ids[2]
    assert store.resolve_run("last~1") == ids[1]
    assert store.resolve_run("last~2") == ids[0]
    assert store.resolve_run(str(ids[0])) == ids[0]
    with pytest.raises(InputError, match=r"run 'last~3': .* holds 3 run\(s\)"):
        store.resolve_run("last~3")
    for bad in ("last~", "last~x", "prev", "last-1"):
        with pytest.raises(InputError, match="'last~N'"):
            store.resolve_run(bad)
    store.close()


def test_a_version_9_store_gains_the_runs_label_and_runs_are_named_by_it(tmp_path):
    path = tmp_path / "v9.sqlite"
    store = Store(path)
    old = store.start_run(run_record())
    store.close()
    with sqlite3.connect(path) as db:  # the store as stackbench wrote it at version 9
        db.execute("ALTER TABLE levels DROP COLUMN superseded")
        db.execute("ALTER TABLE runs DROP COLUMN label")
        db.execute("UPDATE schema_version SET version = 9, layout = 'v9'")
    migrated = Store(path)
    assert migrated.run(old).label == ""
    first = migrated.start_run(run_record(label="v2"))
    again = migrated.start_run(run_record(label="v2"))
    assert migrated.resolve_run("v2") == again != first  # the latest of that name
    with pytest.raises(InputError, match="or a run's --label"):
        migrated.resolve_run("v3")
    migrated.close()
    Store(path).close()


DISTURBED = "other processes used 13.0% of core 0 (server)"


def test_a_superseded_measurement_is_kept_apart_and_linked_to_the_one_that_replaced_it():
    """A level measured again: its first measurement is stored, marked superseded, before the
    second exists; storing the level's next standing record links it. load_run hands it
    apart, so no reader takes it for a measurement of the level."""
    store = Store(":memory:")
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    kept = store.add_level(level(cid, 0))
    first = store.add_level(
        level(cid, 1, requests_per_s=90.0, superseded=Superseded(why=DISTURBED))
    )
    assert store.level(first).superseded == Superseded(why=DISTURBED, by=None)
    other_repetition = store.add_level(level(cid, 1, repetition=1))
    assert store.level(first).superseded == Superseded(why=DISTURBED, by=None)
    again = store.add_level(level(cid, 1))
    data = store.load_run(run)
    assert [lv.id for lv in data.levels] == [kept, again, other_repetition]
    assert all(lv.stands for lv in data.levels)
    (superseded,) = data.superseded
    assert superseded.id == first and superseded.requests_per_s == 90.0
    assert superseded.superseded == Superseded(why=DISTURBED, by=again)
    store.add_level(level(cid, 1))  # a later record of the level: the link stays the first
    assert store.level(first).superseded == Superseded(why=DISTURBED, by=again)


def test_a_measurement_superseded_when_the_run_stopped_is_linked_when_it_is_resumed(tmp_path):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    first = store.add_level(level(cid, 0, superseded=Superseded(why=DISTURBED)))
    store.close()  # the run stopped before measuring the level again
    resumed = Store(path)
    assert resumed.load_run(run).levels == []  # so a resume measures the level
    again = resumed.add_level(level(cid, 0))
    (superseded,) = resumed.load_run(run).superseded
    assert (superseded.id, superseded.superseded) == (first, Superseded(why=DISTURBED, by=again))
    resumed.close()


def test_past_levels_leave_superseded_measurements_out(tmp_path):
    """The plan's estimates read the rates measured here: not a disturbed one measured again."""
    store = Store(tmp_path / "s.sqlite")
    here = Environment(hostname="h", cpu_model="cpu", cores=2)
    cid = store.add_case(case(store.start_run(run_record(environment=here))))
    store.add_level(level(cid, 0, requests_per_s=50.0, superseded=Superseded(why=DISTURBED)))
    store.add_level(level(cid, 0, requests_per_s=250.0))
    assert [p.requests_per_s for p in store.past_levels("h/cpu/2")] == [250.0]


def test_a_version_10_store_gains_the_superseded_column(tmp_path):
    path = tmp_path / "v10.sqlite"
    store = Store(path)
    run = store.start_run(run_record())
    cid = store.add_case(case(run))
    store.add_level(level(cid, 0))
    store.close()
    with sqlite3.connect(path) as db:  # the store as stackbench wrote it at version 10
        db.execute("ALTER TABLE levels DROP COLUMN superseded")
        db.execute("UPDATE schema_version SET version = 10, layout = 'v10'")
    migrated = Store(path)
    (lv,) = migrated.load_run(run).levels
    assert lv.stands and lv.requests_per_s == 200.0
    first = migrated.add_level(level(cid, 1, superseded=Superseded(why=DISTURBED)))
    again = migrated.add_level(level(cid, 1))
    assert migrated.level(first).superseded == Superseded(why=DISTURBED, by=again)
    migrated.close()
    Store(path).close()  # and it opens again as a store of this version


def test_a_run_stored_before_script_timings_reads_back_one_a_repetition(tmp_path):
    """RunSettings gained script_timings inside the runs' settings JSON (no new column): a run
    whose settings lack it reads back as one timing a repetition, as it ran."""
    path = tmp_path / "s.sqlite"
    store = Store(path)
    old = store.start_run(run_record())
    new = store.start_run(run_record(settings=settings(script_iterations=10, script_timings=3)))
    store.close()
    with sqlite3.connect(path) as db:  # the settings as a stackbench before the key wrote them
        (text,) = db.execute("SELECT settings FROM runs WHERE id = ?", (old,)).fetchone()
        written = json.loads(text)
        del written["script_timings"]
        db.execute("UPDATE runs SET settings = ? WHERE id = ?", (json.dumps(written), old))
    again = Store(path, create=False)
    assert again.run(old).settings.script_timings == 1
    assert again.run(new).settings.script_timings == 3
    again.close()
