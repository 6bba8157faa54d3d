#!/usr/bin/env bash
# The main job on a bundled example: applies examples/demo/feature.diff to a
# scratch copy of examples/demo/tree, shows the result, then shows how a stale
# patch is refused (as a person and as an agent sees it) with nothing written.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The first build takes a few minutes; cargo shows its progress.
echo "building the release binary (cargo build --release --locked --package grammar-patch)..." >&2
cargo build --release --locked --package grammar-patch
gp="${CARGO_TARGET_DIR:-target}/release/grammar-patch"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
cp -r examples/demo/tree/. "$tree/"

echo "\$ grammar-patch apply --root TREE examples/demo/feature.diff"
"$gp" apply --root "$tree" examples/demo/feature.diff
echo
echo "--- TREE/src/greet.py after the patch:"
cat "$tree/src/greet.py"
echo
# stale.diff was written against an older greet.py (where farewell said
# "Bye, "): the line it changes is not in the file.
echo "\$ grammar-patch apply --root TREE examples/demo/stale.diff"
files() { (cd "$tree" && find . -type f -exec cksum {} + | sort); }
before=$(files)
status=0
"$gp" apply --root "$tree" examples/demo/stale.diff || status=$?
if [ "$status" -ne 1 ] || [ "$(files)" != "$before" ]; then
  echo "demo: the stale patch should be refused (exit 1) with nothing written; exit $status" >&2
  exit 1
fi
echo "(exit status 1: refused, nothing written)"
echo
echo "\$ grammar-patch apply --json --root TREE examples/demo/stale.diff"
"$gp" apply --json --root "$tree" examples/demo/stale.diff || true
