"""Reaching other hosts: the SSH transport (ssh.py) that multi-host runs and `stackbench hosts`
use. Transport only: authentication, encryption and host-key checks are OpenSSH's."""
