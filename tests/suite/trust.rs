//! The trust boundary under attack, the way the world attacks it: hard
//! links out of the root, a directory swapped for a link mid-apply, `kill -9`
//! at any instant, two applies at once, another process editing a target
//! between our read and our write.
//!
//! The process-level attacks run at reduced counts here; `tools/attacks.sh`
//! runs them at full counts (`GRAMMAR_PATCH_ATTACKS=full`) and prints the
//! figures docs/trust.md quotes.

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use grammar_patch::apply::{self, open_root, DiskTree, FileTree, DEFAULT_WAIT};
use grammar_patch::error::Code;
use grammar_patch::formats::Format;
use grammar_patch::{run, Mode};

use super::support::{Call, Hooked, Snapshot, Then};

/// The in-tree names of the journal of earlier versions.
const JOURNAL: &str = ".grammar-patch-journal";
const STASH: &str = ".grammar-patch-stash";

/// Whether `root` has a journal in the state directory.
fn journal_left(root: &Path) -> bool {
    DiskTree::new(root).unwrap().log_read().unwrap() != apply::Logged::Missing
}

/// No journal is left for `root`, and no temporary name in it.
fn no_journal(root: &Path) -> bool {
    let names = Snapshot::load(root);
    let all = names
        .files
        .keys()
        .chain(names.dirs.iter())
        .chain(names.links.keys());
    !journal_left(root) && !all.into_iter().any(|p| p.contains(".grammar-patch-"))
}

fn full() -> bool {
    std::env::var("GRAMMAR_PATCH_ATTACKS").as_deref() == Ok("full")
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_grammar-patch"))
}

/// The JSON the binary prints with `args`, read from a file in `dir`
/// (thousands of diagnostics would fill a pipe no one reads yet). Panics
/// when the run takes more than 20 s: the limit only stops a hang.
fn json_in_moments(dir: &Path, args: &[&std::ffi::OsStr], what: &str) -> serde_json::Value {
    let result = dir.join("result.json");
    let mut child = bin()
        .args(args)
        .stdout(fs::File::create(&result).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("{what} did not finish in 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    serde_json::from_slice(&fs::read(&result).unwrap()).unwrap()
}

/// `apply --json` of `patch` under `root`, by [`json_in_moments`] (the
/// result beside the patch).
fn apply_in_moments(root: &Path, patch: &Path, what: &str) -> serde_json::Value {
    let args = [
        "apply".as_ref(),
        "--json".as_ref(),
        "--root".as_ref(),
        root.as_os_str(),
        patch.as_os_str(),
    ];
    json_in_moments(patch.parent().unwrap(), &args, what)
}

/// The binary with `args`, `root` and then `tail`, with `stdin` as input.
fn gp(args: &[&str], root: &Path, tail: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = bin()
        .args(args)
        .arg(root)
        .args(tail)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that reads no input (`recover`) may be gone already.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// Asserts that a run of the binary exited 0.
fn succeeds(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn apply_on_disk(root: &Path, patch: &str, format: Format) -> grammar_patch::Outcome {
    let mut tree = DiskTree::new(root).unwrap();
    let canonical = tree.root().to_path_buf();
    run(
        patch,
        Some(format),
        Mode::Apply { dry_run: false },
        Some(&mut tree),
        Some(&canonical),
    )
}

/// A patch in `format` that changes line `two` of `path` to `TWO`.
fn modify(format: Format, path: &str) -> String {
    match format {
        Format::Udiff => format!("--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"),
        Format::Codex => format!("*** Begin Patch\n*** Update File: {path}\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n"),
        Format::Repopatch => format!("PATCHSET\nPATCH {path}\nREPLACE\n- two\n---\n. TWO\nENDPATCH\nENDPATCHSET\n"),
        Format::Ap => format!("0a1b2c3d AP 3.1\n0a1b2c3d FILE\n{path}\n0a1b2c3d REPLACE\n0a1b2c3d snippet\ntwo\n0a1b2c3d content\nTWO\n"),
        Format::Searchreplace => format!("{path}\n<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n"),
    }
}

/// One patch that modifies each of `paths` as [`modify`] does.
fn modify_all(format: Format, paths: &[&str]) -> String {
    let mut all = modify(format, paths[0]);
    for path in &paths[1..] {
        let next = modify(format, path);
        all = match format {
            Format::Udiff => format!("{all}{next}"),
            Format::Codex => all.replace("*** End Patch\n", &next.replace("*** Begin Patch\n", "")),
            Format::Repopatch => all.replace("ENDPATCHSET\n", &next.replacen("PATCHSET\n", "", 1)),
            Format::Ap => format!("{all}{}", next.replace("0a1b2c3d AP 3.1\n", "")),
            Format::Searchreplace => format!("{all}\n{next}"),
        };
    }
    all
}

/// `patch` parsed as `format` and handed to `then` (the parsed patch
/// borrows its text and its store).
fn parsed<R>(
    format: Format,
    patch: String,
    then: impl FnOnce(&grammar_patch::ir::Patch<'_>) -> R,
) -> R {
    let parsed = grammar_patch::unwrap::unwrap(patch);
    let store = Default::default();
    let (ir, _) = grammar_patch::formats::parse(
        format,
        &parsed.text,
        &store,
        parsed.body,
        Default::default(),
    )
    .unwrap();
    then(&ir)
}

const FORMATS: &[Format] = Format::ALL;
const TEXT: &str = "one\ntwo\nthree\n";

/// A file hard-linked from outside the root gets a new inode; the outside
/// name keeps its bytes and inode. So does a second name inside the root.
#[test]
fn a_hard_linked_target_is_never_written_in_place() {
    for &format in FORMATS {
        let base = tempfile::tempdir().unwrap();
        let (root, outside) = (base.path().join("root"), base.path().join("outside"));
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), TEXT).unwrap();
        fs::hard_link(outside.join("secret.txt"), root.join("a.txt")).unwrap();
        fs::set_permissions(root.join("a.txt"), fs::Permissions::from_mode(0o751)).unwrap();
        fs::write(root.join("b.txt"), TEXT).unwrap();
        fs::hard_link(root.join("b.txt"), root.join("b2.txt")).unwrap();
        let ino = fs::metadata(outside.join("secret.txt")).unwrap().ino();
        for path in ["a.txt", "b.txt"] {
            let outcome = apply_on_disk(&root, &modify(format, path), format);
            assert!(outcome.ok(), "{format}: {:?}", outcome.diagnostics);
        }
        let patched = TEXT.replace("two", "TWO");
        // The patched names have the new text; the other links keep the old.
        for (path, want) in [
            (root.join("a.txt"), patched.as_str()),
            (root.join("b.txt"), &patched),
            (outside.join("secret.txt"), TEXT),
            (root.join("b2.txt"), TEXT),
        ] {
            let got = fs::read_to_string(&path).unwrap();
            assert_eq!(got, want, "{format}: {}", path.display());
        }
        let secret = fs::metadata(outside.join("secret.txt")).unwrap();
        assert_eq!((secret.ino(), secret.nlink()), (ino, 1), "{format}");
        let a = fs::metadata(root.join("a.txt")).unwrap();
        assert_ne!(a.ino(), ino, "{format}");
        assert_eq!(
            a.permissions().mode() & 0o7777,
            0o751,
            "{format}: mode kept"
        );
        assert!(no_journal(&root));
    }
}

/// A rollback puts a hard-linked target's old inode back under its name.
#[test]
fn a_rolled_back_hard_link_is_the_same_inode_again() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    fs::create_dir_all(&root).unwrap();
    fs::write(base.path().join("outside.txt"), TEXT).unwrap();
    fs::hard_link(base.path().join("outside.txt"), root.join("a.txt")).unwrap();
    fs::write(root.join("b.txt"), TEXT).unwrap();
    let ino = fs::metadata(root.join("a.txt")).unwrap().ino();
    // a.txt gets a new inode, then the in-place write of b.txt fails.
    let patch = format!(
        "{}{}",
        modify(Format::Udiff, "a.txt"),
        modify(Format::Udiff, "b.txt")
    );
    let mut tree = unwritable(DiskTree::new(&root).unwrap());
    let outcome = run(
        patch,
        None,
        Mode::Apply { dry_run: false },
        Some(&mut tree),
        None,
    );
    assert!(!outcome.ok());
    let a = fs::metadata(root.join("a.txt")).unwrap();
    assert_eq!((a.ino(), a.nlink()), (ino, 2));
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), TEXT);
    assert!(no_journal(&root));
}

