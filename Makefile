# The two commands of the README (both set up what they need first, idempotent), and `schema`.
# `setup` is what running needs; `setup-test` adds what only the tests need (Chromium, sshd,
# the Python test tools), so `make run` on a fresh machine installs none of it.
.PHONY: setup setup-test run test fuzz schema

setup:
	bash scripts/setup.sh

setup-test: setup
	bash scripts/setup-test.sh

run: setup
	.venv/bin/stackbench run $(SUITE)

test: setup-test
	bash scripts/test.sh

# The load generator's response parser under libFuzzer for FUZZ_SECONDS (nightly + cargo-fuzz,
# installed once by the script); not part of `make test`, whose time it would take.
FUZZ_SECONDS ?= 300
fuzz: setup-test
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# docs/schema/results.schema.json from the types of results.json (stackbench/report/
# document.py); a test fails when the committed file is stale. Needs the venv of `setup`.
schema:
	.venv/bin/python -m stackbench.report.schema docs/schema/results.schema.json
