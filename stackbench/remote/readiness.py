"""This host's readiness for a run: what the agent answers to `readiness` and what
`hosts check` compares every other host's with (Python, the native loader, every stack's
availability, the open-files limit and somaxconn as `doctor` judges them)."""

import platform
import resource

from stackbench.config.paths import loadgen_binary
from stackbench.config.status import unavailable_reason
from stackbench.lab.environment import git_revision, read_text
from stackbench.lab.inventory import load_inventory
from stackbench.lab.machine import check_nofile, check_somaxconn
from stackbench.remote.protocol import HostReadiness, Limit


def local_readiness() -> HostReadiness:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    somaxconn = read_text("/proc/sys/net/core/somaxconn")
    limits = tuple(
        Limit(c.name, c.verdict.value, c.value, c.advice)
        for c in (check_nofile(), check_somaxconn())
    )
    return HostReadiness(
        python=platform.python_version(),
        git_rev=git_revision(),
        loader=loadgen_binary().exists(),
        stacks={name: unavailable_reason(entry) for name, entry in load_inventory().items()},
        nofile_soft=soft,
        nofile_hard=hard,
        somaxconn=int(somaxconn) if somaxconn and somaxconn.isdigit() else None,
        limits=limits,
    )