/// A deleted file restored by a rollback is the same inode, owner and mode;
/// a rename is a rename (no copy), and is undone as one.
#[test]
fn rollback_restores_deleted_and_renamed_files_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::write(root.join("gone.txt"), "bye\n").unwrap();
    fs::set_permissions(root.join("gone.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    // Another owner (the tests run as root, which may give files away).
    let owned = std::os::unix::fs::chown(root.join("gone.txt"), Some(4242), Some(4242)).is_ok();
    fs::write(root.join("big.txt"), "x\n".repeat(1 << 20)).unwrap();
    fs::write(root.join("z.txt"), "z\n").unwrap();
    let ino = |p: &str| fs::metadata(root.join(p)).unwrap().ino();
    let (gone, big) = (ino("gone.txt"), ino("big.txt"));
    let mut tree = unwritable(DiskTree::new(root).unwrap());
    let patch = "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
                 diff --git a/big.txt b/moved.txt\nrename from big.txt\nrename to moved.txt\n\
                 diff --git a/z.txt b/z.txt\n--- a/z.txt\n+++ b/z.txt\n@@ -1 +1 @@\n-z\n+Z\n";
    let outcome = run(
        patch,
        None,
        Mode::Apply { dry_run: false },
        Some(&mut tree),
        None,
    );
    assert_eq!(
        outcome.diagnostics[0].code,
        Code::IoError,
        "the write of z.txt was to fail"
    );
    assert_eq!(ino("gone.txt"), gone);
    if owned {
        assert_eq!(fs::metadata(root.join("gone.txt")).unwrap().uid(), 4242);
    }
    assert_eq!(
        fs::metadata(root.join("gone.txt"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o640
    );
    assert_eq!(ino("big.txt"), big);
    assert!(!root.join("moved.txt").exists());
    assert!(no_journal(root));
    // Without the fault the rename keeps the inode: no copy was made.
    let outcome = apply_on_disk(root, patch, Format::Udiff);
    assert!(outcome.ok(), "{:?}", outcome.diagnostics);
    assert_eq!(ino("moved.txt"), big);
}

/// A disk tree where no new file can be made, as in a directory nobody
/// may write.
fn unwritable(tree: DiskTree) -> Hooked<DiskTree> {
    Hooked::new(tree, |call, path| match call {
        Call::Stage => Then::Fail(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{path}: read-only"),
        )),
        _ => Then::Go,
    })
}

/// A target that cannot be written: the tree is restored, and the report
/// says so (it once claimed the rollback had failed).
#[test]
fn an_unwritable_target_is_reported_without_a_false_rollback_failure() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a.txt"), TEXT).unwrap();
    let before = Snapshot::load(tmp.path());
    let mut tree = unwritable(DiskTree::new(tmp.path()).unwrap());
    let outcome = run(
        modify(Format::Udiff, "a.txt"),
        None,
        Mode::Apply { dry_run: false },
        Some(&mut tree),
        None,
    );
    let d = &outcome.diagnostics[0];
    assert_eq!(d.code, Code::IoError);
    assert!(
        d.notes.iter().all(|n| !n.contains("rollback")),
        "{:?}",
        d.notes
    );
    assert_eq!(Snapshot::load(tmp.path()), before);
}

/// Planned, then another process edits the target: `target_changed`, the
/// other process's edit kept, nothing of ours written.
#[test]
fn a_target_changed_after_it_was_read_is_never_overwritten() {
    for &format in FORMATS {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("a.txt"), TEXT).unwrap();
        fs::write(tmp.path().join("b.txt"), TEXT).unwrap();
        let both = modify_all(format, &["a.txt", "b.txt"]);
        let mut tree = DiskTree::new(tmp.path()).unwrap();
        let err = parsed(format, both, |ir| {
            let plan = apply::plan(ir, &tree, None).unwrap();
            fs::write(tmp.path().join("b.txt"), "edited by someone else\n").unwrap();
            apply::commit(&plan, &mut tree).unwrap_err()
        });
        assert_eq!(err.code, Code::TargetChanged, "{format}: {}", err.message);
        assert_eq!(
            fs::read_to_string(tmp.path().join("b.txt")).unwrap(),
            "edited by someone else\n"
        );
        assert_eq!(
            fs::read_to_string(tmp.path().join("a.txt")).unwrap(),
            TEXT,
            "{format}: a.txt not rolled back"
        );
        assert!(no_journal(tmp.path()));
    }
}

