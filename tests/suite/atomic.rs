//! Fault injection: a multi-file patch is committed with the k-th mutating
//! file-system step failing, for every k; each time the patch must be
//! reported as `io_error` and the tree must be exactly as before (contents,
//! modes, directories). Runs in memory and on disk.

use std::cell::Cell;
use std::io;
use std::path::Path;

use grammar_patch::apply::journal::{recover, Recovered};
use grammar_patch::apply::{DiskTree, Entry, FileTree, MemTree};
use grammar_patch::error::Code;
use grammar_patch::paths::RelPath;
use grammar_patch::{run, Mode};

/// Wraps a tree and fails its `fail_at`-th mutating call (0-based), once.
struct Faulty<T> {
    inner: T,
    fail_at: usize,
    steps: Cell<usize>,
}

impl<T: FileTree> Faulty<T> {
    fn new(inner: T, fail_at: usize) -> Self {
        Faulty {
            inner,
            fail_at,
            steps: Cell::new(0),
        }
    }

    fn step(&self) -> io::Result<()> {
        let n = self.steps.get();
        self.steps.set(n + 1);
        if n == self.fail_at {
            Err(io::Error::other("injected failure"))
        } else {
            Ok(())
        }
    }
}

impl<T: FileTree> FileTree for Faulty<T> {
    fn entry(&self, path: &RelPath) -> io::Result<Entry> {
        self.inner.entry(path)
    }
    fn escapes(&self, path: &RelPath) -> io::Result<Option<String>> {
        self.inner.escapes(path)
    }
    fn read(&self, path: &RelPath, limit: u64) -> io::Result<Vec<u8>> {
        self.inner.read(path, limit)
    }
    fn write(&mut self, path: &RelPath, chunks: &[&[u8]]) -> io::Result<()> {
        if let Err(e) = self.step() {
            // Fail half-way through the write, as a full disk would.
            let all = chunks.concat();
            let _ = self.inner.write(path, &[&all[..all.len() / 2]]);
            return Err(e);
        }
        self.inner.write(path, chunks)
    }
    fn create(&mut self, path: &RelPath, chunks: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
        self.step()?;
        self.inner.create(path, chunks, mode)
    }
    fn remove(&mut self, path: &RelPath) -> io::Result<()> {
        self.step()?;
        self.inner.remove(path)
    }
    fn create_dir(&mut self, path: &RelPath) -> io::Result<()> {
        self.step()?;
        self.inner.create_dir(path)
    }
    fn remove_dir(&mut self, path: &RelPath) -> io::Result<()> {
        self.step()?;
        self.inner.remove_dir(path)
    }
    fn list(&self, dir: &RelPath) -> io::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn rename(&mut self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        self.step()?;
        self.inner.rename(from, to)
    }
    fn links(&self, path: &RelPath) -> io::Result<u64> {
        self.inner.links(path)
    }
    fn append(&mut self, path: &RelPath, bytes: &[&[u8]]) -> io::Result<()> {
        self.step()?;
        self.inner.append(path, bytes)
    }
}

/// Touches five files: modify, add (in new directories), delete, rename with edit.
const PATCH: &str = "\
--- a/one.txt
+++ b/one.txt
@@ -1,2 +1,2 @@
 one
-two
+TWO
--- /dev/null
+++ b/new/deep/file.txt
@@ -0,0 +1 @@
+fresh
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/src/old.rs b/lib/new.rs
rename from src/old.rs
rename to lib/new.rs
--- a/src/old.rs
+++ b/lib/new.rs
@@ -1 +1 @@
-old
+new
--- a/z.txt
+++ b/z.txt
@@ -1 +1,2 @@
 z
+zz
";

fn mem_before() -> MemTree {
    MemTree::default()
        .with_file("one.txt", "one\ntwo\n")
        .with_file("gone.txt", "bye\n")
        .with_file("src/old.rs", "old\n")
        .with_file("z.txt", "z\n")
}

/// Applies `PATCH` to `tree` for real.
fn apply(tree: &mut dyn FileTree) -> grammar_patch::Outcome {
    run(
        PATCH,
        None,
        Mode::Apply { dry_run: false },
        Some(tree),
        None,
    )
}

