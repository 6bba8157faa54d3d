//! Carrying out a [`Plan`] so that a patch changes every file or none, also
//! when the process is killed.
//!
//! Each step first logs how to undo itself in the [`Journal`] (on disk,
//! before the step runs); on the first failing step the journal is undone
//! newest first, so the tree is left as it was. A process killed at any
//! instant leaves the journal for the next run's [`recover`](super::journal::recover).
//!
//! The steps keep what a file is: a file is written in place when it has
//! one link; a hard-linked one is moved into the journal's stash (the other
//! links keep the old inode and bytes) and a new file takes its name. A
//! deleted file is moved into the stash too, so a rollback brings back the
//! same inode, owner and mode; a renamed file is renamed, not copied.

use std::borrow::Cow;

use super::fs::{refusal, Refusal};
use super::journal::{self, Journal, Undo};
use super::plan::{Change, Plan, LINK_MODE};
use super::tree::{Entry, FileTree};
use crate::error::{Code, Diagnostic};
use crate::lossless;
use crate::paths::RelPath;

/// Writes the plan, or restores every step already taken and reports the
/// failure (and any step the rollback itself could not undo).
pub fn commit(plan: &Plan, tree: &mut dyn FileTree) -> Result<(), Box<Diagnostic>> {
    if plan
        .changes
        .iter()
        .all(|c| matches!(c, Change::Unchanged { .. }))
    {
        return Ok(());
    }
    let mut journal = Journal::begin(tree).map_err(|e| {
        Diagnostic::new(
            Code::IoError,
            format!("cannot start the rollback journal: {e}"),
        )
        .hint("nothing was changed; check that the root is writable")
    })?;
    let mut failure = None;
    for change in &plan.changes {
        if let Err(e) = step(change, tree, &mut journal) {
            failure = Some(e);
            break;
        }
    }
    let (journal, (path, err)) = match failure {
        None => match journal.finish(tree) {
            Ok(()) => return Ok(()),
            // The log is still there: the commit point was not reached.
            Err((journal, e)) => (journal, (journal_log(), e)),
        },
        Some(f) => (journal, f),
    };
    let failed = journal.rollback(tree);
    Err(Box::new(failed_diagnostic(path, err, failed)))
}

fn journal_log() -> RelPath {
    RelPath::new(journal::LOG).expect("a valid path")
}

fn failed_diagnostic(path: RelPath, err: std::io::Error, failed: Vec<String>) -> Diagnostic {
    let mut d = match refusal(&err) {
        Some(Refusal::Escapes) => Diagnostic::new(
            Code::PathEscape,
            format!("`{path}` leads outside the root"),
        )
        .hint("a directory on the way was replaced by a symbolic link while the patch was applied; nothing was changed"),
        Some(Refusal::Changed) => Diagnostic::new(
            Code::TargetChanged,
            format!("`{path}` was changed by another process while the patch was applied"),
        )
        .hint("nothing was changed; re-read the file and retry the patch against its new text"),
        _ => Diagnostic::new(Code::IoError, format!("writing `{path}` failed: {err}"))
            .hint("nothing was changed; fix the file system problem and apply the same patch again"),
    };
    d = d.path(path.as_str());
    if !failed.is_empty() {
        d = d
            .note(format!(
                "the rollback could not restore: {}",
                failed.join(", ")
            ))
            .hint(
                "the rollback failed part-way; run `grammar-patch recover --root DIR` to finish it",
            );
    }
    d
}

type StepError = (RelPath, std::io::Error);

/// Logs `undo`, then runs `act`. A failed `act` changed nothing, so its
/// record is cancelled; except a write in place, which can fail half-way
/// (a full disk) and is restored like any other step.
fn logged<'p>(
    journal: &mut Journal<'p>,
    tree: &mut dyn FileTree,
    at: &RelPath,
    undo: Undo<'p>,
    act: impl FnOnce(&mut dyn FileTree) -> std::io::Result<()>,
) -> Result<(), StepError> {
    let partial = matches!(undo, Undo::Restore { .. });
    journal.log(tree, undo).map_err(|e| (at.clone(), e))?;
    act(tree).map_err(|e| {
        // A refusal comes before the first byte is written.
        if !partial || refusal(&e).is_some() {
            journal.cancel(tree);
        }
        (at.clone(), e)
    })
}

