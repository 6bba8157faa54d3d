#!/usr/bin/env python3
"""Accuracy harness: the slips models make, on real source files, scored.

For each case it takes a real file (the Python standard library of the
interpreter running this script), picks a stretch of indented code, and
writes the same intended edit (one line changed, one line added) in each
format: udiff, codex, RepoPatch and ap. Each slip then spoils the patch the
way models do (see SLIPS), and `grammar-patch apply` runs on a fresh copy.
The intended result is known, so every run is scored:

  correct  the tree is exactly the intended one (or, where the intended
           result is a refusal, nothing was written and the exit code is 1)
  refused  the intended edit was possible, and the tool refused it
           (exit 1, nothing written)
  wrong    anything else: an edit at the wrong place, with the wrong
           indentation, half a patch, or success where refusal was intended

Usage: tools/accuracy.py [--bin PATH] [--cases N] [--seed S] [--json OUT]
                         [--show-wrong]

The tables printed are docs/accuracy.md's; wrong edits must be zero.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections import defaultdict

FORMATS = ["udiff", "codex", "repopatch", "ap"]
AP_ID = "5e1f0c2a"


# --------------------------------------------------------------------------
# Real files and the stretches an edit may target.

def sources(limit):
    """Python files of the standard library: UTF-8, LF, newline at the end,
    no trailing whitespace (ap strips it, which would muddle the scoring)."""
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("test", "tests", "site-packages", "idlelib", "__pycache__"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "\r" in text or "\t" in text or not text.endswith("\n"):
                continue
            lines = text.split("\n")[:-1]
            if len(lines) < 120 or any(l != l.rstrip() for l in lines):
                continue
            out.append((os.path.relpath(path, root), lines))
            if len(out) >= limit:
                return out
    return out


def ws(line):
    return line[: len(line) - len(line.lstrip(" \t"))]


def norm(line):
    return line.strip()


def regions(lines, rng, count):
    """Stretches of 5 non-blank lines, all indented, whose trimmed text
    occurs once in the file, with no quotes on the changed (middle) line."""
    keys = [norm(l) for l in lines]
    found = []
    starts = list(range(2, len(lines) - 8))
    rng.shuffle(starts)
    for s in starts:
        block = lines[s : s + 5]
        if any(not l.strip() for l in block) or any(not ws(l) for l in block):
            continue
        if any(l.strip().startswith(("#", '"""', "'''", "@")) for l in block):
            continue
        mid = block[2]
        if any(c in mid for c in "\"'\\") or mid.rstrip().endswith((":", ",", "(", "[", "{", "\\")):
            continue
        k = keys[s : s + 5]
        hits = sum(1 for i in range(len(keys) - 4) if keys[i : i + 5] == k)
        if hits != 1:
            continue
        if any(abs(s - f) < 12 for f in found):
            continue
        found.append(s)
        if len(found) >= count:
            break
    return sorted(found)


# --------------------------------------------------------------------------
# An edit, and the patch text of each format.

class Edit:
    """Lines `start..start+5` of the file; the middle one changed, a line added after it."""

    def __init__(self, lines, start):
        self.start = start
        self.old = lines[start : start + 5]
        mid = self.old[2]
        self.new = self.old[:2] + [mid + "  # changed", ws(mid) + "checked = True"] + self.old[3:]

    def apply(self, lines):
        return lines[: self.start] + self.new + lines[self.start + 5 :]


def udiff(path, edits, hunks):
    out = [f"--- a/{path}", f"+++ b/{path}"]
    shift = 0
    for e, (old, new) in zip(edits, hunks):
        out.append(f"@@ -{e.start + 1},{len(old)} +{e.start + 1 + shift},{len(new)} @@")
        out += hunk_lines(old, new)
        shift += len(new) - len(old)
    return out


