"""`stackbench history` on a real server whose CPU is capped part-way: does it place a change
point where the cap starts, and none over the same number of uncapped (A/A) runs?

    .venv/bin/python benchmarks/history_cap.py                 # 6 runs, capped from run 4
    .venv/bin/python benchmarks/history_cap.py --runs 10 --cap-from 0   # 10 A/A runs

The server is a small Python HTTP server started here by hand (tests/fakes/external_hello.py,
as the unprivileged `stackbench` user) and named to stackbench as `[external.app]` with its
pid, so the cap is the only thing that changes between runs: stackbench never restarts an
external server. From run `--cap-from` on, the server's cgroup gets a CPU quota of `--quota`
of one core (cgroup v1 `cpu.cfs_quota_us`, or v2 `cpu.max`). Each run is one 8-s level at 8
connections, labelled r1, r2, ...; then `stackbench history` prints the series with its
change points. Needs root (the cgroup) and a quiet machine; prints, asserts nothing.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "fakes" / "external_hello.py"
V1 = Path("/sys/fs/cgroup/cpu")
V2 = Path("/sys/fs/cgroup/unified")
PERIOD_US = 100_000


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _cgroup(name: str) -> tuple[Path, str]:
    """A new cgroup the server moves into, and how it is capped ('v1' or 'v2')."""
    if (V1 / "cpu.cfs_quota_us").exists():
        path = V1 / name
        path.mkdir(exist_ok=True)
        return path, "v1"
    path = V2 / name
    path.mkdir(exist_ok=True)
    return path, "v2"


def _cap(group: Path, kind: str, share: float | None) -> None:
    quota = -1 if share is None else int(share * PERIOD_US)
    if kind == "v1":
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(quota))
    else:
        (group / "cpu.max").write_text(f"{'max' if quota < 0 else quota} {PERIOD_US}")


def _suite(folder: Path, port: int, pid: int) -> Path:
    path = folder / "capped.toml"
    path.write_text(
        'name = "capped"\nstacks = []\nworkloads = ["hello"]\n'
        "[load]\nconnections = [8]\nduration_s = 8\nwarmup_s = 1\npause_s = 0\n"
        f'[external.app]\nurl = "http://127.0.0.1:{port}"\nworkloads = ["hello"]\n'
        f"pids = [{pid}]\n"
    )
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--cap-from", type=int, default=4, help="0: never (A/A)")
    parser.add_argument("--quota", type=float, default=0.6, help="of one core")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="stackbench-history-"))
    folder.chmod(0o755)
    out = args.out or folder / "results"
    script = folder / "hello.py"
    shutil.copy(SERVER, script)
    script.chmod(0o644)
    port = _free_port()
    server = subprocess.Popen(
        ["/usr/bin/python3", str(script), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # a broken pipe per connection the loader closes at the end
        text=True,
        cwd=folder,
        user="stackbench",
    )
    group, kind = _cgroup(f"stackbench-history-cap-{os.getpid()}")
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        (group / "cgroup.procs").write_text(str(server.pid))
        suite = _suite(folder, port, server.pid)
        for run in range(1, args.runs + 1):
            capped = bool(args.cap_from) and run >= args.cap_from
            _cap(group, kind, args.quota if capped else None)
            print(
                f"run r{run}: {'capped at ' + str(args.quota) + ' core' if capped else 'uncapped'}"
            )
            done = subprocess.run(
                [sys.executable, "-m", "stackbench", "run", str(suite), "--out", str(out),
                 "--label", f"r{run}", "--no-calibrate"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-2000:])
                return done.returncode
        history = [sys.executable, "-m", "stackbench", "history", "--out", str(out)]
        subprocess.run([*history, "--stack", "app"], check=False)
        return 0
    finally:
        server.terminate()
        server.wait(timeout=10)
        group.rmdir()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
