//! Planning: every file op is read, located and rewritten in memory, and
//! every problem in every file is collected, before anything is written.
//! Nothing here writes; `commit.rs` carries out a finished [`Plan`].
//!
//! This file holds the plan's types, the loop over file ops and what every
//! operation needs (resolving a path, reading a file, reporting); the
//! operations are in `op.rs` (files) and `dirs.rs` (ap's directories),
//! the edits of one file in `edit.rs`.

use crate::lossless::Decoded;
use std::path::Path;

use super::repeated::Touched;
use crate::apply::output::Output;
use crate::apply::tree::{Entry, FileTree};
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{FileOp, Patch, PathRef, Policy};
use crate::paths::RelPath;
use crate::validate::check_path;
use crate::FileAction;

/// A target is refused by its size before it is read, and its text again
/// after decoding, which may lengthen it.
use crate::ir::TOO_LARGE;

/// A file of a directory tree: its path, text and mode.
pub type TreeFile = (RelPath, String, u32);

/// What the commit does to one path. Originals are kept for the rollback;
/// new contents are pieces of the original and of the patch text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change<'p> {
    Create {
        path: RelPath,
        output: Output<'p>,
        /// Permission bits (`new file mode 100755`); `None`: the default.
        mode: Option<u32>,
    },
    /// A symbolic link (`new file mode 120000`) whose target stays inside
    /// the root.
    Symlink {
        path: RelPath,
        target: String,
    },
    /// New permission bits for the file a change before it left at `path`
    /// (git's `new mode`).
    Chmod {
        path: RelPath,
        from: u32,
        to: u32,
    },
    Write {
        path: RelPath,
        output: Output<'p>,
        /// The file's mode as planned (kept; restored with the bytes).
        mode: u32,
    },
    Delete {
        path: RelPath,
        original: String,
        mode: u32,
    },
    Move {
        from: RelPath,
        to: RelPath,
        output: Output<'p>,
        mode: u32,
    },
    CreateDir {
        path: RelPath,
    },
    Unchanged {
        path: RelPath,
    },
    /// A directory and everything in it (ap `DELETE` of a directory):
    /// files with their text and mode, then directories, innermost first.
    RemoveTree {
        path: RelPath,
        files: Vec<TreeFile>,
        dirs: Vec<RelPath>,
    },
    /// A directory moved (ap `RENAME`): each file from, to, text, mode;
    /// then the source directories, innermost first.
    MoveTree {
        from: RelPath,
        to: RelPath,
        files: Vec<(RelPath, RelPath, String, u32)>,
        dirs: Vec<RelPath>,
    },
}

impl Change<'_> {
    /// What the change does to its path.
    pub fn action(&self) -> FileAction {
        match self {
            Change::Create { .. } | Change::Symlink { .. } => FileAction::Added,
            Change::Write { .. } | Change::Chmod { .. } => FileAction::Modified,
            Change::Delete { .. } | Change::RemoveTree { .. } => FileAction::Deleted,
            Change::Move { .. } | Change::MoveTree { .. } => FileAction::Renamed,
            Change::CreateDir { .. } => FileAction::DirCreated,
            Change::Unchanged { .. } => FileAction::Unchanged,
        }
    }

    /// The path the change leaves behind (the destination of a move).
    pub fn path(&self) -> &RelPath {
        match self {
            Change::Create { path, .. }
            | Change::Symlink { path, .. }
            | Change::Chmod { path, .. }
            | Change::Write { path, .. }
            | Change::Delete { path, .. }
            | Change::CreateDir { path }
            | Change::Unchanged { path }
            | Change::RemoveTree { path, .. } => path,
            Change::Move { to, .. } | Change::MoveTree { to, .. } => to,
        }
    }

    /// Lines added and removed (`--numstat`): a symbolic link's target is
    /// one line, as git counts it; a permission change, a directory made
    /// or moved and an unchanged file change none.
    pub fn counts(&self) -> (usize, usize) {
        use crate::apply::output::line_count;
        match self {
            Change::Create { output, .. } => (output.line_count(), 0),
            Change::Symlink { .. } => (1, 0),
            Change::Write { output, .. } | Change::Move { output, .. } => output.counts(),
            Change::Delete { original, .. } => (0, line_count(original)),
            Change::RemoveTree { files, .. } => {
                (0, files.iter().map(|(_, text, _)| line_count(text)).sum())
            }
            Change::Chmod { .. }
            | Change::CreateDir { .. }
            | Change::Unchanged { .. }
            | Change::MoveTree { .. } => (0, 0),
        }
    }

    pub fn from(&self) -> Option<&RelPath> {
        match self {
            Change::Move { from, .. } | Change::MoveTree { from, .. } => Some(from),
            _ => None,
        }
    }
}