/// The file read beside a large patch's parse is split into lines there,
/// a lone `\r` breaking one, for the planner to take: it takes them only
/// where its format breaks lines so too (codex, ap), or the text has no
/// `\r`. A unified diff, where `a\rb` is one line, applies to such a file
/// as it does where nothing was read ahead (an in-memory tree); so does
/// codex, whose lone `\r` ends a line. (Taken for every format, the diff's
/// context `a\rb` is sought among the lines `a` and `b`, and is not there.)
#[test]
fn lines_split_beside_the_parse_are_the_formats_own() {
    let long = "X".repeat(1 << 20);
    let text = "keep\na\rb\nold\n";
    let patches = [
        (
            Format::Udiff,
            format!(
                "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n keep\n a\rb\n-old\n+new\n\
                 --- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+{long}\n"
            ),
        ),
        (
            Format::Codex,
            format!(
                "*** Begin Patch\n*** Update File: a.txt\n@@\n b\n-old\n+new\n\
                 *** Add File: b.txt\n+{long}\n*** End Patch\n"
            ),
        ),
    ];
    for (format, patch) in patches {
        assert!(patch.len() > 1 << 20);
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("a.txt"), text).unwrap();
        let tree = DiskTree::new(tmp.path()).unwrap();
        let mut tree = Hooked::new(tree, |_, _| Then::Go);
        let apply = Mode::Apply { dry_run: false };
        let outcome = run(patch.as_str(), Some(format), apply, Some(&mut tree), None);
        assert!(outcome.ok(), "{format}: {:?}", outcome.diagnostics);
        assert_eq!(*tree.aheads.borrow(), ["a.txt"], "{format}");
        let mut mem = apply::MemTree::default().with_file("a.txt", text);
        let alone = run(patch.as_str(), Some(format), apply, Some(&mut mem), None);
        assert!(alone.ok(), "{format}: {:?}", alone.diagnostics);
        let disk = fs::read(tmp.path().join("a.txt")).unwrap();
        assert_eq!(disk, mem.files["a.txt"].0, "{format}");
        assert_eq!(disk, b"keep\na\rb\nnew\n", "{format}");
    }
}

/// A patch of a megabyte or more has the file it edits first read beside
/// its parse, the path guessed from its first lines (none for
/// SEARCH/REPLACE blocks, whose first line may be prose); the apply is
/// the one a patch without the guess makes. A small patch, and one whose
/// paths `-p` or `-R` change, is not guessed at.
#[test]
fn a_large_patch_reads_its_first_file_beside_its_parse() {
    let long = "X".repeat(1 << 20);
    for &format in FORMATS {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["a.txt", "b.txt"] {
            fs::write(tmp.path().join(name), TEXT).unwrap();
        }
        let first = modify(format, "a.txt");
        let second = modify(format, "b.txt").replacen("TWO", &long, 1);
        let both = match format {
            Format::Udiff | Format::Ap => {
                format!("{first}{}", second.replace("0a1b2c3d AP 3.1\n", ""))
            }
            Format::Codex => {
                first.replace("*** End Patch\n", &second.replace("*** Begin Patch\n", ""))
            }
            Format::Repopatch => {
                first.replace("ENDPATCHSET\n", &second.replacen("PATCHSET\n", "", 1))
            }
            Format::Searchreplace => format!("{first}\n{second}"),
        };
        assert!(both.len() > 1 << 20);
        let tree = DiskTree::new(tmp.path()).unwrap();
        let mut tree = Hooked::new(tree, |_, _| Then::Go);
        let apply = Mode::Apply { dry_run: false };
        let outcome = run(both.as_str(), Some(format), apply, Some(&mut tree), None);
        assert!(outcome.ok(), "{format}: {:?}", outcome.diagnostics);
        let guessed: &[&str] = match format {
            Format::Searchreplace => &[],
            _ => &["a.txt"],
        };
        assert_eq!(*tree.aheads.borrow(), guessed, "{format}");
        let read = |name: &str| fs::read_to_string(tmp.path().join(name)).unwrap();
        assert_eq!(read("a.txt"), "one\nTWO\nthree\n", "{format}");
        assert_eq!(read("b.txt"), format!("one\n{long}\nthree\n"), "{format}");

        // Undone with -R, whose paths are the other side's: no guess.
        let options = grammar_patch::Options {
            reverse: true,
            ..Default::default()
        };
        if format != Format::Ap && format != Format::Searchreplace {
            let tree = DiskTree::new(tmp.path()).unwrap();
            let mut tree = Hooked::new(tree, |_, _| Then::Go);
            let outcome = grammar_patch::run_with(
                both.as_str(),
                Some(format),
                apply,
                Some(&mut tree),
                None,
                options,
            );
            assert!(outcome.ok(), "{format} -R: {:?}", outcome.diagnostics);
            assert!(tree.aheads.borrow().is_empty(), "{format} -R");
            assert_eq!(read("a.txt"), TEXT, "{format} -R");
        }
        // A small patch: no guess.
        let tree = DiskTree::new(tmp.path()).unwrap();
        let mut tree = Hooked::new(tree, |_, _| Then::Go);
        let outcome = run(
            first.as_str(),
            Some(format),
            Mode::Lint,
            Some(&mut tree),
            None,
        );
        assert!(
            tree.aheads.borrow().is_empty(),
            "{format}: {:?}",
            outcome.diagnostics
        );
    }
}