/// One change, as journaled steps: each arm is one kind of [`Change`] and
/// logs its undo before it acts. One match rather than a function per kind
/// keeps every write next to the undo record it needs (a long function by
/// choice: the arms share no code beyond the journal calls).
fn step<'p>(
    change: &'p Change<'_>,
    tree: &mut dyn FileTree,
    journal: &mut Journal<'p>,
) -> Result<(), StepError> {
    match change {
        Change::Create { path, output, mode } => {
            let bytes = output.bytes();
            let chunks = bytes.slices();
            let undo = Undo::Remove { path: path.clone() };
            created(path, undo, tree, journal, |t| {
                t.create(path, &chunks, *mode)
            })?;
        }
        Change::Symlink { path, target } => {
            let undo = Undo::Remove { path: path.clone() };
            created(path, undo, tree, journal, |t| t.symlink(path, target))?;
        }
        Change::Chmod { path, from, to } => {
            let undo = Undo::Chmod {
                path: path.clone(),
                mode: *from,
            };
            logged(journal, tree, path, undo, |t| t.set_mode(path, *to))?;
        }
        Change::Write { path, output, mode } => {
            let original = output.original_bytes();
            let bytes = output.bytes();
            let chunks = bytes.slices();
            let undo = Undo::Restore {
                path: path.clone(),
                bytes: original.clone(),
                mode: *mode,
            };
            // The tree refuses to write a hard-linked file in place (before
            // writing a byte); it then gets a new inode instead.
            match logged(journal, tree, path, undo, |t| t.write(path, &chunks)) {
                Err((_, e)) if refusal(&e) == Some(Refusal::Linked) => {
                    replace_linked(path, original, *mode, &chunks, tree, journal)?
                }
                other => other?,
            }
        }
        Change::Delete {
            path,
            original,
            mode,
        } => {
            stash(path, lossless::encode(original), *mode, tree, journal)?;
            prune_empty_parents(path, tree, journal)?;
        }
        Change::Move {
            from,
            to,
            output,
            mode,
        } => {
            make_parents(to, tree, journal)?;
            let original = output.original_bytes();
            let bytes = output.bytes();
            let chunks = bytes.slices();
            if links(tree, from)? > 1 {
                // The other links keep the old inode and its bytes.
                logged(journal, tree, to, Undo::Remove { path: to.clone() }, |t| {
                    t.create(to, &chunks, Some(*mode))
                })?;
                stash(from, original, *mode, tree, journal)?;
            } else {
                let undo = Undo::Unrename {
                    from: from.clone(),
                    to: to.clone(),
                };
                logged(journal, tree, to, undo, |t| t.rename(from, to))?;
                if !same_bytes(&original, &chunks) {
                    let undo = Undo::Restore {
                        path: to.clone(),
                        bytes: original,
                        mode: *mode,
                    };
                    logged(journal, tree, to, undo, |t| t.write(to, &chunks))?;
                }
            }
            prune_empty_parents(from, tree, journal)?;
        }
        Change::CreateDir { path } => {
            let undo = Undo::RemoveDir { path: path.clone() };
            created(path, undo, tree, journal, |t| t.create_dir(path))?;
        }
        Change::RemoveTree { files, dirs, .. } => {
            for (path, original, mode) in files {
                stash(path, lossless::encode(original), *mode, tree, journal)?;
            }
            remove_dirs(dirs, tree, journal)?;
        }
        Change::MoveTree { files, dirs, .. } => {
            for (from, to, _, _) in files {
                make_parents(to, tree, journal)?;
                let undo = Undo::Unrename {
                    from: from.clone(),
                    to: to.clone(),
                };
                logged(journal, tree, to, undo, |t| t.rename(from, to))?;
            }
            remove_dirs(dirs, tree, journal)?;
        }
        Change::Unchanged { .. } => {}
    }
    Ok(())
}

