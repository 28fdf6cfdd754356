#!/usr/bin/env bash
# Sets up everything stackbench needs on a fresh Debian/Ubuntu machine. Idempotent: a second
# run only checks. Steps: system packages (apt), Python venv from requirements.lock, the
# native load generator (cargo, from loadgen/Cargo.lock). Stacks build themselves on first
# use, from their own lock files, and are cached until their sources change.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-system.sh

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "python: creating .venv"
  "$PYTHON" -m venv .venv
fi
if ! cmp -s requirements.lock .venv/.installed-lock 2>/dev/null; then
  echo "python: installing requirements.lock"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.lock
  cp requirements.lock .venv/.installed-lock
fi
.venv/bin/pip install -q --disable-pip-version-check --no-deps -e . >/dev/null

if command -v cargo >/dev/null; then
  echo "loadgen: cargo build --release"
  (cd loadgen && cargo build --release --locked -q)
  # The response-parser fuzz target (make test runs it for a bounded time) needs cargo-fuzz
  # and a nightly toolchain; without nightly the stable property tests still run.
  if cargo +nightly --version >/dev/null 2>&1 && ! cargo fuzz --version >/dev/null 2>&1; then
    echo "loadgen: cargo install cargo-fuzz --locked (once)"
    cargo install cargo-fuzz --locked -q
  fi
else
  echo "warning: cargo not found; the native load generator is not built (install Rust:" \
       "https://rustup.rs), the wrk and ab drivers still work" >&2
fi
echo "setup: done"
