from stackbench.store.store import Store


def level_row(index: int, **extra):
    row = {
        "level_index": index, "level_value": 25.0, "repetition": 0, "driver": "native",
        "mode": "closed", "keepalive": "on", "started_at": 1.0, "duration_s": 5.0,
        "completed": 1000, "ok": 998, "errors": {"timeout": 2}, "requests_per_s": 200.0,
        "latency_us": {"p50": 100.0, "p99": 900.0}, "usage": {"server": {"cpu_percent": 95.0}},
        "flags": [], "status": "ok", "command": "stackbench-load ...",
    }
    row.update(extra)
    return row


def test_round_trip_in_memory():
    store = Store(":memory:")
    run = store.start_run("quick", "suites/quick.toml", "name='quick'", {"mode": "closed"},
                          {"cores": 2})
    case = store.add_case(run, "node", "sha256", "sha256?n=1", "/sha256?n=1", {"workers": "1"})
    store.add_verification(run, "node", "sha256", True, 5, [])
    store.add_level(case, level_row(0, histogram="HISTFAAA", loader_cpu_s=(1.0, 0.5),
                                    timeseries=[{"t_s": 1, "completed": 10}]))
    store.set_case_status(case, "ok")
    store.finish_run(run, "complete")
    data = store.load_run(store.resolve_run("last"))
    assert data.run.status == "complete" and data.run.environment == {"cores": 2}
    (c,) = data.cases
    assert c.status == "ok" and c.params == {"workers": "1"}
    (lv,) = data.levels_of(c.id)
    assert lv.errors == {"timeout": 2} and lv.errors_total == 2
    assert lv.latency_us == {"p50": 100.0, "p99": 900.0} and lv.loader_cpu_s == (1.0, 0.5)
    assert lv.histogram == "HISTFAAA" and lv.timeseries == [{"t_s": 1, "completed": 10}]
    assert data.verifications[0].ok and data.verifications[0].checked == 5


def test_each_level_is_committed_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    writer = Store(path)
    run = writer.start_run("q", "q.toml", "", {}, {})
    case = writer.add_case(run, "go", "hello", "hello", "/hello", {})
    writer.add_level(case, level_row(0))
    # A second connection (another process, or after a crash) sees it without any close().
    reader = Store(path)
    assert len(reader.load_run(run).levels) == 1
    assert reader.load_run(run).run.status == "running"


def test_fail_pending_cases_keeps_finished_ones():
    store = Store(":memory:")
    run = store.start_run("q", "q.toml", "", {}, {})
    done = store.add_case(run, "go", "hello", "hello", "/hello", {})
    pending = store.add_case(run, "go", "sha256", "sha256", "/sha256?n=1", {})
    store.set_case_status(done, "ok")
    store.fail_pending_cases([done, pending], "stack crashed")
    statuses = {c.id: (c.status, c.reason) for c in store.load_run(run).cases}
    assert statuses == {done: ("ok", ""), pending: ("failed", "stack crashed")}
