//! Fault injection and crash points: a multi-file patch is committed
//! with the k-th mutating file-system step failing, for every k; each time
//! the patch must be reported as `io_error` and the tree must be exactly as
//! before (contents, modes, directories). Then the process is "killed" at
//! every step (every later step fails, the step itself torn where it can
//! be), of the apply and of the recovery after it: recovery always ends
//! exactly before or after. Runs in memory and on disk.

use std::cell::Cell;
use std::io;
use std::path::Path;
use std::rc::Rc;

use grammar_patch::apply::writing::journal::{recover, Recovered};
use grammar_patch::apply::{DiskTree, FileTree, MemTree};
use grammar_patch::error::Code;
use grammar_patch::{run, Mode};

use super::support::{Call, Hooked, Then};

/// A tree whose `fail_at`-th mutating call (0-based) fails, once; the
/// count of calls so far is shared.
fn faulty<T: FileTree>(inner: T, fail_at: usize) -> (Hooked<T>, Rc<Cell<usize>>) {
    let steps = Rc::new(Cell::new(0));
    let seen = steps.clone();
    let tree = Hooked::new(inner, move |_, _| {
        let n = seen.get();
        seen.set(n + 1);
        if n == fail_at {
            Then::Fail(io::Error::other("injected failure"))
        } else {
            Then::Go
        }
    });
    (tree, steps)
}