def hunk_lines(old, new):
    # Two context lines, the change, two context lines: old[2] -> new[2:4].
    return [" " + old[0], " " + old[1], "-" + old[2], "+" + new[2], "+" + new[3], " " + old[3], " " + old[4]]


def codex(path, edits, hunks, headers=None):
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    for i, (old, new) in enumerate(hunks):
        out.append(headers[i] if headers else "@@")
        out += hunk_lines(old, new)
    out.append("*** End Patch")
    return out


def repopatch(path, edits, hunks):
    out = ["PATCHSET", f"PATCH {path}"]
    for old, new in hunks:
        out.append("REPLACE")
        out += ["- " + l for l in old]
        out.append("---")
        out += [". " + l for l in new]
    out += ["ENDPATCH", "ENDPATCHSET"]
    return out


def ap(path, edits, hunks, ids=None):
    out = [f"{AP_ID} AP 3.2", "", f"{AP_ID} FILE", path]
    for old, new in hunks:
        out += ["", f"{AP_ID} REPLACE", f"{AP_ID} snippet"] + old + [f"{AP_ID} content"] + new
    return out


RENDER = {"udiff": udiff, "codex": codex, "repopatch": repopatch, "ap": ap}


def render(fmt, path, edits, hunks=None):
    hunks = hunks or [(e.old, e.new) for e in edits]
    return "\n".join(RENDER[fmt](path, edits, hunks)) + "\n"


# --------------------------------------------------------------------------
# Slips: each returns (before lines, patch text, intended lines or None for
# "refuse"), or None where the slip does not apply to the format.

def dedent(lines, n):
    return [l[n:] if l[:n].strip() == "" else l.lstrip(" ") for l in lines]


