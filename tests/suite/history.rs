//! `tools/replay.py` on a small history built here: every kind of diff
//! real tools write (`git diff`, `--binary`, `format-patch`, `--stat -p`,
//! `--no-prefix`, GNU `diff -ruN`) of commits that change line ends, bytes
//! that are not UTF-8, executable bits, symbolic links, binary files, empty
//! files and renames, applied by grammar-patch and by the peer that reads
//! that kind; grammar-patch must write the commit's tree (or the peer's,
//! for GNU diff) or refuse, never anything else.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::Command;

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()
        .expect("git is installed");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn write(repo: &Path, path: &str, bytes: &[u8]) {
    let p = repo.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

fn chmod(repo: &Path, path: &str, mode: u32) {
    fs::set_permissions(repo.join(path), fs::Permissions::from_mode(mode)).unwrap();
}

fn commit(repo: &Path, message: &str) {
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", message]);
}

/// The history: a base commit, then one commit per kind of change.
fn build(repo: &Path) -> usize {
    git(repo, &["init", "-q"]);
    git(repo, &["config", "user.email", "dev@example.com"]);
    git(repo, &["config", "user.name", "Dev"]);
    git(repo, &["config", "core.autocrlf", "false"]);
    write(repo, "a.txt", b"one\ntwo\nthree\n");
    write(repo, "crlf.txt", b"alpha\r\nbeta\r\ngamma\r\n");
    write(repo, "script.sh", b"#!/bin/sh\necho hi\n");
    write(repo, "latin1.txt", b"caf\xe9\nna\xefve\n");
    write(repo, "lib/keep.txt", b"kept\n");
    write(repo, "docs/old.md", b"# Old\n");
    write(repo, "logo.bin", b"\x89PNG\r\n\x1a\n\x00\x00\xffold");
    write(repo, "empty.txt", b"");
    write(repo, "tail.txt", b"last line without newline");
    commit(repo, "base");

    let mut commits = 0;
    let mut step = |message: &str, change: &dyn Fn(&Path)| {
        change(repo);
        commit(repo, message);
        commits += 1;
    };
    step("line ends", &|r| {
        write(r, "a.txt", b"one\n2\nthree\n");
        write(r, "crlf.txt", b"alpha\nbeta\r\ngamma\r\nDELTA\r\n");
        write(r, "new-crlf.txt", b"x\r\ny\r\nlone cr\r");
    });
    step("executable bits", &|r| {
        write(r, "script.sh", b"#!/bin/sh\necho hello\n");
        chmod(r, "script.sh", 0o755);
        write(r, "tool.sh", b"#!/bin/sh\nexit 0\n");
        chmod(r, "tool.sh", 0o755);
    });
    step("mode only", &|r| chmod(r, "script.sh", 0o644));
    step("a link", &|r| {
        symlink("lib/keep.txt", r.join("current")).unwrap()
    });
    step("link and file gone", &|r| {
        fs::remove_file(r.join("current")).unwrap();
        fs::remove_dir_all(r.join("docs")).unwrap();
    });
    step("bytes", &|r| {
        write(r, "latin1.txt", b"caf\xe9\nna\xefve \xff\n");
        write(r, "logo.bin", b"\x89PNG\r\n\x1a\n\x00\x00\xfenew bytes");
        write(r, "new.bin", b"\x00\x01\x02\r\n\x03");
    });
    step("renames and empty files", &|r| {
        fs::remove_file(r.join("a.txt")).unwrap();
        write(r, "b.txt", b"one\n2\nthree\nfour\n");
        write(r, "new-empty.txt", b"");
        fs::remove_file(r.join("empty.txt")).unwrap();
    });
    step("final newline", &|r| {
        write(r, "tail.txt", b"last line, now with a newline\n");
    });
    commits
}

#[test]
fn replayed_history_is_identical_or_refused_in_every_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir(&repo).unwrap();
    let n = build(&repo);
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/replay.py");
    // GNU patch is the GNU diff kind's peer; a machine without it (it is
    // not part of every base system) replays the git kinds only.
    let has_patch = Command::new("patch")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut kinds = vec!["git-diff", "binary", "format-patch", "stat-p", "no-prefix"];
    if has_patch {
        kinds.push("gnu-diff");
    } else {
        eprintln!("GNU patch is not installed: the GNU diff kind is not replayed");
    }
    let out = Command::new("python3")
        .arg(&tool)
        .args(["--kinds", &kinds.join(",")])
        .args([
            "--repo",
            repo.to_str().unwrap(),
            "-n",
            &n.to_string(),
            "--json",
        ])
        .args(["--bin", env!("CARGO_BIN_EXE_grammar-patch")])
        .output()
        .expect("python3 is installed");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let count = |kind: &str, key: &str| report[kind][key].as_u64().unwrap_or(u64::MAX);
    for kind in &kinds {
        let cases = &report[kind]["cases"];
        assert_eq!(count(kind, "wrong"), 0, "{kind}: a wrong tree: {cases:#}");
        let total = count(kind, "identical") + count(kind, "refused") + count(kind, "empty");
        assert_eq!(total, n as u64, "{kind}: every commit replayed: {cases:#}");
    }
    // The git kinds that carry binary bytes apply every commit, as git does.
    for kind in ["binary", "format-patch"] {
        let cases = &report[kind]["cases"];
        assert_eq!(count(kind, "identical"), n as u64, "{kind}: {cases:#}");
    }
    // The others say only "Binary files ... differ": git refuses that
    // commit too, and everything else applies.
    for kind in ["git-diff", "stat-p", "no-prefix"] {
        let cases = &report[kind]["cases"];
        assert_eq!(count(kind, "refused"), 1, "{kind}: {cases:#}");
        assert_eq!(cases[0]["peer_applied"], false, "{kind}: {cases:#}");
        assert_eq!(count(kind, "peer_applied"), n as u64 - 1, "{kind}");
    }
    if !has_patch {
        return;
    }
    // GNU diff writes nothing for the mode-only commit, "Binary files ...
    // differ" for the bytes (which `patch` skips and we refuse: the diff
    // has no bytes for them), and follows the deleted link to its file's
    // text (which `patch` refuses too).
    let cases = report["gnu-diff"]["cases"].as_array().unwrap();
    assert_eq!(count("gnu-diff", "empty"), 1, "{cases:#?}");
    assert_eq!(count("gnu-diff", "identical"), n as u64 - 3, "{cases:#?}");
    for case in cases {
        let why = case["why"].as_str().unwrap_or("");
        assert!(
            case["peer_applied"] == false || why.starts_with("unsupported_git_patch_feature"),
            "{case:#}"
        );
    }
}
