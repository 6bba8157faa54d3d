#!/usr/bin/env python3
"""Interleaved benchmark of a patch that fails: what a model's mistake
costs on a large file, against GNU patch failing on the same udiff.

    tools/bench_miss.py --bin PATH [--baseline PATH] [--work DIR]
                        [--lines N] [--runs N]

From the large workload of N lines (tools/gen_large.py, as tools/bench.py
makes it, a hunk every 40 lines), three udiffs that fail, each on the
file the workload's udiff edits:

- `typo`: one hunk of the workload's udiff, one of its removed lines
  changed (the commonest miss: a line the model misremembered);
- `absent`: one hunk none of whose lines is anywhere in the file;
- `last`: the whole udiff, its last hunk's removed line changed (a long
  patch with one mistake at the end).

Each is timed by ../shared/bench/ibench.py, round after round in rotating
order: grammar-patch `apply --json` (which must exit 1 with
`context_not_found`), with --baseline an older binary the same way, and
GNU `patch -p1 --dry-run -f` (which fails too, exit 1). Prints one row per
patch: medians, the paired ratio to each peer (per round: ours / theirs)
and peak memory in MiB. Raw ibench lines go to WORK/miss.jsonl.
"""
import argparse, json, os, re, subprocess, sys

from bench import run_ibench

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench"))


def hunks(udiff):
    """The udiff's header lines and its hunks, each a list of lines."""
    lines = udiff.splitlines(keepends=True)
    head, out = [], []
    for line in lines:
        if line.startswith("@@"):
            out.append([line])
        elif out:
            out[-1].append(line)
        else:
            head.append(line)
    return head, out


def misremember(hunk):
    """The hunk with its first removed line changed."""
    for i, line in enumerate(hunk):
        if line.startswith("-"):
            return hunk[:i] + [line.rstrip("\n") + "  # misremembered\n"] + hunk[i + 1:]
    raise SystemExit("a hunk of the workload removes nothing")


def patches(work):
    """Writes the three failing udiffs into WORK/miss/ and returns their names."""
    head, hs = hunks(open(os.path.join(work, "udiff.patch")).read())
    # The first file's hunks only: one file, as the scale has.
    if sum(1 for line in head if line.startswith("+++ ")) != 1:
        raise SystemExit("the workload's udiff is expected to edit one file")
    removing = [h for h in hs if any(line.startswith("-") for line in h)]
    middle = removing[len(removing) // 2]
    start = re.match(r"@@ -(\d+)", middle[0]).group(1)
    absent = [f"@@ -{start},3 +{start},3 @@\n",
              " this line is in no place of the file (gp-miss)\n",
              "-nor is this one (gp-miss)\n",
              "+replacement\n",
              " nor this one (gp-miss)\n"]
    k = max(i for i, h in enumerate(hs) if any(line.startswith("-") for line in h))
    last = hs[:k] + [misremember(hs[k])] + hs[k + 1:]
    out = os.path.join(work, "miss")
    os.makedirs(out, exist_ok=True)
    made = {"typo": [misremember(middle)], "absent": [absent], "last": last}
    for name, body in made.items():
        with open(os.path.join(out, name + ".patch"), "w") as f:
            f.write("".join(head) + "".join("".join(h) for h in body))
    return list(made)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--work", default="/tmp/gp-bench")
    ap.add_argument("--lines", type=int, default=200000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    a.baseline = a.baseline and os.path.abspath(a.baseline)
    bench_dir = os.environ.get("BENCH_DIR", BENCH)
    spec = f"large-lines{a.lines}-hunks{a.lines // 40}"
    work = os.path.join(a.work, spec)
    manifest = os.path.join(work, "manifest.json")
    if not os.path.exists(manifest) or json.load(open(manifest)).get("seed") != a.seed:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_large.py"), "--seed", str(a.seed),
                        "--out", work, "--force", "--lines", str(a.lines),
                        "--hunks", str(a.lines // 40)], check=True, stdout=subprocess.DEVNULL)
    single = []
    for line in open(os.path.join(work, "udiff.patch")):
        if line.startswith("+++ b/"):
            single = ["--single-file", line[6:].rstrip("\n")]
            break
    raw = open(os.path.join(a.work, "miss.jsonl"), "w")
    rows = []
    for name in patches(work):
        p = f"{{W}}/miss/{name}.patch"
        check = os.path.join(work, "miss", name + ".patch")
        got = subprocess.run([a.bin, "apply", "--json", "--dry-run", "--root", os.path.join(work, "before"), check],
                             capture_output=True, text=True)
        code = json.loads(got.stdout).get("error", {}).get("code")
        if got.returncode != 1 or code != "context_not_found":
            raise SystemExit(f"{name}: expected context_not_found and exit 1, got {code} and {got.returncode}")
        tools = [f"ours::{a.bin} apply --json --root {{T}} {p}",
                 f"patch::patch -p1 -s -f --dry-run -d {{T}} -i {p}"]
        if a.baseline:
            tools.append(f"before::{a.baseline} apply --json --root {{T}} {p}")
        cmd = [sys.executable, os.path.join(bench_dir, "ibench.py"), "--work", work, "--runs", str(a.runs),
               "--ref", "ours", "--tag", "miss-" + name, "--no-check"] + single
        res = run_ibench(cmd, tools, raw)
        # Every run failed as it should: ours and GNU patch both exit 1.
        for label, o in res.items():
            if o["exit_codes"] != [1]:
                raise SystemExit(f"{name}: {label} exited {o['exit_codes']}: {o.get('stderr_tail')}")
        ratio = lambda peer: (round(1 / res[peer]["ratio_vs_ours"], 2) if peer in res else None)
        rows.append((name, res["ours"]["wall_median_s"], ratio("patch"), ratio("before"),
                     res["ours"]["peak_median_mib"], res["patch"]["wall_median_s"],
                     res["patch"]["peak_median_mib"],
                     res["before"]["peak_median_mib"] if "before" in res else None))
        print(*rows[-1], sep="\t", file=sys.stderr, flush=True)
    raw.close()
    head = ["patch", "ours s", "ours / GNU patch", "ours / before", "peak MiB", "GNU patch s",
            "GNU patch peak MiB", "before peak MiB"]
    print(f"{a.lines} lines, {a.runs} rounds")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join("–" if v is None else str(v) for v in r) + " |")


if __name__ == "__main__":
    main()
