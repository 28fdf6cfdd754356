"""lab/fs.py log_tail: the end of a log the process under test could have replaced, read
without following a symlink and only from a regular file."""

import os

from stackbench.lab.fs import log_tail


def test_the_last_lines_of_a_log(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert log_tail(log, 3) == "line 97\nline 98\nline 99"
    assert log_tail(log, 5, max_bytes=16) == "line 98\nline 99"  # only the end is read


def test_an_empty_or_missing_log_says_so(tmp_path):
    (tmp_path / "empty.log").write_text("")
    assert log_tail(tmp_path / "empty.log", 5) == "(log is empty)"
    assert "unreadable" in log_tail(tmp_path / "missing.log", 5)


def test_a_log_replaced_by_a_symlink_or_a_fifo_is_not_read(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("root:x:0:0\n")
    (tmp_path / "server.log").symlink_to(secret)
    assert "root:x" not in log_tail(tmp_path / "server.log", 5)
    os.mkfifo(tmp_path / "fifo.log")
    assert log_tail(tmp_path / "fifo.log", 5).endswith("is not a regular file)")
