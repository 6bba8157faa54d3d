#!/usr/bin/env python3
"""Replay a git repository's history as patches, through grammar-patch and
through the peer that reads each kind (git apply, GNU patch), and say per
commit and kind whether grammar-patch wrote the same tree.

For each of the last N first-parent commits C (a commit with a parent):
the parent's tree is exported (`git archive`, so executable bits and
symbolic links come along), each patch kind of C is made, and both tools
apply it to their own copy. grammar-patch's result is

  identical  exit 0 and the tree the reference says (see below);
  refused    exit 1 with nothing written;
  wrong      anything else: exit 0 with another tree, a crash, exit 2, or a
             refusal that changed the tree.

The reference is the commit's tree (contents, executable bits, links) for
the git kinds, and what `patch -p1` wrote for GNU diff, which carries no
modes. A refusal where the peer applied is counted as refused, not wrong,
but the summary says how many such there were: the goal is none.

Usage: tools/replay.py [--repo DIR] [-n N] [--bin PATH] [--kinds K,K] [--json]
       [--verbose]
"""

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

KINDS = {
    # kind: (patch command, peer command, grammar-patch reads the patch as)
    "git-diff": (["git", "diff", "{P}", "{C}"], ["git", "apply", "{patch}"]),
    "binary": (["git", "diff", "--binary", "{P}", "{C}"], ["git", "apply", "{patch}"]),
    "format-patch": (
        ["git", "format-patch", "-1", "--stdout", "{C}"],
        ["git", "apply", "{patch}"],
    ),
    "stat-p": (["git", "diff", "--stat", "-p", "{P}", "{C}"], ["git", "apply", "{patch}"]),
    "no-prefix": (
        ["git", "diff", "--no-prefix", "{P}", "{C}"],
        ["git", "apply", "-p0", "{patch}"],
    ),
    "gnu-diff": (None, ["patch", "-p1", "-s", "-f", "-i", "{patch}"]),
}


