//! Carrying out a [`Plan`] so that a patch changes every file or none, also
//! when the process is killed.
//!
//! Each step first logs how to undo itself in the [`Journal`] (before the
//! step runs); on the first failing step the journal is undone newest
//! first, so the tree is left as it was. A process killed at any instant
//! leaves the journal for the next run's [`recover`](super::journal::recover).
//!
//! Nothing is written in place: new contents are staged beside their
//! target under a temporary name and swapped in, so the old inode (with
//! any other hard link to it, its owner and its mode) is kept aside,
//! whole, until the commit point, and a rollback swaps it back. A deleted
//! file is renamed aside beside itself; a renamed file is renamed, not
//! copied. Directories the patch empties are removed after the commit
//! point, with the originals kept aside.

use std::borrow::Cow;

use super::fs::{refusal, Refusal};
use super::journal::{Failed, Journal, Record};
use crate::apply::output::Output;
use crate::apply::planning::plan::{Change, Plan};
use crate::apply::tree::{Entry, FileTree, Ident};
use crate::error::{Code, Diagnostic};
use crate::paths::RelPath;

/// Writes the plan, or restores every step already taken and reports the
/// failure (and anything the rollback itself could not undo).
pub fn commit(plan: &Plan, tree: &mut dyn FileTree) -> Result<(), Box<Diagnostic>> {
    if plan
        .changes
        .iter()
        .all(|c| matches!(c, Change::Unchanged { .. }))
    {
        return Ok(());
    }
    let journal = Journal::begin(tree).map_err(|e| {
        Diagnostic::new(
            Code::IoError,
            format!("cannot start the rollback journal: {e}"),
        )
        .hint("nothing was changed; the journal lives in the state directory (GRAMMAR_PATCH_STATE_DIR, XDG_STATE_HOME or ~/.local/state): make it writable by you alone")
    })?;
    let mut cx = Cx {
        tree,
        journal,
        dirs: vec![],
    };
    let mut failure = None;
    let mut changes = plan.changes.iter().peekable();
    while let Some(change) = changes.next() {
        // A permission change right after a write of the same file is the
        // mode that file is written with.
        let mode = match (change, changes.peek()) {
            (
                Change::Write { path, .. } | Change::Move { to: path, .. },
                Some(Change::Chmod { path: p, to, .. }),
            ) if p == path => {
                changes.next();
                Some(*to)
            }
            _ => None,
        };
        if let Err(e) = cx.step(change, mode) {
            failure = Some(e);
            break;
        }
    }
    let Cx {
        tree,
        journal,
        dirs,
    } = cx;
    let (journal, (path, err)) = match failure {
        None => match journal.commit(tree, dirs) {
            Ok(()) => return Ok(()),
            // The commit point was not reached.
            Err((journal, e)) => (journal, (RelPath::new("journal").expect("a name"), e)),
        },
        Some(f) => (journal, f),
    };
    let rolled_back = journal.rollback(tree);
    Err(Box::new(failed_diagnostic(path, err, rolled_back.err())))
}

fn failed_diagnostic(path: RelPath, err: std::io::Error, failed: Option<Failed>) -> Diagnostic {
    let mut d = match refusal(&err) {
        Some(Refusal::Escapes) => Diagnostic::new(
            Code::PathEscape,
            format!("`{path}` passes through a symbolic link or leads outside the root"),
        )
        .hint("a directory on the way was replaced by a symbolic link while the patch was applied; nothing was changed"),
        Some(Refusal::Changed) => Diagnostic::new(
            Code::TargetChanged,
            format!("`{path}` was changed by another process while the patch was applied"),
        )
        .hint("nothing was changed; re-read the file and retry the patch against its new text"),
        Some(Refusal::Special) => Diagnostic::new(
            Code::UnsupportedFile,
            format!("`{path}` became a FIFO, socket or device while the patch was applied"),
        )
        .hint("nothing was changed; only regular files are patched"),
        _ => Diagnostic::new(Code::IoError, format!("writing `{path}` failed: {err}"))
            .hint("nothing was changed; fix the file system problem and apply the same patch again"),
    };
    d = d.path(path.as_str());
    if let Some(failed) = failed {
        let what = match failed {
            Failed::Conflict(c) => format!("`{}`: {}", c.path, c.why),
            Failed::Io(e) => e.to_string(),
        };
        d = d
            .note(format!("the rollback could not finish: {what}"))
            .hint(
            "the rollback stopped part-way; run `grammar-patch recover --root DIR` to finish it",
        );
    }
    d
}

type StepError = (RelPath, std::io::Error);

