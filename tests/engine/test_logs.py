"""Where the logs of each start of a stack or service go: run-N/logs/<name>/, then start-N/."""

from stackbench.engine.runner import copy_logs, free_log_dir


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
