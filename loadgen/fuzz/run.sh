#!/bin/sh
# Fuzzes the loader's HTTP response parser (target http_response) for SECONDS (default 60).
# Exits 0 when no input crashed it, non-zero on a crash (the input is saved under
# fuzz/artifacts/http_response/ and libFuzzer prints how to reproduce it) or when the tools
# are missing. Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# Inputs found go to fuzz/corpus/ (not versioned); fuzz/seeds/ holds the versioned seeds.
set -eu
seconds=${1:-60}
case $seconds in
  '' | *[!0-9]*) echo "run.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "run.sh: cargo-fuzz is not installed: cargo install cargo-fuzz --locked" >&2
  exit 3
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "run.sh: the nightly toolchain is missing: rustup toolchain install nightly" >&2
  exit 3
fi
cd "$here"
# cargo-fuzz has no --locked: refuse a Cargo.lock that would have to change.
cargo +nightly fetch --locked --quiet
mkdir -p corpus/http_response
# No sanitizer: the parser is safe Rust; overflow checks and debug assertions are on, so a
# panic (an overflow, an index out of range, a broken contract in http::replay) is a crash.
# -max_len keeps inputs near the size of response heads; one job, one core.
exec cargo +nightly fuzz run --sanitizer none http_response \
  corpus/http_response seeds/http_response -- \
  -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1
