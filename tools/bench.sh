#!/usr/bin/env bash
# The benchmark: builds the release binary and runs tools/bench.py (all
# formats at small, medium, large and wide against GNU patch and git apply,
# interleaved by ../shared/bench/ibench.py; see tools/bench.py).
#
#   tools/bench.sh [--baseline OLD_BINARY] [--work DIR] [--scales ...] [--runs N]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v patch >/dev/null || { echo "GNU patch missing: apt-get install -y patch" >&2; exit 1; }
# The binary as deployed: `cargo dist` (static, see .cargo/config.toml)
# where it builds, else the plain release build.
cd "$HERE"
if [ "$(uname -sm)" = "Linux x86_64" ] && cargo dist --quiet 2>/dev/null; then
  bin="$HERE/target/x86_64-unknown-linux-gnu/release/grammar-patch"
else
  cargo build --release --quiet --package grammar-patch
  bin="$HERE/target/release/grammar-patch"
fi
mkdir -p /tmp/gp-bench
exec python3 "$HERE/tools/bench.py" --bin "$bin" "$@"