/// A commit under way: the tree, its journal, and the directories to
/// remove after the commit point if the patch left them empty.
struct Cx<'t> {
    tree: &'t mut dyn FileTree,
    journal: Journal,
    dirs: Vec<RelPath>,
}

fn at<T>(path: &RelPath, r: std::io::Result<T>) -> Result<T, StepError> {
    r.map_err(|e| (path.clone(), e))
}

impl Cx<'_> {
    fn log(&mut self, at_path: &RelPath, record: Record) -> Result<(), StepError> {
        at(at_path, self.journal.log(self.tree, record))
    }

    /// One change, as journaled steps. `mode`: a permission change folded
    /// into a write.
    fn step(&mut self, change: &Change<'_>, mode: Option<u32>) -> Result<(), StepError> {
        match change {
            Change::Create { path, output, mode } => {
                self.make_parents(path)?;
                let bytes = output.bytes();
                self.place_new(path, &bytes.slices(), *mode)?;
            }
            Change::Symlink { path, target } => {
                self.make_parents(path)?;
                let record = Record::Linked {
                    path: path.clone(),
                    target: target.clone(),
                };
                self.log(path, record)?;
                let done = self.tree.symlink(path, target);
                self.ran(path, done)?;
            }
            Change::Write {
                path,
                output,
                mode: kept,
            } => {
                let output = self.restore(path, output)?;
                let bytes = output.bytes();
                self.replace(path, &bytes.slices(), mode.unwrap_or(*kept))?;
            }
            Change::Chmod { path, to, .. } => {
                // A new inode with the new mode: another hard link to the
                // file keeps its own.
                let bytes = at(path, self.tree.read(path, u64::MAX))?;
                self.replace(path, &[&bytes], *to)?;
            }
            Change::Delete { path, .. } => {
                self.set_aside(path)?;
                self.dirs.extend(path.ancestors());
            }
            Change::Move {
                from,
                to,
                output,
                mode: kept,
            } => {
                self.make_parents(to)?;
                if output.is_unchanged() && mode.is_none() {
                    self.rename(from, to)?;
                } else {
                    let output = self.restore(from, output)?;
                    let bytes = output.bytes();
                    let chunks = bytes.slices();
                    self.place_new(to, &chunks, Some(mode.unwrap_or(*kept)))?;
                    self.set_aside(from)?;
                }
                self.dirs.extend(from.ancestors());
            }
            Change::CreateDir { path } => {
                // With its parents, where missing: an earlier change of
                // this commit may have made it, as a file's parent. Only a
                // directory is taken as made; anything else there fails
                // the `mkdir`.
                self.make_parents(path)?;
                if at(path, self.tree.entry(path))? != Entry::Dir {
                    self.make_dir(path)?;
                }
            }
            Change::RemoveTree { files, dirs, .. } => {
                for (path, ..) in files {
                    self.set_aside(path)?;
                }
                self.dirs.extend(dirs.iter().cloned());
            }
            Change::MoveTree { files, dirs, .. } => {
                for (from, to, ..) in files {
                    self.make_parents(to)?;
                    self.rename(from, to)?;
                }
                self.dirs.extend(dirs.iter().cloned());
            }
            Change::Unchanged { .. } => {}
        }
        Ok(())
    }

    /// `output` with its original text: read again where planning let it
    /// go ([`Output::restore`]), failing as changed where the file no
    /// longer holds the text it was planned over.
    fn restore<'o, 'p>(
        &mut self,
        path: &RelPath,
        output: &'o Output<'p>,
    ) -> Result<Cow<'o, Output<'p>>, StepError> {
        if !output.is_released() {
            return Ok(Cow::Borrowed(output));
        }
        let changed = || (path.clone(), super::fs::refused(Refusal::Changed));
        let bytes = match self.tree.read(path, crate::ir::TOO_LARGE) {
            Ok(bytes) => bytes,
            // Gone, or grown past what is read: not the text planned over.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(changed()),
            Err(e) if refusal(&e) == Some(Refusal::TooLarge) => return Err(changed()),
            Err(e) => return Err((path.clone(), e)),
        };
        output
            .restore(crate::lossless::decode(bytes))
            .ok_or_else(changed)
    }

    fn ident(&self, path: &RelPath) -> Result<Ident, StepError> {
        match at(path, self.tree.ident(path))? {
            Some(ident) => Ok(ident),
            None => Err((path.clone(), super::fs::refused(Refusal::Changed))),
        }
    }

    /// Stages a new file beside `path`; returns its temporary name and identity.
    fn stage(
        &mut self,
        path: &RelPath,
        chunks: &[&[u8]],
        mode: Option<u32>,
        owner: Option<(u32, u32)>,
    ) -> Result<(RelPath, Ident), StepError> {
        let tmp = self.journal.temp_beside(path);
        self.log(path, Record::Staged { tmp: tmp.clone() })?;
        let new = at(path, self.tree.stage(&tmp, chunks, mode, owner))?;
        Ok((tmp, new))
    }

    /// A new file at `path`, where nothing is.
    fn place_new(
        &mut self,
        path: &RelPath,
        chunks: &[&[u8]],
        mode: Option<u32>,
    ) -> Result<(), StepError> {
        let (tmp, new) = self.stage(path, chunks, mode, None)?;
        let record = Record::Moved {
            from: tmp.clone(),
            to: path.clone(),
            ident: new,
        };
        self.log(path, record)?;
        let done = self.tree.rename(&tmp, path);
        self.ran(path, done)
    }

    /// New contents for the file at `path`, in a new inode with its owner
    /// and `mode`; the old one is kept aside until the commit point.
    fn replace(&mut self, path: &RelPath, chunks: &[&[u8]], mode: u32) -> Result<(), StepError> {
        let old = self.ident(path)?;
        let (tmp, new) = self.stage(path, chunks, Some(mode), Some((old.uid, old.gid)))?;
        let record = Record::Swapped {
            path: path.clone(),
            tmp: tmp.clone(),
            old,
            new,
        };
        self.log(path, record)?;
        match self.tree.exchange(&tmp, path) {
            Ok(()) => self.verify_moved(&tmp, path, &old, |t| t.exchange(&tmp, path)),
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                // Two renames where the file system cannot swap.
                self.set_aside(path)?;
                let record = Record::Moved {
                    from: tmp.clone(),
                    to: path.clone(),
                    ident: new,
                };
                self.log(path, record)?;
                let done = self.tree.rename(&tmp, path);
                self.ran(path, done)
            }
            Err(e) => self.ran(path, Err(e)),
        }
    }

    /// Renames the file at `path` aside, beside itself.
    fn set_aside(&mut self, path: &RelPath) -> Result<(), StepError> {
        let ident = self.ident(path)?;
        let aside = self.journal.temp_beside(path);
        let record = Record::Moved {
            from: path.clone(),
            to: aside.clone(),
            ident,
        };
        self.log(path, record)?;
        let done = self.tree.rename(path, &aside);
        self.ran(path, done)?;
        self.verify_moved(&aside, path, &ident, |t| t.rename(&aside, path))
    }

    fn rename(&mut self, from: &RelPath, to: &RelPath) -> Result<(), StepError> {
        let ident = self.ident(from)?;
        let record = Record::Moved {
            from: from.clone(),
            to: to.clone(),
            ident,
        };
        self.log(to, record)?;
        let done = self.tree.rename(from, to);
        self.ran(to, done)?;
        self.verify_moved(to, from, &ident, |t| t.rename(to, from))
    }

    /// After a step moved `want` to `now`: if another process slipped
    /// something else in between our check and the step, takes the step
    /// back and fails it as `target_changed`.
    fn verify_moved(
        &mut self,
        now: &RelPath,
        path: &RelPath,
        want: &Ident,
        back: impl FnOnce(&mut dyn FileTree) -> std::io::Result<()>,
    ) -> Result<(), StepError> {
        match at(path, self.tree.ident(now))? {
            Some(found) if found.same(want) => Ok(()),
            _ => {
                at(path, back(self.tree))?;
                Err((path.clone(), super::fs::refused(Refusal::Changed)))
            }
        }
    }

    fn make_dir(&mut self, path: &RelPath) -> Result<(), StepError> {
        self.log(path, Record::MadeDir { path: path.clone() })?;
        let done = self.tree.create_dir(path);
        self.ran(path, done)
    }

    /// The outcome of the step the record logged last announced. Each
    /// such step is one system call: one that failed did nothing, so its
    /// record is marked as never run, and no rollback undoes what it
    /// names, which is not the apply's (a directory or file another
    /// process put there since the plan, which the rollback would refuse
    /// to touch and stop at). Where the mark cannot be written, the commit
    /// fails all the same.
    fn ran<T>(&mut self, path: &RelPath, done: std::io::Result<T>) -> Result<T, StepError> {
        if done.is_err() {
            let _ = self.journal.never_ran(self.tree);
        }
        at(path, done)
    }

    fn make_parents(&mut self, path: &RelPath) -> Result<(), StepError> {
        for dir in path.ancestors() {
            if at(&dir, self.tree.entry(&dir))? == Entry::Missing {
                self.make_dir(&dir)?;
            }
        }
        Ok(())
    }
}
