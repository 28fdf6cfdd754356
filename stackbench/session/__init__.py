"""Starting a stack with what it needs, above the machine side: `stacks.py` composes the
stack (lab), its data services (services) and the verifiers (verify) into the one way to run
a stack, for a run, `stackbench verify`, `stackbench script` and the agent alike; `script.py`
runs a workload's code in one process without HTTP, with the same services. lab/ knows
neither services nor verify: the composition lives here."""
