#!/usr/bin/env bash
# The benchmark: builds the release binary and runs tools/bench.py (all
# formats at small, medium, large and wide against GNU patch and git apply,
# interleaved by ../shared/bench/ibench.py; see tools/bench.py).
#
#   tools/bench.sh [--baseline OLD_BINARY] [--work DIR] [--scales ...] [--runs N]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v patch >/dev/null || { echo "GNU patch missing: apt-get install -y patch" >&2; exit 1; }
cargo build --release --quiet --manifest-path "$HERE/Cargo.toml"
mkdir -p /tmp/gp-bench
exec python3 "$HERE/tools/bench.py" --bin "$HERE/target/release/grammar-patch" "$@"
