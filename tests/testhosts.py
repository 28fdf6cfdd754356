"""The network-namespace test hosts of scripts/testhosts.sh, for the tests that use them."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackbench.config.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "testhosts.sh"
STATE = Path("/run/stackbench-testhosts")
HOSTS_FILE = STATE / "hosts.toml"

# What the test hosts need: root (namespaces, sshd), the sshd binary and iproute2.
NEEDS_TEST_HOSTS = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and sshd need root"),
    pytest.mark.skipif(
        not Path("/usr/sbin/sshd").exists(),
        reason="no /usr/sbin/sshd: make setup-test installs openssh-server",
    ),
    pytest.mark.skipif(shutil.which("ip") is None, reason="no ip (iproute2)"),
]


def run_testhosts(*args: str) -> subprocess.CompletedProcess[str]:
    # Without a .venv in this checkout, the hosts run this interpreter with this checkout.
    env = {**os.environ, "STACKBENCH_PYTHON": sys.executable}
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
