//! Carrying out a [`Plan`] so that a patch changes every file or none.
//!
//! Each step through the [`FileTree`] first records how to undo itself; on
//! the first failing step the journal is replayed backwards, so the tree is
//! left as it was. A write in place records the original bytes *before* it
//! starts, because a write can fail half-way; a creation records its undo
//! only once it succeeded, because a failed creation leaves nothing (and
//! undoing it could delete a file someone else made).
//!
//! What this does not cover: a crash or `SIGKILL` between two steps leaves
//! the steps done so far, as it would with per-file temp-and-rename.

use super::plan::{Change, Plan};
use super::tree::{Entry, FileTree};
use crate::error::{Code, Diagnostic};
use crate::paths::RelPath;

/// How to take back one step; originals are borrowed from the plan.
enum Undo<'p> {
    Restore(&'p RelPath, &'p [u8]),
    Remove(RelPath),
    Recreate(&'p RelPath, &'p [u8], u32),
    RemoveDir(RelPath),
    CreateDir(RelPath),
}

/// Writes the plan, or restores every step already taken and reports the
/// failure (and any step the rollback itself could not undo).
pub fn commit(plan: &Plan, tree: &mut dyn FileTree) -> Result<(), Diagnostic> {
    let mut journal = vec![];
    for change in &plan.changes {
        if let Err((path, err)) = step(change, tree, &mut journal) {
            let failed_rollback = rollback(journal, tree);
            let mut d = Diagnostic::new(Code::IoError, format!("writing `{path}` failed: {err}"))
                .path(path.as_str())
                .hint("nothing was changed; fix the file system problem and apply the same patch again");
            if !failed_rollback.is_empty() {
                d = d
                    .note(format!("the rollback could not restore: {}", failed_rollback.join(", ")))
                    .hint("the rollback failed part-way; restore the listed files from version control");
            }
            return Err(d);
        }
    }
    Ok(())
}

type StepError = (RelPath, std::io::Error);

fn step<'p>(
    change: &'p Change<'_>,
    tree: &mut dyn FileTree,
    journal: &mut Vec<Undo<'p>>,
) -> Result<(), StepError> {
    let at = |path: &RelPath| {
        let path = path.clone();
        move |e| (path, e)
    };
    match change {
        Change::Create { path, output } => {
            make_parents(path, tree, journal)?;
            tree.create(path, &output.chunks(), None)
                .map_err(at(path))?;
            journal.push(Undo::Remove(path.clone()));
        }
        Change::Write { path, output } => {
            journal.push(Undo::Restore(path, output.original.as_bytes()));
            tree.write(path, &output.chunks()).map_err(at(path))?;
        }
        Change::Delete {
            path,
            original,
            mode,
        } => {
            tree.remove(path).map_err(at(path))?;
            journal.push(Undo::Recreate(path, original.as_bytes(), *mode));
            prune_empty_parents(path, tree, journal)?;
        }
        Change::Move {
            from,
            to,
            output,
            mode,
        } => {
            make_parents(to, tree, journal)?;
            tree.create(to, &output.chunks(), Some(*mode))
                .map_err(at(to))?;
            journal.push(Undo::Remove(to.clone()));
            tree.remove(from).map_err(at(from))?;
            journal.push(Undo::Recreate(from, output.original.as_bytes(), *mode));
            prune_empty_parents(from, tree, journal)?;
        }
        Change::CreateDir { path } => {
            make_parents(path, tree, journal)?;
            tree.create_dir(path).map_err(at(path))?;
            journal.push(Undo::RemoveDir(path.clone()));
        }
        Change::RemoveTree { files, dirs, .. } => {
            for (path, original, mode) in files {
                tree.remove(path).map_err(at(path))?;
                journal.push(Undo::Recreate(path, original.as_bytes(), *mode));
            }
            remove_dirs(dirs, tree, journal)?;
        }
        Change::MoveTree { files, dirs, .. } => {
            for (from, to, text, mode) in files {
                make_parents(to, tree, journal)?;
                tree.create(to, &[text.as_bytes()], Some(*mode))
                    .map_err(at(to))?;
                journal.push(Undo::Remove(to.clone()));
                tree.remove(from).map_err(at(from))?;
                journal.push(Undo::Recreate(from, text.as_bytes(), *mode));
            }
            remove_dirs(dirs, tree, journal)?;
        }
        Change::Unchanged { .. } => {}
    }
    Ok(())
}

/// Removes emptied directories, innermost first.
fn remove_dirs(
    dirs: &[RelPath],
    tree: &mut dyn FileTree,
    journal: &mut Vec<Undo<'_>>,
) -> Result<(), StepError> {
    for dir in dirs {
        tree.remove_dir(dir).map_err(|e| (dir.clone(), e))?;
        journal.push(Undo::CreateDir(dir.clone()));
    }
    Ok(())
}

fn make_parents(
    path: &RelPath,
    tree: &mut dyn FileTree,
    journal: &mut Vec<Undo<'_>>,
) -> Result<(), StepError> {
    for dir in path.ancestors() {
        if tree.entry(&dir).map_err(|e| (dir.clone(), e))? == Entry::Missing {
            tree.create_dir(&dir).map_err(|e| (dir.clone(), e))?;
            journal.push(Undo::RemoveDir(dir));
        }
    }
    Ok(())
}

/// Removes the directories that removing `path` left empty, innermost
/// first, as git does (it cannot keep an empty directory either).
fn prune_empty_parents(
    path: &RelPath,
    tree: &mut dyn FileTree,
    journal: &mut Vec<Undo<'_>>,
) -> Result<(), StepError> {
    for dir in path.ancestors().into_iter().rev() {
        match tree.remove_dir(&dir) {
            Ok(()) => journal.push(Undo::CreateDir(dir)),
            Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => break,
            Err(e) => return Err((dir, e)),
        }
    }
    Ok(())
}

/// Undoes the journal, newest first; returns the paths it could not restore.
fn rollback(journal: Vec<Undo>, tree: &mut dyn FileTree) -> Vec<String> {
    let mut failed = vec![];
    for undo in journal.into_iter().rev() {
        let (path, result) = match undo {
            Undo::Restore(path, bytes) => {
                let r = tree.write(path, &[bytes]);
                (path.clone(), r)
            }
            Undo::Remove(path) => {
                let r = tree.remove(&path);
                (path, r)
            }
            Undo::Recreate(path, bytes, mode) => {
                let r = tree.create(path, &[bytes], Some(mode));
                (path.clone(), r)
            }
            Undo::RemoveDir(path) => {
                let r = tree.remove_dir(&path);
                (path, r)
            }
            Undo::CreateDir(path) => {
                let r = tree.create_dir(&path);
                (path, r)
            }
        };
        if let Err(e) = result {
            failed.push(format!("{path} ({e})"));
        }
    }
    failed
}