def run(cmd, cwd=None, check=True, env=None):
    return subprocess.run(
        cmd, cwd=cwd, check=check, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def export(repo, rev, dest):
    os.makedirs(dest)
    git = subprocess.Popen(["git", "-C", repo, "archive", "--format=tar", rev],
                           stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", dest], stdin=git.stdout, check=True)
    git.stdout.close()
    if git.wait() != 0:
        raise RuntimeError(f"git archive {rev} failed")


def snapshot(root):
    """Files and links under root: path -> (kind, exec bit, bytes)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", False, os.readlink(full).encode("utf-8", "surrogateescape"))
            else:
                with open(full, "rb") as f:
                    out[rel] = ("file", bool(st.st_mode & stat.S_IXUSR), f.read())
    return out


def describe_difference(got, want):
    for path in sorted(set(got) | set(want)):
        if path not in got:
            return f"{path}: missing"
        if path not in want:
            return f"{path}: not expected"
        if got[path] != want[path]:
            g, w = got[path], want[path]
            if g[0] != w[0]:
                return f"{path}: a {g[0]}, expected a {w[0]}"
            if g[1] != w[1]:
                return f"{path}: executable bit {g[1]}, expected {w[1]}"
            return f"{path}: content differs"
    return None


def make_patch(repo, kind, parent, commit, trees):
    if kind == "gnu-diff":
        # GNU diff exits 1 when the trees differ.
        return run(["diff", "-ruN", "a", "b"], cwd=trees, check=False).stdout
    cmd = [x.replace("{P}", parent).replace("{C}", commit) for x in KINDS[kind][0]]
    return run(["git", "-C", repo] + cmd[1:]).stdout


def replay(args):
    repo = os.path.abspath(args.repo)
    commits = run(
        ["git", "-C", repo, "rev-list", "--first-parent", "--no-merges", f"-n{args.n}", "HEAD"]
    ).stdout.decode().split()
    kinds = args.kinds.split(",") if args.kinds else list(KINDS)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=tempfile.gettempdir())
    results = {k: {"identical": 0, "refused": 0, "wrong": 0, "empty": 0, "peer_applied": 0,
                   "refused_where_peer_applied": 0, "cases": []} for k in kinds}
    for commit in commits:
        parents = run(["git", "-C", repo, "rev-list", "--parents", "-n1", commit]).stdout.split()
        if len(parents) != 2:
            continue
        parent = parents[1].decode()
        trees = tempfile.mkdtemp(prefix="gp-replay-")
        base, expected = os.path.join(trees, "a"), os.path.join(trees, "b")
        export(repo, parent, base)
        export(repo, commit, expected)
        before, commit_tree = snapshot(base), snapshot(expected)
        for kind in kinds:
            with tempfile.TemporaryDirectory(prefix="gp-replay-") as work:
                patch = make_patch(repo, kind, parent, commit, trees)
                if not patch.strip():
                    # GNU diff writes nothing for a mode-only commit.
                    results[kind]["empty"] += 1
                    continue
                patch_file = os.path.join(work, "change.patch")
                with open(patch_file, "wb") as f:
                    f.write(patch)
                ours, peer = os.path.join(work, "ours"), os.path.join(work, "peer")
                run(["cp", "-a", base, ours])
                run(["cp", "-a", base, peer])
                peer_cmd = [x.replace("{patch}", patch_file) for x in KINDS[kind][1]]
                peer_ok = run(peer_cmd, cwd=peer, check=False, env=env).returncode == 0
                got = run([args.bin, "apply", "--format", "udiff", "--json", "--root", ours,
                           patch_file], check=False)
                want = snapshot(peer) if kind == "gnu-diff" and peer_ok else commit_tree
                after = snapshot(ours)
                if got.returncode == 0:
                    why = describe_difference(after, want)
                    verdict = "identical" if why is None else "wrong"
                elif got.returncode == 1 and after == before:
                    verdict, why = "refused", first_code(got.stdout)
                else:
                    verdict = "wrong"
                    why = f"exit {got.returncode}" + (
                        "" if after == before else ", and the tree changed"
                    ) + f": {got.stderr.decode(errors='replace').strip()[:200]}"
                r = results[kind]
                r[verdict] += 1
                r["peer_applied"] += peer_ok
                r["refused_where_peer_applied"] += verdict == "refused" and peer_ok
                if verdict != "identical":
                    r["cases"].append({"commit": commit[:12], "verdict": verdict,
                                       "peer_applied": peer_ok, "why": why})
        shutil.rmtree(trees)
    return results


def first_code(stdout):
    try:
        e = json.loads(stdout)["error"]
        return f"{e['code']} (line {e.get('patch_line')}): {e['message']}"
    except (ValueError, KeyError, TypeError):
        return stdout.decode(errors="replace")[:200]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=os.path.dirname(here))
    ap.add_argument("-n", type=int, default=42)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(here),
                                                  "target", "release", "grammar-patch"))
    ap.add_argument("--kinds", default="")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    # Trees are copied many times over: memory is 15 times faster here.
    if os.access("/dev/shm", os.W_OK) and "TMPDIR" not in os.environ:
        tempfile.tempdir = "/dev/shm"
    results = replay(args)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{'kind':<14}{'identical':>10}{'refused':>9}{'wrong':>7}{'empty':>7}"
              "   peer applied")
        for kind, r in results.items():
            total = r["identical"] + r["refused"] + r["wrong"] + r["empty"]
            print(f"{kind:<14}{r['identical']:>10}{r['refused']:>9}{r['wrong']:>7}"
                  f"{r['empty']:>7}   {r['peer_applied']}/{total}")
            if args.verbose:
                for c in r["cases"]:
                    print(f"    {c['commit']} {c['verdict']}"
                          f" (peer {'applied' if c['peer_applied'] else 'refused'}): {c['why']}")
    wrong = sum(r["wrong"] for r in results.values())
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
