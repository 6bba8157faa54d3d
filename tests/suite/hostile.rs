//! Every byte the tool reads is hostile (issue 41): a journal or stash it
//! did not write, links a patch creates, special files, `.git`, a kill at
//! any system call of `apply` or `recover`, and the MCP byte stream. Each
//! test is one row of the issue's table, attacked the way the world would.
//!
//! The crash-point enumeration runs at reduced counts here;
//! `tools/attacks.sh` runs it at full count (`GRAMMAR_PATCH_ATTACKS=full`).

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_grammar-patch"))
}

fn full() -> bool {
    std::env::var("GRAMMAR_PATCH_ATTACKS").as_deref() == Ok("full")
}

/// One place to work: a root, a private state directory (where journals
/// live) and room beside them for what lies outside the root.
struct Site {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    state: PathBuf,
}

impl Site {
    fn new() -> Site {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        let (root, state) = (base.join("root"), base.join("state"));
        fs::create_dir_all(&root).unwrap();
        Site {
            _tmp: tmp,
            base,
            root,
            state,
        }
    }

    fn write(&self, path: &str, text: &str) {
        let p = self.root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// The binary with `args`, this site's state directory, and `stdin`;
    /// a run that takes 60 s is a hang, and fails the test.
    fn gp(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = bin()
            .args(args)
            .env("GRAMMAR_PATCH_STATE_DIR", &self.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let stdin = stdin.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = input.write_all(&stdin);
        });
        let out = wait_at_most(child, Duration::from_secs(60), &format!("{args:?}"));
        feeder.join().unwrap();
        out
    }

    /// `apply --json` (or another command taking a patch) of `patch` on stdin.
    fn json(&self, command: &[&str], patch: &str) -> (Option<i32>, Value) {
        let root = self.root.to_str().unwrap();
        let mut args = command.to_vec();
        args.extend(["--json", "--root", root]);
        let out = self.gp(&args, patch.as_bytes());
        let text = String::from_utf8_lossy(&out.stdout);
        let value = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "{command:?}: {e}: {text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        super::support::assert_valid_result(&value);
        (out.status.code(), value)
    }

    fn recover(&self) -> Output {
        self.gp(&["recover", "--root", self.root.to_str().unwrap()], b"")
    }
}

/// Waits for `child`, killing it (and failing) after `limit`.
fn wait_at_most(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} hung for {limit:?}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Everything under a directory, `.git` and hidden names included: each
/// path's kind, bytes (or link target), permission bits and inode.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>, u32),
    Dir(u32),
    Link(String),
    Other,
}

fn state_of(dir: &Path) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Node>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let node = if meta.file_type().is_symlink() {
                Node::Link(fs::read_link(&path).unwrap().to_string_lossy().into_owned())
            } else if meta.is_dir() {
                walk(root, &path, out);
                Node::Dir(mode)
            } else if meta.is_file() {
                Node::File(fs::read(&path).unwrap(), mode)
            } else {
                Node::Other
            };
            out.insert(rel, node);
        }
    }
    walk(dir, dir, &mut out);
    out
}

fn codes(value: &Value) -> Vec<String> {
    let mut codes: Vec<String> = value["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    if let Some(c) = value["error"]["code"].as_str() {
        codes.insert(0, c.to_string());
    }
    codes
}

/// A record of the journal format the tool wrote inside the root before
/// it kept journals outside every root: kind, mode, three field lengths,
/// FNV-1a of that header, then the fields.
fn old_record(kind: u8, mode: u32, a: &str, b: &str, bytes: &[u8], lbytes: u64) -> Vec<u8> {
    let mut h = vec![kind];
    h.extend(mode.to_le_bytes());
    h.extend((a.len() as u32).to_le_bytes());
    h.extend((b.len() as u32).to_le_bytes());
    h.extend(lbytes.to_le_bytes());
    let sum = h.iter().fold(0xcbf2_9ce4_8422_2325u64, |s, &x| {
        (s ^ x as u64).wrapping_mul(0x0100_0000_01b3)
    });
    h.extend(sum.to_le_bytes());
    h.extend(a.as_bytes());
    h.extend(b.as_bytes());
    h.extend(bytes);
    h
}

/// What an attacker commits: a journal that rewrites `.git/config` (a
/// command git then runs), creates a setuid hook and deletes a file, and a
/// stash that "recovery" would clean away.
fn forge_clone(site: &Site) {
    let src = site.base.join("attacker");
    fs::create_dir_all(&src).unwrap();
    let git = |dir: &Path, args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "a")
            .env("GIT_AUTHOR_EMAIL", "a@b")
            .env("GIT_COMMITTER_NAME", "a")
            .env("GIT_COMMITTER_EMAIL", "a@b")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&src, &["init", "-q"]);
    fs::write(src.join("victim.txt"), "keep me\n").unwrap();
    fs::write(src.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let config = "[core]\n\tfsmonitor = touch PWNED\n";
    let hook = "#!/bin/sh\ntouch PWNED\n";
    let mut journal = old_record(
        1,
        0o644,
        ".git/config",
        "",
        config.as_bytes(),
        config.len() as u64,
    );
    journal.extend(old_record(
        4,
        0o4755,
        ".git/hooks/pre-commit",
        "",
        hook.as_bytes(),
        hook.len() as u64,
    ));
    journal.extend(old_record(2, 0, "victim.txt", "", b"", 0));
    fs::write(src.join(".grammar-patch-journal"), &journal).unwrap();
    fs::create_dir_all(src.join(".grammar-patch-stash")).unwrap();
    fs::write(src.join(".grammar-patch-stash/1"), "the stash's file\n").unwrap();
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-qm", "x"]);
    fs::remove_dir_all(&site.root).unwrap();
    git(
        &site.base,
        &[
            "clone",
            "-q",
            src.to_str().unwrap(),
            site.root.to_str().unwrap(),
        ],
    );
}

