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
# Every typical call, each as `RUNNER LABEL TREE ARGS...`: RUNNER runs
# the binary on a fresh copy of TREE (as $work/t) and names what it
# records LABEL (format.kind); a refusal's failure is expected.
calls() {
  local runner=$1
  for f in udiff codex repopatch ap; do
    for scale in small large; do
      $runner "$f.apply-$scale" "$work/$scale/before" apply --root "$work/t" "$work/$scale/$f.patch"
    done
    $runner "$f.json" "$work/small/before" apply --json --root "$work/t" "$work/small/$f.patch"
    $runner "$f.dry-run" "$work/small/before" apply --dry-run --root "$work/t" "$work/small/$f.patch"
    $runner "$f.lint" "$work/small/before" lint "$work/small/$f.patch"
    # A refusal, rendered for a person and as JSON: the patch is already applied.
    $runner "$f.refusal" "$work/small/after" apply --root "$work/t" "$work/small/$f.patch"
    $runner "$f.refusal-json" "$work/small/after" apply --json --root "$work/t" "$work/small/$f.patch"
  done
}
# One call under callgrind: every function it runs, by symbol.
profile() {
  local label=$1 tree=$2; shift 2
  rm -rf "$work/t"; cp -r "$tree" "$work/t"
  valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$label" \
    "$bin" "$@" >/dev/null 2>&1 || true
}
calls profile
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
# Cargo does not know the linker reads the list: relink with the new one.
relink() {
  touch "$HERE/src/main.rs"
  cargo dist --quiet
}
relink
# A native run executes code callgrind never sees: glibc's start-up takes
# another path under valgrind (`_dl_new_object`), the CPU picks string
# functions' variants valgrind's does not (`__strcmp_evex`), crtbegin's
# `frame_dummy` runs before anything is profiled, and a sort that gets
# other input on two threads. Each sat alone in a 64 KiB stretch of cold
# code that every call mapped: 80-460 KB of a large apply's peak. The
# kernel records each call's page faults with their addresses; a fault in
# `.text` outside the list names a function to add, at the front (they run
# in every call or in large ones). Added functions move the code, so
# another fault may surface behind them: repeat until none does. Without
# `perf`, the list is callgrind's alone.
fault() {
  local label=$1 tree=$2; shift 2
  rm -rf "$work/t"; cp -r "$tree" "$work/t"
  perf record -q -e page-faults -c 1 -d -o "$work/pf.$label" "$bin" "$@" >/dev/null 2>&1 || true
  perf script -i "$work/pf.$label" -F addr 2>/dev/null >> "$work/faults" || true
}
if command -v perf >/dev/null; then
  for round in 1 2 3 4; do
    : > "$work/faults"
    calls fault
    readelf -SW "$bin" | sed -n 's/.*\] \.text  *PROGBITS  *\([0-9a-f]*\) [0-9a-f]* \([0-9a-f]*\).*/\1 \2/p' > "$work/text"
    nm -n "$bin" | awk '$2 ~ /^[tTWwi]$/ {print $1, $3}' > "$work/code"
    python3 - "$work" "$HERE/tools/hot-symbols.txt" > "$work/missed" <<'PY'
import bisect, os, sys
work, listed = sys.argv[1], sys.argv[2]
start, size = (int(x, 16) for x in open(os.path.join(work, "text")).read().split())
code = [(int(a, 16), n) for a, n in (l.split() for l in open(os.path.join(work, "code")))]
addrs = [a for a, _ in code]
have = set(open(listed).read().split())
missed = []
for line in open(os.path.join(work, "faults")):
    try:
        a = int(line.split()[0], 16)
    except (IndexError, ValueError):
        continue
    if start <= a < start + size:
        name = code[bisect.bisect_right(addrs, a) - 1][1]
        if name not in have and name not in missed:
            missed.append(name)
if missed:
    print("\n".join(missed))
PY
    [ -s "$work/missed" ] || break
    echo "round $round: $(wc -l < "$work/missed") functions only a native run touches: $(tr '\n' ' ' < "$work/missed")"
    cat "$work/missed" "$HERE/tools/hot-symbols.txt" > "$work/list"
    cp "$work/list" "$HERE/tools/hot-symbols.txt"
    relink
  done
else
  echo "perf missing: the list has only what callgrind saw" >&2
fi
echo "tools/hot-symbols.txt: $(wc -l < "$HERE/tools/hot-symbols.txt") functions"
