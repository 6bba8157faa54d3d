#!/usr/bin/env python3
"""gen.py's `large` scale past the end of its corpus, with every line unique.

    tools/gen_large.py --lines N [--hunks H] --seed S --out DIR [--force]

gen.py builds the large scale's one file by concatenating the corpus's
files in a seeded order; past the corpus's end (about a million lines of
the standard library) it repeats what it has, so long stretches of the
file occur twice and an edit in them cannot be placed by its lines alone.
This runs gen.py itself (../shared/bench/gen.py, or $BENCH_DIR/gen.py) with
one change: the corpus is taken again and again, and in its K-th copy
every non-blank line ends with `  # copy K`, so copies differ line by line
and the edits, blocks and patches gen.py makes stay unique. Below the
corpus's size the output is gen.py's, byte for byte. Its one-line search
is replaced by an index that gives the same answers (see
`fast_single_line_search`). manifest.json says which generator made it.
"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.environ.get("BENCH_DIR", os.path.normpath(os.path.join(HERE, "..", "..", "shared", "bench")))


def load_gen():
    spec = importlib.util.spec_from_file_location("gen", os.path.join(BENCH, "gen.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def main(argv):
    gen = load_gen()
    theirs = gen._pick_files

    def pick(corpus, scale, rng, cfg):
        if scale != "large":
            return theirs(corpus, scale, rng, cfg)
        want = cfg["lines"][0]
        # The same seeded order as gen.py: its first copy is gen.py's file.
        order = list(range(len(corpus)))
        rng.shuffle(order)
        big, copy = [], 0
        while len(big) < want:
            tag = f"  # copy {copy}" if copy else ""
            for i in order:
                path, lines = corpus[i]
                big.append(f"# ==== {path} ====" + tag)
                big.extend(line + tag if line.strip() else line for line in lines)
                if len(big) >= want:
                    break
            copy += 1
        return [("big/amalgamation.py", big[:want])]

    gen._pick_files = pick
    fast_single_line_search(gen)
    out = argv[argv.index("--out") + 1]
    gen.main(["--scale", "large"] + argv)
    manifest = os.path.join(out, "manifest.json")
    m = json.load(open(manifest))
    m["generator"] = "gen.py v1, past its corpus by tools/gen_large.py (copies suffixed `  # copy K`)"
    with open(manifest, "w") as fh:
        json.dump(m, fh, indent=2)
        fh.write("\n")


def fast_single_line_search(gen):
    """gen.py finds a one-line pattern (its first line as a suffix of a
    line) by scanning the whole text, once per candidate block: linear in
    the file for each of its edits, hours at 8M lines. The same answer (the
    first `cap` lines, in order, that end with the pattern) from the
    lines' reversed texts, sorted: a range of them, found by bisection. A
    pattern that ends many lines (`)`) is left to gen.py's scan, which
    stops at `cap` of them."""
    import bisect

    theirs = gen.NormIndex.occurrences

    def occurrences(self, pat, cap=8):
        if len(pat) != 1:
            return theirs(self, pat, cap)
        if not hasattr(self, "reversed_lines"):
            order = sorted(range(len(self.nb)), key=lambda j: self.nb[j][::-1])
            self.reversed_lines = [self.nb[j][::-1] for j in order]
            self.reversed_order = order
        key = pat[0][::-1]
        lo = bisect.bisect_left(self.reversed_lines, key)
        hi = bisect.bisect_left(self.reversed_lines, key + "\U0010ffff", lo)
        if hi - lo > 4096:
            return theirs(self, pat, cap)
        return sorted(self.reversed_order[lo:hi])[:cap]

    gen.NormIndex.occurrences = occurrences


if __name__ == "__main__":
    main(sys.argv[1:])
