#!/usr/bin/env python3
"""Batch benchmark of the Python package: patches applied per second per
core by `grammar_patch.apply_batch`, in memory, on gen.py's workloads (a
different seed for each job), every result checked against the
workload's after-tree.

    python tools/batch_bench.py [--gen ../shared/bench/gen.py]
        [--scale small] [--jobs 400] [--threads 1 2] [--rounds 5]

Needs the package installed (`pip install ./python`). Prints one line per
format and thread count: the median of the rounds, in patches per second,
and that divided by the threads.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import grammar_patch as gp

FORMATS = ["udiff", "codex", "repopatch", "ap"]


def tree(root):
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def workloads(gen, scale, count, work):
    """(before, {format: patch}, after) for seeds 1..count."""
    out = []
    for seed in range(1, count + 1):
        d = work / f"{scale}-{seed}"
        if not (d / "manifest.json").exists():
            subprocess.run([sys.executable, gen, "--scale", scale, "--seed", str(seed),
                            "--out", str(d), "--force"], check=True, stdout=subprocess.DEVNULL)
        patches = {f: (d / f"{f}.patch").read_text() for f in FORMATS}
        out.append((tree(d / "before"), patches, tree(d / "after")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", default=str(pathlib.Path(__file__).parents[1] / ".." / "shared" / "bench" / "gen.py"))
    ap.add_argument("--scale", default="small")
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--workloads", type=int, default=20, help="distinct seeds, repeated to --jobs")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "gp-batch-bench"))
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    loads = workloads(args.gen, args.scale, args.workloads, work)
    print(f"# {args.jobs} jobs of gen.py --scale {args.scale} ({args.workloads} seeds), "
          f"{args.rounds} rounds, median; grammar-patch {gp.__version__}, {os.cpu_count()} cores")
    for fmt in FORMATS:
        jobs = [(loads[i % len(loads)][0], loads[i % len(loads)][1][fmt]) for i in range(args.jobs)]
        for threads in args.threads:
            rates = []
            for _ in range(args.rounds):
                start = time.perf_counter()
                results = gp.apply_batch(jobs, format=fmt, threads=threads)
                rates.append(len(jobs) / (time.perf_counter() - start))
                for i, r in enumerate(results):
                    after = loads[i % len(loads)][2]
                    got = {p: c if isinstance(c, bytes) else c.encode() for p, c in r["tree"].items()}
                    if not r["ok"] or got != after:
                        sys.exit(f"{fmt} job {i}: wrong result: {r.get('error')}")
            rate = statistics.median(rates)
            print(f"{fmt:<10} threads={threads}  {rate:9.0f} patches/s  {rate / threads:9.0f} per core")


if __name__ == "__main__":
    main()