/// A tree whose process "dies" at its `at`-th mutating call: that call is
/// torn (half a staged file or a journal record) and every later call
/// fails, the in-process rollback's too, as after `kill -9`.
fn killed_at<T: FileTree>(inner: T, at: usize) -> Hooked<T> {
    let mut n = 0;
    Hooked::new(inner, move |_, _| {
        n += 1;
        match n.cmp(&(at + 1)) {
            std::cmp::Ordering::Less => Then::Go,
            std::cmp::Ordering::Equal => Then::Torn(io::Error::other("killed")),
            std::cmp::Ordering::Greater => Then::Fail(io::Error::other("dead")),
        }
    })
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
    let (mut tree, steps) = faulty(mem_before(), usize::MAX);
    let outcome = apply(&mut tree);
    assert!(outcome.ok(), "{:?}", outcome.diagnostics);
    assert_eq!(tree.inner.files.len(), 4);
    steps.get()
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
        let (mut tree, _) = faulty(before.clone(), k);
        let outcome = apply(&mut tree);
        if outcome.ok() {
            // The fault hit the clean-up after the commit point: every file
            // is written, and the next run's recovery finishes the clean-up.
            committed += 1;
            assert_eq!(
                recover(&mut tree.inner).unwrap(),
                Recovered::Finished,
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
    // Only the last steps (removing what was kept aside, the emptied
    // directories and the journal) come after it.
    assert!(
        (1..=6).contains(&committed),
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
        let (mut tree, _) = faulty(DiskTree::new(tmp.path()).unwrap(), k);
        let outcome = apply(&mut tree);
        if outcome.ok() {
            assert_eq!(
                recover(&mut tree.inner).unwrap(),
                Recovered::Finished,
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

/// `kill -9` at every step of the apply, in memory: recovery gives exactly
/// the tree before or after, and leaves no journal; and for each of those,
/// `kill -9` at every step of that recovery, then recovery again: the same.
#[test]
fn a_kill_at_every_step_of_apply_and_of_recovery_ends_before_or_after() {
    let n = steps_of_success();
    let before = mem_before();
    let mut after = mem_before();
    assert!(apply(&mut after).ok());
    let (mut rolled_back, mut finished, mut nested) = (0, 0, 0);
    for k in 0..=n {
        let mut tree = killed_at(mem_before(), k);
        let _ = apply(&mut tree);
        let crashed = tree.inner;
        let mut recovered = crashed.clone();
        match recover(&mut recovered).unwrap() {
            Recovered::Finished => finished += 1,
            Recovered::RolledBack(_) => rolled_back += 1,
            _ => {}
        }
        assert!(
            recovered == before || recovered == after,
            "killed at step {k}: {recovered:#?}"
        );
        assert_eq!(recovered.log, None, "step {k}");
        assert!(
            recovered
                .files
                .keys()
                .all(|p| !p.contains(".grammar-patch-")),
            "step {k}"
        );
        // Recovery killed at each of its own steps, then run again.
        for m in 0.. {
            let mut tree = killed_at(crashed.clone(), m);
            let done = recover(&mut tree).is_ok() && tree.inner.log.is_none();
            let mut again = tree.inner;
            recover(&mut again).unwrap();
            assert!(
                again == before || again == after,
                "apply killed at {k}, recovery at {m}: {again:#?}"
            );
            assert_eq!(again.log, None);
            nested += 1;
            if done {
                break;
            }
        }
    }
    assert!(
        rolled_back > 5 && finished > 0,
        "{rolled_back} rolled back, {finished} finished"
    );
    assert!(nested > n, "{nested}");
}

/// The same on disk, in process: every crash point of the apply, then
/// every crash point of the recovery after a crash half-way.
#[test]
fn a_kill_at_every_step_on_disk_ends_before_or_after() {
    let n = steps_of_success();
    let after = {
        let tmp = tempfile::tempdir().unwrap();
        disk_before(tmp.path());
        assert!(apply(&mut DiskTree::new(tmp.path()).unwrap()).ok());
        disk_state(tmp.path())
    };
    let crash = |k: usize, root: &Path| {
        disk_before(root);
        let mut tree = killed_at(DiskTree::new(root).unwrap(), k);
        let _ = apply(&mut tree);
    };
    for k in 0..=n {
        let tmp = tempfile::tempdir().unwrap();
        let before = {
            disk_before(tmp.path());
            disk_state(tmp.path())
        };
        std::fs::remove_dir_all(tmp.path()).unwrap();
        std::fs::create_dir(tmp.path()).unwrap();
        crash(k, tmp.path());
        let mut tree = DiskTree::new(tmp.path()).unwrap();
        recover(&mut tree).unwrap();
        let got = disk_state(tmp.path());
        assert!(
            got == before || got == after,
            "killed at step {k}: {got:#?}"
        );
        assert!(
            recover(&mut tree).unwrap() == Recovered::Nothing,
            "step {k}"
        );
        if k == n / 2 {
            for m in 0..40 {
                let tmp = tempfile::tempdir().unwrap();
                crash(k, tmp.path());
                let mut tree = killed_at(DiskTree::new(tmp.path()).unwrap(), m);
                let _ = recover(&mut tree);
                let mut tree = DiskTree::new(tmp.path()).unwrap();
                recover(&mut tree).unwrap();
                let got = disk_state(tmp.path());
                assert!(
                    got == before || got == after,
                    "apply at {k}, recovery at {m}"
                );
            }
        }
    }
}

/// Another process puts something at a path the apply is about to fill,
/// between the plan and the step: a directory where the patch makes one
/// (`mkdir` refused), a directory holding a file where the patch creates a
/// file (the rename of the staged file refused). The apply fails, and its
/// rollback undoes what it did (the edit of `a.txt`) and leaves the other
/// process's files alone. The journal logs each step before it runs; a
/// step that failed must not leave its record claiming someone else's
/// directory, which the rollback would refuse to touch, stopping with the
/// edit still in place.
#[test]
fn what_another_process_put_at_a_path_first_is_not_rolled_back_as_ours() {
    let edit = "\
01b451c4 AP 3.1

01b451c4 FILE
a.txt

01b451c4 REPLACE

01b451c4 snippet
two

01b451c4 content
TWO
";
    let made_dir = format!("{edit}\n01b451c4 FILE\nsrc/made\n\n01b451c4 CREATE\n");
    let new_file =
        format!("{edit}\n01b451c4 FILE\nsrc/made\n\n01b451c4 CREATE\n\n01b451c4 content\nnew\n");
    for (patch, at) in [(made_dir, Call::CreateDir), (new_file, Call::Rename)] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        let theirs = root.clone();
        let mut tree = Hooked::new(DiskTree::new(&root).unwrap(), move |call, path| {
            let ours = match call {
                Call::CreateDir => path.as_str() == "src/made",
                Call::Rename => path.as_str().starts_with("src/.grammar-patch-"),
                _ => false,
            };
            if ours && std::mem::discriminant(&call) == std::mem::discriminant(&at) {
                std::fs::create_dir(theirs.join("src/made")).unwrap();
                std::fs::write(theirs.join("src/made/theirs.txt"), "not the patch's\n").unwrap();
            }
            Then::Go
        });
        let outcome = run(
            &patch,
            None,
            Mode::Apply { dry_run: false },
            Some(&mut tree),
            None,
        );
        let errors: Vec<Code> = outcome
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.code)
            .collect();
        assert_eq!(errors, [Code::IoError], "{:?}", outcome.diagnostics);
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "one\ntwo\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("src/made/theirs.txt")).unwrap(),
            "not the patch's\n"
        );
        let left: Vec<_> = std::fs::read_dir(root.join("src"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["made"], "a staged file stayed behind");
        assert_eq!(recover(&mut tree.inner).unwrap(), Recovered::Nothing);
    }
}