const MODIFY_A: &str = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";

/// A repository that ships a forged journal and stash is left exactly as
/// cloned by `lint`, `apply --dry-run`, `recover` and `mcp`, and `apply`
/// changes only what its patch says; each run reports the journal as
/// untrusted (`recover` as an error: it has nothing it may do).
#[test]
fn a_forged_journal_in_a_clone_is_never_replayed() {
    let site = Site::new();
    forge_clone(&site);
    let cloned = state_of(&site.root);
    let root = site.root.to_str().unwrap();

    for command in [&["lint"][..], &["apply", "--dry-run"]] {
        let (code, v) = site.json(command, MODIFY_A);
        assert_eq!(code, Some(0), "{command:?}: {v}");
        assert!(
            codes(&v).contains(&"untrusted_journal".into()),
            "{command:?}: {v}"
        );
        assert_eq!(
            state_of(&site.root),
            cloned,
            "{command:?} changed the clone"
        );
    }

    let out = site.recover();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("untrusted_journal"),
        "{out:?}"
    );
    assert_eq!(state_of(&site.root), cloned, "recover changed the clone");

    let mut mcp = Mcp::start(&site);
    let reply = mcp.call("lint_patch", json!({"patch": MODIFY_A}));
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    drop(mcp);
    assert_eq!(state_of(&site.root), cloned, "mcp changed the clone");

    let (code, v) = site.json(&["apply"], MODIFY_A);
    assert_eq!(code, Some(0), "{v}");
    assert!(codes(&v).contains(&"untrusted_journal".into()), "{v}");
    let mut want = cloned.clone();
    want.insert(
        "a.txt".into(),
        Node::File(b"one\nTWO\nthree\n".to_vec(), 0o644),
    );
    assert_eq!(state_of(&site.root), want, "apply did more than its patch");
    assert!(!site.root.join("PWNED").exists());
    let _ = root;
}

/// The same forged journal and stash, planted by an ordinary patch at any
/// depth and in any case, in every format: refused, nothing written.
#[test]
fn a_patch_can_never_create_a_journal_or_a_stash() {
    let site = Site::new();
    site.write("sub/keep.txt", "x\n");
    let before = state_of(&site.root);
    for name in [
        "sub/.grammar-patch-journal",
        ".grammar-patch-journal",
        "SUB/.Grammar-Patch-Journal",
        "a/b/.grammar-patch-stash/1",
        ".GRAMMAR-PATCH-STASH/1",
        "deep/.grammar-patch-0123456789abcdef-1",
    ] {
        for patch in [
            format!("--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+x\n"),
            format!("*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch\n"),
            format!("PATCHSET\nPATCH {name}\nCREATEFILE\n. x\nENDPATCH\nENDPATCHSET\n"),
            format!(
                "0a1b2c3d AP 3.1\n0a1b2c3d FILE\n{name}\n0a1b2c3d CREATE\n0a1b2c3d content\nx\n"
            ),
            binary_literal(name, b"\x00forged journal bytes\x01"),
        ] {
            let (code, v) = site.json(&["apply"], &patch);
            assert_eq!(code, Some(1), "{name}: {v}");
            assert_eq!(v["error"]["code"], "path_escape", "{name}: {v}");
            assert_eq!(state_of(&site.root), before, "{name}");
            let (code, v) = site.json(&["lint"], &patch);
            assert_eq!(
                (code, &v["error"]["code"]),
                (Some(1), &json!("path_escape")),
                "{name}"
            );
        }
    }
}

/// A git binary patch creating `path` with `bytes`.
fn binary_literal(path: &str, bytes: &[u8]) -> String {
    use flate2::{write::ZlibEncoder, Compression};
    let mut z = ZlibEncoder::new(vec![], Compression::default());
    z.write_all(bytes).unwrap();
    let deflated = z.finish().unwrap();
    let mut out = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral {}\n",
        bytes.len()
    );
    out.push_str(&base85_lines(&deflated));
    out.push_str("\nliteral 0\nHcmV?d00001\n\n");
    out
}

/// git's base85 lines: a length character, then five characters for each
/// four bytes.
fn base85_lines(data: &[u8]) -> String {
    const ALPHABET: &[u8; 85] =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
    let mut out = String::new();
    for chunk in data.chunks(52) {
        let n = chunk.len();
        out.push(if n <= 26 {
            (b'A' + n as u8 - 1) as char
        } else {
            (b'a' + n as u8 - 27) as char
        });
        for group in chunk.chunks(4) {
            let mut word = [0u8; 4];
            word[..group.len()].copy_from_slice(group);
            let mut v = u32::from_be_bytes(word);
            let mut digits = [0u8; 5];
            for d in digits.iter_mut().rev() {
                *d = ALPHABET[(v % 85) as usize];
                v /= 85;
            }
            out.push_str(std::str::from_utf8(&digits).unwrap());
        }
        out.push('\n');
    }
    out
}