/// Planned letting originals go (as `apply` plans a patch of many files),
/// then another process rewrites a file whose original went, to text of
/// the same length, and the commit reads it back: `target_changed`, the
/// other process's text kept, the file written before it rolled back.
/// The file is read again after planning, so only its text can tell.
#[test]
fn a_file_changed_after_its_original_went_is_never_overwritten() {
    for &format in FORMATS {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["a.txt", "b.txt", "c.txt"] {
            fs::write(tmp.path().join(name), TEXT).unwrap();
        }
        let patch = modify_all(format, &["a.txt", "b.txt", "c.txt"]);
        let mut tree = DiskTree::new(tmp.path()).unwrap();
        let other = "ONE\nTWO\nTHREE\n";
        assert_eq!(other.len(), TEXT.len());
        parsed(format, patch.clone(), |ir| {
            let plan = apply::plan_with(ir, &tree, None, apply::Originals::Release).unwrap();
            let released: Vec<bool> = plan
                .changes
                .iter()
                .map(|c| match c {
                    apply::Change::Write { output, .. } => output.is_released(),
                    other => panic!("{format}: {other:?}"),
                })
                .collect();
            // The last file's original is kept: a patch of one file is not
            // read twice.
            assert_eq!(released, [true, true, false], "{format}");
            fs::write(tmp.path().join("b.txt"), other).unwrap();
            let err = apply::commit(&plan, &mut tree).unwrap_err();
            assert_eq!(err.code, Code::TargetChanged, "{format}: {}", err.message);
            assert_eq!(err.path.as_deref(), Some("b.txt"), "{format}");
        });
        assert_eq!(fs::read_to_string(tmp.path().join("b.txt")).unwrap(), other);
        for name in ["a.txt", "c.txt"] {
            let text = fs::read_to_string(tmp.path().join(name)).unwrap();
            assert_eq!(text, TEXT, "{format}: {name} not rolled back");
        }
        assert!(no_journal(tmp.path()));

        // Left alone, the same plan commits every file, each read back.
        fs::write(tmp.path().join("b.txt"), TEXT).unwrap();
        parsed(format, patch, |ir| {
            let plan = apply::plan_with(ir, &tree, None, apply::Originals::Release).unwrap();
            apply::commit(&plan, &mut tree).unwrap();
        });
        for name in ["a.txt", "b.txt", "c.txt"] {
            let text = fs::read_to_string(tmp.path().join(name)).unwrap();
            assert_eq!(text, "one\nTWO\nthree\n", "{format}: {name}");
        }
        assert!(no_journal(tmp.path()));
    }
}

/// Planned letting originals go, then a file whose original went is
/// removed, or grows past what is read (4 GiB, sparse): reading it back
/// finds no text planned over, `target_changed`, nothing of ours written.
#[test]
fn a_file_gone_or_grown_after_its_original_went_is_target_changed() {
    type Change = fn(&Path);
    let gone: Change = |p| fs::remove_file(p).unwrap();
    let grown: Change = |p| {
        fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_len(4 << 30)
            .unwrap()
    };
    for (what, change) in [("gone", gone), ("grown", grown)] {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["a.txt", "b.txt"] {
            fs::write(tmp.path().join(name), TEXT).unwrap();
        }
        let mut tree = DiskTree::new(tmp.path()).unwrap();
        let patch = modify_all(Format::Udiff, &["a.txt", "b.txt"]);
        let err = parsed(Format::Udiff, patch, |ir| {
            let plan = apply::plan_with(ir, &tree, None, apply::Originals::Release).unwrap();
            change(&tmp.path().join("a.txt"));
            apply::commit(&plan, &mut tree).unwrap_err()
        });
        assert_eq!(err.code, Code::TargetChanged, "{what}: {}", err.message);
        assert_eq!(err.path.as_deref(), Some("a.txt"), "{what}");
        assert_eq!(
            fs::read_to_string(tmp.path().join("b.txt")).unwrap(),
            TEXT,
            "{what}"
        );
        // Not 4 GiB for the check to read.
        let _ = fs::remove_file(tmp.path().join("a.txt"));
        assert!(no_journal(tmp.path()), "{what}");
    }
}

