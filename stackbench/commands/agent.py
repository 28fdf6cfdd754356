"""`stackbench agent` (hidden): the remote side of a multi-host run, started by the
controller over SSH; it speaks JSON lines on stdin/stdout (stackbench/remote/agent.py)."""

from pathlib import Path

from stackbench.remote.agent import run_agent


def agent_command(run_dir: Path, heartbeat_s: float, keep: bool) -> int:
    """Serve one controller until it says bye, closes the channel or goes silent; the exit
    code is the agent's (0 after bye or end of file)."""
    return run_agent(run_dir, heartbeat_s, keep)
