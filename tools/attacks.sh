#!/usr/bin/env bash
# The trust-boundary attacks at full counts, on the release build:
# tests/suite/trust.rs (200 kill -9 trials over a 2,000-file apply, 100
# pairs of concurrent applies, 20 x 5 applies against a directory swapped
# for a link) and tests/suite/hostile.rs (kill -9 at every system call of
# an apply, and for each that left a journal at every call of the recovery
# after it, under strace; 50,000 and 100,000 added files for memory; and
# the forged-journal, link, special-file, .git and MCP attacks). Prints the
# figures. Needs strace.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v strace >/dev/null || { echo "attacks.sh needs strace (apt-get install strace)" >&2; exit 2; }
GRAMMAR_PATCH_ATTACKS=full cargo test --release --test all -- \
  suite::trust suite::hostile suite::atomic --nocapture --test-threads=1 2>&1 \
  | grep -E 'kill -9|concurrent applies:|swap race:|added files|memory per byte|test result|panicked|FAILED'