/// Planned, then a directory on the way is swapped for a link out of the
/// root: the commit refuses beneath the root's handle, nothing outside.
#[test]
fn a_directory_swapped_for_a_link_after_planning_is_refused() {
    for walk in [false, true] {
        let base = tempfile::tempdir().unwrap();
        let (root, outside) = (base.path().join("root"), base.path().join("outside"));
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(root.join("sub/a.txt"), TEXT).unwrap();
        fs::write(outside.join("a.txt"), TEXT).unwrap();
        let patch = format!(
            "{}--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1 @@\n+new\n",
            modify(Format::Udiff, "sub/a.txt")
        );
        let mut tree = DiskTree::new(&root).unwrap();
        if walk {
            tree = tree.walk_components();
        }
        let err = parsed(Format::Udiff, patch, |ir| {
            let plan = apply::plan(ir, &tree, None).unwrap();
            fs::rename(root.join("sub"), root.join("sub.old")).unwrap();
            symlink(&outside, root.join("sub")).unwrap();
            apply::commit(&plan, &mut tree).unwrap_err()
        });
        assert_eq!(err.code, Code::PathEscape, "walk={walk}: {}", err.message);
        assert_eq!(
            Snapshot::load(&outside).files.len(),
            1,
            "walk={walk}: created outside"
        );
        assert_eq!(
            fs::read_to_string(outside.join("a.txt")).unwrap(),
            TEXT,
            "walk={walk}"
        );
    }
}

/// Both resolutions, the kernel's and the portable walk, refuse every
/// link on the way, inside the root or out, and name it for the planner.
#[test]
fn both_resolutions_refuse_every_link_on_the_way() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    fs::create_dir_all(root.join("real/deep")).unwrap();
    fs::write(root.join("real/deep/a.txt"), TEXT).unwrap();
    symlink("real", root.join("in")).unwrap();
    symlink("../in/deep", root.join("real/up")).unwrap();
    symlink("..", root.join("real/parent")).unwrap();
    symlink("../..", root.join("out")).unwrap();
    symlink("/etc", root.join("abs")).unwrap();
    for tree in [
        DiskTree::new(&root).unwrap(),
        DiskTree::new(&root).unwrap().walk_components(),
    ] {
        let p = |s: &str| grammar_patch::paths::RelPath::new(s).unwrap();
        assert_eq!(
            tree.read(&p("real/deep/a.txt"), u64::MAX).unwrap(),
            TEXT.as_bytes()
        );
        for (path, link) in [
            ("in/deep/a.txt", "in"),
            ("real/up/a.txt", "real/up"),
            ("real/parent/real/deep/a.txt", "real/parent"),
            ("out/x", "out"),
            ("abs/passwd", "abs"),
        ] {
            let found = tree.link_on_path(&p(path)).unwrap();
            assert_eq!(found.map(|(l, _)| l), Some(p(link)), "{path}");
            let e = tree.read(&p(path), u64::MAX).unwrap_err();
            assert_eq!(
                apply::writing::fs::refusal(&e),
                Some(apply::writing::fs::Refusal::Escapes),
                "{path}: {e}"
            );
        }
    }
}

