"""`python skewed_agent.py OFFSET agent ...`: `stackbench agent` on a host whose clock reads
OFFSET seconds ahead of this one's (negative: behind).

Test hosts in network namespaces share one clock, so a test that checks that a host's clock
offset is measured and corrected launches that host's agent through this file (as its hosts
file's `stackbench` command, or a test's launcher) instead of the `stackbench` program. The
agent's own clock (`remote.agent.wall_clock`) is shifted, nothing else: the production code
keeps no hook for it. stackbench is imported from PYTHONPATH, as `python -m stackbench` is.
"""

import sys
import time

from stackbench import cli
from stackbench.remote import agent


def main() -> None:
    offset_s = float(sys.argv[1])

    def skewed() -> float:
        return time.time() + offset_s

    agent.wall_clock = skewed  # the one clock the agent reads and reports
    sys.argv = ["stackbench", *sys.argv[2:]]
    cli.main()


if __name__ == "__main__":
    main()
