# The two commands of the README. Both set everything up first (idempotent).
.PHONY: setup run test

setup:
	bash scripts/setup.sh

run: setup
	.venv/bin/stackbench run $(SUITE)

test: setup
	bash scripts/test.sh
