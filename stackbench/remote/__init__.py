"""The remote side of a multi-host run and the controller's view of it: `stackbench agent`
(JSON lines over its stdin/stdout, in practice an SSH channel), the protocol it speaks, and the
client the engine drives it with."""
