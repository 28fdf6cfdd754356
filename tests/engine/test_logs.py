"""Where the logs of each start of a stack or service go: run-N/logs/<name>/, then start-N/."""

from stackbench.engine.runner import copy_logs, free_log_dir, write_fetched_logs
from stackbench.lab.fs import read_log


def test_each_start_gets_its_own_log_directory(tmp_path):
    run_dir, logs = tmp_path / "run", tmp_path / "logs" / "node"
    run_dir.mkdir()
    (run_dir / "server.log").write_text("first start")
    (run_dir / "notes.txt").write_text("not a log")
    assert copy_logs(run_dir, logs) == logs
    assert sorted(p.name for p in logs.iterdir()) == ["server.log"]
    (run_dir / "server.log").write_text("second start")
    assert copy_logs(run_dir, logs) == logs / "start-2"
    assert copy_logs(run_dir, logs) == logs / "start-3"
    assert (logs / "server.log").read_text() == "first start"
    assert (logs / "start-2" / "server.log").read_text() == "second start"
    assert free_log_dir(logs) == logs / "start-4"


def test_symlinks_and_empty_directories_are_not_copied(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("root only")
    (run_dir / "error.log").symlink_to(secret)  # planted by a process under test
    assert copy_logs(run_dir, tmp_path / "logs") is None
    assert not (tmp_path / "logs").exists()
    assert copy_logs(tmp_path / "missing", tmp_path / "logs") is None


def test_logs_fetched_from_another_host_keep_plain_names_only(tmp_path):
    base = tmp_path / "logs" / "go-nethttp"
    write_fetched_logs(
        {
            "server.log": "first",
            "mariadb/mariadb.log": "db",
            "../../escape.log": "no",
            "/etc/cron.d/x.log": "no",
            "a/./b.log": "no",
        },
        base,
    )
    assert sorted(str(p.relative_to(base)) for p in base.rglob("*.log")) == [
        "mariadb/mariadb.log",
        "server.log",
    ]
    assert not (tmp_path / "escape.log").exists()
    write_fetched_logs({"server.log": "second"}, base)  # a restart: its own directory
    assert (base / "start-2" / "server.log").read_text() == "second"
    write_fetched_logs({}, tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_a_log_is_read_whole_or_its_tail_and_never_through_a_symlink(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("0123456789")
    assert read_log(log, 100) == "0123456789"
    assert read_log(log, 4) == "[... the first 6 bytes left out]\n6789"
    (tmp_path / "evil.log").symlink_to(log)
    assert read_log(tmp_path / "evil.log", 100) is None
    assert read_log(tmp_path / "missing.log", 100) is None
