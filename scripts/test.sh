#!/usr/bin/env bash
# The project's whole test suite: lint and format checks, Rust tests, Go vet, PHP lint, Python
# unit tests and the integration tests that start real servers. Every step runs even when an
# earlier one failed; the summary at the end names the failed steps and the exit code is 1.
# Run via `make test` (which sets everything up first). Extra arguments go to every pytest run.
#
# Two phases, so that the run fits a 2-core machine's time without falsifying what it measures:
#  1. Nothing in it measures, so it runs concurrently: the Python unit tests on every core
#     (pytest-xdist, one worker per core) and, beside them, one background lane with the
#     checks and builds: ruff, mypy, every available stack's build (scripts/build_stacks.py),
#     cargo fmt/clippy and the Rust test builds, go vet, php -l. The lane's
#     output is printed when it and phase 2a are done.
#  2a. The Python tests marked `integration` and `concurrent`: they start real servers but
#     judge correctness only (what is served, stored, refused, left behind), so they run two at
#     a time (one module per worker), as soon as the unit tests are done and the lane has built
#     the stacks, beside the rest of the lane.
#  2b. Alone on the machine, one test at a time: the tests that time things or pin cores (the
#     Rust crates' tests, built in phase 1, and the other Python tests marked `integration` or
#     `serial`). tests/conftest.py fails an unmarked test that starts a server.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
step() {
  local name="$1"; shift
  local start=$SECONDS
  echo; echo "=== $name"
  if ! "$@"; then failed+=("$name"); fi
  echo "--- $name: $((SECONDS - start)) s"
}

PY_TREES=(stackbench tests loadgen/tests loadgen/bench workloads benchmarks scripts)
# The Rust test builds (phase 1) and test runs (phase 2) share these settings, so phase 2 finds
# its binaries built: no incremental state (a one-off build gains nothing from it) and line
# tables only for debug info (a panic still names its file and line), as CI builds usually do.
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only CARGO_PROFILE_TEST_DEBUG=line-tables-only
CRATES=()
for crate in loadgen stacks/rust-hyper; do
  [ -f "$crate/Cargo.toml" ] && CRATES+=("$crate")
done

# A crate's extra arguments for its test build and run. stacks/rust-hyper's unit tests build
# with the release profile into the stack's own build directory, where build_stacks.py (earlier
# in the lane) has just built the server: only the crate compiles again (16 s of CPU), not
# hyper, tokio and mysql_async a second time in debug (105 s). They test the code as it is
# benchmarked (the crate has no debug assertions). The loader's release profile aborts on a
# panic, which a test harness cannot, so its tests keep their own debug build.
test_args() {
  TEST_ARGS=()
  if [ "$1" = stacks/rust-hyper ]; then
    local built
    built=$(.venv/bin/python -c "from pathlib import Path
from stackbench.config.manifest import parse_manifest
from stackbench.lab.build import build_dir_for
print(build_dir_for(parse_manifest(Path('stacks/rust-hyper/stack.toml'))))") || return 1
    TEST_ARGS=(--release --target-dir "$built/target")
  fi
}

rust_lint() {
  (cd "$1" && cargo fmt --check && cargo clippy --locked --all-targets -q -- -D warnings)
}

rust_test_build() {
  # The test binaries are built here; they run in phase 2b (rust_tests), alone.
  test_args "$1" || return 1
  (cd "$1" && cargo test --locked -q --no-run "${TEST_ARGS[@]}")
}

rust_tests() {
  test_args "$1" || return 1
  (cd "$1" && cargo test --locked -q "${TEST_ARGS[@]}")
}

php_lint() {
  local bad=0
  while IFS= read -r -d '' file; do
    php -l "$file" >/dev/null || { echo "php -l failed: $file"; bad=1; }
  done < <(find stacks -name '*.php' -not -path '*/vendor/*' -print0)
  return $bad
}

# pytest exits 5 when it collected nothing: a failure for the whole suite, but expected when
# the caller's arguments (-k, a path) select tests of one phase only.
pytest_phase() {
  # The short summary's FAILED/ERROR lines are kept for the end of the whole run, so that a
  # reader of only its last lines (a CI log's tail) still sees which tests failed.
  .venv/bin/pytest -q -p no:cacheprovider --durations=25 "$@" | tee -a "$PYTEST_LOG"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 5 ] && [ "$EXTRA_ARGS" -gt 0 ]; then return 0; fi
  return "$rc"
}
EXTRA_ARGS=$#

