#!/usr/bin/env python3
"""Manual peer check (needs python3 and ../shared beside the repository):
runs the strict RepoPatch applier of ../shared/bench/check_patches.py on
every successful repopatch fixture without warnings and compares its result
with the fixture's after/ tree. That applier knows only REPLACE, INSERT
BEFORE/AFTER and DELETE on LF files ending with a newline; fixtures outside
that scope are listed as REFUSED, not counted.

    python3 tools/peer_repopatch.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "shared", "bench"))
import check_patches as cp  # noqa: E402

root = os.path.join(HERE, "..", "tests", "fixtures", "repopatch")


def load(base):
    out = {}
    for dirpath, _, files in os.walk(base):
        for f in files:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, base)] = open(p, newline="", encoding="utf-8").read()
    return out


same = differ = refused = 0
for case in sorted(os.listdir(root)):
    d = os.path.join(root, case)
    if not os.path.isdir(d) or any(os.path.exists(os.path.join(d, f)) for f in ("expect-error", "expect-warnings")):
        continue
    before, after = load(os.path.join(d, "before")), load(os.path.join(d, "after"))
    try:
        got = cp.apply_repopatch(open(os.path.join(d, "patch"), newline="").read(), dict(before))
    except Exception as e:  # the reference refuses what it does not support
        print(f"REFUSED {case}: {type(e).__name__} {str(e)[:80]}")
        refused += 1
        continue
    ok = all(got.get(p) == after.get(p) for p in before if p in after)
    print(("SAME " if ok else "DIFF ") + case)
    same += ok
    differ += not ok
print(f"{same} same, {differ} different, {refused} outside the reference's scope")
sys.exit(1 if differ else 0)
