"""Stale runs: the decision (is the owner gone?) on hand-made runs, and the clean-up on a real
store with a fake process table."""

import os
import socket
import tempfile
from pathlib import Path

import psutil

from stackbench.engine.recovery import (
    current_owner,
    owner_gone,
    process_start_time,
    recover_stale_runs,
    removable_scratch,
)
from stackbench.store.store import Store
from tests.store.test_store import run_record

HOST = "bench-1"


def running(**owner: object) -> object:
    values: dict[str, object] = dict(owner_pid=4242, owner_started_at=1000.0, owner_host=HOST)
    values.update(owner)
    store = Store(":memory:")
    run_id = store.start_run(run_record(**values))
    return store.run(run_id)


def test_a_live_owner_keeps_its_run():
    assert not owner_gone(running(), HOST, {4242: 1000.0}.get)
    assert not owner_gone(running(), HOST, {4242: 1000.4}.get)  # the same process, rounded


def test_a_vanished_owner_leaves_a_stale_run():
    assert owner_gone(running(), HOST, {}.get)


def test_a_reused_pid_is_not_the_owner():
    assert owner_gone(running(), HOST, {4242: 5000.0}.get)  # another process, started later


def test_what_cannot_be_judged_is_left_alone():
    assert not owner_gone(running(owner_host="bench-2"), HOST, {}.get)  # another machine
    assert not owner_gone(running(owner_pid=0), HOST, {}.get)  # no owner recorded
    assert not owner_gone(running(), HOST, {4242: -1.0}.get)  # exists, start time hidden
    store = Store(":memory:")
    done = store.start_run(run_record(owner_pid=4242, owner_started_at=1.0, owner_host=HOST))
    store.finish_run(done, "complete")
    assert not owner_gone(store.run(done), HOST, {}.get)  # only running runs are stale


def test_this_process_is_a_live_owner():
    me = current_owner()
    assert me.pid == os.getpid() and me.host == socket.gethostname()
    assert process_start_time(me.pid) == me.started_at == psutil.Process().create_time()
    assert not owner_gone(
        running(owner_pid=me.pid, owner_started_at=me.started_at, owner_host=me.host),
        me.host,
        process_start_time,
    )


def test_only_a_stackbench_dir_directly_in_the_temp_dir_is_removable(tmp_path):
    root = tmp_path / "tmp"
    root.mkdir()
    scratch = root / "stackbench-abc"
    scratch.mkdir()
    assert removable_scratch(str(scratch), root) == scratch.resolve()
    other = root / "data"
    other.mkdir()
    deeper = scratch / "stackbench-inner"
    deeper.mkdir()
    link = root / "stackbench-link"
    link.symlink_to(other)
    outside = tmp_path / "stackbench-outside"
    outside.mkdir()
    for path in (
        other,
        deeper,
        link,
        outside,
        root / "stackbench-missing",
        root / "stackbench-abc" / ".." / "data",
    ):
        assert removable_scratch(str(path), root) is None, path
    assert removable_scratch("", root) is None
    assert removable_scratch("stackbench-abc", root) is None  # relative


def test_stale_runs_are_marked_interrupted_and_their_scratch_removed(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    scratch = Path(tempfile.mkdtemp(prefix="stackbench-", dir=tmp_path))
    (scratch / "services").mkdir()
    (scratch / "services" / "mariadb.log").write_text("x" * 1000)
    stale = store.start_run(
        run_record(owner_pid=111, owner_started_at=5.0, owner_host=HOST, scratch_dir=str(scratch))
    )
    alive = store.start_run(run_record(owner_pid=222, owner_started_at=7.0, owner_host=HOST))
    other_host = store.start_run(
        run_record(owner_pid=111, owner_started_at=5.0, owner_host="bench-2")
    )
    unsafe = store.start_run(
        run_record(owner_pid=333, owner_started_at=9.0, owner_host=HOST, scratch_dir=str(tmp_path))
    )
    recovered = recover_stale_runs(store, HOST, {222: 7.0}.get, temp_root=tmp_path)
    assert [(r.run_id, r.owner_pid, r.removed) for r in recovered] == [
        (stale, 111, scratch),
        (unsafe, 333, None),
    ]
    assert not scratch.exists() and tmp_path.is_dir()
    assert {r.id: r.status for r in store.runs()} == {
        stale: "interrupted",
        alive: "running",
        other_host: "running",
        unsafe: "interrupted",
    }
    assert store.run(stale).finished_at is not None
    assert (
        "run 1 was left running by process 111, which is gone: marked interrupted; "
        f"removed its temporary files {scratch}. Continue it with 'stackbench run "
        "--resume 1'" == recovered[0].describe()
    )
    assert recover_stale_runs(store, HOST, {222: 7.0}.get, temp_root=tmp_path) == []
