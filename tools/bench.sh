#!/usr/bin/env bash
# The benchmark: installs the binary as a user does (`cargo install --locked
# --path .`, into target/bench-install) and runs tools/bench.py on it (all
# formats at small, medium, large and wide against GNU patch and git apply,
# interleaved by ../shared/bench/ibench.py; see tools/bench.py).
#
#   tools/bench.sh [--baseline OLD_BINARY] [--work DIR] [--scales ...] [--runs N]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v patch >/dev/null || { echo "GNU patch missing: apt-get install -y patch" >&2; exit 1; }
cd "$HERE"
cargo install --locked --quiet --path . --root target/bench-install --force
bin="$HERE/target/bench-install/bin/grammar-patch"
mkdir -p /tmp/gp-bench
exec python3 "$HERE/tools/bench.py" --bin "$bin" "$@"