/// `.git` is no target, in any case, at any depth, in every format.
#[test]
fn git_metadata_is_never_a_target() {
    let site = Site::new();
    site.write(".git/config", "[core]\n");
    site.write("sub/.git/config", "[core]\n");
    let before = state_of(&site.root);
    let hook = "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+touch PWNED\n";
    let mut patches = vec![hook.to_string()];
    for path in [".git/config", "sub/.git/config", ".GIT/config"] {
        patches.push(format!(
            "--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = x\n"
        ));
        patches.push(format!("*** Begin Patch\n*** Update File: {path}\n@@\n [core]\n+\tfsmonitor = x\n*** End Patch\n"));
        patches.push(format!("PATCHSET\nPATCH {path}\nINSERT AFTER\n- [core]\n---\n. \tfsmonitor = x\nENDPATCH\nENDPATCHSET\n"));
        patches.push(format!("0a1b2c3d AP 3.1\n0a1b2c3d FILE\n{path}\n0a1b2c3d INSERT_AFTER\n0a1b2c3d snippet\n[core]\n0a1b2c3d content\n\tfsmonitor = x\n"));
    }
    patches.push("*** Begin Patch\n*** Add File: .GIT/x\n+x\n*** End Patch\n".into());
    patches.push(
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .git/a.txt\n*** End Patch\n".into(),
    );
    site.write("a.txt", "a\n");
    let before_a = state_of(&site.root);
    for patch in &patches {
        let (code, v) = site.json(&["apply"], patch);
        assert_eq!(code, Some(1), "{patch}: {v}");
        assert_eq!(v["error"]["code"], "path_escape", "{patch}: {v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(".git"),
            "{v}"
        );
    }
    assert_eq!(state_of(&site.root), before_a);
    let _ = before;
}

/// Links a patch creates never lead out of the root or through another
/// link, and no patch path passes through one: the issue's chain
/// (`a/b -> .`, then a link deep through it to `/etc/passwd`), a link to
/// the root's parent through a link to `.`, a loop onto its own directory.
#[test]
fn links_a_patch_creates_never_lead_out() {
    let link = |path: &str, target: &str| {
        format!("diff --git a/{path} b/{path}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n")
    };
    let site = Site::new();
    site.write("real/f.txt", "f\n");
    site.write("b/keep.txt", "k\n");
    symlink(".", site.root.join("s")).unwrap();
    symlink(".", site.root.join("real/l1")).unwrap();
    let before = state_of(&site.root);
    let refused = [
        link("a/b", ".") + &link("a/b/b/b/l", "../../../../../etc/passwd"),
        link("a/b", ".") + &link("a/b/r", ".."),
        link("a/b", ".") + "--- /dev/null\n+++ b/a/b/b/f.txt\n@@ -0,0 +1 @@\n+x\n",
        link("real/l1/x", "../../../outside"),
        link("real/l1/r", ".."),
        link("a/l", "../s/real"),
        link("a/l", ".."),
        link("a/l", "."),
        link("l", "."),
        link("l", "a/../.."),
        link("a/l", "/etc/passwd"),
        link("a/l", "../.git/config"),
    ];
    for patch in &refused {
        let (code, v) = site.json(&["apply"], patch);
        assert_eq!(code, Some(1), "{patch}: {v}");
        assert_eq!(v["error"]["code"], "path_escape", "{patch}: {v}");
        assert_eq!(state_of(&site.root), before, "{patch}");
        let (code, v) = site.json(&["lint"], patch);
        assert_eq!(
            (code, &v["error"]["code"]),
            (Some(1), &json!("path_escape")),
            "{patch}"
        );
    }
    // Links that stay inside and pass through no link are made.
    let (code, v) = site.json(
        &["apply"],
        &(link("a/l", "../b/keep.txt") + &link("a/m", "../real")),
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        fs::read_link(site.root.join("a/l")).unwrap(),
        Path::new("../b/keep.txt")
    );
}

/// A directory that is a link to another, so `diff -ruN` names one file
/// twice: `lint` and `apply` both refuse the path through the link, with
/// the link named; nothing is written.
#[test]
fn a_path_through_a_directory_link_is_refused_by_lint_and_apply() {
    let site = Site::new();
    site.write("real/f.txt", "one\n");
    symlink("real", site.root.join("link")).unwrap();
    let before = state_of(&site.root);
    let patch = "--- a/link/f.txt\n+++ b/link/f.txt\n@@ -1 +1 @@\n-one\n+two\n--- a/real/f.txt\n+++ b/real/f.txt\n@@ -1 +1 @@\n-one\n+two\n";
    for command in [&["lint"][..], &["apply"]] {
        let (code, v) = site.json(command, patch);
        assert_eq!(code, Some(1), "{command:?}: {v}");
        assert_eq!(v["error"]["code"], "path_escape", "{v}");
        assert_eq!(v["error"]["path"], "link/f.txt", "{v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("symbolic link") && message.contains("`link`"),
            "{v}"
        );
        assert!(
            v["error"]["hint"].as_str().unwrap().contains("real/f.txt"),
            "{v}"
        );
    }
    assert_eq!(state_of(&site.root), before);
}

