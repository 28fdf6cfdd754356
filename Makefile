# The two commands of the README (both set everything up first, idempotent), and `schema`.
.PHONY: setup run test schema

setup:
	bash scripts/setup.sh

run: setup
	.venv/bin/stackbench run $(SUITE)

test: setup
	bash scripts/test.sh

# docs/schema/results.schema.json from the types of results.json (stackbench/report/
# document.py); a test fails when the committed file is stale. Needs the venv of `setup`.
schema:
	.venv/bin/python -m stackbench.report.schema docs/schema/results.schema.json