# Phase 1, the background lane: runs in a subshell, so it hands its failed steps back in a file.
checks_and_builds() {
  # First what phase 2a waits for: the stacks its tests start, and the test builds of the
  # crates that are stacks (rust-hyper's lands in that stack's build directory). Then, beside
  # phase 2a, what touches nothing a test starts: the checks, and the loader's test build (in
  # loadgen/target/debug; the tests start its release binary, built by setup).
  step "build every available stack" .venv/bin/python scripts/build_stacks.py
  local crate
  for crate in "${CRATES[@]}"; do
    [ "$crate" = loadgen ] || step "cargo test build: $crate" rust_test_build "$crate"
  done
  : >"$STACKS_BUILT"
  step "ruff check" .venv/bin/ruff check "${PY_TREES[@]}"
  step "ruff format --check" .venv/bin/ruff format --check "${PY_TREES[@]}"
  step "mypy --strict" .venv/bin/mypy
  step "suite files parse" .venv/bin/python -c \
    "import sys, pathlib, tomllib; [tomllib.loads(p.read_text()) for p in pathlib.Path('suites').glob('*.toml')]"
  for crate in "${CRATES[@]}"; do
    step "cargo fmt/clippy: $crate" rust_lint "$crate"
    [ "$crate" != loadgen ] || step "cargo test build: $crate" rust_test_build "$crate"
  done
  [ -f stacks/go-nethttp/go.mod ] && step "go vet: stacks/go-nethttp" \
    bash -c "cd stacks/go-nethttp && go vet ./..."
  command -v php >/dev/null && step "php -l: stacks" php_lint
  printf '%s\n' "${failed[@]}" >"$LANE_FAILED"
}

LANE_LOG=$(mktemp)
LANE_FAILED=$(mktemp)
PYTEST_LOG=$(mktemp)
STACKS_BUILT=$(mktemp -u)  # made by the lane once the stacks the integration tests start are built
trap 'rm -f "$LANE_LOG" "$LANE_FAILED" "$PYTEST_LOG" "$STACKS_BUILT"' EXIT

echo "=== phase 1: unit tests on $(nproc) cores, checks and builds beside them"
checks_and_builds >"$LANE_LOG" 2>&1 &
lane=$!
# worksteal: a worker that runs out of tests takes some of the other's, so one slow module
# near the end does not leave a core idle.
step "pytest: unit tests (parallel)" pytest_phase -m "not integration and not serial" \
  -n "$(nproc)" --dist worksteal "$@"

echo; echo "=== phase 2a: the integration tests that judge correctness only, $(nproc) at a time"
echo "(once the stacks are built, beside the rest of the checks and builds)"
while [ ! -e "$STACKS_BUILT" ] && kill -0 "$lane" 2>/dev/null; do sleep 1; done
# loadfile: a module's tests on one worker, so its module-scoped servers (MariaDB, the test
# hosts' sshds) start once and never twice side by side.
step "pytest: integration tests (concurrent)" pytest_phase -m "integration and concurrent" \
  -n "$(nproc)" --dist loadfile "$@"
wait "$lane"
echo; echo "=== (the checks and builds that ran beside the unit tests and phase 2a:)"
cat "$LANE_LOG"
while IFS= read -r name; do
  [ -n "$name" ] && failed+=("$name")
done <"$LANE_FAILED"

echo; echo "=== phase 2b: alone, one test at a time"
for crate in "${CRATES[@]}"; do
  step "cargo test: $crate" rust_tests "$crate"
done
step "pytest: integration and serial tests" pytest_phase \
  -m "(integration or serial) and not concurrent" "$@"

echo
if [ ${#failed[@]} -gt 0 ]; then
  grep -E '^(FAILED|ERROR) ' "$PYTEST_LOG" | cut -c1-300
  echo "FAILED steps: ${failed[*]}"
  exit 1
fi
echo "all test steps passed"
