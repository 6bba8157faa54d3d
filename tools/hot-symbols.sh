#!/usr/bin/env bash
# Writes tools/hot-symbols.txt: every function the deployed binary runs in
# typical calls, which `cargo dist` hands the linker
# (--symbol-ordering-file, .cargo/config.toml) so that they sit together at
# the start of the code. The kernel maps a binary's code 64 KiB around each
# page touched; scattered over 3.8 MB, the functions of one small apply
# touched 2.6 MB of it, which was resident and faulted in on every call.
#
#   tools/hot-symbols.sh          (needs valgrind; rerun after large changes)
#
# The list names functions by their mangled symbols; a name that no longer
# exists is skipped by the linker, so a stale list costs speed, not
# correctness.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v valgrind >/dev/null || { echo "valgrind missing: apt-get install -y valgrind" >&2; exit 1; }
cd "$HERE"
cargo dist --quiet
bin="$HERE/target/x86_64-unknown-linux-gnu/release/grammar-patch"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for scale in small large; do
  python3 "$HERE/../shared/bench/gen.py" --scale "$scale" --seed 1 --out "$work/$scale" --force >/dev/null
done
# One call under callgrind on a fresh copy of TREE; its failure is expected
# for the refusals below.
profile() {
  local tree=$1; shift
  rm -rf "$work/t"; cp -r "$tree" "$work/t"
  valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.%p" \
    "$bin" "$@" >/dev/null 2>&1 || true
}
for f in udiff codex repopatch ap; do
  for scale in small large; do
    profile "$work/$scale/before" apply --root "$work/t" "$work/$scale/$f.patch"
  done
  profile "$work/small/before" apply --json --root "$work/t" "$work/small/$f.patch"
  profile "$work/small/before" apply --dry-run --root "$work/t" "$work/small/$f.patch"
  profile "$work/small/before" lint "$work/small/$f.patch"
  # A refusal, rendered for a person and as JSON: the patch is already applied.
  profile "$work/small/after" apply --root "$work/t" "$work/small/$f.patch"
  profile "$work/small/after" apply --json --root "$work/t" "$work/small/$f.patch"
done
# Every function named in any profile, first-seen order; callgrind names a
# function once with its symbol ("fn=(12) _ZN...") and then by number.
cat "$work"/cg.* | grep -oE '^c?fn=\([0-9]+\) .*' | sed -E 's/^c?fn=\([0-9]+\) //' \
  | grep -v '^0x' | awk '!seen[$0]++' > "$HERE/tools/hot-symbols.txt"
echo "tools/hot-symbols.txt: $(wc -l < "$HERE/tools/hot-symbols.txt") functions"
# Cargo does not know the linker reads the list: relink with the new one.
touch "$HERE/src/main.rs"
cargo dist --quiet