fn steps_of_success() -> usize {
    let mut tree = Faulty::new(mem_before(), usize::MAX);
    let outcome = apply(&mut tree);
    assert!(outcome.ok(), "{:?}", outcome.diagnostics);
    assert_eq!(tree.inner.files.len(), 4);
    tree.steps.get()
}

#[test]
fn every_failing_step_leaves_memory_tree_unchanged() {
    let n = steps_of_success();
    assert!(n >= 8, "expected a commit of several steps, got {n}");
    let mut after = mem_before();
    assert!(apply(&mut after).ok());
    let mut committed = 0;
    for k in 0..n {
        let before = mem_before();
        let mut tree = Faulty::new(before.clone(), k);
        let outcome = apply(&mut tree);
        if outcome.ok() {
            // The fault hit the clean-up after the commit point: every file
            // is written, and the next run's recovery removes the journal.
            committed += 1;
            assert_eq!(
                recover(&mut tree.inner).unwrap(),
                Recovered::Cleaned,
                "step {k}"
            );
            assert_eq!(tree.inner, after, "step {k}");
            continue;
        }
        let err = outcome
            .diagnostics
            .iter()
            .find(|d| d.is_error())
            .expect("must fail");
        assert_eq!(err.code, Code::IoError, "step {k}");
        assert_eq!(outcome.exit_code(), 2);
        assert_eq!(tree.inner, before, "step {k} left the tree changed");
    }
    // Only the last steps (removing the stash and the journal) come after it.
    assert!(
        (1..=4).contains(&committed),
        "{committed} of {n} steps after the commit point"
    );
}

/// A path under the root: a directory (`None`) or a file's bytes and mode.
type DiskEntry = (String, Option<(Vec<u8>, u32)>);

/// Files with modes, and directories, under `root`.
fn disk_state(root: &Path) -> Vec<DiskEntry> {
    let mut out = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                out.push((rel, None));
                stack.push(path);
            } else {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                out.push((rel, Some((std::fs::read(&path).unwrap(), mode))));
            }
        }
    }
    out.sort();
    out
}

fn disk_before(root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for (path, text) in [
        ("one.txt", "one\ntwo\n"),
        ("gone.txt", "bye\n"),
        ("src/old.rs", "old\n"),
        ("z.txt", "z\n"),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    std::fs::set_permissions(
        root.join("gone.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::set_permissions(
        root.join("src/old.rs"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
}

#[test]
fn every_failing_step_leaves_disk_tree_unchanged() {
    let n = steps_of_success();
    let after = {
        let tmp = tempfile::tempdir().unwrap();
        disk_before(tmp.path());
        assert!(apply(&mut DiskTree::new(tmp.path()).unwrap()).ok());
        disk_state(tmp.path())
    };
    for k in 0..n {
        let tmp = tempfile::tempdir().unwrap();
        disk_before(tmp.path());
        let before = disk_state(tmp.path());
        let mut tree = Faulty::new(DiskTree::new(tmp.path()).unwrap(), k);
        let outcome = apply(&mut tree);
        if outcome.ok() {
            assert_eq!(
                recover(&mut tree.inner).unwrap(),
                Recovered::Cleaned,
                "step {k}"
            );
            assert_eq!(disk_state(tmp.path()), after, "step {k}");
            continue;
        }
        assert_eq!(
            outcome
                .diagnostics
                .iter()
                .find(|d| d.is_error())
                .map(|d| d.code),
            Some(Code::IoError)
        );
        assert_eq!(
            disk_state(tmp.path()),
            before,
            "step {k} left the disk changed"
        );
    }
    // And without a fault, the renamed file keeps its mode.
    let tmp = tempfile::tempdir().unwrap();
    disk_before(tmp.path());
    let mut tree = DiskTree::new(tmp.path()).unwrap();
    let outcome = apply(&mut tree);
    assert!(outcome.ok(), "{:?}", outcome.diagnostics);
    assert_eq!(
        super::support::mode_of(&tmp.path().join("lib/new.rs")),
        0o755
    );
    assert!(!tmp.path().join("src/old.rs").exists());
}
