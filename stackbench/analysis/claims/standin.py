"""Stand-ins: which stack of the plan a claim reads in place of one the article ran, where
the server has fewer cores than the claim needs and the claim accepts a per-core reading
(config.claims.StandIn), and the words every verdict resting on one carries.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from stackbench.config.claims import Claim, workloads_read


@dataclass(frozen=True)
class StandIns:
    """The stacks a claim reads in place of those its test names, on this server."""

    by: Mapping[str, str]  # the test's stack -> the stack read in its place
    on: Mapping[tuple[str, str], str] = field(default_factory=dict)  # ... on one workload
    words: str = ""  # what stands in for what, said with every verdict resting on it

    def stack(self, name: str, workload: str | None = None) -> str:
        """The stack read for `name` (on `workload`, when one is given)."""
        if workload is not None and (name, workload) in self.on:
            return self.on[(name, workload)]
        return self.by.get(name, name)


NONE = StandIns({})


def stand_ins(claim: Claim, server_cores: int) -> StandIns | None:
    """The claim's stand-ins when this server has fewer cores than it requires and it names
    some (None: the claim is read as written)."""
    if not claim.stand_in or server_cores >= claim.requires.server_cores:
        return None
    cores = f"on {server_cores} core" + ("" if server_cores == 1 else "s")
    named = set(workloads_read(claim.test))  # none named: the test reads every workload
    parts = []
    on: dict[tuple[str, str], str] = {}
    for s in claim.stand_in:
        text = f"{s.by} ({s.ours}, {cores}) stands in for {s.stack} ({s.article})"
        read = {w: name for w, name in s.on.items() if not named or w in named}
        if read:  # said only where the claim reads such a workload
            where = ", ".join(f"on {w} {name}" for w, name in read.items())
            text += f", {where} ({s.on_why})"
        parts.append(text)
        on.update({(s.stack, w): name for w, name in s.on.items()})
    words = "; ".join(parts) + ": per core"
    return StandIns({s.stack: s.by for s in claim.stand_in}, on, words)
