#!/usr/bin/env bash
# Coverage-guided fuzzing with cargo fuzz (libFuzzer, stable toolchain,
# --sanitizer none): every format's parser, and the whole pipeline on an
# in-memory tree. Seeds come from the fixtures.
#
#   tools/fuzz.sh [SECONDS] [TARGET...]    default: 1200 s each, all targets
#
# Needs `cargo install cargo-fuzz`. Crashes land in fuzz/artifacts/<target>/;
# turn each into a fixture (tests/fixtures/<format>/fuzz_*/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo fuzz --version >/dev/null 2>&1 || { echo "cargo fuzz missing: cargo install cargo-fuzz" >&2; exit 1; }
secs=${1:-1200}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(parse_udiff parse_codex parse_repopatch parse_ap parse_searchreplace apply_mem)

python3 - <<'PY'
import os, pathlib
root = pathlib.Path("tests/fixtures")
out = pathlib.Path("fuzz/corpus")
# Anthropic's commands are JSON, read by a request (selector 0: detected).
sel = {"udiff": 1, "codex": 2, "repopatch": 3, "ap": 4, "ap-3.2": 4 | 0x80, "searchreplace": 5,
       "anthropic": 0}
for fmt_dir in sorted(p for p in root.iterdir() if p.is_dir()):
    fmt = fmt_dir.name
    target = "parse_" + ("ap" if fmt.startswith("ap") else fmt)
    for case in sorted(p for p in fmt_dir.iterdir() if p.is_dir()):
        patch = case / "patch"
        if not patch.is_file():
            continue
        data = patch.read_bytes()
        if fmt != "anthropic":
            d = out / target
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{fmt}_{case.name}").write_bytes(data)
        before = case / "before"
        files = sorted(p for p in before.rglob("*") if p.is_file()) if before.is_dir() else []
        a = files[0].read_bytes() if files else b""
        # The patch with its first path pointed at a.txt, so edits land.
        if files:
            rel = str(files[0].relative_to(before)).encode()
            data = data.replace(rel, b"a.txt")
        d = out / "apply_mem"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{fmt}_{case.name}").write_bytes(bytes([sel[fmt]]) + a + b"\0\0" + data)
PY

for t in "${targets[@]}"; do
  echo "== $t: ${secs}s"
  (cd fuzz && cargo fuzz run --sanitizer none -O "$t" "corpus/$t" -- \
      -max_total_time="$secs" -max_len=65536 -timeout=10 -print_final_stats=1) 2>&1 \
    | grep -E '^(#[0-9]+ +DONE|stat::|==|.*(panicked|SUMMARY|crash-|Test unit written))' || true
done
