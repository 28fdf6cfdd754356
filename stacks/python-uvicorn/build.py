"""Build the python-uvicorn stack: a virtual environment in BUILD_DIR with the exact packages
of requirements.lock (no dependency resolution at build time: the lock lists every package).

Run by stackbench in the stack folder as `python3 build.py BUILD_DIR`.
"""

import subprocess
import sys
import venv
from pathlib import Path


def main() -> None:
    build_dir = Path(sys.argv[1])
    env_dir = build_dir / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    lock = Path(__file__).with_name("requirements.lock")
    subprocess.run(
        [
            str(env_dir / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "-r",
            str(lock),
        ],
        check=True,
    )


if __name__ == "__main__":
    main()