/// Deleting a file through a link to its directory is refused, as `git
/// apply` refuses a path beyond a symbolic link: the file and the link stay.
#[test]
fn deleting_through_a_directory_link_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir_all(tmp.path().join("real")).unwrap();
    fs::write(tmp.path().join("real/only.txt"), "x\n").unwrap();
    symlink("real", tmp.path().join("alias")).unwrap();
    let outcome = apply_on_disk(
        tmp.path(),
        "--- a/alias/only.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
        Format::Udiff,
    );
    assert_eq!(
        outcome.diagnostics[0].code,
        Code::PathEscape,
        "{:?}",
        outcome.diagnostics
    );
    assert!(tmp.path().join("real/only.txt").exists());
    assert!(fs::symlink_metadata(tmp.path().join("alias"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// The journal's directory is no patch's target.
#[test]
fn the_journal_cannot_be_targeted() {
    let tmp = tempfile::tempdir().unwrap();
    let outcome = apply_on_disk(
        tmp.path(),
        &format!("--- /dev/null\n+++ b/{JOURNAL}\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/{STASH}/1\n@@ -0,0 +1 @@\n+x\n"),
        Format::Udiff,
    );
    assert_eq!(outcome.diagnostics[0].code, Code::PathEscape);
    assert!(no_journal(tmp.path()));
}

/// A tree of `n` files, and a udiff patch that modifies, renames (with an
/// edit), deletes and adds: every kind of step the commit journals.
fn many_files(root: &Path, n: usize) -> String {
    let mut patch = String::new();
    let body: String = (0..12).map(|k| format!("line {k}\n")).collect();
    for i in 0..n {
        let path = format!("d{}/f{i}.txt", i % 10);
        fs::create_dir_all(root.join(format!("d{}", i % 10))).unwrap();
        fs::write(root.join(&path), &body).unwrap();
        let edit = "@@ -5,3 +5,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n";
        match i % 4 {
            0 | 3 => patch += &format!("--- a/{path}\n+++ b/{path}\n{edit}"),
            1 => patch += &format!("diff --git a/{path} b/moved/f{i}.txt\nrename from {path}\nrename to moved/f{i}.txt\n--- a/{path}\n+++ b/moved/f{i}.txt\n{edit}"),
            _ => {
                let minus: String = body.lines().map(|l| format!("-{l}\n")).collect();
                patch += &format!("--- a/{path}\n+++ /dev/null\n@@ -1,12 +0,0 @@\n{minus}");
            }
        }
    }
    for i in 0..n / 4 {
        patch += &format!("--- /dev/null\n+++ b/new/n{i}.txt\n@@ -0,0 +1,2 @@\n+new {i}\n+file\n");
    }
    patch
}

fn copy_tree(from: &Path, to: &Path) {
    let snap = Snapshot::load(from);
    snap.write(to, &Default::default());
}

/// `kill -9` at instants spread over whole applies; after `recover` the
/// tree is exactly before or exactly after, with nothing left behind.
#[test]
fn kill_nine_at_any_instant_then_recover_gives_before_or_after() {
    let (trials, files) = if full() { (200, 2000) } else { (24, 400) };
    let work = tempfile::tempdir().unwrap();
    let seed = work.path().join("seed");
    fs::create_dir_all(&seed).unwrap();
    let patch = many_files(&seed, files);
    let patch_file = work.path().join("p.diff");
    fs::write(&patch_file, &patch).unwrap();
    let patch_arg = patch_file.to_str().unwrap();
    let before = Snapshot::load(&seed);
    let after = {
        let t = work.path().join("after");
        copy_tree(&seed, &t);
        succeeds(&gp(&["apply", "--root"], &t, &[patch_arg], ""));
        Snapshot::load(&t)
    };
    // How long a whole apply takes (the median of three), to spread the
    // kills from start-up to past the end.
    let mut times = vec![];
    for i in 0..3 {
        let t = work.path().join(format!("timing{i}"));
        copy_tree(&seed, &t);
        let started = Instant::now();
        bin()
            .args(["apply", "--root"])
            .arg(&t)
            .arg(&patch_file)
            .output()
            .unwrap();
        times.push(started.elapsed());
    }
    times.sort();
    let whole = times[1];
    let (mut was_before, mut was_after, mut interrupted) = (0, 0, 0);
    for k in 0..trials {
        let root = work.path().join(format!("t{k}"));
        copy_tree(&seed, &root);
        let mut child = bin()
            .args(["apply", "--root"])
            .arg(&root)
            .arg(&patch_file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(whole.mul_f64((k as f64 + 0.5) / trials as f64 * 2.0));
        let _ = child.kill();
        let _ = child.wait();
        if journal_left(&root) {
            interrupted += 1;
        }
        succeeds(&gp(&["recover", "--root"], &root, &[], ""));
        let got = Snapshot::load(&root);
        assert!(no_journal(&root), "trial {k}: journal left behind");
        if got == before {
            was_before += 1;
        } else if got == after {
            was_after += 1;
        } else {
            panic!("trial {k}: the tree is neither before nor after");
        }
        fs::remove_dir_all(&root).unwrap();
    }
    eprintln!(
        "kill -9: {trials} trials over a {files}-file apply of {:.0} ms: {was_before} before, {was_after} after, 0 neither; {interrupted} killed mid-commit and rolled back",
        whole.as_secs_f64() * 1000.0
    );
    // Where the kills land depends on the machine's load; at full counts
    // some always land inside a commit.
    assert!(
        !full() || interrupted > 0,
        "no kill landed inside a commit; the spread is off"
    );
}

/// Two applies at once on one tree, with compatible patches (different
/// lines of the same files): both apply, one after the other; never a lost
/// or torn update.
#[test]
fn two_applies_at_once_both_land() {
    let trials = if full() { 100 } else { 12 };
    let files = 200;
    let work = tempfile::tempdir().unwrap();
    let body: String = (0..30).map(|k| format!("line {k}\n")).collect();
    let mut first = String::new();
    let mut second = String::new();
    for i in 0..files {
        let p = format!("f{i}.txt");
        first +=
            &format!("--- a/{p}\n+++ b/{p}\n@@ -2,3 +2,3 @@\n line 1\n-line 2\n+LINE 2\n line 3\n");
        second += &format!(
            "--- a/{p}\n+++ b/{p}\n@@ -26,3 +26,3 @@\n line 25\n-line 26\n+LINE 26\n line 27\n"
        );
    }
    fs::write(work.path().join("1.diff"), &first).unwrap();
    fs::write(work.path().join("2.diff"), &second).unwrap();
    let want = body
        .replace("line 2\n", "LINE 2\n")
        .replace("line 26\n", "LINE 26\n");
    let mut both = 0;
    for k in 0..trials {
        let root = work.path().join(format!("t{k}"));
        fs::create_dir_all(&root).unwrap();
        for i in 0..files {
            fs::write(root.join(format!("f{i}.txt")), &body).unwrap();
        }
        let spawn = |p: &str| {
            bin()
                .args(["apply", "--root"])
                .arg(&root)
                .arg(work.path().join(p))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        };
        let (mut a, mut b) = (spawn("1.diff"), spawn("2.diff"));
        let (ra, rb) = (a.wait().unwrap(), b.wait().unwrap());
        assert!(ra.success() && rb.success(), "trial {k}: {ra:?} {rb:?}");
        for i in 0..files {
            let got = fs::read_to_string(root.join(format!("f{i}.txt"))).unwrap();
            assert_eq!(got, want, "trial {k}: f{i}.txt lost an update");
        }
        both += 1;
        fs::remove_dir_all(&root).unwrap();
    }
    eprintln!("concurrent applies: {trials} trials of two {files}-file patches: {both} both applied, 0 lost or torn");
}

/// A second apply waits for the lock, then gives up with `root_busy`
/// (exit 2) and writes nothing.
#[test]
fn a_held_lock_makes_a_bounded_wait_then_root_busy() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a.txt"), TEXT).unwrap();
    let (_held, _) = open_root(tmp.path(), true, DEFAULT_WAIT).unwrap();
    let started = Instant::now();
    let patch = modify(Format::Udiff, "a.txt");
    let out = gp(
        &["apply", "--json", "--wait", "0.3", "--root"],
        tmp.path(),
        &[],
        &patch,
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    super::support::assert_valid_result(&v);
    assert_eq!(v["error"]["code"], "root_busy", "{v}");
    assert_eq!(fs::read_to_string(tmp.path().join("a.txt")).unwrap(), TEXT);
    // Nor does a reader get in while a writer holds the root.
    match open_root(tmp.path(), false, Duration::from_millis(20)) {
        Err(d) => assert_eq!(d.code, Code::RootBusy),
        Ok(_) => panic!("a reader got past a writer's lock"),
    }
}

/// A directory in the root swapped back and forth for a link to an outside
/// directory while whole applies run: nothing is ever written outside.
#[test]
fn a_directory_swapped_for_a_link_during_apply_never_writes_outside() {
    let trials = if full() { 20 } else { 4 };
    let files = 50;
    let work = tempfile::tempdir().unwrap();
    let mut patch = String::new();
    for i in 0..files {
        patch += &modify(Format::Udiff, &format!("sub/f{i}.txt"));
        patch += &format!("--- /dev/null\n+++ b/sub/new{i}.txt\n@@ -0,0 +1 @@\n+new\n");
    }
    fs::write(work.path().join("p.diff"), &patch).unwrap();
    let (mut refused, mut applied) = (0, 0);
    for k in 0..trials {
        let base = work.path().join(format!("t{k}"));
        let (root, outside) = (base.join("root"), base.join("outside"));
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        for i in 0..files {
            fs::write(root.join(format!("sub/f{i}.txt")), TEXT).unwrap();
            fs::write(outside.join(format!("f{i}.txt")), TEXT).unwrap();
        }
        let outside_before = Snapshot::load(&outside);
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (root, outside, stop) = (root.clone(), outside.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = fs::rename(root.join("sub"), root.join("sub.real"));
                    let _ = symlink(&outside, root.join("sub"));
                    std::thread::sleep(Duration::from_micros(300));
                    let _ = fs::remove_file(root.join("sub"));
                    let _ = fs::rename(root.join("sub.real"), root.join("sub"));
                    std::thread::sleep(Duration::from_millis(40));
                }
            })
        };
        for _ in 0..5 {
            let out = bin()
                .args(["apply", "--root"])
                .arg(&root)
                .arg(work.path().join("p.diff"))
                .output()
                .unwrap();
            match out.status.code() {
                Some(0) => applied += 1,
                Some(1) | Some(2) => {
                    if refused == 0 {
                        eprintln!(
                            "first refusal: {}",
                            String::from_utf8_lossy(&out.stderr)
                                .lines()
                                .next()
                                .unwrap_or("")
                        );
                    }
                    refused += 1
                }
                other => panic!(
                    "trial {k}: exit {other:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert_eq!(
            Snapshot::load(&outside),
            outside_before,
            "trial {k}: written outside the root"
        );
    }
    eprintln!("swap race: {} applies against a swapping directory: {applied} applied inside, {refused} refused, 0 wrote outside", trials * 5);
}

/// `recover` and every apply on a root roll back a journal left by a
/// killed apply; `lint` and a dry run report it and write nothing;
/// `recover` exits 0 with nothing to do too.
#[test]
fn recover_and_every_apply_roll_back_a_left_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::write(root.join("a.txt"), TEXT).unwrap();
    // Half a commit: a.txt renamed aside, then killed.
    let leave_journal = |root: &Path| {
        use apply::writing::journal::{Journal, Record};
        let (mut tree, _) = open_root(root, true, DEFAULT_WAIT).unwrap();
        let mut j = Journal::begin(&mut tree).unwrap();
        let path = grammar_patch::paths::RelPath::new("a.txt").unwrap();
        let aside = j.temp_beside(&path);
        let ident = tree.ident(&path).unwrap().unwrap();
        let record = Record::Moved {
            from: path.clone(),
            to: aside.clone(),
            ident,
        };
        j.log(&mut tree, record).unwrap();
        tree.rename(&path, &aside).unwrap();
    };
    leave_journal(root);
    for args in [vec!["lint", "--root"], vec!["apply", "--dry-run", "--root"]] {
        let out = gp(&args, root, &["-"], &modify(Format::Udiff, "a.txt"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("interrupted_apply"), "{args:?}: {err}");
        assert!(!root.join("a.txt").exists(), "{args:?} wrote");
        assert!(journal_left(root), "{args:?}");
    }
    for args in [vec!["recover", "--root"], vec!["apply", "--root"]] {
        let tail: &[&str] = if args[0] == "recover" { &[] } else { &["-"] };
        let out = gp(&args, root, tail, &modify(Format::Udiff, "a.txt"));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("recovered"),
            "{args:?}"
        );
        let want = if args[0] == "recover" {
            TEXT.to_string()
        } else {
            TEXT.replace("two", "TWO")
        };
        assert_eq!(
            fs::read_to_string(root.join("a.txt")).unwrap(),
            want,
            "{args:?}"
        );
        assert!(no_journal(root), "{args:?}");
        fs::write(root.join("a.txt"), TEXT).unwrap();
        leave_journal(root);
    }
    succeeds(&gp(&["recover", "--root"], root, &[], ""));
    let out = bin()
        .args(["recover", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "nothing to recover\n");
}

/// Absurd numbers in headers are the format's own error, never an abort:
/// in apply, dry run and lint.
#[test]
fn huge_numbers_in_headers_are_refused_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a.txt"), "a\nb\nc\n").unwrap();
    let patches = [
        "--- a/a.txt\n+++ b/a.txt\n@@ -18446744073709551615,2 +1,2 @@\n a\n-b\n+B\n",
        "--- a/a.txt\n+++ b/a.txt\n@@ -99999999999999999999999 +1 @@\n-b\n+B\n",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,18446744073709551615 +1,2 @@\n a\n-b\n+B\n",
        "*** Begin Patch\n*** Update File: a.txt\n@@ :18446744073709551616\n-b\n+B\n*** End Patch\n",
    ];
    for patch in patches {
        for args in [
            &["apply", "--json"][..],
            &["apply", "--json", "--dry-run"],
            &["lint", "--json"],
        ] {
            let out = gp(&[args, &["--root"]].concat(), tmp.path(), &[], patch);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{args:?} {patch}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            super::support::assert_valid_result(&v);
            // udiff: a header number over 9 digits is a malformed header;
            // codex: `@@ :N` over 9 digits reads as a context line no file has.
            let want = if patch.starts_with("***") {
                "context_not_found"
            } else {
                "invalid_hunk_header"
            };
            assert_eq!(v["error"]["code"], want, "{patch}");
        }
    }
    assert_eq!(
        fs::read_to_string(tmp.path().join("a.txt")).unwrap(),
        "a\nb\nc\n"
    );
}

/// A path that no file system can name is a rejected patch (exit 1,
/// `path_escape`), not an I/O error.
#[test]
fn unnameable_paths_are_a_rejection_not_an_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "x".repeat(300);
    for path in ["a\0b.txt".to_string(), format!("d/{long}.txt")] {
        let patch = format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+new\n");
        let out = gp(&["apply", "--json", "--root"], tmp.path(), &[], &patch);
        assert_eq!(out.status.code(), Some(1), "{path:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        super::support::assert_valid_result(&v);
        assert_eq!(v["error"]["code"], "path_escape", "{path:?}");
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}

/// The journal names of earlier versions inside a root (here a directory
/// of that name) are never read: `recover` reports them (exit 1) and
/// leaves them as they are.
#[test]
fn a_journal_inside_the_tree_is_reported_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join(JOURNAL)).unwrap();
    fs::write(tmp.path().join(JOURNAL).join("keep.txt"), "mine\n").unwrap();
    let out = gp(&["recover", "--root"], tmp.path(), &[], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("untrusted_journal"));
    assert_eq!(
        fs::read_to_string(tmp.path().join(JOURNAL).join("keep.txt")).unwrap(),
        "mine\n"
    );
}

/// A `--- ` line in a deleted file's hunk is a removed line unless it
/// starts the next file, which the parser settles by looking ahead into
/// that file's hunks. Found by the fuzzer (`parse_udiff`): a lookahead that
/// repeated itself at every file it looked into took exponential time in
/// the number of such files (24 took over 30 s). The lookahead that
/// followed was quadratic and as deep as the files are many, which with
/// pest's stack guard gone (Cargo.toml) would overflow the stack. 20,000
/// must lint in moments; the limit only stops a hang.
#[test]
fn nested_file_headers_parse_in_linear_time() {
    let block = "--- a/old.md\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n";
    let dir = tempfile::tempdir().unwrap();
    let patch = dir.path().join("nested.diff");
    fs::write(&patch, block.repeat(20_000)).unwrap();
    let json = json_in_moments(
        dir.path(),
        &[
            "lint".as_ref(),
            "--format".as_ref(),
            "udiff".as_ref(),
            "--json".as_ref(),
            patch.as_os_str(),
        ],
        "lint of 20,000 nested deleted files",
    );
    // The same file 20,000 times: refused for that, not for its syntax.
    assert_eq!(json["error"]["code"], "duplicate_file_patch", "{json}");
}

/// A patch applied a second time: every hunk misses. Explaining a miss
/// reads the whole file for the nearest text, so explaining all of them
/// took time quadratic in the file (a 200,000-line file with 5,000 hunks
/// took minutes); past the first few, a miss is stated briefly. 3,000
/// misses in a 30,000-line file must be reported in moments; the limit
/// only stops a hang.
#[test]
fn a_patch_applied_twice_fails_in_moments() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    fs::create_dir(&root).unwrap();
    let text: String = (0..30_000)
        .map(|i| format!("line {i} of a long file, with some words\n"))
        .collect();
    fs::write(root.join("f.txt"), text).unwrap();
    let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n");
    for i in (0..30_000).step_by(10) {
        patch += &format!("@@\n-line {i} of a long file, with some words\n+line {i} changed\n");
    }
    patch += "*** End Patch\n";
    let patch_file = dir.path().join("p.patch");
    fs::write(&patch_file, patch).unwrap();
    let apply = || apply_in_moments(&root, &patch_file, "reporting 3,000 missing hunks");
    let first = apply();
    assert_eq!(first["ok"], true, "{first}");
    let second = apply();
    assert_eq!(second["error"]["code"], "context_not_found", "{second}");
    // The first miss is the error, the others its diagnostics.
    let misses = second["diagnostics"].as_array().unwrap();
    assert_eq!(misses.len() + 1, 3_000);
    let brief = misses
        .iter()
        .filter(|d| d.to_string().contains("explained in full"))
        .count();
    assert_eq!(brief, 3_000 - 8);
}

/// A block that occurs in thousands of places, in thousands of hunks:
/// collecting every place of each was quadratic (2,000 hunks of `}` in a
/// 100,000-line file took 3 s in a release build). A search that must find
/// one place stops at enough to show the candidates and say there are
/// more; the limit only stops a hang.
#[test]
fn a_block_in_thousands_of_places_fails_in_moments() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    fs::create_dir(&root).unwrap();
    let text: String = (0..200_000)
        .map(|i| {
            if i % 2 == 0 {
                "}\n".to_string()
            } else {
                format!("x{i}\n")
            }
        })
        .collect();
    fs::write(root.join("f.txt"), text).unwrap();
    let patch = format!(
        "*** Begin Patch\n*** Update File: f.txt\n{}*** End Patch\n",
        "@@\n-}\n+}}\n".repeat(2_000)
    );
    let patch_file = dir.path().join("p.patch");
    fs::write(&patch_file, patch).unwrap();
    let json = apply_in_moments(&root, &patch_file, "reporting 2,000 ambiguous hunks");
    assert_eq!(json["error"]["code"], "ambiguous_context", "{json}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(message.contains("matches more than 8 places"), "{message}");
    assert_eq!(json["diagnostics"].as_array().unwrap().len() + 1, 2_000);
}
