"""stackbench: which web stack should I run? Evidence instead of folklore."""

__version__ = "0.1.0"
