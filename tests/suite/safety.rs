//! Workspace safety, attacked: in every format, patches that try to leave
//! the root through `..`, an absolute path, a symbolic link to a directory
//! or a file outside, a move whose destination leaves, or an escape only in
//! their second file. Each must be refused as `path_escape` with nothing
//! written, inside or outside the root. And a file swapped for a symbolic
//! link between planning and writing must not be written through.

use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::Path;

use grammar_patch::apply::DiskTree;
use grammar_patch::error::Code;
use grammar_patch::formats::Format;
use grammar_patch::{run, Mode};

use super::support::{Call, Hooked, Snapshot, Then};

/// A patch that edits `old` into `new` in `path`.
fn modify(format: Format, path: &str) -> String {
    match format {
        Format::Udiff => format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-old\n+new\n"),
        Format::Codex => {
            format!("*** Begin Patch\n*** Update File: {path}\n@@\n-old\n+new\n*** End Patch\n")
        }
        Format::Ap => {
            format!("{AP}{ID} FILE\n{path}\n{ID} REPLACE\n{ID} snippet\nold\n{ID} content\nnew\n")
        }
        _ => format!("PATCHSET\nPATCH {path}\nREPLACE\n- old\n---\n. new\nENDPATCH\nENDPATCHSET\n"),
    }
}

/// The ap patch ID of these tests, and the header.
const ID: &str = "a1b2c3d4";
const AP: &str = "a1b2c3d4 AP 3.2\n";

/// A patch that creates `path`.
fn create(format: Format, path: &str) -> String {
    match format {
        Format::Udiff => format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+new\n"),
        Format::Codex => format!("*** Begin Patch\n*** Add File: {path}\n+new\n*** End Patch\n"),
        Format::Ap => format!("{AP}{ID} FILE\n{path}\n{ID} CREATE\n{ID} content\nnew\n"),
        _ => format!("PATCHSET\nPATCH {path}\nCREATEFILE\n. new\nENDPATCH\nENDPATCHSET\n"),
    }
}

/// A patch that moves `inside.txt` to `to`, in the formats that can.
fn rename(format: Format, to: &str) -> Option<String> {
    match format {
        Format::Udiff => Some(format!(
            "diff --git a/inside.txt b/{to}\nsimilarity index 100%\nrename from inside.txt\nrename to {to}\n"
        )),
        Format::Codex => Some(format!(
            "*** Begin Patch\n*** Update File: inside.txt\n*** Move to: {to}\n*** End Patch\n"
        )),
        Format::Ap => Some(format!("{AP}{ID} FILE\ninside.txt\n{ID} RENAME\n{to}\n")),
        _ => None,
    }
}

/// Two file operations in one patch: a valid edit, then `second`.
fn two(format: Format, second: &str) -> String {
    let first = modify(format, "inside.txt");
    match format {
        Format::Udiff => format!("{first}{second}"),
        Format::Ap => format!("{first}{}", second.trim_start_matches(AP)),
        Format::Codex => {
            let body = |p: &str| {
                p.trim_start_matches("*** Begin Patch\n")
                    .trim_end_matches("*** End Patch\n")
                    .to_string()
            };
            format!(
                "*** Begin Patch\n{}{}*** End Patch\n",
                body(&first),
                body(second)
            )
        }
        _ => {
            let body = |p: &str| {
                p.trim_start_matches("PATCHSET\n")
                    .trim_end_matches("ENDPATCHSET\n")
                    .to_string()
            };
            format!("PATCHSET\n{}{}ENDPATCHSET\n", body(&first), body(second))
        }
    }
}

/// `base/root` holds `inside.txt` and links out to `base/outside`.
fn workspace() -> tempfile::TempDir {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    let outside = base.path().join("outside");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(root.join("inside.txt"), "old\n").unwrap();
    fs::write(outside.join("outside.txt"), "old\n").unwrap();
    symlink("../outside", root.join("link_dir")).unwrap();
    symlink("../outside/outside.txt", root.join("link_file")).unwrap();
    base
}

/// Every file, directory and link under `base`, inside the root and out.
fn everything(base: &Path) -> (Snapshot, Snapshot) {
    (
        Snapshot::load(&base.join("root")),
        Snapshot::load(&base.join("outside")),
    )
}

fn attempt(format: Format, patch: &str) -> Result<(), String> {
    let base = workspace();
    let before = everything(base.path());
    let root = base.path().join("root").canonicalize().unwrap();
    let mut tree = DiskTree::new(&root).unwrap();
    let outcome = run(
        patch,
        Some(format),
        Mode::Apply { dry_run: false },
        Some(&mut tree),
        Some(&root),
    );
    let codes: Vec<Code> = outcome.diagnostics.iter().map(|d| d.code).collect();
    if outcome.ok() || !codes.contains(&Code::PathEscape) {
        return Err(format!(
            "{format}: expected path_escape, got {codes:?} for\n{patch}"
        ));
    }
    if everything(base.path()) != before {
        return Err(format!("{format}: the tree changed for\n{patch}"));
    }
    Ok(())
}