/// A FIFO, socket or device is `unsupported_file`, found before anything
/// is opened for reading, and no run hangs on one.
#[test]
fn special_files_are_refused_without_hanging() {
    let site = Site::new();
    let fifo = site.root.join("f");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
    for command in [&["apply"][..], &["lint"], &["apply", "--dry-run"]] {
        let (code, v) = site.json(command, patch);
        assert_eq!(
            (code, &v["error"]["code"]),
            (Some(1), &json!("unsupported_file")),
            "{v}"
        );
    }
    // As a mode-only change and a deletion too.
    let chmod = "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n";
    let (code, v) = site.json(&["apply"], chmod);
    assert_eq!(
        (code, &v["error"]["code"]),
        (Some(1), &json!("unsupported_file")),
        "{v}"
    );
    assert!(fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo_like());
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

impl FifoLike for fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

/// A target swapped for a FIFO, or for a directory, between planning and
/// the commit: refused at once (`unsupported_file`, `target_changed`),
/// nothing written, no journal left, and the root is free for the next run.
#[test]
fn a_target_swapped_for_a_fifo_or_a_directory_mid_apply_is_refused() {
    use grammar_patch::apply::{self, DiskTree};
    use grammar_patch::error::Code;
    for (swap, want) in [
        ("fifo", Code::UnsupportedFile),
        ("dir", Code::TargetChanged),
    ] {
        let site = Site::new();
        site.write("a.txt", "one\ntwo\nthree\n");
        site.write("b.txt", "one\ntwo\nthree\n");
        let patch = format!("{MODIFY_A}{}", MODIFY_A.replace("a.txt", "b.txt"));
        let mut tree = DiskTree::new(&site.root).unwrap();
        let unwrapped = grammar_patch::unwrap::unwrap(patch);
        let store = Default::default();
        let format = grammar_patch::formats::Format::Udiff;
        let (ir, _) = grammar_patch::formats::parse(
            format,
            &unwrapped.text,
            &store,
            unwrapped.body,
            Default::default(),
        )
        .unwrap();
        let plan = apply::plan(&ir, &tree, None).unwrap();
        let b = site.root.join("b.txt");
        fs::remove_file(&b).unwrap();
        if swap == "fifo" {
            assert!(Command::new("mkfifo").arg(&b).status().unwrap().success());
        } else {
            fs::create_dir(&b).unwrap();
        }
        let started = Instant::now();
        let err = apply::commit(&plan, &mut tree).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(err.code, want, "{swap}: {err:?}");
        assert_eq!(
            fs::read_to_string(site.root.join("a.txt")).unwrap(),
            "one\ntwo\nthree\n"
        );
        drop(tree);
        let (code, v) = site.json(&["apply"], MODIFY_A);
        assert_eq!(code, Some(0), "{swap}: the next run: {v}");
        assert!(!codes(&v).iter().any(|c| c == "recovered"), "{v}");
    }
}

/// A mode-only patch on a hard-linked file gives the name a new inode:
/// the other name (outside the root) keeps its mode.
#[test]
fn a_mode_change_never_reaches_another_hard_link() {
    let site = Site::new();
    let outside = site.base.join("outside.sh");
    fs::write(&outside, "echo\n").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
    fs::hard_link(&outside, site.root.join("run.sh")).unwrap();
    let patch = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n";
    let (code, v) = site.json(&["apply"], patch);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        fs::metadata(&outside).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert_eq!(fs::metadata(&outside).unwrap().nlink(), 1);
    let inside = fs::metadata(site.root.join("run.sh")).unwrap();
    assert_eq!(inside.permissions().mode() & 0o777, 0o755);
    assert_eq!(
        fs::read_to_string(site.root.join("run.sh")).unwrap(),
        "echo\n"
    );
}

/// A `.grammar-patch-journal` in the root that is a hard link to a file
/// outside it is never written to, whatever the applies do.
#[test]
fn an_in_tree_journal_linked_outside_is_never_written() {
    let site = Site::new();
    let outside = site.base.join("secret");
    fs::write(&outside, "secret\n").unwrap();
    fs::hard_link(&outside, site.root.join(".grammar-patch-journal")).unwrap();
    site.write("a.txt", "one\ntwo\nthree\n");
    for patch in [
        MODIFY_A.to_string(),
        MODIFY_A.replace("two", "TWO").replace("+TWO", "+two"),
    ] {
        let (code, v) = site.json(&["apply"], &patch);
        assert_eq!(code, Some(0), "{v}");
    }
    assert_eq!(fs::read_to_string(&outside).unwrap(), "secret\n");
}

/// The kill of `apply` after its first file was replaced, then the user
/// edits that file: `lint` and a dry run report the interrupted apply and
/// write nothing; `recover` keeps the user's edit and stops, naming it.
#[test]
fn a_users_edit_after_a_crash_is_never_thrown_away() {
    if !has_strace() {
        return missing_strace();
    }
    let site = Site::new();
    site.write("a.txt", "one\ntwo\nthree\n");
    site.write("b.txt", "one\ntwo\nthree\n");
    let patch = site.base.join("p.diff");
    fs::write(
        &patch,
        format!("{MODIFY_A}{}", MODIFY_A.replace("a.txt", "b.txt")),
    )
    .unwrap();
    // Killed as it replaces b.txt, the second file.
    let out = strace_kill(
        &site,
        "renameat2",
        2,
        &[
            "apply",
            "--root",
            site.root.to_str().unwrap(),
            patch.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), None, "killed: {out:?}");
    assert_eq!(
        fs::read_to_string(site.root.join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    fs::write(site.root.join("a.txt"), "the user's own edit\n").unwrap();
    let edited = state_of(&site.root);
    for command in [&["lint"][..], &["apply", "--dry-run"]] {
        let (_, v) = site.json(command, MODIFY_A);
        assert!(
            codes(&v).contains(&"interrupted_apply".into()),
            "{command:?}: {v}"
        );
        assert_eq!(state_of(&site.root), edited, "{command:?} wrote");
    }
    let out = site.recover();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("recovery_conflict") && err.contains("a.txt"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(site.root.join("a.txt")).unwrap(),
        "the user's own edit\n"
    );
    // An apply refuses the root while the conflict stands, and says why.
    let (code, v) = site.json(&["apply"], MODIFY_A);
    assert_eq!(
        (code, &v["error"]["code"]),
        (Some(2), &json!("recovery_conflict")),
        "{v}"
    );
    assert_eq!(
        fs::read_to_string(site.root.join("a.txt")).unwrap(),
        "the user's own edit\n"
    );
}

fn has_strace() -> bool {
    Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The crash-point tests need `strace` (`.ci/run` installs it); without it
/// they fail, never pass unseen, unless `GRAMMAR_PATCH_NO_STRACE` says the
/// machine cannot have it.
fn missing_strace() {
    assert!(
        std::env::var_os("GRAMMAR_PATCH_NO_STRACE").is_some(),
        "strace is needed for the crash-point attacks (apt-get install strace)"
    );
    eprintln!("strace is missing: the crash-point attack was not run");
}

/// The binary with `args` under strace, killed (`SIGKILL`) at the `n`-th
/// call of `syscall`.
fn strace_kill(site: &Site, syscall: &str, n: usize, args: &[&str]) -> Output {
    let child = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "-e",
            &format!("trace={SYSCALLS}"),
        ])
        .arg("-e")
        .arg(format!("inject={syscall}:signal=KILL:when={n}"))
        .arg(env!("CARGO_BIN_EXE_grammar-patch"))
        .args(args)
        .env("GRAMMAR_PATCH_STATE_DIR", &site.state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_at_most(child, Duration::from_secs(60), "strace");
    // strace exits with the tracee's status; a tracee killed by a signal
    // makes strace kill itself the same way.
    out
}

/// The system calls a crash is injected into: every call that opens,
/// writes, renames, links or removes.
const SYSCALLS: &str =
    "openat,write,writev,pwrite64,unlinkat,renameat2,rename,mkdirat,symlinkat,linkat,fchmod,fchown,ftruncate,fsync,fdatasync,close";

/// How often `args` makes each call of [`SYSCALLS`], run once under strace.
fn syscall_counts(site: &Site, args: &[&str]) -> Vec<(String, usize)> {
    let log = site.base.join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .args(["-e", &format!("trace={SYSCALLS}")])
        .arg(env!("CARGO_BIN_EXE_grammar-patch"))
        .args(args)
        .env("GRAMMAR_PATCH_STATE_DIR", &site.state)
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for line in fs::read_to_string(&log).unwrap().lines() {
        let call = line.split_whitespace().nth(1).unwrap_or("");
        let name = call.split('(').next().unwrap_or("");
        if SYSCALLS.split(',').any(|s| s == name) {
            *counts.entry(name.to_string()).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}

/// A tree and a patch with every kind of step the commit journals:
/// modify, add in new directories, delete, rename with an edit, a mode
/// change, a link, a hard-linked target.
fn crash_site() -> (Site, PathBuf) {
    let site = Site::new();
    site.write("one.txt", "one\ntwo\n");
    site.write("gone.txt", "bye\n");
    site.write("src/old.rs", "old\n");
    site.write("run.sh", "echo\n");
    site.write("z.txt", "z\n");
    fs::hard_link(site.root.join("z.txt"), site.base.join("z-outside.txt")).unwrap();
    let patch = site.base.join("p.diff");
    fs::write(
        &patch,
        "--- a/one.txt\n+++ b/one.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n\
--- /dev/null\n+++ b/new/deep/file.txt\n@@ -0,0 +1 @@\n+fresh\n\
--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
diff --git a/src/old.rs b/lib/new.rs\nrename from src/old.rs\nrename to lib/new.rs\n--- a/src/old.rs\n+++ b/lib/new.rs\n@@ -1 +1 @@\n-old\n+new\n\
diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n\
diff --git a/ln b/ln\nnew file mode 120000\n--- /dev/null\n+++ b/ln\n@@ -0,0 +1 @@\n+one.txt\n\\ No newline at end of file\n\
--- a/z.txt\n+++ b/z.txt\n@@ -1 +1,2 @@\n z\n+zz\n",
    )
    .unwrap();
    (site, patch)
}

/// Nothing of the journal is left: no temporary name in the tree, no
/// journal in the state directory.
fn no_leftovers(site: &Site) -> bool {
    let tree = state_of(&site.root);
    let in_tree = tree.keys().any(|p| p.contains(".grammar-patch-"));
    let journals = site.state.exists() && fs::read_dir(&site.state).unwrap().count() > 0;
    !in_tree && !journals
}

/// `kill -9` at every system call of `apply` (or a sample of them, outside
/// full runs), then `recover`, then for each crash that left a journal,
/// `kill -9` at every call of that `recover`, then `recover` again: the
/// tree is exactly before or after, with nothing left behind, every time.
#[test]
fn kill_nine_at_every_system_call_of_apply_and_recover() {
    if !has_strace() {
        return missing_strace();
    }
    let (template, patch) = crash_site();
    let before = state_of(&template.root);
    let args = |site: &Site| -> Vec<String> {
        vec![
            "apply".into(),
            "--root".into(),
            site.root.to_str().unwrap().into(),
            patch.to_str().unwrap().into(),
        ]
    };
    let after = {
        let site = clone_site(&template);
        let out = site.gp(
            &args(&site).iter().map(String::as_str).collect::<Vec<_>>(),
            b"",
        );
        assert!(out.status.success(), "{out:?}");
        state_of(&site.root)
    };
    assert_ne!(before, after);
    let counts = {
        let site = clone_site(&template);
        syscall_counts(
            &site,
            &args(&site).iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };
    let step = if full() { 1 } else { 7 };
    let (mut trials, mut journals, mut nested) = (0, 0, 0);
    for (call, count) in &counts {
        for n in (1..=*count).step_by(step) {
            let site = clone_site(&template);
            let a = args(&site);
            strace_kill(
                &site,
                call,
                n,
                &a.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            trials += 1;
            let left = site.state.exists() && fs::read_dir(&site.state).unwrap().count() > 0;
            if left {
                journals += 1;
                if full() || journals % 5 == 1 {
                    let crash = |site: &Site| {
                        let a = args(site);
                        strace_kill(
                            site,
                            call,
                            n,
                            &a.iter().map(String::as_str).collect::<Vec<_>>(),
                        );
                    };
                    nested += kill_recover_at_every_call(&template, crash, &before, &after, step);
                }
            }
            let out = site.recover();
            assert!(out.status.success(), "{call} #{n}: {out:?}");
            let got = state_of(&site.root);
            assert!(
                got == before || got == after,
                "{call} #{n}: neither before nor after: {got:#?}"
            );
            assert!(no_leftovers(&site), "{call} #{n}: leftovers: {got:#?}");
        }
    }
    eprintln!("kill -9 at system calls: {trials} apply trials, {journals} left a journal, {nested} recover trials; every tree before or after");
}

/// A state directory others may write proves nothing of the journals in
/// it: a real interrupted apply's journal, once its directory is opened to
/// everyone, is reported and never replayed, by `lint` or `recover`; an
/// apply there refuses before writing; made the user's alone again, the
/// same journal is recovered.
#[test]
fn a_state_directory_others_may_write_is_never_trusted() {
    if !has_strace() {
        return missing_strace();
    }
    let (site, patch) = crash_site();
    let before = state_of(&site.root);
    let root = site.root.to_str().unwrap();
    let args = ["apply", "--root", root, patch.to_str().unwrap()];
    strace_kill(&site, "renameat2", 2, &args);
    let crashed = state_of(&site.root);
    assert_ne!(crashed, before, "the crash came before any rename");
    let journals = || fs::read_dir(&site.state).unwrap().count();
    assert_eq!(journals(), 1, "the interrupted apply left its journal");
    fs::set_permissions(&site.state, fs::Permissions::from_mode(0o777)).unwrap();

    let add = "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+x\n";
    let (code, v) = site.json(&["lint"], add);
    assert_eq!(code, Some(0), "{v}");
    assert!(codes(&v).contains(&"untrusted_journal".into()), "{v}");
    let out = site.recover();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("untrusted_journal"),
        "{out:?}"
    );
    let out = site.gp(&["apply", "--root", root], add.as_bytes());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not this user's alone"),
        "{out:?}"
    );
    assert_eq!(
        state_of(&site.root),
        crashed,
        "a run acted on an untrusted journal"
    );

    fs::set_permissions(&site.state, fs::Permissions::from_mode(0o700)).unwrap();
    let out = site.recover();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(state_of(&site.root), before);
    assert!(no_leftovers(&site));
}

/// For an apply crash (`crash`, on a fresh copy of `template` each time):
/// kills `recover` at each of its calls, and checks that the next
/// `recover` ends before or after, with nothing left behind.
fn kill_recover_at_every_call(
    template: &Site,
    crash: impl Fn(&Site),
    before: &BTreeMap<String, Node>,
    after: &BTreeMap<String, Node>,
    step: usize,
) -> usize {
    let counts = {
        let site = clone_site(template);
        crash(&site);
        syscall_counts(&site, &["recover", "--root", site.root.to_str().unwrap()])
    };
    let mut trials = 0;
    for (call, count) in &counts {
        for n in (1..=*count).step_by(step) {
            let site = clone_site(template);
            crash(&site);
            strace_kill(
                &site,
                call,
                n,
                &["recover", "--root", site.root.to_str().unwrap()],
            );
            let out = site.recover();
            assert!(
                out.status.success(),
                "recover killed at {call} #{n}: {out:?}"
            );
            let got = state_of(&site.root);
            assert!(
                &got == before || &got == after,
                "recover killed at {call} #{n}: {got:#?}"
            );
            assert!(no_leftovers(&site), "recover killed at {call} #{n}");
            trials += 1;
        }
    }
    trials
}

/// A copy of a site's root (links, modes, and the hard link from outside
/// kept as one), with an empty state directory.
fn clone_site(from: &Site) -> Site {
    let site = Site::new();
    let out = Command::new("cp")
        .args(["-a", "--"])
        .arg(from.root.join("."))
        .arg(&site.root)
        .status()
        .unwrap();
    assert!(out.success());
    if from.base.join("z-outside.txt").exists() {
        fs::hard_link(site.root.join("z.txt"), site.base.join("z-outside.txt")).unwrap();
    }
    site
}

/// MCP spoken byte by byte: a child `grammar-patch mcp`, its replies read
/// on a thread.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    replies: mpsc::Receiver<Value>,
    next: i64,
}

impl Mcp {
    fn start(site: &Site) -> Mcp {
        let mut child = bin()
            .args(["mcp", "--root"])
            .arg(&site.root)
            .env("GRAMMAR_PATCH_STATE_DIR", &site.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("a reply that is not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut mcp = Mcp {
            child,
            stdin,
            replies,
            next: 100,
        };
        mcp.send_raw(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
        let init = mcp.reply(Duration::from_secs(20));
        assert_eq!(init["id"], 1, "{init}");
        mcp.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        mcp
    }

    fn send_raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn reply(&self, wait: Duration) -> Value {
        self.replies
            .recv_timeout(wait)
            .unwrap_or_else(|e| panic!("no reply in {wait:?}: {e}"))
    }

    fn request(&mut self, method: &str, params: Value) -> i64 {
        self.next += 1;
        let line = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        self.send_raw(line.to_string().as_bytes());
        self.next
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let reply = self.reply(Duration::from_secs(60));
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Invalid UTF-8, lines that are not JSON, and ten kinds of invalid
/// request: each gets an error reply carrying `id` (null when unknown), and
/// the session goes on.
#[test]
fn mcp_answers_every_byte_stream() {
    let site = Site::new();
    let mut mcp = Mcp::start(&site);
    let cases: Vec<(Vec<u8>, i64, Value)> = vec![
        (b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"x\":\"\xff\xfe\"}".to_vec(), -32700, Value::Null),
        (b"\xc3\x28 not json".to_vec(), -32700, Value::Null),
        (b"{not json".to_vec(), -32700, Value::Null),
        (b"[]".to_vec(), -32600, Value::Null),
        (br#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#.to_vec(), -32600, Value::Null),
        (br#""a string""#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#.to_vec(), -32600, json!(3)),
        (br#"{"id":4,"method":"ping"}"#.to_vec(), -32600, json!(4)),
        (br#"{"jsonrpc":"2.0","id":5}"#.to_vec(), -32600, json!(5)),
        (br#"{"jsonrpc":"2.0","id":6,"method":5}"#.to_vec(), -32600, json!(6)),
        (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"x"}"#.to_vec(), -32602, json!(8)),
        (br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"lint_patch","arguments":"x"}}"#.to_vec(), -32602, json!(9)),
        (br#"{"jsonrpc":"2.0","id":10,"method":"no/such/method"}"#.to_vec(), -32601, json!(10)),
    ];
    for (line, code, id) in cases {
        mcp.send_raw(&line);
        let reply = mcp.reply(Duration::from_secs(20));
        let shown = String::from_utf8_lossy(&line);
        assert_eq!(reply["jsonrpc"], "2.0", "{shown}: {reply}");
        assert_eq!(reply["error"]["code"], code, "{shown}: {reply}");
        assert!(
            reply.as_object().unwrap().contains_key("id"),
            "{shown}: {reply}"
        );
        assert_eq!(reply["id"], id, "{shown}: {reply}");
        let id = mcp.request("ping", json!({}));
        let pong = mcp.reply(Duration::from_secs(20));
        assert_eq!(
            (&pong["id"], &pong["result"]),
            (&json!(id), &json!({})),
            "after {shown}"
        );
    }
}

/// A line of 17 MiB is read; a line over the limit (64 MiB) gets an error
/// reply instead of silence, and the session goes on.
#[test]
fn mcp_answers_long_lines() {
    let site = Site::new();
    site.write("f.txt", "a\n");
    let mut mcp = Mcp::start(&site);
    let big = "x".repeat(17 << 20);
    let patch = format!("--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1 @@\n+{big}\n");
    let reply = mcp.call("lint_patch", json!({"patch": patch}));
    assert_eq!(
        reply["result"]["isError"],
        false,
        "{}",
        &reply.to_string()[..200.min(reply.to_string().len())]
    );
    let mut huge =
        br#"{"jsonrpc":"2.0","id":77,"method":"ping","params":{"_meta":{"pad":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', (64 << 20) + 10));
    huge.extend(br#""}}}"#);
    mcp.send_raw(&huge);
    let reply = mcp.reply(Duration::from_secs(60));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("64 MiB"),
        "{reply}"
    );
    let id = mcp.request("ping", json!({}));
    assert_eq!(mcp.reply(Duration::from_secs(20))["id"], id);
}

/// While a call waits for the root's lock, `ping` is answered, and a
/// `notifications/cancelled` for the call stops it: nothing is written,
/// even once the lock is free.
#[test]
fn mcp_serves_ping_and_cancel_while_a_call_waits() {
    let site = Site::new();
    site.write("f.txt", "a\nb\n");
    let mut mcp = Mcp::start(&site);
    let dir = fs::File::open(&site.root).unwrap();
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
    let call = mcp.request(
        "tools/call",
        json!({"name": "apply_patch", "arguments": {"patch": patch}}),
    );
    std::thread::sleep(Duration::from_millis(200));
    let ping = mcp.request("ping", json!({}));
    let started = Instant::now();
    let pong = mcp.reply(Duration::from_secs(10));
    assert_eq!(pong["id"], ping, "{pong}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "ping took {:?}",
        started.elapsed()
    );
    mcp.send_raw(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": call, "reason": "t"}}).to_string().as_bytes());
    std::thread::sleep(Duration::from_millis(300));
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::Unlock).unwrap();
    // Whatever the call answers, if anything, it wrote nothing.
    let ping = mcp.request("ping", json!({}));
    loop {
        let r = mcp.reply(Duration::from_secs(40));
        if r["id"] == ping {
            break;
        }
        assert_eq!(r["id"], call, "{r}");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        fs::read_to_string(site.root.join("f.txt")).unwrap(),
        "a\nb\n"
    );
    // The server goes on serving.
    let reply = mcp.call("apply_patch", json!({"patch": patch}));
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(
        fs::read_to_string(site.root.join("f.txt")).unwrap(),
        "a\nB\n"
    );
}

/// The peak resident memory of `args`, in KiB, measured by a Python
/// parent whose only child is the run (`RUSAGE_CHILDREN`).
fn peak_kib(args: &[&str], stdin: &Path, state: &Path) -> (i32, u64) {
    let script = "import resource,subprocess,sys\n\
r = subprocess.run(sys.argv[2:], stdin=open(sys.argv[1],'rb'), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(stdin)
        .arg(env!("CARGO_BIN_EXE_grammar-patch"))
        .args(args)
        .env("GRAMMAR_PATCH_STATE_DIR", state)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut it = text.split_whitespace();
    let code = it.next().unwrap().parse().unwrap();
    (code, it.next().unwrap().parse().unwrap())
}

/// A binary literal declaring 1 GiB (a patch of about a megabyte) is
/// checked without holding its gigabyte: `lint` with no root finishes in
/// moments with a small peak; one declaring more than the largest file the
/// tool reads is refused before any inflating.
#[test]
fn a_binary_literal_is_checked_within_bounded_memory() {
    use flate2::{write::ZlibEncoder, Compression};
    let site = Site::new();
    let declared: u64 = 1 << 30;
    let mut z = ZlibEncoder::new(vec![], Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        z.write_all(&zeros).unwrap();
    }
    let deflated = z.finish().unwrap();
    let mut patch = format!("diff --git a/big.bin b/big.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral {declared}\n");
    patch.push_str(&base85_lines(&deflated));
    patch.push('\n');
    let file = site.base.join("big.diff");
    fs::write(&file, &patch).unwrap();
    let started = Instant::now();
    let (code, peak) = peak_kib(&["lint", "-"], &file, &site.state);
    assert_eq!(code, 0, "the literal is valid");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(
        peak < 64 << 10,
        "lint of a 1 GiB literal peaked at {peak} KiB"
    );
    let too_big = patch.replace(&format!("literal {declared}"), "literal 4294967296");
    let (code, v) = site.json(&["lint"], &too_big);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("4 GiB"),
        "{v}"
    );
}

/// Many small added files: the memory an apply takes grows by a small
/// multiple of the patch (the slope between two sizes, so the binary's own
/// pages do not count); the figure for 100,000 files is
/// `tools/attacks.sh`'s. Parsing the whole patch at once, and keeping
/// every journal record in memory, made it 25 times the patch.
#[test]
fn many_small_files_stay_within_a_small_multiple_of_the_input() {
    let site = Site::new();
    let sizes = if full() {
        [50_000, 100_000]
    } else {
        [10_000, 30_000]
    };
    let mut points = vec![];
    for n in sizes {
        let mut patch = String::new();
        for i in 0..n {
            patch.push_str(&format!(
                "--- /dev/null\n+++ b/d{}/f{i}.txt\n@@ -0,0 +1 @@\n+line {i}\n",
                i % 100
            ));
        }
        let file = site.base.join("many.diff");
        fs::write(&file, &patch).unwrap();
        let root = site.base.join(format!("root{n}"));
        fs::create_dir(&root).unwrap();
        let (code, peak) = peak_kib(
            &["apply", "--root", root.to_str().unwrap(), "-"],
            &file,
            &site.state,
        );
        assert_eq!(code, 0);
        eprintln!(
            "{n} added files: patch {} KiB, apply peak {peak} KiB",
            patch.len() / 1024
        );
        points.push((patch.len() as f64 / 1024.0, peak as f64));
    }
    let slope = (points[1].1 - points[0].1) / (points[1].0 - points[0].0);
    eprintln!("memory per byte of patch: {slope:.1}");
    assert!(
        slope < 14.0,
        "each byte of patch takes {slope:.1} bytes of memory"
    );
}

/// U+10FFC3 is one character whatever carries the patch: a file, a JSON
/// tool call, MCP. It is written as its UTF-8 bytes, never as a raw byte.
#[test]
fn a_plane_16_character_means_one_thing_whatever_carries_it() {
    let site = Site::new();
    let text = "x \u{10FFC3} y";
    let patch = format!("--- /dev/null\n+++ b/{{}}\n@@ -0,0 +1 @@\n+{text}\n");
    let (code, v) = site.json(&["apply"], &patch.replace("{}", "file.txt"));
    assert_eq!(code, Some(0), "{v}");
    let call = json!({"patch": patch.replace("{}", "json.txt")}).to_string();
    let (code, v) = site.json(&["apply"], &call);
    assert_eq!(code, Some(0), "{v}");
    let mut mcp = Mcp::start(&site);
    let reply = mcp.call(
        "apply_patch",
        json!({"patch": patch.replace("{}", "mcp.txt")}),
    );
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let want = format!("{text}\n").into_bytes();
    for name in ["file.txt", "json.txt", "mcp.txt"] {
        assert_eq!(fs::read(site.root.join(name)).unwrap(), want, "{name}");
    }
}

/// With only six file descriptors an apply fails or succeeds, and either
/// way leaves nothing behind; the next run claims no recovery.
#[test]
fn running_out_of_file_descriptors_leaves_nothing_behind() {
    let (site, patch) = crash_site();
    let before = state_of(&site.root);
    for limit in [6u64, 7, 8, 9, 10, 12] {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_grammar-patch"))
            .args(["apply", "--json", "--root"])
            .arg(&site.root)
            .arg(&patch)
            .env("GRAMMAR_PATCH_STATE_DIR", &site.state);
        let out = cmd.output().unwrap();
        assert!(out.status.code().is_some(), "limit {limit}: {out:?}");
        if out.status.success() {
            break;
        }
        assert_eq!(state_of(&site.root), before, "limit {limit}");
        assert!(no_leftovers(&site), "limit {limit}: leftovers");
        let (_, v) = site.json(&["lint"], MODIFY_A);
        assert!(
            !codes(&v)
                .iter()
                .any(|c| c == "recovered" || c == "interrupted_apply"),
            "{v}"
        );
    }
}

/// A path with trailing whitespace, and one ending in `/.`: never a
/// silently different name. The trailing space is a slip, taken off with
/// a warning; `a/.` names a directory and is refused.
#[test]
fn paths_that_could_mean_two_names_are_never_silent() {
    let site = Site::new();
    let (code, v) = site.json(
        &["apply"],
        "*** Begin Patch\n*** Add File: trail \n+x\n*** End Patch\n",
    );
    assert_eq!(code, Some(0), "{v}");
    assert!(codes(&v).contains(&"tolerated_format_slip".into()), "{v}");
    assert_eq!(v["files"][0]["path"], "trail");
    for patch in [
        "--- /dev/null\n+++ b/a/.\n@@ -0,0 +1 @@\n+x\n",
        "*** Begin Patch\n*** Add File: a/.\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Add File: a/\n+x\n*** End Patch\n",
    ] {
        let (code, v) = site.json(&["apply"], patch);
        assert_eq!(
            (code, &v["error"]["code"]),
            (Some(1), &json!("path_escape")),
            "{patch}: {v}"
        );
        assert!(!site.root.join("a").exists());
    }
}
