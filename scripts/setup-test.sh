#!/usr/bin/env bash
# Sets up what only the tests need, on top of scripts/setup.sh (what running needs; `make test`
# runs both, in that order). Idempotent: a second run only checks. Steps: the test-only system
# packages (scripts/install-system.sh test: Chromium, the SSH server's sshd binary), the
# Python test tools into .venv from requirements-test.lock (pytest and its plugins, ruff,
# mypy, hypothesis, Playwright). The fuzz run has its own command: make fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-system.sh test

if [ ! -x .venv/bin/python ]; then
  echo "error: no .venv: run scripts/setup.sh first (make test does)" >&2
  exit 1
fi
# The test lock includes requirements.lock (-r), so the stamp is both files: a change to
# either installs again.
if ! cat requirements.lock requirements-test.lock | cmp -s - .venv/.installed-test-lock; then
  echo "python: installing requirements-test.lock"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-test.lock
  cat requirements.lock requirements-test.lock >.venv/.installed-test-lock
fi

echo "setup-test: done"
