#!/usr/bin/env bash
# Regenerates the README's pictures (docs/img/*.png) from a real run of the default suite, so
# they cannot go stale: run it after changing the default suite, the terminal output or the
# report, and commit the pictures.
#
#   scripts/screenshots.sh            # about 6 min on 2 cores: the run is real
#
# 1. `stackbench run` (the default suite) in a terminal of 80 columns and 50 rows, recorded by
#    `script` (util-linux) with its colours and live progress line, into a results folder of
#    its own (a fresh store: run 1; STACKBENCH_SHOTS_OUT=DIR keeps it elsewhere);
# 2. tests/report/screenshots.py replays the recording as a terminal would and draws it with
#    headless Chromium: docs/img/terminal-80-run.png (mid-run, live line included) and
#    docs/img/terminal-80-summary.png (the end: the summary and the at-a-glance bars);
# 3. the same Chromium, network blocked, photographs the first screen of the run's report.html:
#    docs/img/report.png.
# Needs what `make setup-test` installs (the venv with Playwright, the loader, chromium). Nothing runs as a
# different user than a normal run would (stackbench runs as root and drops the stacks to the
# unprivileged `stackbench` user).
set -euo pipefail
cd "$(dirname "$0")/.."

for need in .venv/bin/stackbench .venv/bin/python; do
  [ -x "$need" ] || { echo "error: $need missing: run make setup-test first" >&2; exit 3; }
done
command -v script >/dev/null || { echo "error: script (util-linux) is needed" >&2; exit 3; }
[ -x /usr/bin/chromium ] || { echo "error: /usr/bin/chromium is needed (make setup-test)" >&2; exit 3; }
.venv/bin/python -c "import playwright" 2>/dev/null \
  || { echo "error: Playwright is needed in .venv (make setup-test)" >&2; exit 3; }

out="${STACKBENCH_SHOTS_OUT:-$(mktemp -d /tmp/stackbench-shots.XXXXXX)}"
if [ -e "$out/stackbench.sqlite" ]; then
  echo "error: $out already holds a store; give STACKBENCH_SHOTS_OUT an empty folder" >&2
  exit 2
fi
mkdir -p "$out" docs/img
typescript="$out/typescript"

echo "screenshots: running the default suite at 80 columns (results in $out)"
# A pseudo-terminal of 80 x 50 (stty), COLUMNS for Rich; -e: the run's own exit code.
status=0
script -q -e -c "stty cols 80 rows 50; TERM=xterm-256color COLORTERM=truecolor COLUMNS=80 LINES=50 .venv/bin/stackbench run --out '$out'" \
  "$typescript" >/dev/null || status=$?
if [ ! -f "$out/run-1/report.html" ]; then
  echo "error: the run wrote no report (exit $status); see $typescript" >&2
  exit "${status/#0/1}"
fi
[ "$status" = 0 ] || echo "warning: the run exited $status (the pictures show why)" >&2

shots=tests/report/screenshots.py
title="COLUMNS=80 stackbench run"
.venv/bin/python "$shots" terminal "$typescript" docs/img/terminal-80-run.png 0.45 "$title"
.venv/bin/python "$shots" terminal "$typescript" docs/img/terminal-80-summary.png 1 "$title"
.venv/bin/python "$shots" report "$out/run-1/report.html" docs/img/report.png
echo "screenshots: docs/img/terminal-80-run.png, terminal-80-summary.png, report.png" \
     "(from $out/run-1)"
