#!/usr/bin/env python3
"""Interleaved benchmark of grammar-patch against GNU patch and git apply.

    tools/bench.py --bin PATH [--baseline PATH] [--work DIR] [--scales ...]

For every scale and format, one run of ../shared/bench/ibench.py times,
round after round in rotating order, on a fresh copy of the tree each:
grammar-patch applying that format's patch, GNU `patch -p1` and `git apply`
applying the udiff (git apply is left out at `large`, where it takes seconds
and is never the fastest), and with --baseline, an older grammar-patch
binary on the same patch. Every result is checked against after/.

Prints one table row per scale and format: our median wall time, the
paired median ratio to each peer (per round: ours / theirs), to the
baseline, and peak memory in MiB and divided by the input (patch bytes plus
the bytes of the files it touches). Raw ibench lines go to WORK/bench.jsonl.
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench"))
RUNS = {"small": 21, "medium": 9, "large": 7, "wide": 3}
FORMATS = ["udiff", "codex", "repopatch", "ap"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--work", default="/tmp/gp-bench")
    ap.add_argument("--scales", nargs="*", default=["small", "medium", "large", "wide"])
    ap.add_argument("--formats", nargs="*", default=FORMATS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, help="rounds per scale (default: small 21, medium 9, large 7, wide 3)")
    a = ap.parse_args()
    bench_dir = os.environ.get("BENCH_DIR", BENCH)
    raw = open(os.path.join(a.work, "bench.jsonl"), "w")
    rows = []
    for scale in a.scales:
        work = os.path.join(a.work, scale)
        manifest = os.path.join(work, "manifest.json")
        if not os.path.exists(manifest) or json.load(open(manifest)).get("seed") != a.seed:
            subprocess.run([sys.executable, os.path.join(bench_dir, "gen.py"), "--scale", scale,
                            "--seed", str(a.seed), "--out", work, "--force"], check=True,
                           stdout=subprocess.DEVNULL)
        m = json.load(open(manifest))
        for fmt in a.formats:
            tools = [f"ours::{a.bin} apply --root {{T}} {{W}}/{fmt}.patch",
                     "patch::patch -p1 -s -d {T} -i {W}/udiff.patch"]
            if scale != "large":
                tools.append("git::git -C {T} apply {W}/udiff.patch")
            if a.baseline:
                tools.append(f"before::{a.baseline} apply --root {{T}} {{W}}/{fmt}.patch")
            cmd = [sys.executable, os.path.join(bench_dir, "ibench.py"), "--work", work,
                   "--runs", str(a.runs or RUNS.get(scale, 5)), "--ref", "ours", "--tag", fmt]
            for t in tools:
                cmd += ["--tool", t]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            res = {}
            for line in out.splitlines():
                raw.write(line + "\n")
                o = json.loads(line)
                res[o["label"]] = o
            ours = res["ours"]
            inp = m["patch_bytes"][f"{fmt}.patch"] + m["bytes_before"]
            ratio = lambda peer: (round(1 / res[peer]["ratio_vs_ours"], 2) if peer in res else None)
            ok = all(r["ok"] for r in res.values())
            rows.append((scale, fmt, ours["wall_median_s"], ratio("patch"), ratio("git"),
                         ratio("before"), ours["peak_median_mib"],
                         round(ours["peak_median_mib"] * 2**20 / inp, 2), ok,
                         res["patch"]["wall_median_s"], res.get("git", {}).get("wall_median_s")))
            print(*rows[-1], sep="\t", file=sys.stderr, flush=True)
    raw.close()
    head = ["scale", "format", "ours s", "ours / GNU patch", "ours / git apply", "ours / before",
            "peak MiB", "peak / input", "all ok", "GNU patch s", "git apply s"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join("–" if v is None else str(v) for v in r) + " |")


if __name__ == "__main__":
    main()