/// Everything the commit will do, and the warnings found on the way.
#[derive(Debug, Default)]
pub struct Plan<'p> {
    pub changes: Vec<Change<'p>>,
    pub warnings: Vec<Diagnostic>,
}

impl Plan<'_> {
    /// How many pieces the results walk to count the changed files'
    /// lines ([`Change::counts`]): their work follows it.
    pub fn pieces_to_count(&self) -> usize {
        (self.changes.iter())
            .map(|c| match c {
                Change::Write { output, .. } | Change::Move { output, .. } => {
                    output.pieces_to_count()
                }
                _ => 0,
            })
            .sum()
    }
}

/// Whether planning keeps every file's original text to the end, or lets
/// each go once the next file is planned (see [`Output::release`]): the
/// commit then reads it again, and a review or a conversion, which show
/// the originals, cannot be made from the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Originals {
    Keep,
    Release,
}

/// Plans `patch` against `tree`. `root` is the canonical root (for absolute
/// paths). Returns every error in every file, or the plan, which keeps
/// every original (for the tests that plan and commit in two steps).
#[cfg(any(test, feature = "internals"))]
pub fn plan<'p>(
    patch: &'p Patch<'_>,
    tree: &dyn FileTree,
    root: Option<&Path>,
) -> Result<Plan<'p>, Vec<Diagnostic>> {
    plan_with(patch, tree, root, Originals::Keep)
}

/// [`plan`], letting originals go as `originals` says.
pub fn plan_with<'p>(
    patch: &'p Patch<'_>,
    tree: &dyn FileTree,
    root: Option<&Path>,
    originals: Originals,
) -> Result<Plan<'p>, Vec<Diagnostic>> {
    let mut plan = Plan {
        changes: Vec::with_capacity(patch.files.len()),
        warnings: vec![],
    };
    let mut errors = vec![];
    let mut touched = Touched::default();
    let mut made_links = vec![];
    let alone = match originals {
        Originals::Keep => vec![false; patch.files.len()],
        Originals::Release => super::release::alone(&patch.files, root),
    };
    // The changes of the last file planned whose original may go once the
    // next one is planned: the last file's is kept (a patch of one file
    // gains nothing by reading it twice).
    let mut previous: Option<std::ops::Range<usize>> = None;
    for (i, op) in patch.files.iter().enumerate() {
        for change in previous
            .take()
            .map_or(&mut [][..], |r| &mut plan.changes[r])
        {
            if let Change::Write { output, .. } | Change::Move { output, .. } = change {
                output.release();
            }
        }
        let first = plan.changes.len();
        let mut cx = OpCx {
            made_links: &made_links,
            tree,
            source: patch.source,
            root,
            policy: &patch.policy,
            warnings: &mut plan.warnings,
            errors: &mut errors,
            touched: patch.policy.repeated_paths.then_some(&touched),
            changes: &plan.changes,
        };
        let before = cx.errors.len();
        let Ok(change) = cx.op(op) else {
            cx.after_earlier_blocks(op, before);
            continue;
        };
        let changes = match cx.chmod(op, &change) {
            // A mode-only change.
            Some(chmod) if matches!(change, Change::Unchanged { .. }) => vec![chmod],
            chmod => std::iter::once(change).chain(chmod).collect(),
        };
        for change in changes {
            if let Change::Symlink { path, .. } = &change {
                made_links.push(path.clone());
            }
            if !patch.policy.repeated_paths {
                plan.changes.push(change);
            } else if let Err(d) = plan.add(change, &mut touched, op.span) {
                errors.push(*d);
            }
        }
        if alone[i] && plan.changes.len() > first {
            previous = Some(first..plan.changes.len());
        }
    }
    if errors.is_empty() {
        errors = super::links::check_made_links(&plan, tree, root);
    }
    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
    }
}

/// A planning step's result.
pub type Step<T> = Result<T, Reported>;

/// One file op being planned: the tree, the format's policy, and where
/// warnings and errors go.
pub struct OpCx<'a, 's> {
    pub tree: &'a dyn FileTree,
    /// The patch text, where the lines' spans are found.
    pub source: &'s str,
    pub policy: &'a Policy,
    pub root: Option<&'a Path>,
    pub warnings: &'a mut Vec<Diagnostic>,
    pub errors: &'a mut Vec<Diagnostic>,
    /// What earlier blocks left at the paths they touched, where the
    /// format lets a path be named again.
    pub touched: Option<&'a Touched>,
    /// The changes planned so far.
    pub changes: &'a [Change<'a>],
    /// The symbolic links they make.
    pub made_links: &'a [RelPath],
}