def tabs(line):
    w = ws(line)
    return "\t" * (len(w) // 4) + " " * (len(w) % 4) + line[len(w):]


def curly(line):
    """Typographic punctuation a model writes for ASCII: quotes, dashes."""
    out, double = [], True
    for ch in line:
        if ch == '"':
            out.append("\u201c" if double else "\u201d")
            double = not double
        elif ch == "'":
            out.append("\u2019")
        else:
            out.append(ch)
    return "".join(out).replace(" - ", " \u2013 ")


def slip_none(fmt, path, lines, e, rng):
    return lines, render(fmt, path, [e]), e.apply(lines)


def slip_trailing(fmt, path, lines, e, rng):
    old = [l + "  " for l in e.old]
    new = [l + "  " if i in (0, 1, 4, 5) else l for i, l in enumerate(e.new)]
    if fmt == "repopatch":
        new = e.new  # its kept lines come from the file anyway
    return lines, render(fmt, path, [e], [(old, new)]), e.apply(lines)


def slip_reindent(fmt, path, lines, e, rng):
    """The whole stretch written at another depth (quoted from a nested block)."""
    n = min(len(ws(l)) for l in e.old)
    return lines, render(fmt, path, [e], [(dedent(e.old, n), dedent(e.new, n))]), e.apply(lines)


def slip_tabs_as_spaces(fmt, path, lines, e, rng):
    """The file indents with tabs; the patch writes 4 spaces for each."""
    tabbed = [tabs(l) for l in lines]
    intended = [tabs(l) for l in e.apply(lines)]
    return tabbed, render(fmt, path, [e]), intended


def slip_tabs_file_added_with_tabs(fmt, path, lines, e, rng):
    """The file indents with tabs; the patch quotes its old lines with 4
    spaces for each tab, and writes its added lines with the file's own
    tabs (they are already right: nothing may strip them)."""
    tabbed = [tabs(l) for l in lines]
    intended = [tabs(l) for l in e.apply(lines)]
    new = e.old[:2] + [tabs(l) for l in e.new[2:4]] + e.old[3:]
    return tabbed, render(fmt, path, [e], [(e.old, new)]), intended


def slip_typographic(fmt, path, lines, e, rng):
    """Curly quotes or en dashes in context where the file has ASCII (only
    stretches whose context has quotes or dashes)."""
    old = [curly(l) for l in e.old]
    if old == e.old:
        return None
    new = old[:2] + e.new[2:4] + old[3:]
    return lines, render(fmt, path, [e], [(old, new)]), e.apply(lines)


def slip_padded(fmt, path, lines, e, rng):
    text = render(fmt, path, [e])
    if fmt == "codex":
        text = text.replace("*** Begin Patch", "  *** Begin Patch\t").replace(
            "*** Update File: ", "***  Update File:\t").replace("\n@@\n", "\n@@ \t\n").replace(
            "*** End Patch", "*** End Patch  \t")
    elif fmt == "repopatch":
        text = text.replace("PATCHSET\n", " PATCHSET\n", 1).replace("PATCH ", "PATCH\t", 1).replace(
            "REPLACE", "  REPLACE").replace("\n---\n", "\n  ---\n").replace("ENDPATCH\n", "\tENDPATCH\n", 1)
    elif fmt == "ap":
        # A line that starts with the ID is a directive; one indented
        # before it is content, so padding goes after the ID only.
        text = text.replace(f"{AP_ID} REPLACE", f"{AP_ID}\tREPLACE").replace(
            f"{AP_ID} snippet", f"{AP_ID}  \tsnippet ")
    else:
        return None
    return lines, text, e.apply(lines)


def slip_ambiguous_indent(fmt, path, lines, e, rng):
    """The stretch also occurs elsewhere at another depth, and the patch
    matches neither exactly: refusing is right."""
    n = min(len(ws(l)) for l in e.old)
    copy = ["    " + l for l in e.old]
    at = len(lines)
    before = lines + ["", "def _copy():", "    if True:"] + copy
    patch = render(fmt, path, [e], [(dedent(e.old, n), dedent(e.new, n))])
    return before, patch, None


def slip_stale(fmt, path, lines, e, rng):
    """The changed line was edited by someone else since the model read the
    file: refusing is right (ap must not call it already applied)."""
    before = lines[:]
    before[e.start + 2] = before[e.start + 2] + "  # edited elsewhere"
    if fmt == "ap":
        # A deletion: content is the snippet without the changed line.
        old, new = e.old, e.old[:2] + e.old[3:]
        return before, render(fmt, path, [e], [(old, new)]), None
    return before, render(fmt, path, [e]), None


def slip_codex_range_header(fmt, path, lines, e, rng):
    if fmt != "codex":
        return None
    h = [f"@@ -{e.start + 1},5 +{e.start + 1},6 @@"]
    return lines, "\n".join(codex(path, [e], [(e.old, e.new)], h)) + "\n", e.apply(lines)


def slip_codex_header_is_first_line(fmt, path, lines, e, rng):
    if fmt != "codex":
        return None
    h = ["@@ " + e.old[0]]
    return lines, "\n".join(codex(path, [e], [(e.old, e.new)], h)) + "\n", e.apply(lines)


def slip_codex_abbreviated_signature(fmt, path, lines, e, rng):
    if fmt != "codex":
        return None
    for i in range(e.start - 1, -1, -1):
        m = re.match(r"\s*((?:async\s+)?def|class)\s+(\w+)", lines[i])
        if m:
            h = [f"@@ {m.group(1)} {m.group(2)}"]
            if h[0][3:] == lines[i].strip():
                return None
            return lines, "\n".join(codex(path, [e], [(e.old, e.new)], h)) + "\n", e.apply(lines)
    return None


def slip_drifted_line_numbers(fmt, path, lines, e, rng):
    """udiff: the hunk header's line numbers 7 lines off."""
    if fmt != "udiff":
        return None
    text = render(fmt, path, [e])
    m = re.search(r"@@ -(\d+),(\d+) \+(\d+),(\d+) @@", text)
    a, b = int(m.group(1)) + 7, int(m.group(3)) + 7
    return lines, text.replace(m.group(0), f"@@ -{a},{m.group(2)} +{b},{m.group(4)} @@"), e.apply(lines)


def slip_codex_header_not_in_file(fmt, path, lines, e, rng):
    """codex: a `@@` header the file does not have (the model's picture
    of the file is off): the hunk alone decides, or it is refused."""
    if fmt != "codex":
        return None
    h = ["@@ def _not_in_this_file_():"]
    return lines, "\n".join(codex(path, [e], [(e.old, e.new)], h)) + "\n", e.apply(lines)


def slip_ap_dropped_indent(fmt, path, lines, e, rng):
    """ap `content` written at column 0 for an indented target (the
    snippet as in the file, the content's own relative indentation kept)."""
    if fmt != "ap":
        return None
    if any(l.rstrip().endswith((":", "{", "(", "[")) for l in e.new):
        return None  # content that opens a block is the nesting guard's
    n = min(len(ws(l)) for l in e.new)
    return lines, render(fmt, path, [e], [(e.old, dedent(e.new, n))]), e.apply(lines)


def slip_ap_drifted_id(fmt, path, lines, e, rng):
    if fmt != "ap":
        return None
    text = render(fmt, path, [e])
    drifted = AP_ID[:-1] + ("0" if AP_ID[-1] != "0" else "1")
    return lines, text.replace(f"{AP_ID} content", f"{drifted} content"), e.apply(lines)


def slip_same_file_twice(fmt, path, lines, e, rng, second=None):
    """Two edits of one file written as two blocks (udiff's RFC refuses)."""
    if second is None:
        return None
    if fmt == "udiff":
        a = render(fmt, path, [e])
        b = render(fmt, path, [second])
        return lines, a + b, None
    blocks = []
    for one in (e, second):
        blocks.append(render(fmt, path, [one]))
    if fmt == "codex":
        text = blocks[0].replace("*** End Patch\n", "") + blocks[1].replace("*** Begin Patch\n", "")
    elif fmt == "repopatch":
        text = blocks[0].replace("ENDPATCHSET\n", "") + blocks[1].replace("PATCHSET\n", "", 1)
    else:
        text = blocks[0] + blocks[1].split("\n", 1)[1]
    # Apply the later stretch first, so the earlier one's line numbers hold.
    first, last = sorted((e, second), key=lambda x: x.start)
    return lines, text, first.apply(last.apply(lines))


def insertion(fmt, path, old, added):
    """A patch that adds `added` right after the lines `old`, in the form
    each format has for it."""
    if fmt == "udiff":
        body = [f"--- a/{path}", f"+++ b/{path}", f"@@ -1,{len(old)} +1,{len(old) + len(added)} @@"]
        body += [" " + l for l in old] + ["+" + l for l in added]
    elif fmt == "codex":
        body = ["*** Begin Patch", f"*** Update File: {path}", "@@"]
        body += [" " + l for l in old] + ["+" + l for l in added] + ["*** End Patch"]
    elif fmt == "repopatch":
        body = ["PATCHSET", f"PATCH {path}", "INSERT AFTER"] + ["- " + l for l in old] + ["---"]
        body += [". " + l for l in added] + ["ENDPATCH", "ENDPATCHSET"]
    else:
        body = [f"{AP_ID} AP 3.2", f"{AP_ID} FILE", path, f"{AP_ID} INSERT_AFTER", f"{AP_ID} snippet"]
        body += old + [f"{AP_ID} content"] + added
    return "\n".join(body) + "\n"


def unique(lines, at, n):
    keys = [norm(l) for l in lines]
    block = keys[at : at + n]
    return all(block) and sum(1 for i in range(len(keys) - n + 1) if keys[i : i + n] == block) == 1


def slip_insert_after(fmt, path, lines, e, rng):
    """A line added after three lines, with no context after it: applied
    again, the three lines are still there, and so is the added line
    (udiff's line numbers are left wrong: the context decides)."""
    if not unique(lines, e.start, 3):
        return None
    added = [ws(e.old[2]) + "checked = True"]
    intended = lines[: e.start + 3] + added + lines[e.start + 3 :]
    return lines, insertion(fmt, path, e.old[:3], added), intended


def slip_append_at_end(fmt, path, lines, e, rng, second=None):
    """A line appended after the file's last three lines (once a file)."""
    n = len(lines)
    if second is None or e.start > second.start or not unique(lines, n - 3, 3):
        return None
    added = [ws(lines[-1]) + "checked = True"]
    text = insertion(fmt, path, lines[-3:], added)
    if fmt == "udiff":
        text = text.replace("@@ -1,3 +1,4 @@", f"@@ -{n - 2},3 +{n - 2},4 @@")
    return lines, text, lines + added


def slip_missing_end(fmt, path, lines, e, rng):
    """The last line of the patch lost: it may be cut off, so refuse."""
    text = render(fmt, path, [e])
    if fmt == "codex":
        return lines, text.replace("*** End Patch\n", ""), None
    if fmt == "repopatch":
        return lines, text.replace("ENDPATCHSET\n", ""), None
    return None


# --------------------------------------------------------------------------
# Independent corruptions (the metamorphic property): the lines an applier
# must find (context and removed lines: `old`) and the lines it must write
# (the added ones: new[2:4]) are spoiled independently. The outcome must be
# the intended tree, or a refusal that writes nothing: where only the find
# side is spoiled, the tree of the clean patch; where only the written side
# is, that tree with the added lines as written (nothing shows they are
# wrong); where both are spoiled the same way, either (the patch shows how
# it differs from the file).

def shift_in(lines):
    return ["    " + l if l.strip() else l for l in lines]


def shift_out(lines):
    if any(l.strip() and not l.startswith("    ") for l in lines):
        return None
    return [l[4:] if l.strip() else l for l in lines]


def spaces_to_tabs(lines):
    return [tabs(l) for l in lines]


def trailing_ws(lines):
    return [l + "  " if l.strip() else l for l in lines]


def typographic(lines):
    out = [curly(l) for l in lines]
    return out if out != lines else None


CORRUPTIONS = [
    ("one level deeper", shift_in),
    ("one level shallower", shift_out),
    ("tabs for spaces", spaces_to_tabs),
    ("trailing whitespace", trailing_ws),
    ("typographic punctuation", typographic),
]


def corrupted(fmt, path, lines, e, spoil_old, spoil_new, both):
    """The edit with its old lines (and the context copies in new) spoiled
    by `spoil_old`, its added lines by `spoil_new` (either may be None);
    returns (before, patch, acceptable results), or None where a spoiler
    does not apply."""
    old, new = list(e.old), list(e.new)
    if spoil_old:
        old = spoil_old(e.old)
        if old is None:
            return None
        new = old[:2] + new[2:4] + old[3:]
    added = e.new[2:4]
    if spoil_new:
        added = spoil_new(e.new[2:4])
        if added is None:
            return None
        new = new[:2] + added + new[4:]
    clean = e.apply(lines)
    as_written = lines[: e.start] + e.new[:2] + added + e.new[4:] + lines[e.start + 5 :]
    if fmt == "ap" and spoil_new is trailing_ws:
        as_written = clean  # ap strips trailing whitespace (§3.5)
    # ap restores a dropped indent only where the content was written flat
    # as a whole; here its copies of the snippet keep the file's indentation,
    # so lines at column 0 are meant there (as written).
    if spoil_new is None:
        want = [clean]
    elif spoil_old is None:
        want = [as_written]
    else:
        want = [clean, as_written] if both else [clean]
    return lines, render(fmt, path, [e], [(old, new)]), want


def independent_corruptions():
    """(name, maker) for every corruption on the find side, on the written
    side, and on both; and the two the issue named: old lines spoiled, added
    lines written as the file writes them."""
    out = []
    for name, spoil in CORRUPTIONS:
        out.append((f"find side: {name}", spoil, None, False))
        out.append((f"written side: {name}", None, spoil, False))
        out.append((f"both sides: {name}", spoil, spoil, True))
    return out


SLIPS = [
    ("none", slip_none),
    ("trailing whitespace", slip_trailing),
    ("block re-indented", slip_reindent),
    ("tabs written as spaces", slip_tabs_as_spaces),
    ("tabs as spaces, added lines in tabs", slip_tabs_file_added_with_tabs),
    ("typographic punctuation", slip_typographic),
    ("padded markers", slip_padded),
    ("codex: udiff range header", slip_codex_range_header),
    ("codex: header is the first line", slip_codex_header_is_first_line),
    ("codex: abbreviated signature", slip_codex_abbreviated_signature),
    ("udiff: line numbers 7 off", slip_drifted_line_numbers),
    ("codex: header not in the file", slip_codex_header_not_in_file),
    ("ap: content at column 0", slip_ap_dropped_indent),
    ("ap: drifted ID", slip_ap_drifted_id),
    ("same file twice", slip_same_file_twice),
    ("insertion, no context after", slip_insert_after),
    ("appended at the end", slip_append_at_end),
    ("missing end marker (refuse)", slip_missing_end),
    ("stale target (refuse)", slip_stale),
    ("ambiguous once re-indented (refuse)", slip_ambiguous_indent),
]


# --------------------------------------------------------------------------
# Running and scoring.

def tree_of(tmp):
    files = {}
    for dirpath, _, names in os.walk(tmp):
        for n in names:
            full = os.path.join(dirpath, n)
            with open(full, "rb") as f:
                files[os.path.relpath(full, tmp)] = f.read()
    return files


def run(binary, fmt, before, patch, path, again=False):
    """Applies `patch` to a tree holding `before` at `path`: the exit code,
    the tree, the output; with `again`, applies it a second time to what
    the first run left and adds whether that second run left the tree as
    it was."""
    tmp = tempfile.mkdtemp(prefix="gp-acc-")
    try:
        target = os.path.join(tmp, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write("\n".join(before) + "\n")
        argv = [binary, "apply", "--root", tmp, "--format", fmt, "--json"]
        p = subprocess.run(argv, input=patch.encode(), capture_output=True, timeout=60)
        files = tree_of(tmp)
        if not again:
            return p.returncode, files, p.stdout.decode(errors="replace")
        q = subprocess.run(argv, input=patch.encode(), capture_output=True, timeout=60)
        kept = q.returncode in (0, 1) and tree_of(tmp) == files
        return p.returncode, files, p.stdout.decode(errors="replace"), kept, q.stdout.decode(errors="replace")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def as_files(path, lines):
    return {path: ("\n".join(lines) + "\n").encode()}


def score(code, files, path, before, intended):
    """`intended`: the intended lines, a list of acceptable ones, or None
    where refusing is the one right outcome."""
    was = as_files(path, before)
    if intended is None:
        return "correct" if code == 1 and files == was else "wrong"
    wants = intended if intended and isinstance(intended[0], list) else [intended]
    if code == 0 and any(files == as_files(path, w) for w in wants):
        return "correct"
    if code == 1 and files == was:
        return "refused"
    return "wrong"


def record(out, args, case, fmt, path, line, verdict, code, patch, stdout):
    """One scored run: shown when it is wrong and --show-wrong asks, written
    to --json as a line; 1 when it is a wrong edit, else 0. `case` is
    ("slip", name) or ("corruption", name)."""
    kind, name = case
    if verdict == "wrong" and args.show_wrong:
        print(f"--- wrong: {name} / {fmt} / {path}:{line}\n{patch}\n{stdout}\n", file=sys.stderr)
    if out:
        out.write(json.dumps({kind: name, "format": fmt, "file": path, "line": line,
                              "verdict": verdict, "exit": code}) + "\n")
    return int(verdict == "wrong")


def main():
    ap_ = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap_.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "grammar-patch"))
    ap_.add_argument("--cases", type=int, default=40, help="stretches of code (about 2 per file)")
    ap_.add_argument("--seed", type=int, default=14)
    ap_.add_argument("--json", help="write every scored run here, one JSON object a line")
    ap_.add_argument("--show-wrong", action="store_true", help="print the patch and output of every wrong run")
    args = ap_.parse_args()
    rng = random.Random(args.seed)
    files = sources(args.cases)
    cases = []
    for rel, lines in files:
        starts = regions(lines, rng, 2)
        if len(starts) == 2:
            cases.append((rel, lines, starts))
        if len(cases) >= args.cases // 2:
            break
    table = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    spoiled = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    out = open(args.json, "w") if args.json else None
    wrong = 0
    reapplied = changed_again = 0
    for rel, lines, (s1, s2) in cases:
        path = "src/" + rel.replace(os.sep, "/")
        for start, other in ((s1, s2), (s2, s1)):
            e, second = Edit(lines, start), Edit(lines, other)
            for fmt in FORMATS:
                for name, slip in SLIPS:
                    made = slip(fmt, path, lines, e, rng, second) if slip in (slip_same_file_twice, slip_append_at_end) \
                        else slip(fmt, path, lines, e, rng)
                    if made is None:
                        continue
                    before, patch, intended = made
                    code, tree, stdout, kept, again = run(args.bin, fmt, before, patch, path, again=True)
                    verdict = score(code, tree, path, before, intended)
                    if code == 0:
                        reapplied += 1
                        if not kept:
                            changed_again += 1
                            if args.show_wrong:
                                print(f"--- applied twice changed the tree: {name} / {fmt} / {path}:{start + 1}\n{patch}\n{again}\n", file=sys.stderr)
                    table[name][fmt][verdict] += 1
                    wrong += record(out, args, ("slip", name), fmt, path, start + 1, verdict, code, patch, stdout)
                for name, spoil_old, spoil_new, both in independent_corruptions():
                    made = corrupted(fmt, path, lines, e, spoil_old, spoil_new, both)
                    if made is None:
                        continue
                    before, patch, wants = made
                    code, tree, stdout = run(args.bin, fmt, before, patch, path)
                    verdict = score(code, tree, path, before, wants)
                    spoiled[name][fmt][verdict] += 1
                    wrong += record(out, args, ("corruption", name), fmt, path, start + 1, verdict, code, patch,
                                    stdout)
    print(f"{len(cases) * 2} edits in {len(cases)} files of the Python {sys.version.split()[0]} standard library; "
          "each cell: correct / refused / wrong")
    print()
    print("| slip | " + " | ".join(FORMATS) + " |")
    print("|---|" + "---|" * len(FORMATS))
    for name, _ in SLIPS:
        cells = []
        for fmt in FORMATS:
            c = table[name].get(fmt)
            cells.append("—" if not c else f"{c['correct']} / {c['refused']} / {c['wrong']}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("Independent corruptions (the metamorphic property): correct / refused / wrong")
    print()
    print("| corruption | " + " | ".join(FORMATS) + " |")
    print("|---|" + "---|" * len(FORMATS))
    for name, *_ in independent_corruptions():
        cells = []
        for fmt in FORMATS:
            c = spoiled[name].get(fmt)
            cells.append("—" if not c else f"{c['correct']} / {c['refused']} / {c['wrong']}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print(f"applied twice: {reapplied} patches that applied, {changed_again} changed the tree again")
    print(f"wrong edits: {wrong}")
    sys.exit(1 if wrong or changed_again else 0)


if __name__ == "__main__":
    main()
