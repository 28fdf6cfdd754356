#!/usr/bin/env bash
# Sets up what running stackbench needs on a fresh Debian/Ubuntu machine (`make run`; the
# tools only the tests need come from scripts/setup-test.sh, `make test`). Idempotent: a second
# run only checks. Steps: system packages (apt), Python venv from requirements.lock, the
# native load generator (cargo, from loadgen/Cargo.lock). Stacks build themselves on first
# use, from their own lock files, and are cached until their sources change.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-system.sh run

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
else
  echo "warning: cargo not found; the native load generator is not built (install Rust:" \
       "https://rustup.rs), the wrk and ab drivers still work" >&2
fi
echo "setup: done"
