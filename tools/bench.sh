#!/usr/bin/env bash
# Times `grammar-patch apply` against `git apply` and GNU `patch` on the shared
# benchmark workloads, in one run, and prints a table with ratios.
#
#   tools/bench.sh [WORKDIR]          (default WORKDIR=/tmp/gp-bench)
#
# Environment: SCALES ("small medium large wide"), SEED (1), RUNS (per scale:
# small 21, medium 11, large/wide 5), BENCH_DIR (../shared/bench).
#
# Every timing is one whole process on a fresh copy of before/ (copy not
# timed) by ../shared/bench/harness.py; a row counts only if the tree equals
# after/ (column ok). Peak memory is GNU time's maximum RSS. The memory budget
# column is 2 x (udiff patch bytes + bytes of the files the patch touches).
# The codex, repopatch and ap rows apply the same change written in those formats.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="${BENCH_DIR:-$HERE/../shared/bench}"
WORK="${1:-/tmp/gp-bench}"
SCALES="${SCALES:-small medium large wide}"
SEED="${SEED:-1}"
command -v patch >/dev/null || { echo "GNU patch missing: apt-get install -y patch" >&2; exit 1; }
cargo build --release --quiet --manifest-path "$HERE/Cargo.toml"
GP="$HERE/target/release/grammar-patch"
mkdir -p "$WORK"
RES="$WORK/results.jsonl"
: > "$RES"
for s in $SCALES; do
  D="$WORK/$s"
  if [ ! -f "$D/manifest.json" ] || ! grep -q "\"seed\": $SEED," "$D/manifest.json"; then
    python3 "$BENCH/gen.py" --scale "$s" --seed "$SEED" --out "$D" --force >/dev/null
  fi
  case $s in small) N=21;; medium) N=11;; *) N=5;; esac
  H="python3 $BENCH/harness.py --work $D --runs ${RUNS:-$N}"
  $H --label "git apply" -- git apply "{W}/udiff.patch" >> "$RES"
  $H --label "patch -p1" -- patch -p1 -s -i "{W}/udiff.patch" >> "$RES"
  $H --label "grammar-patch udiff" -- "$GP" apply --root "{T}" "{W}/udiff.patch" >> "$RES"
  $H --label "grammar-patch codex" -- "$GP" apply --root "{T}" "{W}/codex.patch" >> "$RES"
  $H --label "grammar-patch repopatch" -- "$GP" apply --root "{T}" "{W}/repopatch.patch" >> "$RES"
  $H --label "grammar-patch ap" -- "$GP" apply --root "{T}" "{W}/ap.patch" >> "$RES"
done
python3 - "$RES" "$WORK" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
work = sys.argv[2]
def touched(scale):
    m = json.load(open(os.path.join(work, scale, "manifest.json")))
    return m["patch_bytes"]["udiff.patch"] + m["bytes_before"]
print("| scale | command | median wall s | peak MiB | ok | ours / git apply | ours / patch | memory budget MiB |")
print("|---|---|---:|---:|---|---:|---:|---:|")
by = {}
for r in rows:
    by.setdefault(r["scale"], {})[r["label"]] = r
for scale, cmds in by.items():
    budget = 2 * touched(scale) / 2**20
    for label, r in cmds.items():
        ours = r if label.startswith("grammar") else None
        ratio = lambda peer: f"{ours['wall_median_s'] / cmds[peer]['wall_median_s']:.2f}" if ours else ""
        print(f"| {scale} | {label} | {r['wall_median_s']:.4f} | {r['peak_median_mib']:.1f} | {'yes' if r['ok'] else 'NO'} "
              f"| {ratio('git apply')} | {ratio('patch -p1')} | {budget:.1f} |")
PY