impl<'s> OpCx<'_, 's> {
    /// Reports `d` as an error.
    pub fn fail<T>(&mut self, d: Diagnostic) -> Step<T> {
        self.errors.push(d);
        Err(Reported)
    }

    pub fn io_error<T>(&mut self, path: &PathRef, err: std::io::Error) -> Step<T> {
        match crate::apply::writing::fs::refusal(&err) {
            Some(crate::apply::writing::fs::Refusal::Escapes) => {
                return self.fail(
                    Diagnostic::new(
                        Code::PathEscape,
                        format!("`{}` passes through a symbolic link", path.text),
                    )
                    .at(path.span, "beyond a symbolic link")
                    .path(path.text.as_str())
                    .hint("patch files by their real path; a patch never writes through a link"),
                )
            }
            Some(crate::apply::writing::fs::Refusal::Special) => {
                return self.fail(
                    Diagnostic::new(
                        Code::UnsupportedFile,
                        format!("`{}` is not a regular file", path.text),
                    )
                    .at(path.span, "only regular text files can be patched")
                    .path(path.text.as_str())
                    .hint("patch the regular file itself"),
                )
            }
            Some(crate::apply::writing::fs::Refusal::Changed) => {
                return self.fail(
                    Diagnostic::new(
                        Code::TargetChanged,
                        format!("`{}` changed while it was read", path.text),
                    )
                    .at(path.span, "changed by another process")
                    .path(path.text.as_str())
                    .hint("nothing was changed; apply the patch again"),
                )
            }
            _ => {}
        }
        self.fail(
            Diagnostic::new(Code::IoError, format!("`{}`: {err}", path.text))
                .at(path.span, "could not be read")
                .path(path.text.as_str()),
        )
    }

    /// Resolves a path and checks that no directory on its way is a
    /// symbolic link (`links.rs`).
    pub fn resolve(&mut self, path: &PathRef) -> Step<RelPath> {
        let rel = match check_path(path, self.root) {
            Ok(rel) => rel,
            Err(d) => return self.fail(*d),
        };
        self.through_no_link(path, &rel)?;
        Ok(rel)
    }

    pub fn entry(&mut self, path: &PathRef, rel: &RelPath) -> Step<Entry> {
        if let Some(entry) = self.touched(path, rel)? {
            return Ok(entry);
        }
        match self.tree.entry(rel) {
            Ok(e) => Ok(e),
            Err(e) => self.io_error(path, e),
        }
    }

    /// Where a missing file is one directory off: the same path without
    /// its first directory exists (the patch was made one level up), as a
    /// hint naming it.
    fn level_off(&self, rel: &RelPath) -> Option<String> {
        let (first, rest) = rel.as_str().split_once('/')?;
        let file = RelPath::new(rest)?;
        matches!(self.tree.entry(&file), Ok(Entry::File { .. })).then(|| {
            format!(
                "`{rest}` exists: the patch's paths carry one directory more than this root \
                 (`{first}/`); take it off (`patch -p` counts one more) or apply from the \
                 directory above"
            )
        })
    }

    /// Reads a regular file as text (bytes that are not UTF-8 carried
    /// along), with whether it was found plain (`lossless::Decoded`); the
    /// text an earlier block left is not known to be.
    pub fn read_text(&mut self, path: &PathRef, rel: &RelPath, entry: Entry) -> Step<Decoded> {
        match entry {
            Entry::File { .. } => {}
            Entry::Missing => {
                let hint = self.level_off(rel).unwrap_or_else(|| {
                    format!(
                        "check the path (it is relative to the root), or {}",
                        self.policy.advice.create
                    )
                });
                return self.fail(
                    Diagnostic::new(Code::FileNotFound, format!("`{rel}` does not exist"))
                        .at(path.span, "no such file under the root")
                        .path(rel.as_str())
                        .hint(hint),
                );
            }
            Entry::Symlink if self.link_leaves(rel) => {
                return self.fail(
                    Diagnostic::new(
                        Code::PathEscape,
                        format!("`{rel}` is a symbolic link that leads outside the root"),
                    )
                    .at(path.span, "a link out of the root")
                    .path(rel.as_str())
                    .hint("patch files inside the root only; a patch never writes through a link"),
                )
            }
            other => {
                let what = match other {
                    Entry::Dir => "a directory",
                    Entry::Symlink => "a symbolic link",
                    _ => "not a regular file",
                };
                return self.fail(
                    Diagnostic::new(Code::UnsupportedFile, format!("`{rel}` is {what}"))
                        .at(path.span, "only regular text files can be patched")
                        .path(rel.as_str())
                        .hint("patch the regular file itself"),
                );
            }
        }
        if let Some(text) = self.touched_text(rel) {
            return Ok(Decoded {
                text,
                plain: false,
                lines: None,
            });
        }
        let too_large = |rel: &RelPath| {
            Diagnostic::new(Code::UnsupportedFile, format!("`{rel}` is 4 GiB or larger"))
                .at(path.span, "too large to patch")
                .path(rel.as_str())
        };
        // Bytes that are not UTF-8 are carried along (see `lossless`).
        let text = match self.tree.read_text(rel, TOO_LARGE) {
            Ok(t) => t,
            Err(e)
                if crate::apply::writing::fs::refusal(&e)
                    == Some(crate::apply::writing::fs::Refusal::TooLarge) =>
            {
                return self.fail(too_large(rel))
            }
            Err(e) => return self.io_error(path, e),
        };
        if text.text.len() as u64 >= TOO_LARGE {
            return self.fail(too_large(rel));
        }
        Ok(text)
    }

    /// Whether the link at `rel` leads outside the root.
    fn link_leaves(&self, rel: &RelPath) -> bool {
        match self.tree.read_link(rel) {
            Ok(target) => crate::paths::link_target(rel, &target, self.root).is_none(),
            Err(_) => false,
        }
    }

    /// Checks that a new file can be created at `rel`: nothing there, and no
    /// ancestor is a file.
    pub fn creatable(&mut self, path: &PathRef, rel: &RelPath) -> Step<()> {
        for dir in rel.ancestors() {
            match self.entry(path, &dir)? {
                Entry::Dir | Entry::Missing => {}
                _ => {
                    let message = format!("cannot create `{rel}`: `{dir}` is not a directory");
                    let hint = "choose a path whose parent directories are directories";
                    return self.exists(
                        path,
                        rel,
                        message,
                        "a parent of this path is a file",
                        Some(hint),
                    );
                }
            }
        }
        Ok(())
    }

    /// `file_exists`: `rel` is there, and `what` would be created.
    pub fn exists<T>(
        &mut self,
        path: &PathRef,
        rel: &RelPath,
        message: String,
        label: &str,
        hint: Option<&str>,
    ) -> Step<T> {
        let mut d = Diagnostic::new(Code::FileExists, message)
            .at(path.span, label.to_string())
            .path(rel.as_str());
        if let Some(h) = hint {
            d = d.hint(h.to_string());
        }
        self.fail(d)
    }

    /// A warning that an op had nothing to do.
    pub fn done_already(&mut self, op: &FileOp<'_>, rel: &RelPath, why: &str) {
        self.warnings.push(
            Diagnostic::new(
                Code::AlreadyApplied,
                format!("`{rel}`: nothing to do, {why}"),
            )
            .at(op.span, "already applied")
            .path(rel.as_str()),
        );
    }

    /// The change one file op makes.
    fn op<'p>(&mut self, op: &'p FileOp<'_>) -> Step<Change<'p>>
    where
        's: 'p,
    {
        let mut rel = self.resolve(&op.path)?;
        let mut entry = self.entry(&op.path, &rel)?;
        if self.policy.strip_project_prefix && entry == Entry::Missing {
            if let Some((shorter, e)) = self.without_project_prefix(&op.path, &rel)? {
                self.warnings.push(
                    Diagnostic::new(
                        Code::ToleratedFormatSlip,
                        format!("`{rel}` does not exist; `{shorter}` does, so the first component is taken for the project's name"),
                    )
                    .at(op.path.span, "a redundant project prefix")
                    .path(shorter.as_str())
                    .hint("paths are relative to the root: leave out the project's own directory name"),
                );
                (rel, entry) = (shorter, e);
            }
        }
        self.check_old_mode(op, &rel, entry);
        use crate::ir::{Action, GitMode};
        match &op.action {
            Action::Add { content, .. } if op.mode == Some(GitMode::Symlink) => {
                self.add_link(op, rel, entry, content)
            }
            Action::Delete { expect } if entry == Entry::Symlink => {
                self.delete_link(op, rel, expect.as_deref())
            }
            Action::Add {
                content,
                edits,
                overwrite,
            } => self.add(op, rel, entry, content, edits, *overwrite),
            Action::Delete { expect } => self.delete(op, rel, entry, expect.as_deref()),
            Action::Modify { edits, move_to } => {
                self.modify(op, rel, entry, edits, move_to.as_ref())
            }
            Action::Rename { to } => self.rename(op, rel, entry, to),
            Action::Remove => self.remove(op, rel, entry),
            Action::CreateDir => self.create_dir(op, rel, entry),
        }
    }
}

/// The type bits of a symbolic link, in a [`Change::Delete`]'s mode.
pub const LINK_MODE: u32 = 0o120_000;

/// A file's permission bits, or the default for a new one.
pub fn mode_of(entry: Entry) -> u32 {
    match entry {
        Entry::File { mode } => mode,
        _ => 0o644,
    }
}
