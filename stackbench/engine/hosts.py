"""The other hosts of a multi-host run: one SSH link and one `stackbench agent` per host,
opened before the run starts and closed (bye, then the link) whatever happens.

Opening checks what a run relies on: the host logs in with its key checked (an unknown or
changed key stops here with the command that fixes it, see remote/ssh.py), its agent runs the
same stackbench version, and its clock offset is measured (NTP's four-timestamp exchange over
the channel): a loader's start time is sent on its own clock, and its measured start is brought
back to ours. The agent stops everything it started when the channel ends or the heartbeat
stops, so a controller that dies leaves nothing running over there.
"""

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field

from stackbench import __version__
from stackbench.config.hosts import Host, HostsFile
from stackbench.errors import EnvironmentProblem, HostLost
from stackbench.remote.client import RemoteHost, agent_argv
from stackbench.remote.clock import ClockSample
from stackbench.remote.protocol import AgentInfo
from stackbench.remote.ssh import SshLink
from stackbench.store.records import HostFacts

# The agent stops everything when no message came for this long; the client beats every 3 s.
AGENT_HEARTBEAT_S = 10.0


@dataclass
class Agent:
    """One host's agent, as the engine drives it."""

    host: Host
    link: SshLink
    client: RemoteHost
    info: AgentInfo
    clock: ClockSample
    run_dir: str  # everything the agent writes on that host (removed at the end unless kept)
    # the user's own stacks copied to this host this run (RemoteHost.put_stack), by name
    stacks_put: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.host.name

    def facts(self) -> HostFacts:
        """What the run records about the host (its environment's `hosts` entry)."""
        return HostFacts(
            address=self.host.address,
            hostname=self.info.hostname,
            run_dir=self.run_dir,
            version=self.info.version,
            cores=tuple(self.info.cores),
            clock_offset_s=self.clock.offset_s,
            clock_delay_s=self.clock.delay_s,
        )


@dataclass
class RemoteHosts:
    """The agents of one run, by host name; a context manager that closes them all."""

    agents: dict[str, Agent] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Agent:
        return self.agents[name]

    def facts(self) -> dict[str, HostFacts]:
        return {name: agent.facts() for name, agent in self.agents.items()}

    def close(self) -> None:
        for agent in self.agents.values():
            agent.client.close()  # never raises
            agent.link.close()
        self.agents.clear()

    def __enter__(self) -> "RemoteHosts":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_hosts(hosts: HostsFile, names: Sequence[str], keep: bool = False) -> RemoteHosts:
    """An agent on every named host, checked; on any failure the ones opened are closed.
    With `keep`, each agent leaves its run directory on its host at the end."""
    opened = RemoteHosts()
    try:
        for name in names:
            opened.agents[name] = _open_agent(hosts.hosts[name], keep)
    except BaseException:
        opened.close()
        raise
    return opened


def _open_agent(host: Host, keep: bool) -> Agent:
    link = SshLink(host)
    try:
        link.check()  # a host key problem stops here, with the command that fixes it
        return start_agent(link, keep)
    except BaseException:
        link.close()
        raise


def start_agent(link: SshLink, keep: bool = False) -> Agent:
    """Start the agent over `link` (checked), check its version and measure its clock offset:
    what every use of another host starts with, a run's and `hosts check`'s. The caller closes
    the agent's client (and the link)."""
    host = link.host
    run_dir = f"/tmp/stackbench-agent-{socket.gethostname()}-{os.getpid()}-{host.name}"
    argv = agent_argv(host.stackbench, run_dir, AGENT_HEARTBEAT_S, keep=keep)
    client = RemoteHost(host.name, link.open(argv))
    try:
        info = client.hello()
        if info.version != __version__:
            raise EnvironmentProblem(
                f"{host.label} runs stackbench {info.version}, this is {__version__}: "
                f"update its checkout ({host.checkout}) and run 'stackbench hosts setup'"
            )
        clock = client.clock_offset()
    except HostLost as exc:
        client.close()
        raise EnvironmentProblem(
            f"{host.label}: its agent (`{' '.join(argv)}`) did not answer ({exc.what}): set "
            "stackbench = in the hosts file to the stackbench command there, or run "
            "'stackbench hosts setup'"
        ) from exc
    except BaseException:
        client.close()
        raise
    return Agent(host, link, client, info, clock, run_dir)
