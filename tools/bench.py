#!/usr/bin/env python3
"""Interleaved benchmark of grammar-patch against GNU patch and git apply.

    tools/bench.py --bin PATH [--baseline PATH] [--work DIR] [--scales ...]

For every scale and format, one run of ../shared/bench/ibench.py times,
round after round in rotating order, on a fresh copy of the tree each:
grammar-patch applying that format's patch, GNU `patch -p1` and `git apply`
applying the udiff (git apply is left out at `large`, where it takes seconds
and is never the fastest), and with --baseline, an older grammar-patch
binary on the same patch. Every result is checked against after/; ap's
once, before it is timed (see `ap_matches`), since ap re-indents content
written at column 0 (its rule for a dropped indent) where gen.py's after/
keeps it literal.

A scale may carry gen.py overrides, for a scaling series:
`large:lines=100000,hunks=2500` or `wide:files=500` (--series runs the
standard one: large at 50k to 8M lines with a hunk every 40 lines, and
wide at 250 to 2,000 files), and prints the log-log slope of our time and
GNU patch's against the input size. The large scale is made by
tools/gen_large.py: gen.py's file up to its corpus's size (about 850k
lines), then copies whose lines are suffixed so that they stay unique
(2M lines take it about two minutes); past 2M lines, copies of the 2M
workload, suffixed again.

Prints one table row per scale and format: our median wall time, the
paired median ratio to each peer (per round: ours / theirs), to the
baseline, and peak memory in MiB and divided by the input (patch bytes plus
the bytes of the files it touches), with GNU patch's peak divided by its
own input (the udiff and the same files) beside it. Raw ibench lines go to WORK/bench.jsonl.
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
    ap.add_argument("--series", action="store_true", help="the scaling series instead of --scales")
    a = ap.parse_args()
    if a.series:
        a.scales = [f"large:lines={n},hunks={n // 40}"
                    for n in (50000, 100000, 200000, 400000, 2000000, 8000000)] + [
            f"wide:files={n}" for n in (250, 500, 1000, 2000)]
    bench_dir = os.environ.get("BENCH_DIR", BENCH)
    raw = open(os.path.join(a.work, "bench.jsonl"), "w")
    rows = []
    for spec in a.scales:
        scale, _, extra = spec.partition(":")
        overrides = dict(kv.split("=") for kv in extra.split(",") if kv)
        work = os.path.join(a.work, spec.replace(":", "-").replace(",", "-").replace("=", ""))
        manifest = os.path.join(work, "manifest.json")
        if not os.path.exists(manifest) or json.load(open(manifest)).get("seed") != a.seed:
            # The large scale through tools/gen_large.py: gen.py's file,
            # byte for byte, up to its corpus's size, then suffixed copies
            # whose lines stay unique (2M and 8M lines).
            if scale == "large":
                gen = [sys.executable, os.path.join(HERE, "gen_large.py")]
            else:
                gen = [sys.executable, os.path.join(bench_dir, "gen.py"), "--scale", scale]
            gen += ["--seed", str(a.seed), "--out", work, "--force"]
            for k, v in overrides.items():
                gen += [f"--{k}", v]
            subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
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
            checked = None
            if fmt == "ap":
                checked = ap_matches(a.bin, work)
                cmd.append("--no-check")
            res = run_ibench(cmd, tools, raw)
            ours = res["ours"]
            inp = m["patch_bytes"][f"{fmt}.patch"] + m["bytes_before"]
            ratio = lambda peer: (round(1 / res[peer]["ratio_vs_ours"], 2) if peer in res else None)
            ok = all(r["ok"] for r in res.values()) if checked is None else checked
            # GNU patch's own peak, on the udiff it applies: the same
            # measure of a program that streams its files.
            gnu_inp = m["patch_bytes"]["udiff.patch"] + m["bytes_before"]
            rows.append((spec, fmt, ours["wall_median_s"], ratio("patch"), ratio("git"),
                         ratio("before"), ours["peak_median_mib"],
                         round(ours["peak_median_mib"] * 2**20 / inp, 2), ok,
                         res["patch"]["wall_median_s"], res.get("git", {}).get("wall_median_s"),
                         round(res["patch"]["peak_median_mib"] * 2**20 / gnu_inp, 2)))
            print(*rows[-1], sep="\t", file=sys.stderr, flush=True)
    raw.close()
    head = ["scale", "format", "ours s", "ours / GNU patch", "ours / git apply", "ours / before",
            "peak MiB", "peak / input", "all ok", "GNU patch s", "git apply s",
            "GNU patch peak / input"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join("–" if v is None else str(v) for v in r) + " |")
    if a.series:
        slopes(rows, a)


def run_ibench(cmd, tools, raw):
    """Runs ibench's command `cmd` on `tools` (label::command each),
    writes its raw lines to `raw`, and returns its results by label."""
    for t in tools:
        cmd = cmd + ["--tool", t]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        raw.write(line + "\n")
        o = json.loads(line)
        res[o["label"]] = o
    return res


def ap_matches(binary, work):
    """Applies ap.patch once to a copy of before/ and compares it with
    after/: every line equal, except that a line after/ has at column 0
    may come out indented (ap's dropped-indent rule re-indents content
    written flat to its target's indentation). Prints how many lines were
    re-indented so, and returns whether everything else is equal."""
    import filecmp, shutil, tempfile
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "t")
        shutil.copytree(os.path.join(work, "before"), tree, symlinks=True)
        done = subprocess.run([binary, "apply", "--root", tree, os.path.join(work, "ap.patch")],
                              capture_output=True)
        if done.returncode != 0:
            print(f"ap: exit {done.returncode}: {done.stderr[:400]!r}", file=sys.stderr)
            return False
        after = os.path.join(work, "after")
        files = lambda root: {os.path.relpath(os.path.join(b, n), root)
                              for b, _, ns in os.walk(root) for n in ns}
        reindented, ok = 0, files(after) == files(tree)
        for base, _, names in os.walk(after):
            for name in names:
                want_path = os.path.join(base, name)
                got_path = os.path.join(tree, os.path.relpath(want_path, after))
                if not os.path.exists(got_path):
                    ok = False
                    continue
                if filecmp.cmp(want_path, got_path, shallow=False):
                    continue
                want = open(want_path, "rb").read().split(b"\n")
                got = open(got_path, "rb").read().split(b"\n")
                if len(want) != len(got):
                    ok = False
                    continue
                for w, g in zip(want, got):
                    if w == g:
                        continue
                    if w and not w[:1].isspace() and g.lstrip(b" \t") == w:
                        reindented += 1
                    else:
                        ok = False
        print(f"ap: {reindented} lines written at column 0 re-indented; the rest equal: {ok}",
              file=sys.stderr)
        return ok


def slopes(rows, a):
    """The log-log slope of wall time against input bytes, per series and tool."""
    import math
    print()
    for series in ("large", "wide"):
        for fmt in a.formats:
            pts = []
            for r in rows:
                if r[0].startswith(series + ":") and r[1] == fmt:
                    work = os.path.join(a.work, r[0].replace(":", "-").replace(",", "-").replace("=", ""))
                    m = json.load(open(os.path.join(work, "manifest.json")))
                    size = m["bytes_before"] + m["patch_bytes"][f"{fmt}.patch"]
                    pts.append((math.log(size), math.log(r[2]), math.log(r[9])))
            if len(pts) < 2:
                continue
            def slope(k):
                xs = [p[0] for p in pts]; ys = [p[k] for p in pts]
                mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
                return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            print(f"{series} series, {fmt}: log-log slope ours {slope(1):.2f}, GNU patch {slope(2):.2f}")


if __name__ == "__main__":
    main()
