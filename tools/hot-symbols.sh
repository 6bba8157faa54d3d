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
# One call under callgrind on a fresh copy of TREE, its profile named
# LABEL (format.kind); its failure is expected for the refusals below.
profile() {
  local label=$1 tree=$2; shift 2
  rm -rf "$work/t"; cp -r "$tree" "$work/t"
  valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$label" \
    "$bin" "$@" >/dev/null 2>&1 || true
}
for f in udiff codex repopatch ap; do
  for scale in small large; do
    profile "$f.apply-$scale" "$work/$scale/before" apply --root "$work/t" "$work/$scale/$f.patch"
  done
  profile "$f.json" "$work/small/before" apply --json --root "$work/t" "$work/small/$f.patch"
  profile "$f.dry-run" "$work/small/before" apply --dry-run --root "$work/t" "$work/small/$f.patch"
  profile "$f.lint" "$work/small/before" lint "$work/small/$f.patch"
  # A refusal, rendered for a person and as JSON: the patch is already applied.
  profile "$f.refusal" "$work/small/after" apply --root "$work/t" "$work/small/$f.patch"
  profile "$f.refusal-json" "$work/small/after" apply --json --root "$work/t" "$work/small/$f.patch"
done
# The order: what every format's successful calls run, then what three
# formats', two formats' and one format's run (each format's own
# together), then what only refusals run, grouped the same way. A call
# then touches the shared start and its own format's stretch, not a piece
# of every format's. Within a group, first-seen order. Callgrind names a
# function once with its symbol ("fn=(12) _ZN...") and then by number.
# glibc picks a string function's variant by the CPU (`__memmove_evex_…`
# where AVX-512 is, `__memmove_avx_…` under valgrind): each variant the
# profiles name brings its family's EVEX and AVX-512 siblings beside it,
# or on such a CPU they stay in cold windows at the end of the code.
nm "$bin" | awk '$2 ~ /^[tTW]$/ {print $3}' > "$work/symbols"
python3 - "$work" > "$HERE/tools/hot-symbols.txt" <<'PY'
import glob, os, re, sys
formats = ["udiff", "codex", "repopatch", "ap"]
seen, ok, failing = {}, {}, {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "cg.*"))):
    fmt, kind = os.path.basename(path)[3:].split(".", 1)
    for line in open(path, errors="replace"):
        m = re.match(r"^c?fn=\([0-9]+\) (.*)", line)
        if not m or m.group(1).startswith("0x"):
            continue
        name = m.group(1).strip()
        seen.setdefault(name, len(seen))
        (failing if kind.startswith("refusal") else ok).setdefault(name, set()).add(fmt)
def key(name):
    users = ok.get(name) or failing[name]
    refusal_only = name not in ok
    own = min(formats.index(f) for f in users)
    return (refusal_only, -len(users), own, seen[name])
symbols = open(os.path.join(sys.argv[1], "symbols")).read().split()
family = re.compile(r"^__([a-z]+)_(?:avx|sse|evex|erms)")
printed = set()
for name in sorted(seen, key=key):
    for n in [name] + [s for s in symbols if family.match(name) and
                       s.startswith("__" + family.match(name).group(1) + "_") and
                       ("evex" in s or "avx512" in s)]:
        if n not in printed:
            printed.add(n)
            print(n)
PY
echo "tools/hot-symbols.txt: $(wc -l < "$HERE/tools/hot-symbols.txt") functions"
# Cargo does not know the linker reads the list: relink with the new one.
touch "$HERE/src/main.rs"
cargo dist --quiet