fn same_bytes(original: &[u8], chunks: &[&[u8]]) -> bool {
    chunks.iter().map(|c| c.len()).sum::<usize>() == original.len() && chunks.concat() == original
}

fn links(tree: &dyn FileTree, path: &RelPath) -> Result<u64, StepError> {
    tree.links(path).map_err(|e| (path.clone(), e))
}

/// Moves a file into the journal's stash (same inode back on rollback);
/// across file systems, where it cannot move, removes it and keeps its bytes.
fn stash<'p>(
    path: &RelPath,
    original: Cow<'p, [u8]>,
    mode: u32,
    tree: &mut dyn FileTree,
    journal: &mut Journal<'p>,
) -> Result<(), StepError> {
    let aside = journal.stash_path(tree).map_err(|e| (path.clone(), e))?;
    let undo = Undo::Unrename {
        from: path.clone(),
        to: aside.clone(),
    };
    match logged(journal, tree, path, undo, |t| t.rename(path, &aside)) {
        // A link's target is not bytes a file can be recreated from.
        Err((_, e)) if e.kind() == std::io::ErrorKind::CrossesDevices && mode != LINK_MODE => {
            let undo = Undo::Recreate {
                path: path.clone(),
                bytes: original,
                mode,
            };
            logged(journal, tree, path, undo, |t| t.remove(path))
        }
        other => other,
    }
}

/// A hard-linked file gets a new inode under its name; the old one, with
/// every other link, keeps its bytes.
fn replace_linked<'p>(
    path: &RelPath,
    original: Cow<'p, [u8]>,
    mode: u32,
    chunks: &[&[u8]],
    tree: &mut dyn FileTree,
    journal: &mut Journal<'p>,
) -> Result<(), StepError> {
    stash(path, original, mode, tree, journal)?;
    logged(
        journal,
        tree,
        path,
        Undo::Remove { path: path.clone() },
        |t| t.create(path, chunks, Some(mode)),
    )
}

/// Removes emptied directories, innermost first.
fn remove_dirs<'p>(
    dirs: &[RelPath],
    tree: &mut dyn FileTree,
    journal: &mut Journal<'p>,
) -> Result<(), StepError> {
    for dir in dirs {
        logged(
            journal,
            tree,
            dir,
            Undo::CreateDir { path: dir.clone() },
            |t| t.remove_dir(dir),
        )?;
    }
    Ok(())
}

/// Makes something new at `path`, its missing parents first; `undo`
/// removes it.
fn created<'p>(
    path: &RelPath,
    undo: Undo<'p>,
    tree: &mut dyn FileTree,
    journal: &mut Journal<'p>,
    act: impl FnOnce(&mut dyn FileTree) -> std::io::Result<()>,
) -> Result<(), StepError> {
    make_parents(path, tree, journal)?;
    logged(journal, tree, path, undo, act)
}

fn make_parents<'p>(
    path: &RelPath,
    tree: &mut dyn FileTree,
    journal: &mut Journal<'p>,
) -> Result<(), StepError> {
    for dir in path.ancestors() {
        if tree.entry(&dir).map_err(|e| (dir.clone(), e))? == Entry::Missing {
            let undo = Undo::RemoveDir { path: dir.clone() };
            logged(journal, tree, &dir, undo, |t| t.create_dir(&dir))?;
        }
    }
    Ok(())
}

/// Removes the directories that removing `path` left empty, innermost
/// first, as git does (it cannot keep an empty directory either). Stops at
/// the first that is not empty, or is a link to a directory.
fn prune_empty_parents<'p>(
    path: &RelPath,
    tree: &mut dyn FileTree,
    journal: &mut Journal<'p>,
) -> Result<(), StepError> {
    for dir in path.ancestors().into_iter().rev() {
        if tree.entry(&dir).map_err(|e| (dir.clone(), e))? != Entry::Dir {
            break;
        }
        let undo = Undo::CreateDir { path: dir.clone() };
        match logged(journal, tree, &dir, undo, |t| t.remove_dir(&dir)) {
            Ok(()) => {}
            Err((_, e)) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => break,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