#[test]
fn every_format_refuses_to_leave_the_root() {
    let base = workspace();
    let outside_abs = base.path().join("outside").canonicalize().unwrap();
    let abs_file = format!("{}/outside.txt", outside_abs.display());
    let abs_new = format!("{}/new.txt", outside_abs.display());
    let mut failures = vec![];
    for format in [Format::Udiff, Format::Codex, Format::Repopatch, Format::Ap] {
        let mut patches = vec![];
        if format == Format::Ap {
            // ap deletes and renames whole directories: not through a link either.
            patches.push(format!("{AP}{ID} FILE\nlink_dir\n{ID} DELETE\n"));
            patches.push(format!("{AP}{ID} FILE\nlink_dir\n{ID} RENAME\nmoved_dir\n"));
            patches.push(format!("{AP}{ID} FILE\nsub\n{ID} RENAME\nlink_dir/sub\n"));
        }
        for path in [
            "../outside/outside.txt",
            abs_file.as_str(),
            "link_dir/outside.txt",
            "link_file",
            "sub/../../outside/outside.txt",
        ] {
            patches.push(modify(format, path));
            patches.push(two(format, &modify(format, path)));
        }
        for path in ["../outside/new.txt", abs_new.as_str(), "link_dir/new.txt"] {
            patches.push(create(format, path));
            patches.push(two(format, &create(format, path)));
        }
        for to in [
            "../outside/moved.txt",
            "link_dir/moved.txt",
            abs_new.as_str(),
        ] {
            patches.extend(rename(format, to));
        }
        for patch in patches {
            if let Err(e) = attempt(format, &patch) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A tree that swaps the file it is about to replace for a link out of
/// the root, as a concurrent process could between planning and writing.
fn swapping(root: &Path) -> Hooked<DiskTree> {
    let at = root.to_path_buf();
    Hooked::new(DiskTree::new(root).unwrap(), move |call, path| {
        if call == Call::Exchange {
            let file = at.join(path.as_str());
            fs::remove_file(&file).unwrap();
            symlink("../outside/outside.txt", &file).unwrap();
        }
        Then::Go
    })
}

#[test]
fn a_file_swapped_for_a_link_after_planning_is_not_written_through() {
    for format in [Format::Udiff, Format::Codex, Format::Repopatch, Format::Ap] {
        let base = workspace();
        let root = base.path().join("root").canonicalize().unwrap();
        let mut tree = swapping(&root);
        let outcome = run(
            modify(format, "inside.txt").as_str(),
            Some(format),
            Mode::Apply { dry_run: false },
            Some(&mut tree),
            Some(&root),
        );
        assert!(!outcome.ok(), "{format}: the write went through the link");
        // The link is not what was read: refused, nothing written.
        assert_eq!(outcome.diagnostics[0].code, Code::TargetChanged, "{format}");
        assert_eq!(
            fs::read_to_string(base.path().join("outside/outside.txt")).unwrap(),
            "old\n",
            "{format}: the file outside the root was written"
        );
        assert!(
            fs::symlink_metadata(root.join("inside.txt"))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{format}: the other process's link was replaced"
        );
    }
}

/// A target of 4 GiB or more is refused before it is read: a sparse file
/// of 5 GiB (one line, then a hole), patched in every format by the
/// binary under a 1 GiB limit on its address space. Read first, as it
/// was, the file took 5 GiB of memory where the system had it and ended
/// the process in an allocation failure (exit 134, no result) where it
/// did not.
#[test]
fn a_file_of_4_gib_is_refused_without_being_read() {
    for format in [Format::Udiff, Format::Codex, Format::Repopatch, Format::Ap] {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.txt");
        let file = fs::File::create(&big).unwrap();
        io::Write::write_all(&mut &file, b"old\n").unwrap();
        file.set_len(5 << 30).unwrap();
        drop(file);
        let patch = dir.path().join("p.patch");
        fs::write(&patch, modify(format, "big.txt")).unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" apply --json --root \"$1\" \"$2\"")
            .arg(env!("CARGO_BIN_EXE_grammar-patch"))
            .arg(dir.path())
            .arg(&patch)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        super::support::assert_valid_result(&result);
        let error = &result["error"];
        assert_eq!(result["ok"], false, "{format}: {result}");
        assert_eq!(error["code"], "unsupported_file", "{format}: {result}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("4 GiB or larger"),
            "{format}: {result}"
        );
        assert_eq!(fs::metadata(&big).unwrap().len(), 5 << 30, "{format}");
    }
}
