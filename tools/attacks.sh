#!/usr/bin/env bash
# The trust-boundary attacks at full counts (tests/suite/trust.rs), on the
# release build: 200 kill -9 trials over a 2,000-file apply, 100 pairs of
# concurrent applies, 20 x 5 applies against a directory swapped for a link.
# Prints the figures the README quotes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GRAMMAR_PATCH_ATTACKS=full cargo test --release --test all suite::trust -- --nocapture --test-threads=1 2>&1 \
  | grep -E 'kill -9:|concurrent applies:|swap race:|test result|panicked|FAILED'
