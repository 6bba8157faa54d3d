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

Past 2,000,000 lines gen.py's block search slows past use (at 8M lines,
one edit's block had grown to 380k lines after half an hour), so a larger
workload is tiled (see `tile`): gen.py's workload of 2M lines, with the
hunks in proportion, taken again and again, the non-blank lines of its
T-th copy suffixed `  # tile T` in the files and in every patch alike, and
the line numbers of udiff's hunks moved by the copies before.
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


# The size of a tile; smaller only to test the tiling quickly.
TILE = int(os.environ.get("GEN_LARGE_TILE", 2_000_000))


def main(argv):
    lines = int(argv[argv.index("--lines") + 1]) if "--lines" in argv else 0
    if lines > TILE:
        return tile(argv, lines)
    generate(argv)


def generate(argv):
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


def tile(argv, lines):
    """A workload of `lines` lines as copies of one of TILE lines (see the
    module's text). Each patch is its header (up to its first hunk or
    operation), each copy's body, and its footer."""
    import hashlib
    import shutil

    copies = lines // TILE
    hunks = int(argv[argv.index("--hunks") + 1])
    if lines % TILE or hunks % copies:
        sys.exit(f"--lines past {TILE} must be a multiple of it, and --hunks of the copies")
    out = argv[argv.index("--out") + 1]
    base = os.path.join(out, "tile")
    base_argv = list(argv)
    base_argv[base_argv.index("--lines") + 1] = str(TILE)
    base_argv[base_argv.index("--hunks") + 1] = str(hunks // copies)
    base_argv[base_argv.index("--out") + 1] = base
    generate(base_argv)
    m = json.load(open(os.path.join(base, "manifest.json")))
    ap_id = m["ap_id"]
    name = "big/amalgamation.py"

    def suffixed(text, t):
        # What gen_large does to a copy's line, done to a line's text.
        return text + f"  # tile {t}" if t and text.strip() else text

    def read(path):
        with open(path, encoding="utf-8", newline="") as fh:
            got = fh.read().split("\n")
        assert got[-1] == "", f"{path} ends with a newline"
        return got[:-1]

    def write(path, lines):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.writelines(line + "\n" for line in lines)

    size = {}
    for side in ("before", "after"):
        text = read(os.path.join(base, side, name))
        size[side] = len(text)
        write(os.path.join(out, side, name), [suffixed(l, t) for t in range(copies) for l in text])

    def prefixed(line, t, prefixes):
        for p in prefixes:
            if line.startswith(p):
                return p + suffixed(line[len(p):], t)
        return None

    def udiff(line, t):
        if line.startswith("@@ -"):
            old, new, rest = line[4:].split(" ", 2)
            o, _, oc = old.partition(",")
            n, _, nc = new[1:].partition(",")
            o = str(int(o) + t * size["before"]) + ("," + oc if oc else "")
            n = str(int(n) + t * size["after"]) + ("," + nc if nc else "")
            return f"@@ -{o} +{n} {rest}"
        return prefixed(line, t, (" ", "-", "+"))

    def codex(line, t):
        if line.startswith("@@"):
            return "@@ " + suffixed(line[3:], t) if line[2:3] == " " and line[3:] else line
        return prefixed(line, t, (" ", "-", "+"))

    def repopatch(line, t):
        got = prefixed(line, t, ("- ", ". "))
        return line if got is None else got

    def ap(line, t):
        return line if line.startswith(ap_id + " ") or not line else suffixed(line, t)

    formats = {
        # name: (where the body starts, where the footer starts, a line of a copy)
        "udiff": (lambda l: l.startswith("@@ "), None, udiff),
        "codex": (lambda l: l.startswith("@@"), "*** End Patch", codex),
        "repopatch": (lambda l: l in ("REPLACE", "DELETE", "INSERT BEFORE", "INSERT AFTER"), "ENDPATCH", repopatch),
        "ap": (lambda l: l.startswith(ap_id + " ") and l.split(" ")[1] in ("REPLACE", "DELETE", "INSERT_BEFORE", "INSERT_AFTER"), None, ap),
    }
    m["patch_bytes"] = {}
    m["sha256"] = {}
    for fmt, (starts, footer, line_of) in formats.items():
        text = read(os.path.join(base, f"{fmt}.patch"))
        first = next(i for i, l in enumerate(text) if starts(l))
        last = text.index(footer) if footer else len(text)
        head, body, foot = text[:first], text[first:last], text[last:]
        tiled = list(head)
        for t in range(copies):
            for l in body:
                got = line_of(l, t)
                assert got is not None, f"{fmt}: a line neither header nor content: {l!r}"
                tiled.append(got)
        tiled += foot
        path = os.path.join(out, f"{fmt}.patch")
        write(path, tiled)
        m["patch_bytes"][f"{fmt}.patch"] = os.path.getsize(path)
        m["sha256"][f"{fmt}.patch"] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    m.pop("tree_sha256", None)
    m["overrides"] = {"hunks": hunks, "lines": lines}
    for k in ("lines_before", "lines_after", "edits", "udiff_hunks", "anchored_blocks"):
        m[k] *= copies
    m["anchored_ops"] = {k: v * copies for k, v in m["anchored_ops"].items()}
    m["bytes_before"] = os.path.getsize(os.path.join(out, "before", name))
    m["generator"] = f"tools/gen_large.py: {copies} copies of gen.py's {TILE:,}-line workload, suffixed `  # tile T`"
    shutil.rmtree(base)
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump(m, fh, indent=2)
        fh.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
