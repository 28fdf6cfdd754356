#!/usr/bin/env bash
# The project's whole test suite: lint and format checks, Rust tests, Go vet, PHP lint, Python
# unit tests and the integration tests that start real servers. Every step runs even when an
# earlier one failed; the summary at the end names the failed steps and the exit code is 1.
# Run via `make test` (which sets everything up first). Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
step() {
  local name="$1"; shift
  echo; echo "=== $name"
  if ! "$@"; then failed+=("$name"); fi
}

rust_checks() {
  (cd "$1" && cargo fmt --check && cargo clippy --locked --all-targets -q -- -D warnings \
     && cargo test --locked -q)
}

php_lint() {
  local bad=0
  while IFS= read -r -d '' file; do
    php -l "$file" >/dev/null || { echo "php -l failed: $file"; bad=1; }
  done < <(find stacks -name '*.php' -not -path '*/vendor/*' -print0)
  return $bad
}

PY_TREES=(stackbench tests loadgen/tests loadgen/bench workloads benchmarks scripts)
step "ruff check" .venv/bin/ruff check "${PY_TREES[@]}"
step "ruff format --check" .venv/bin/ruff format --check "${PY_TREES[@]}"
step "mypy --strict" .venv/bin/mypy
step "suite files parse" .venv/bin/python -c \
  "import sys, pathlib, tomllib; [tomllib.loads(p.read_text()) for p in pathlib.Path('suites').glob('*.toml')]"
for crate in loadgen stacks/rust-hyper; do
  [ -f "$crate/Cargo.toml" ] && step "cargo fmt/clippy/test: $crate" rust_checks "$crate"
done
fuzz_parser() {
  if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "skipped: no nightly toolchain (rustup toolchain install nightly); the stable"
    echo "property tests of the parser ran in cargo test"
    return 0
  fi
  loadgen/fuzz/run.sh 30
}
[ -f loadgen/fuzz/run.sh ] && step "fuzz the loader's response parser (30 s)" fuzz_parser
[ -f stacks/go-nethttp/go.mod ] && step "go vet: stacks/go-nethttp" \
  bash -c "cd stacks/go-nethttp && go vet ./..."
command -v php >/dev/null && step "php -l: stacks" php_lint
step "pytest" .venv/bin/pytest -q -p no:cacheprovider "$@"

echo
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED steps: ${failed[*]}"
  exit 1
fi
echo "all test steps passed"
