#!/usr/bin/env bash
# `make fuzz`: fuzzes the load generator's HTTP response parser for SECONDS (default 300),
# installing cargo-fuzz first when it is missing (once, a few minutes of cargo install). Needs
# the nightly toolchain (`rustup toolchain install nightly`); the stable property tests of the
# same parser run in every `make test` (loadgen/tests/http_props.rs). Kept out of `make test`:
# building the fuzz target alone costs about 1.5 min of CPU, and a fuzz run finds more the
# longer it runs, which a test run's time cannot give it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: the nightly toolchain is missing: rustup toolchain install nightly" >&2
  exit 3
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: cargo install cargo-fuzz --locked (once)"
  cargo install cargo-fuzz --locked -q
fi
exec loadgen/fuzz/run.sh "$seconds"
