"""Reaching other hosts for a multi-host run: the SSH transport (ssh.py; authentication,
encryption and host-key checks are OpenSSH's), `stackbench agent` (agent.py: JSON lines over
its stdin/stdout, in practice an SSH channel), the protocol it speaks (protocol.py) and the
client the engine drives it with (client.py)."""
