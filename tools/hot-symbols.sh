#!/usr/bin/env bash
# Writes tools/hot-symbols.txt: the functions the installed binary runs in
# typical calls, those most calls run first. build.rs hands the list to the linker
# (`--symbol-ordering-file`, release builds linked by LLD) so that they sit
# together at the start of the code. The kernel maps a binary's code 64 KiB
# around each page a call touches; scattered over 4.3 MiB of code, the
# functions of one small apply kept 2.6 MiB of it resident and faulted in.
#
#   tools/hot-symbols.sh      (needs valgrind and perf; rerun after large changes)
#   tools/hot-symbols.sh --check BIN
#                             (CI: BIN, a release build, starts its code with
#                             the list, and defines most of its names)
#
# The list names functions by their mangled symbols, which do not change
# with a function's body. A name that no longer exists is skipped by the
# linker (build.rs silences its warning), so a stale list costs speed and
# memory, never correctness.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
list="$HERE/tools/hot-symbols.txt"
if [ "${1:-}" = --check ]; then
  bin=$2
  defined=$(nm --defined-only "$bin" | awk '{ print $3 }' | sort -u | grep -cxFf - "$list" || true)
  total=$(wc -l < "$list")
  # The first 50 functions of the code, by address.
  first=$(nm -n --defined-only "$bin" | awk '$2 ~ /^[tT]$/ && $3 ~ /^_(ZN|R)/ && n++ < 50 { print $3 }')
  leading=$(grep -cxFf "$list" <<< "$first" || true)
  echo "$bin: $defined of the list's $total names defined; $leading of its first 50 functions listed"
  if [ "$leading" -lt 50 ]; then
    echo "the linker did not order the code by the list (build.rs, order_code)" >&2
    exit 1
  fi
  if [ $((defined * 4)) -lt $((total * 3)) ]; then
    echo "a quarter of the list's names are gone: rerun tools/hot-symbols.sh" >&2
    exit 1
  fi
  exit 0
fi
command -v valgrind >/dev/null || { echo "valgrind missing: apt-get install -y valgrind" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf missing: apt-get install -y linux-perf" >&2; exit 1; }
cd "$HERE"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The binary users install, as tools/bench.sh installs it.
cargo install --locked --quiet --path . --root "$work/install" --force
bin="$work/install/bin/grammar-patch"
for scale in small large; do
  python3 "$HERE/../shared/bench/gen.py" --scale "$scale" --seed 1 --out "$work/$scale" --force >/dev/null
done
# One call under callgrind on a fresh copy of TREE; its failure is expected
# for the refusals below. (Valgrind does not know openat2: the calls take
# the tree's fallback there, and the list misses only its few functions.)
# Profiles are numbered in the order made, which the list's ties follow.
made=0
profile() {
  local tree=$1; shift
  rm -rf "$work/t"; cp -r "$tree" "$work/t"
  made=$((made + 1))
  valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$(printf %03d "$made")" \
    "$bin" "$@" >/dev/null 2>&1 || true
}
# A large apply's functions as perf samples them, 20,000 times a second,
# eight applies a format: valgrind stops a large apply at its first read
# beside the parse (rustix, finding the vDSO for `getcpu`, reads the auxv
# of valgrind's own process, which is not the program's), and what runs
# there once is what the small calls run too.
sample() {
  for i in 1 2 3 4 5 6 7 8; do
    rm -rf "$work/t"; cp -r "$work/large/before" "$work/t"
    perf record -q -F 20000 -o "$work/perf.data" "$bin" apply --root "$work/t" "$work/large/$1.patch" >/dev/null 2>&1
    perf script -i "$work/perf.data" -F ip,sym --no-demangle 2>/dev/null | awk '{print $2}' >> "$work/sampled"
  done
}
for f in udiff codex repopatch ap; do
  sample "$f"
  profile "$work/small/before" apply --root "$work/t" "$work/small/$f.patch"
  profile "$work/small/before" apply --json --root "$work/t" "$work/small/$f.patch"
  profile "$work/small/before" apply --dry-run --root "$work/t" "$work/small/$f.patch"
  profile "$work/small/before" lint "$work/small/$f.patch"
  # A refusal, rendered for a person and as JSON: the patch is already applied.
  profile "$work/small/after" apply --root "$work/t" "$work/small/$f.patch"
  profile "$work/small/after" apply --json --root "$work/t" "$work/small/$f.patch"
done
profile "$work/small/before" --version
# Every function named in a callgrind profile (which names a function
# once with its symbol, "fn=(12) NAME", then by number), those most
# profiles run first, then in the order first seen: the code every call
# runs comes first, then each format's own, together. Then those only the
# large applies' samples saw, by name (sampling varies from run to run;
# the rest of the list does not). Only the binary's own functions (Rust's,
# whether mangled "_ZN..." or, as std is, "_R...", and the C start-up's):
# a shared library's are not linked here.
for p in "$work"/cg.*; do sed -nE 's/^c?fn=\([0-9]+\) //p' "$p" | awk '!seen[$0]++'; done \
  | awk '{ if (!($0 in n)) first[$0] = NR; n[$0]++ } END { for (f in n) print n[f], first[f], f }' \
  | sort -k1,1nr -k2,2n | awk '{ print $3 }' > "$work/called"
sort -u "$work/sampled" | awk 'NR == FNR { c[$0] = 1; next } !c[$0]' "$work/called" - > "$work/sampled-only"
cat "$work/called" "$work/sampled-only" > "$work/named"
nm --defined-only "$bin" | awk '$2 ~ /^[tT]$/ { print $3 }' | sort -u > "$work/defined"
awk 'NR == FNR { d[$0] = 1; next } d[$0]' "$work/defined" "$work/named" > "$list"
echo "tools/hot-symbols.txt: $(wc -l < "$list") functions"
