#!/usr/bin/env bash
# The project's whole test suite: lint and format checks, Rust tests, Python unit tests and
# the integration tests that start real servers. Run via `make test` (which sets up first).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { echo; echo "=== $*"; }

step "ruff"
.venv/bin/ruff check stackbench tests loadgen/tests workloads

for crate in loadgen stacks/rust-hyper; do
  [ -f "$crate/Cargo.toml" ] || continue
  step "cargo fmt / clippy / test: $crate"
  (cd "$crate" && cargo fmt --check && cargo clippy --locked --all-targets -q -- -D warnings \
     && cargo test --locked -q 2>&1 | tail -n 30)
done

if [ -f stacks/go-nethttp/go.mod ]; then
  step "go vet: stacks/go-nethttp"
  (cd stacks/go-nethttp && go vet ./...)
fi

step "pytest"
.venv/bin/pytest -q "$@"
