//! Planning: every file op is read, located and rewritten in memory, and
//! every problem in every file is collected, before anything is written.
//! Nothing here writes; `commit.rs` carries out a finished [`Plan`].

use std::cell::OnceCell;
use std::path::Path;
use std::sync::Arc;

use super::evolve::{self, Evolving, NIL};
use super::locate;
use super::output::{Builder, Output, Pieces};
use super::seek::FileText;
use super::tree::{Entry, FileTree};
use crate::error::{Code, Diagnostic, TargetLabel};
use crate::ir::{
    Action, Advice, Base, Edit, FileOp, GitMode, Hint, Line, Locator, NewLine, NewText, Patch,
    PathRef, Relax, Rewrite, Uniqueness,
};
use crate::paths::RelPath;
use crate::validate::check_path;

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
    /// The contract's `action` word.
    pub fn action(&self) -> &'static str {
        match self {
            Change::Create { .. } | Change::Symlink { .. } => "added",
            Change::Write { .. } | Change::Chmod { .. } => "modified",
            Change::Delete { .. } | Change::RemoveTree { .. } => "deleted",
            Change::Move { .. } | Change::MoveTree { .. } => "renamed",
            Change::CreateDir { .. } => "dir_created",
            Change::Unchanged { .. } => "unchanged",
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

/// Plans `patch` against `tree`. `root` is the canonical root (for absolute
/// paths). Returns every error in every file, or the plan.
pub fn plan<'p>(
    patch: &'p Patch<'_>,
    tree: &dyn FileTree,
    root: Option<&Path>,
) -> Result<Plan<'p>, Vec<Diagnostic>> {
    let mut plan = Plan::default();
    let mut errors = vec![];
    for op in &patch.files {
        let mut cx = OpCx {
            tree,
            root,
            lone_cr: patch.lone_cr_breaks,
            sequential: patch.sequential,
            strip_project_prefix: patch.strip_project_prefix,
            advice: patch.advice,
            warnings: &mut plan.warnings,
            errors: &mut errors,
        };
        if let Some(change) = cx.op(op) {
            match cx.chmod(op, &change) {
                // A mode-only change.
                Some(chmod) if matches!(change, Change::Unchanged { .. }) => {
                    plan.changes.push(chmod)
                }
                chmod => plan.changes.extend(std::iter::once(change).chain(chmod)),
            }
        }
    }
    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
    }
}

struct OpCx<'a> {
    tree: &'a dyn FileTree,
    /// Whether a lone `\r` ends a line (the patch format decides).
    lone_cr: bool,
    /// Whether edits apply one after the other (the patch format decides).
    sequential: bool,
    /// ap tolerant mode: `my_project/src/a.txt` may mean `src/a.txt`.
    strip_project_prefix: bool,
    advice: Advice,
    root: Option<&'a Path>,
    warnings: &'a mut Vec<Diagnostic>,
    errors: &'a mut Vec<Diagnostic>,
}

impl OpCx<'_> {
    fn fail<T>(&mut self, d: Diagnostic) -> Option<T> {
        self.errors.push(d);
        None
    }

    fn io_error<T>(&mut self, path: &PathRef, err: std::io::Error) -> Option<T> {
        if super::fs::refusal(&err) == Some(super::fs::Refusal::Escapes) {
            return self.fail(
                Diagnostic::new(Code::PathEscape, format!("`{}` leads outside the root", path.text))
                    .at(path.span, "a symbolic link on this path leaves the root")
                    .path(path.text.as_str())
                    .hint("patch files inside the root only; symbolic links that leave it are never followed"),
            );
        }
        self.fail(
            Diagnostic::new(Code::IoError, format!("`{}`: {err}", path.text))
                .at(path.span, "could not be read")
                .path(path.text.as_str()),
        )
    }

    /// Resolves a path and checks that no symbolic link leads out of the root.
    fn resolve(&mut self, path: &PathRef) -> Option<RelPath> {
        let rel = match check_path(path, self.root) {
            Ok(rel) => rel,
            Err(d) => return self.fail(d),
        };
        match self.tree.escapes(&rel) {
            Ok(None) => Some(rel),
            Ok(Some(target)) => self.fail(
                Diagnostic::new(Code::PathEscape, format!("`{rel}` leads outside the root through a symbolic link"))
                    .at(path.span, format!("resolves to {target}"))
                    .path(rel.as_str())
                    .hint("patch files inside the root only; symbolic links that leave it are never followed"),
            ),
            Err(e) => self.io_error(path, e),
        }
    }

    fn entry(&mut self, path: &PathRef, rel: &RelPath) -> Option<Entry> {
        match self.tree.entry(rel) {
            Ok(e) => Some(e),
            Err(e) => self.io_error(path, e),
        }
    }

    /// Reads a regular UTF-8 file.
    fn read_text(&mut self, path: &PathRef, rel: &RelPath, entry: Entry) -> Option<String> {
        match entry {
            Entry::File { .. } => {}
            Entry::Missing => {
                return self.fail(
                    Diagnostic::new(Code::FileNotFound, format!("`{rel}` does not exist"))
                        .at(path.span, "no such file under the root")
                        .path(rel.as_str())
                        .hint(format!(
                            "check the path (it is relative to the root), or {}",
                            self.advice.create
                        )),
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
        let bytes = match self.tree.read(rel) {
            Ok(b) => b,
            Err(e) => return self.io_error(path, e),
        };
        // Bytes that are not UTF-8 are carried along (see `lossless`).
        let text = crate::lossless::decode(bytes);
        if text.len() >= u32::MAX as usize {
            return self.fail(
                Diagnostic::new(Code::UnsupportedFile, format!("`{rel}` is 4 GiB or larger"))
                    .at(path.span, "too large to patch")
                    .path(rel.as_str()),
            );
        }
        Some(text)
    }

    /// Checks that a new file can be created at `rel`: nothing there, and no
    /// ancestor is a file.
    fn creatable(&mut self, path: &PathRef, rel: &RelPath) -> Option<()> {
        for dir in rel.ancestors() {
            match self.entry(path, &dir)? {
                Entry::Dir | Entry::Missing => {}
                _ => {
                    return self.fail(
                        Diagnostic::new(
                            Code::FileExists,
                            format!("cannot create `{rel}`: `{dir}` is not a directory"),
                        )
                        .at(path.span, "a parent of this path is a file")
                        .path(rel.as_str())
                        .hint("choose a path whose parent directories are directories"),
                    )
                }
            }
        }
        Some(())
    }

    fn op<'p>(&mut self, op: &'p FileOp<'_>) -> Option<Change<'p>> {
        let mut rel = self.resolve(&op.path)?;
        let mut entry = self.entry(&op.path, &rel)?;
        if self.strip_project_prefix && entry == Entry::Missing {
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
        let mode = match entry {
            Entry::File { mode } => mode,
            _ => 0o644,
        };
        self.check_old_mode(op, &rel, entry);
        match &op.action {
            Action::Add { content } if op.mode == Some(GitMode::Symlink) => {
                self.add_link(op, rel, entry, content)
            }
            Action::Delete { expect } if entry == Entry::Symlink => {
                self.delete_link(op, rel, expect.as_deref())
            }
            Action::Add { content } => {
                let output = render_new(content);
                match entry {
                    Entry::Missing => {
                        self.creatable(&op.path, &rel)?;
                        let mode = (op.mode == Some(GitMode::Executable)).then_some(0o755);
                        Some(Change::Create {
                            path: rel,
                            output,
                            mode,
                        })
                    }
                    Entry::File { .. } => {
                        let current = self.read_text(&op.path, &rel, entry)?;
                        if output.equals(&current) {
                            return Some(Change::Unchanged { path: rel });
                        }
                        self.fail(
                            Diagnostic::new(
                                Code::FileExists,
                                format!("`{rel}` already exists with other content"),
                            )
                            .at(op.path.span, "this file would be created")
                            .path(rel.as_str())
                            .hint(self.advice.update),
                        )
                    }
                    _ => self.fail(
                        Diagnostic::new(
                            Code::FileExists,
                            format!("`{rel}` already exists and is not a file"),
                        )
                        .at(op.path.span, "something else is at this path")
                        .path(rel.as_str()),
                    ),
                }
            }
            Action::Delete { expect } => {
                if entry == Entry::Dir {
                    return self.fail(
                        Diagnostic::new(
                            Code::FileNotFound,
                            format!("`{rel}` is a directory, not a file"),
                        )
                        .at(op.path.span, "no file to delete here")
                        .path(rel.as_str())
                        .hint("delete the files inside it one by one"),
                    );
                }
                let original = self.read_text(&op.path, &rel, entry)?;
                let Some(edits) = expect else {
                    return Some(Change::Delete {
                        path: rel,
                        original,
                        mode,
                    });
                };
                let rest = self.edit_text(&rel, original, edits)?;
                if !rest.is_empty() {
                    let n = rest.to_vec().iter().filter(|&&b| b == b'\n').count().max(1);
                    return self.fail(
                        Diagnostic::new(Code::ContextNotFound, format!("deleting `{rel}`: {n} line(s) would remain"))
                            .at(op.span, "this deletion does not list the whole file")
                            .path(rel.as_str())
                            .hint("a deletion must list every line of the file as a `-` line; re-read the file"),
                    );
                }
                Some(Change::Delete {
                    path: rel,
                    original: rest.original,
                    mode,
                })
            }
            Action::Modify { edits, move_to } => {
                let original = self.read_text(&op.path, &rel, entry)?;
                let output = self.edit_text(&rel, original, edits)?;
                let to = match move_to {
                    Some(to_ref) => Some((to_ref, self.resolve(to_ref)?)),
                    None => None,
                };
                let Some((to_ref, to)) = to.filter(|(_, to)| *to != rel) else {
                    if output.is_unchanged() {
                        return Some(Change::Unchanged { path: rel });
                    }
                    return Some(Change::Write {
                        path: rel,
                        output,
                        mode,
                    });
                };
                if self.entry(to_ref, &to)? != Entry::Missing {
                    return self.fail(
                        Diagnostic::new(
                            Code::FileExists,
                            format!("cannot move `{rel}` onto existing `{to}`"),
                        )
                        .at(to_ref.span, "this destination exists")
                        .path(to.as_str())
                        .hint(
                            "move to a path that does not exist, or delete the destination first",
                        ),
                    );
                }
                self.creatable(to_ref, &to)?;
                Some(Change::Move {
                    from: rel,
                    to,
                    output,
                    mode,
                })
            }
            Action::Rewrite(rw) => self.rewrite(op, rel, entry, rw),
            Action::Rename { to } => self.rename(op, rel, entry, to),
            Action::Remove => match entry {
                Entry::Missing => {
                    self.done_already(op, &rel, "there is nothing to delete");
                    Some(Change::Unchanged { path: rel })
                }
                Entry::Dir => {
                    let (files, dirs) = self.walk(&op.path, &rel)?;
                    Some(Change::RemoveTree {
                        path: rel,
                        files,
                        dirs,
                    })
                }
                _ => {
                    let original = self.read_text(&op.path, &rel, entry)?;
                    Some(Change::Delete {
                        path: rel,
                        original,
                        mode,
                    })
                }
            },
            Action::CreateDir => match entry {
                Entry::Missing => {
                    self.creatable(&op.path, &rel)?;
                    Some(Change::CreateDir { path: rel })
                }
                Entry::Dir => Some(Change::Unchanged { path: rel }),
                _ => self.fail(
                    Diagnostic::new(
                        Code::FileExists,
                        format!("`{rel}` exists and is not a directory"),
                    )
                    .at(op.path.span, "a directory would be created here")
                    .path(rel.as_str()),
                ),
            },
        }
    }

    /// git's `old mode` (or the `index` line's mode) against the file: a
    /// difference is a warning, and the patch applies, as with `git apply`.
    fn check_old_mode(&mut self, op: &FileOp<'_>, rel: &RelPath, entry: Entry) {
        let Some((said, span)) = op.old_mode else {
            return;
        };
        let is = match entry {
            Entry::File { mode } if mode & 0o100 != 0 => GitMode::Executable,
            Entry::File { .. } => GitMode::File,
            Entry::Symlink => GitMode::Symlink,
            _ => return,
        };
        if is != said {
            self.warnings.push(
                Diagnostic::new(
                    Code::IgnoredMetadata,
                    format!(
                        "`{rel}` is {}, the patch says {}",
                        mode_words(is),
                        mode_words(said)
                    ),
                )
                .at(span, "this mode is not the file's")
                .path(rel.as_str())
                .note("the patch was applied anyway, as `git apply` does"),
            );
        }
    }

    /// The permission change git's `new mode` asks of the file `change`
    /// leaves, if its bits differ.
    fn chmod<'p>(&mut self, op: &FileOp<'_>, change: &Change<'p>) -> Option<Change<'p>> {
        let want = op.mode.filter(|m| *m != GitMode::Symlink)?;
        let (path, from) = match change {
            Change::Write { path, mode, .. } | Change::Move { to: path, mode, .. } => {
                (path.clone(), *mode)
            }
            Change::Unchanged { path } => match self.tree.entry(path).ok()? {
                Entry::File { mode } => (path.clone(), mode),
                _ => return None,
            },
            _ => return None,
        };
        // Executable where readable, as git checks files out.
        let to = match want {
            GitMode::Executable => from | ((from & 0o444) >> 2),
            _ => from & !0o111,
        };
        (to != from).then_some(Change::Chmod { path, from, to })
    }

    /// `new file mode 120000`: a symbolic link, whose target is the file's
    /// one line and must lead to a place inside the root.
    fn add_link<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        content: &NewText<'_>,
    ) -> Option<Change<'p>> {
        let [line] = &content.lines[..] else {
            return self.fail(
                Diagnostic::new(
                    Code::InvalidHunkBody,
                    format!("the symbolic link `{rel}` needs one line: its target"),
                )
                .at(op.span, "mode 120000 is a symbolic link")
                .path(rel.as_str())
                .hint("give the link's target as the file's only line, with `\\ No newline at end of file`"),
            );
        };
        let target = line.text.to_string();
        if entry == Entry::Symlink
            && self.tree.read_link(&rel).ok().as_deref() == Some(target.as_str())
        {
            return Some(Change::Unchanged { path: rel });
        }
        if entry != Entry::Missing {
            return self.fail(
                Diagnostic::new(Code::FileExists, format!("`{rel}` already exists"))
                    .at(op.path.span, "a symbolic link would be created here")
                    .path(rel.as_str())
                    .hint(self.advice.update),
            );
        }
        let inside = crate::paths::link_target(&rel, &target, self.root)
            .filter(|to| matches!(self.tree.escapes(to), Ok(None)));
        if inside.is_none() {
            return self.fail(
                Diagnostic::new(
                    Code::PathEscape,
                    format!("the symbolic link `{rel}` would lead outside the root, to `{target}`"),
                )
                .at(line.span, "this target is not inside the root")
                .path(rel.as_str())
                .hint("links may only point at places inside the root"),
            );
        }
        self.creatable(&op.path, &rel)?;
        Some(Change::Symlink { path: rel, target })
    }

    /// Deleting a symbolic link: its target must be what the patch says.
    fn delete_link<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        expect: Option<&[Edit<'_>]>,
    ) -> Option<Change<'p>> {
        let target = match self.tree.read_link(&rel) {
            Ok(t) => t,
            Err(e) => return self.io_error(&op.path, e),
        };
        let said: Vec<&str> = expect
            .unwrap_or_default()
            .iter()
            .flat_map(|e| e.old.iter().map(|l| &*l.text))
            .collect();
        if expect.is_some() && said != [target.as_str()] {
            return self.fail(
                Diagnostic::new(
                    Code::ContextNotFound,
                    format!(
                        "the symbolic link `{rel}` leads to `{target}`, not where the patch says"
                    ),
                )
                .at(op.span, "this deletion names another target")
                .path(rel.as_str())
                .hint("re-read the link before deleting it"),
            );
        }
        Some(Change::Delete {
            path: rel,
            original: target,
            mode: LINK_MODE,
        })
    }

    /// `rel` without its first component, when that component is not in
    /// the root and the rest (or its directory) is.
    fn without_project_prefix(
        &mut self,
        path: &PathRef,
        rel: &RelPath,
    ) -> Option<Option<(RelPath, Entry)>> {
        let Some((first, rest)) = rel.as_str().split_once('/') else {
            return Some(None);
        };
        let Some(first) = RelPath::new(first) else {
            return Some(None);
        };
        let Some(shorter) = RelPath::new(rest) else {
            return Some(None);
        };
        if self.entry(path, &first)? != Entry::Missing {
            return Some(None);
        }
        let e = self.entry(path, &shorter)?;
        let parent_there = match shorter.ancestors().last() {
            Some(dir) => self.entry(path, dir)? == Entry::Dir,
            None => false,
        };
        Some((e != Entry::Missing || parent_there).then_some((shorter, e)))
    }

    /// ap: a file block's modifications, by `locate.rs`.
    fn rewrite<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        rw: &Rewrite<'_>,
    ) -> Option<Change<'p>> {
        let exists = matches!(entry, Entry::File { .. });
        let original = match (&rw.base, entry) {
            (Base::Existing, _) | (_, Entry::File { .. }) => {
                self.read_text(&op.path, &rel, entry)?
            }
            (_, Entry::Missing) => {
                self.creatable(&op.path, &rel)?;
                String::new()
            }
            _ => {
                return self.fail(
                    Diagnostic::new(
                        Code::FileExists,
                        format!("`{rel}` exists and is not a file"),
                    )
                    .at(op.path.span, "a file would be written here")
                    .path(rel.as_str()),
                )
            }
        };
        if let (Base::Recreate(lines), true) = (&rw.base, exists) {
            if rw.mods.is_empty() && same_lines(&original, lines) {
                self.done_already(op, &rel, "the file already has this content");
                return Some(Change::Unchanged { path: rel });
            }
        }
        if let (Base::Create(lines), true) = (&rw.base, exists) {
            if !same_lines(&original, lines) {
                return self.fail(
                    Diagnostic::new(
                        Code::FileExists,
                        format!("`{rel}` already exists with other content"),
                    )
                    .at(op.path.span, "CREATE of an existing file")
                    .path(rel.as_str())
                    .hint(self.advice.update),
                );
            }
            self.done_already(op, &rel, "the file exists with this content");
        }
        let result = match locate::rewrite(
            &original,
            rw,
            exists && matches!(rw.base, Base::Create(_)),
            &rel,
            self.warnings,
        ) {
            Ok(r) => r,
            Err(d) => return self.fail(d),
        };
        Some(match (exists, result.changed) {
            (false, _) => Change::Create {
                path: rel,
                output: Output::computed(String::new(), result.text),
                mode: None,
            },
            (true, false) => Change::Unchanged { path: rel },
            (true, true) => Change::Write {
                path: rel,
                output: Output::computed(original, result.text),
                mode: match entry {
                    Entry::File { mode } => mode,
                    _ => 0o644,
                },
            },
        })
    }

    /// ap `RENAME` of a file or a directory; done already when only the destination exists.
    fn rename<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        to_ref: &PathRef,
    ) -> Option<Change<'p>> {
        let to = self.resolve(to_ref)?;
        let to_entry = self.entry(to_ref, &to)?;
        match (entry, to_entry) {
            (Entry::Missing, Entry::Missing) => {
                return self.read_text(&op.path, &rel, entry).and(None)
            }
            (Entry::Missing, _) => {
                self.done_already(op, &rel, "the source is gone and the destination exists");
                return Some(Change::Unchanged { path: to });
            }
            (_, Entry::Missing) => {}
            _ => {
                return self.fail(
                    Diagnostic::new(
                        Code::FileExists,
                        format!("cannot rename `{rel}` onto existing `{to}`"),
                    )
                    .at(to_ref.span, "this destination exists")
                    .path(to.as_str())
                    .hint("rename to a path that does not exist"),
                )
            }
        }
        self.creatable(to_ref, &to)?;
        if entry == Entry::Dir {
            if to.as_str().starts_with(&format!("{rel}/")) {
                return self.fail(
                    Diagnostic::new(Code::FileExists, format!("cannot move `{rel}` into itself"))
                        .at(to_ref.span, "inside the source")
                        .path(to.as_str()),
                );
            }
            let (files, dirs) = self.walk(&op.path, &rel)?;
            let files = files
                .into_iter()
                .filter_map(|(f, text, mode)| {
                    let tail = &f.as_str()[rel.as_str().len()..];
                    RelPath::new(&format!("{to}{tail}")).map(|t| (f, t, text, mode))
                })
                .collect();
            return Some(Change::MoveTree {
                from: rel,
                to,
                files,
                dirs,
            });
        }
        let original = self.read_text(&op.path, &rel, entry)?;
        let mode = match entry {
            Entry::File { mode } => mode,
            _ => 0o644,
        };
        let len = original.len();
        let mut b = Builder::new(&original);
        b.push_original(0, len);
        let pieces = b.finish();
        Some(Change::Move {
            from: rel,
            to,
            output: Output::new(original, pieces),
            mode,
        })
    }

    /// The files (with text and mode) and directories under `dir`;
    /// directories innermost first, `dir` last.
    fn walk(&mut self, path: &PathRef, dir: &RelPath) -> Option<(Vec<TreeFile>, Vec<RelPath>)> {
        let mut files = vec![];
        let mut dirs = vec![];
        let mut stack = vec![(dir.clone(), false)];
        while let Some((d, listed)) = stack.pop() {
            if listed {
                dirs.push(d);
                continue;
            }
            stack.push((d.clone(), true));
            let names = match self.tree.list(&d) {
                Ok(n) => n,
                Err(e) => return self.io_error(path, e),
            };
            for name in names {
                let Some(child) = RelPath::new(&format!("{d}/{name}")) else {
                    continue;
                };
                match self.entry(path, &child)? {
                    Entry::Dir => stack.push((child, false)),
                    e @ Entry::File { mode } => {
                        let text = self.read_text(path, &child, e)?;
                        files.push((child, text, mode));
                    }
                    e => {
                        self.read_text(path, &child, e)?;
                    }
                }
            }
        }
        Some((files, dirs))
    }

    fn done_already(&mut self, op: &FileOp<'_>, rel: &RelPath, why: &str) {
        self.warnings.push(
            Diagnostic::new(
                Code::AlreadyApplied,
                format!("`{rel}`: nothing to do, {why}"),
            )
            .at(op.span, "already applied")
            .path(rel.as_str()),
        );
    }

    /// Locates every edit in `original` and describes the edited text, or
    /// records every edit that could not be placed.
    fn edit_text<'p>(
        &mut self,
        rel: &RelPath,
        original: String,
        edits: &'p [Edit<'_>],
    ) -> Option<Output<'p>> {
        if self.sequential {
            return self.edit_in_order(rel, original, edits);
        }
        let pieces = {
            let file = FileText::with_breaks(&original, self.lone_cr);
            let target_text: OnceCell<Arc<str>> = OnceCell::new();
            let mut loc = Locating {
                file: &file,
                rel,
                advice: self.advice,
                target_text: &target_text,
                warnings: vec![],
                errors: vec![],
            };
            let regions = loc.locate_all(edits);
            self.warnings.append(&mut loc.warnings);
            if !loc.errors.is_empty() {
                self.errors.append(&mut loc.errors);
                return None;
            }
            assemble(&file, edits, &regions)
        };
        Some(Output::new(original, pieces))
    }
}

/// The type bits of a symbolic link, in a [`Change::Delete`]'s mode.
pub const LINK_MODE: u32 = 0o120_000;

fn mode_words(mode: GitMode) -> &'static str {
    match mode {
        GitMode::File => "a plain file (100644)",
        GitMode::Executable => "executable (100755)",
        GitMode::Symlink => "a symbolic link (120000)",
    }
}

/// Whether `text` has exactly these lines (line endings and a missing
/// final newline aside).
fn same_lines(text: &str, lines: &[Line]) -> bool {
    let body = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix(['\n', '\r']))
        .unwrap_or(text);
    let mut have = body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if text.is_empty() {
        return lines.is_empty();
    }
    lines.iter().all(|l| have.next() == Some(&*l.text)) && have.next().is_none()
}

/// How many failing edits of one file are explained in full (each writes
/// the file's text out); the rest get [`brief_miss`].
const EXPLAINED_MISSES: usize = 8;

/// A failure stated without the file's text: `matches` places found.
fn brief_miss(rel: &RelPath, edit: &Edit, advice: Advice, matches: usize) -> Diagnostic {
    let (code, message) = match matches {
        0 => (
            Code::ContextNotFound,
            format!("{} not found in `{rel}`", advice.block),
        ),
        n => (
            Code::AmbiguousContext,
            format!("{} matches {n} places in `{rel}`", advice.block),
        ),
    };
    Diagnostic::new(code, message)
        .at(edit.span, "this operation has no single place in the file")
        .path(rel.as_str())
        .note(format!(
            "the first {EXPLAINED_MISSES} failures in this file are explained in full; fix those first"
        ))
}

/// Where a sequential edit goes: after node `after` (an insertion), over
/// the nodes `run`, with the relaxation it needed.
struct Placed {
    after: u32,
    run: Vec<u32>,
    relax: Option<Relax>,
}

impl OpCx<'_> {
    /// Sequential edits (RepoPatch, ap): each is located in the file as the
    /// edits before it left it, and every edit that cannot be placed is
    /// explained against that text.
    fn edit_in_order<'p>(
        &mut self,
        rel: &RelPath,
        original: String,
        edits: &'p [Edit<'_>],
    ) -> Option<Output<'p>> {
        let pieces = {
            let file = FileText::with_breaks(&original, self.lone_cr);
            if file.len() >= evolve::MAX_LINES {
                return self.fail(
                    Diagnostic::new(
                        Code::UnsupportedFile,
                        format!("`{rel}` has 2^31 lines or more"),
                    )
                    .path(rel.as_str()),
                );
            }
            let mut passes = vec![None];
            for relax in edits.iter().flat_map(|e| e.locator.relax) {
                if !passes.contains(&Some(*relax)) {
                    passes.push(Some(*relax));
                }
            }
            let mut ev = Evolving::new(&file, &passes);
            let mut cursor = NIL;
            let mut failed = 0;
            for (i, edit) in edits.iter().enumerate() {
                match self.place(&ev, rel, edit, cursor) {
                    Ok(Placed { after, run, relax }) => {
                        if let Some(relax) = relax {
                            let at = match run.first().and_then(|&id| ev.original_line(id)) {
                                Some(line) => {
                                    format!("line {} (as numbered before the patch)", line + 1)
                                }
                                None => "lines an earlier operation wrote".to_string(),
                            };
                            self.warnings
                                .push(fuzz_warning(rel, edit, self.advice, &at, relax));
                        }
                        cursor = ev.splice(after, &run, edit, i);
                    }
                    Err(matches) => {
                        failed += 1;
                        // Explaining writes the text out; past a few
                        // failures in one file, say only what failed.
                        let d = if failed <= EXPLAINED_MISSES {
                            self.explain_miss(&file, &ev, rel, edits, i, cursor)
                        } else {
                            brief_miss(rel, edit, self.advice, matches)
                        };
                        self.errors.push(d);
                    }
                }
            }
            if failed > 0 {
                return None;
            }
            ev.pieces()
        };
        Some(Output::new(original, pieces))
    }

    /// Where `edit` goes in the file as it is now: the node it goes after
    /// (for an insertion), the nodes it replaces, and the relaxation it
    /// needed. A plain block, unique in the file, is found through the line
    /// index; anything else is located in the text written out.
    fn place(
        &self,
        ev: &Evolving,
        rel: &RelPath,
        edit: &Edit,
        cursor: u32,
    ) -> Result<Placed, usize> {
        let loc = &edit.locator;
        let plain = loc.hint.is_none()
            && loc.anchor.is_none()
            && loc.range_end.is_none()
            && !loc.at_eof
            && loc.uniqueness == Uniqueness::UniqueInFile
            && !edit.old.is_empty();
        if plain {
            for relax in std::iter::once(None).chain(loc.relax.iter().copied().map(Some)) {
                match ev.find_all(&edit.old, relax).as_slice() {
                    [] => continue,
                    [start] => {
                        return Ok(Placed {
                            after: NIL,
                            run: ev.run(*start, edit.old.len()),
                            relax,
                        })
                    }
                    found => return Err(found.len()),
                }
            }
            return Err(0);
        }
        let (found, order) = self.in_current_text(ev, rel, cursor, |locating, from| {
            locating.locate(edit, 0, from)
        });
        let found = found.map_err(|miss| match miss {
            Miss::Ambiguous(_, found, _) => found.len(),
            _ => 0,
        })?;
        let start = found.start.min(order.len());
        let end = (start + found.len).min(order.len());
        let after = if start == 0 { NIL } else { order[start - 1] };
        Ok(Placed {
            after,
            run: order[start..end].to_vec(),
            relax: found.relax,
        })
    }

    /// Runs `f` with a locator over the text as the edits so far left it,
    /// and the line after `cursor` in it; also returns the node of each line.
    fn in_current_text<T>(
        &self,
        ev: &Evolving,
        rel: &RelPath,
        cursor: u32,
        f: impl FnOnce(&Locating, usize) -> T,
    ) -> (T, Vec<u32>) {
        let (text, order) = ev.current();
        let file = FileText::with_breaks(&text, self.lone_cr);
        let target_text = OnceCell::new();
        let locating = Locating {
            file: &file,
            rel,
            advice: self.advice,
            target_text: &target_text,
            warnings: vec![],
            errors: vec![],
        };
        let from = order
            .iter()
            .position(|&id| id == cursor)
            .map_or(0, |p| p + 1);
        (f(&locating, from), order)
    }

    /// Why edit `i` has no place: the applier's usual diagnosis against the
    /// text as the earlier edits left it, and, when the block was in the
    /// original file, the earlier edit that changed it.
    fn explain_miss(
        &self,
        original: &FileText,
        ev: &Evolving,
        rel: &RelPath,
        edits: &[Edit],
        i: usize,
        cursor: u32,
    ) -> Diagnostic {
        let edit = &edits[i];
        let ((mut d, not_found), _) = self.in_current_text(ev, rel, cursor, |locating, from| {
            let miss = match locating.locate(edit, 0, from) {
                Err(miss) => miss,
                // The index and the text disagree: never guess, refuse.
                Ok(_) => Miss::NotFound(Part::Block),
            };
            let not_found = matches!(miss, Miss::NotFound(Part::Block));
            (locating.miss(edit, miss, 0), not_found)
        });
        if not_found && !edit.old.is_empty() {
            let earlier = original
                .find_all(&edit.old, None, 0)
                .into_iter()
                .flat_map(|s| s..s + edit.old.len())
                .find_map(|line| ev.removed_by(line));
            if let Some(k) = earlier {
                d = d
                    .secondary(edits[k].span, "an earlier operation changed these lines first")
                    .note(format!(
                        "the {} is in the file before the patch, but operations apply in order, \
                         and the one above changed it",
                        self.advice.block
                    ))
                    .hint(format!(
                        "write each operation against the file as the operations before it leave it: \
                         merge the two operations, or give this one the {} as it reads after the earlier one",
                        self.advice.block
                    ));
            }
        }
        d
    }
}

/// A block that matched only with whitespace relaxed, at `at` (a place in
/// the file, in words).
fn fuzz_warning(rel: &RelPath, edit: &Edit, advice: Advice, at: &str, relax: Relax) -> Diagnostic {
    Diagnostic::new(
        Code::WhitespaceFuzz,
        format!(
            "{} matched {at} of `{rel}` only {}",
            advice.block,
            relax.describe()
        ),
    )
    .at(edit.span, "whitespace differs from the file")
    .path(rel.as_str())
    .note("lines kept from the file keep the file's own text")
}

/// A new file: each line as the patch gives it (a `\r` it shows kept), and `\n`.
fn render_new<'p>(content: &'p NewText<'_>) -> Output<'p> {
    let mut out = Builder::new("");
    for line in &content.lines {
        out.push_text(&line.text);
        out.push_text("\n");
    }
    if !content.final_newline {
        out.trim_final_eol();
    }
    Output::new(String::new(), out.finish())
}

/// Where an edit's old block was found.
#[derive(Debug, Clone, Copy)]
struct Region {
    start: usize,
    len: usize,
    edit: usize,
}

struct Locating<'a, 'f> {
    file: &'a FileText<'f>,
    rel: &'a RelPath,
    advice: Advice,
    target_text: &'a OnceCell<Arc<str>>,
    warnings: Vec<Diagnostic>,
    errors: Vec<Diagnostic>,
}

/// Why a block was not placed.
enum Miss {
    NotFound(Part),
    Ambiguous(Part, Vec<usize>, Option<Relax>),
    PastEnd(usize),
}

/// Which block of a locator missed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Block,
    Anchor,
    RangeEnd,
}

impl Part {
    fn noun(self, advice: Advice) -> &'static str {
        match self {
            Part::Block => advice.block,
            Part::Anchor => "anchor",
            Part::RangeEnd => "range end",
        }
    }

    fn lines<'e, 'a>(self, edit: &'e Edit<'a>) -> &'e [Line<'a>] {
        let loc = &edit.locator;
        match self {
            Part::Block => &edit.old,
            Part::Anchor => loc.anchor.as_deref().unwrap_or(&[]),
            Part::RangeEnd => loc.range_end.as_deref().unwrap_or(&[]),
        }
    }
}

/// Where an edit landed: its first line, how many lines it covers, and the
/// relaxation that was needed, if any.
struct Found {
    start: usize,
    len: usize,
    relax: Option<Relax>,
}

impl Locating<'_, '_> {
    fn target(&self, start: usize, end: usize, message: String) -> TargetLabel {
        let text = self
            .target_text
            .get_or_init(|| Arc::from(self.file.text))
            .clone();
        let (s, e) = self.file.span_of(start, end);
        TargetLabel {
            path: self.rel.to_string(),
            text,
            span: crate::ir::Span::new(s, e),
            message,
        }
    }

    fn locate_all(&mut self, edits: &[Edit]) -> Vec<Region> {
        let mut regions = vec![];
        let mut drift: isize = 0;
        let mut cursor = 0;
        for (i, edit) in edits.iter().enumerate() {
            match self.locate(edit, drift, cursor) {
                Ok(Found { start, len, relax }) => {
                    if let Some(Hint::Near(h)) = edit.locator.hint {
                        let expected = h.saturating_add_signed(drift);
                        if start != expected {
                            self.warnings.push(
                                Diagnostic::new(
                                    Code::LineHintDrift,
                                    format!(
                                        "hunk matched at line {} of `{}`, {} line(s) from where its header points",
                                        start + 1,
                                        self.rel,
                                        start.abs_diff(expected)
                                    ),
                                )
                                .at(edit.span, "the context decided, not the line number")
                                .path(self.rel.as_str()),
                            );
                        }
                        drift = start as isize - h as isize;
                    }
                    if let Some(relax) = relax {
                        let at = format!("line {}", start + 1);
                        let d = fuzz_warning(self.rel, edit, self.advice, &at, relax);
                        self.warnings.push(d);
                    }
                    cursor = start + len;
                    regions.push(Region {
                        start,
                        len,
                        edit: i,
                    });
                }
                Err(miss) => {
                    let d = self.miss(edit, miss, drift);
                    self.errors.push(d);
                }
            }
        }
        regions.sort_by_key(|r| (r.start, r.edit));
        for pair in regions.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b.start < a.start + a.len || (b.start == a.start && a.len > 0 && b.len > 0) {
                self.errors.push(
                    Diagnostic::new(
                        Code::OverlappingHunks,
                        format!("two hunks of `{}` claim the same lines (from line {})", self.rel, b.start + 1),
                    )
                    .at(edits[b.edit].span, "this hunk overlaps")
                    .secondary(edits[a.edit].span, "this one")
                    .path(self.rel.as_str())
                    .hint("merge overlapping hunks into one, or give each hunk context that occurs only once"),
                );
            }
        }
        regions
    }

    fn locate(&self, edit: &Edit, drift: isize, cursor: usize) -> Result<Found, Miss> {
        let loc = &edit.locator;
        let file = self.file;
        let n = edit.old.len();
        let near = match loc.hint {
            Some(Hint::Near(h)) => Some(h.saturating_add_signed(drift)),
            _ => None,
        };
        let mut from = match loc.uniqueness {
            Uniqueness::FirstAfterCursor | Uniqueness::UniqueAfterCursor => cursor,
            Uniqueness::UniqueInFile => 0,
        };
        if let Some(Hint::From(h)) = loc.hint {
            from = from.max(h);
        }
        let mut first_only = loc.uniqueness == Uniqueness::FirstAfterCursor;
        let anchor = loc.anchor.as_deref().filter(|a| !a.is_empty());
        if let Some(anchor) = anchor {
            // The anchor obeys the edit's uniqueness rule; the block is then
            // the first match after it.
            let (at, _) = self.search(anchor, from, loc, first_only, false, Part::Anchor)?;
            from = at + anchor.len();
            first_only = true;
        }
        if loc.hint == Some(Hint::Whole) {
            return if n == file.len() && file.matches_at(0, &edit.old, None) {
                Ok(Found {
                    start: 0,
                    len: n,
                    relax: None,
                })
            } else {
                Err(Miss::NotFound(Part::Block))
            };
        }
        if n == 0 {
            let at = match (loc.at_eof, anchor) {
                (true, _) => file.len(),
                (false, Some(_)) => from,
                (false, None) => near.unwrap_or(from),
            };
            return if at <= file.len() {
                Ok(Found {
                    start: at,
                    len: 0,
                    relax: None,
                })
            } else {
                Err(Miss::PastEnd(at))
            };
        }
        let exact_at_hint = near.filter(|&h| {
            h >= from
                && (!loc.at_eof || h.checked_add(n) == Some(file.len()))
                && file.matches_at(h, &edit.old, None)
        });
        let (start, relax) = match exact_at_hint {
            Some(h) => (h, None),
            None => self.search(&edit.old, from, loc, first_only, loc.at_eof, Part::Block)?,
        };
        let len = match loc.range_end.as_deref().filter(|t| !t.is_empty()) {
            Some(tail) => {
                let (at, _) = self.search(tail, start + n, loc, true, false, Part::RangeEnd)?;
                at + tail.len() - start
            }
            None => n,
        };
        Ok(Found { start, len, relax })
    }

    /// Finds `block` at or after `from`: exact first, then each relaxation.
    /// Several matches are an error unless `first_only`.
    fn search(
        &self,
        block: &[Line],
        from: usize,
        loc: &Locator,
        first_only: bool,
        at_eof: bool,
        part: Part,
    ) -> Result<(usize, Option<Relax>), Miss> {
        let fits = |start: usize| !at_eof || start + block.len() == self.file.len();
        for relax in std::iter::once(None).chain(loc.relax.iter().copied().map(Some)) {
            let found: Vec<usize> = self
                .file
                .find_all(block, relax, from)
                .into_iter()
                .filter(|&s| fits(s))
                .collect();
            match (first_only, found.len()) {
                (_, 0) => continue,
                (true, _) | (_, 1) => return Ok((found[0], relax)),
                _ => return Err(Miss::Ambiguous(part, found, relax)),
            }
        }
        Err(Miss::NotFound(part))
    }

    fn miss(&self, edit: &Edit, miss: Miss, drift: isize) -> Diagnostic {
        let rel = self.rel;
        let hint_line = match edit.locator.hint {
            Some(Hint::Near(h)) => Some(h.saturating_add_signed(drift)),
            Some(Hint::From(h)) => Some(h),
            Some(Hint::Whole) => Some(0),
            None => None,
        };
        match miss {
            Miss::PastEnd(at) => Diagnostic::new(
                Code::ContextNotFound,
                format!("`{rel}` has {} line(s); the hunk inserts after line {at}", self.file.len()),
            )
            .at(edit.span, "this hunk has no context lines to place it")
            .path(rel.as_str())
            .hint("add a few unchanged context lines around the insertion, and fix the hunk header's line number"),
            Miss::Ambiguous(part, found, relax) => {
                let lines = part.lines(edit);
                let where_ = found
                    .iter()
                    .map(|&s| match hint_line {
                        Some(h) => format!("line {} ({} from the hint)", s + 1, s.abs_diff(h)),
                        None => format!("line {}", s + 1),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let how = relax.map_or(String::new(), |r| format!(" ({})", r.describe()));
                let mut d = Diagnostic::new(
                    Code::AmbiguousContext,
                    format!("{} matches {} places in `{rel}`{how}", part.noun(self.advice), found.len()),
                )
                .at(edit.span, "this block occurs more than once")
                .path(rel.as_str())
                .note(format!("candidates: {where_}"))
                .hint(self.advice.disambiguate);
                for &s in found.iter().take(5) {
                    d = d.target(self.target(s, s + lines.len(), format!("candidate at line {}", s + 1)));
                }
                d
            }
            Miss::NotFound(part) => {
                let lines = part.lines(edit);
                let place = if part == Part::RangeEnd { " after the start of the range" } else { "" };
                let (span, label) = match (part, lines.first(), lines.last()) {
                    (Part::Block, _, _) | (_, None, _) | (_, _, None) => {
                        (edit.span, match lines.len() {
                            1 => "this line does not occur in the file".to_string(),
                            n => format!("these {n} lines do not occur together in the file"),
                        })
                    }
                    (_, Some(first), Some(last)) => (first.span.to(last.span), format!("not a line of {rel}")),
                };
                let mut d = Diagnostic::new(Code::ContextNotFound, format!("{} not found in `{rel}`{place}", part.noun(self.advice)))
                    .at(span, label)
                    .path(rel.as_str());
                if part == Part::Anchor {
                    d = d.note("the anchor must repeat a whole line of the file (spaces aside), above the change");
                }
                if part == Part::Block && self.already_applied(edit) {
                    d = d.note("the file already has this hunk's result: the patch may have been applied before");
                }
                match self.file.nearest(lines, hint_line) {
                    Some(start) => {
                        let end = (start + lines.len()).min(self.file.len());
                        let (summary, notes) = self.differences(lines, start);
                        d = d.target(self.target(start, end, format!("nearest text: {summary}")));
                        for note in notes {
                            d = d.note(note);
                        }
                        d.hint(format!(
                            "re-read lines {}-{} of {rel}; the nearest text {summary}",
                            start + 1,
                            end.max(start + 1)
                        ))
                    }
                    None => d.hint(format!(
                        "none of these lines occurs in {rel}; re-read the file before writing the patch"
                    )),
                }
            }
        }
    }

    /// Whether the edit's new block occurs in the file (and it changes something).
    fn already_applied(&self, edit: &Edit) -> bool {
        let new: Vec<Line> = edit
            .new
            .iter()
            .map(|n| match n {
                NewLine::Keep(j) => edit.old[*j].clone(),
                NewLine::Add(l) => l.clone(),
            })
            .collect();
        let changes =
            edit.new.iter().any(|n| matches!(n, NewLine::Add(_))) || new.len() != edit.old.len();
        changes && !new.is_empty() && !self.file.find_all(&new, None, 0).is_empty()
    }

    /// What differs between the old block and the file at `start`.
    fn differences(&self, lines: &[Line], start: usize) -> (String, Vec<String>) {
        let (mut indent, mut trailing, mut changed, mut missing) = (0, 0, vec![], 0);
        for (j, line) in lines.iter().enumerate() {
            let at = start + j;
            if at >= self.file.len() {
                missing += 1;
                continue;
            }
            let have = self.file.line(at);
            if have == line.text {
            } else if have.trim_end() == line.text.trim_end() {
                trailing += 1;
            } else if have.trim() == line.text.trim() {
                indent += 1;
            } else {
                changed.push((at, line.text.as_ref(), have));
            }
        }
        let mut notes = vec![];
        for (at, want, have) in changed.iter().take(3) {
            notes.push(format!(
                "line {}: the patch has `{}`, the file has `{}`",
                at + 1,
                want,
                have
            ));
        }
        if missing > 0 {
            notes.push(format!(
                "the file ends {missing} line(s) before the hunk does"
            ));
        }
        let summary = match (changed.len(), indent, trailing, missing) {
            (0, 0, 0, 0) => "matches, but not at an allowed place".to_string(),
            (0, i, _, 0) if i > 0 => "differs in indentation".to_string(),
            (0, 0, _, 0) => "differs in trailing whitespace".to_string(),
            (1, 0, 0, 0) => format!("differs in one line (line {})", changed[0].0 + 1),
            (c, i, t, m) => {
                let mut parts = vec![];
                if c > 0 {
                    parts.push(format!("{c} changed line(s)"));
                }
                if i + t > 0 {
                    parts.push(format!("{} whitespace difference(s)", i + t));
                }
                if m > 0 {
                    parts.push(format!("{m} line(s) past the end"));
                }
                format!("differs: {}", parts.join(", "))
            }
        };
        (summary, notes)
    }
}

/// Describes the new text in one pass over the file and the sorted regions:
/// unchanged stretches are ranges of the original, added lines are slices of
/// the patch text.
fn assemble<'p>(file: &FileText, edits: &'p [Edit<'_>], regions: &[Region]) -> Pieces<'p> {
    let text = file.text;
    let n = file.len();
    let dominant: &'static str = if n > 0 && file.eol(0) == "\r\n" {
        "\r\n"
    } else {
        "\n"
    };
    let had_final_newline = n == 0 || !file.eol(n - 1).is_empty();
    let mut out = Builder::new(text);
    out.push_original(0, file.prefix_len());
    let mut cursor = 0;
    let mut final_newline = None;
    let line_start = |i: usize| {
        if i < n {
            file.span_of(i, i).0
        } else {
            text.len()
        }
    };
    for region in regions {
        out.push_original(line_start(cursor), line_start(region.start));
        let edit = &edits[region.edit];
        if region.start == n && n > 0 && !had_final_newline && !edit.new.is_empty() {
            out.push_text(dominant);
        }
        for new in &edit.new {
            match new {
                NewLine::Keep(j) => {
                    let at = region.start + j;
                    out.push_original(line_start(at), line_start(at + 1));
                    if file.eol(at).is_empty() {
                        out.push_text(dominant);
                    }
                }
                NewLine::Add(line) => {
                    out.push_text(&line.text);
                    out.push_text(if edit.own_eol { "\n" } else { dominant });
                }
            }
        }
        if region.start + region.len == n {
            final_newline = Some(if edit.old_no_eol != edit.new_no_eol {
                !edit.new_no_eol
            } else {
                had_final_newline
            });
        }
        cursor = region.start + region.len;
    }
    out.push_original(line_start(cursor), text.len());
    match final_newline {
        Some(false) => out.trim_final_eol(),
        Some(true) if !out.is_empty() && !out.ends_with_newline() => out.push_text(dominant),
        _ => {}
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    //! The locator features no udiff fixture reaches: anchors, range ends,
    //! the cursor rule and the normalised pass, on hand-built edits.
    use super::*;
    use crate::apply::MemTree;
    use crate::error::Code;
    use crate::ir::Span;

    fn lines(texts: &[&'static str]) -> Vec<Line<'static>> {
        Line::unplaced(texts)
    }

    fn edit(
        old: &[&'static str],
        add: &[&'static str],
        locator: Locator<'static>,
    ) -> Edit<'static> {
        Edit {
            old: lines(old),
            new: lines(add).into_iter().map(NewLine::Add).collect(),
            old_no_eol: false,
            new_no_eol: false,
            own_eol: false,
            locator,
            span: Span::default(),
        }
    }

    fn locator(uniqueness: Uniqueness) -> Locator<'static> {
        Locator::plain(uniqueness, &[])
    }

    /// Applies `edits` to `f.txt` holding `text`: the new text, or the codes.
    fn check(text: &str, edits: Vec<Edit<'static>>) -> Result<String, Vec<(Code, String)>> {
        let tree = MemTree::default().with_file("f.txt", text);
        let path = PathRef {
            text: "f.txt".into(),
            span: Span::default(),
        };
        let op = FileOp {
            path,
            action: Action::Modify {
                edits,
                move_to: None,
            },
            span: Span::default(),
            mode: None,
            old_mode: None,
        };
        let patch = Patch {
            files: vec![op],
            ..Patch::default()
        };
        let plan = plan(&patch, &tree, None).map_err(|ds| {
            ds.into_iter()
                .map(|d| (d.code, d.message))
                .collect::<Vec<_>>()
        })?;
        Ok(match &plan.changes[0] {
            Change::Write { output, .. } => output.to_text(),
            other => format!("{other:?}"),
        })
    }

    #[test]
    fn anchor_scopes_the_block() {
        let text = "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n";
        let mut loc = locator(Uniqueness::UniqueInFile);
        assert_eq!(
            check(
                text,
                vec![edit(&["    x = 1;"], &["    x = 2;"], loc.clone())]
            )
            .unwrap_err()[0]
                .0,
            Code::AmbiguousContext
        );
        loc.anchor = Some(lines(&["fn b() {"]));
        assert_eq!(
            check(
                text,
                vec![edit(&["    x = 1;"], &["    x = 2;"], loc.clone())]
            )
            .unwrap(),
            text.replace("fn b() {\n    x = 1;", "fn b() {\n    x = 2;")
        );
        // A pure insertion goes right after the anchor.
        assert_eq!(
            check(text, vec![edit(&[], &["    y = 0;"], loc.clone())]).unwrap(),
            text.replace("fn b() {\n", "fn b() {\n    y = 0;\n")
        );
        loc.anchor = Some(lines(&["fn c() {"]));
        let errs = check(text, vec![edit(&["    x = 1;"], &[], loc.clone())]).unwrap_err();
        assert_eq!(errs[0].0, Code::ContextNotFound);
        assert!(errs[0].1.starts_with("anchor not found"), "{}", errs[0].1);
        loc.anchor = Some(lines(&["}"]));
        let errs = check(text, vec![edit(&["    x = 1;"], &[], loc)]).unwrap_err();
        assert_eq!(errs[0].0, Code::AmbiguousContext);
        assert!(
            errs[0].1.starts_with("anchor matches 2 places"),
            "{}",
            errs[0].1
        );
    }

    #[test]
    fn range_end_extends_the_region() {
        let mut loc = locator(Uniqueness::UniqueInFile);
        loc.range_end = Some(lines(&["end"]));
        let text = "start\na\nb\nend\nafter\n";
        assert_eq!(
            check(text, vec![edit(&["start"], &["X"], loc.clone())]).unwrap(),
            "X\nafter\n"
        );
        let errs = check("start\na\n", vec![edit(&["start"], &["X"], loc)]).unwrap_err();
        assert!(
            errs[0].1.starts_with("range end not found"),
            "{}",
            errs[0].1
        );
    }

    #[test]
    fn cursor_rule_takes_the_first_match_after_the_previous_edit() {
        let loc = locator(Uniqueness::FirstAfterCursor);
        let edits = vec![
            edit(&["x"], &["one"], loc.clone()),
            edit(&["x"], &["two"], loc),
        ];
        assert_eq!(check("x\nx\nx\n", edits).unwrap(), "one\ntwo\nx\n");
    }

    #[test]
    fn normalised_pass_folds_typographic_punctuation_and_keeps_file_text() {
        let mut loc = locator(Uniqueness::UniqueInFile);
        loc.relax = &[Relax::Trimmed, Relax::Normalized];
        let mut e = edit(&["say(\"hi\") - ok", "next"], &["added"], loc);
        e.new = vec![NewLine::Keep(0), NewLine::Add(lines(&["added"]).remove(0))];
        let text = "  say(\u{201C}hi\u{201D}) \u{2014} ok\nnext\n";
        assert_eq!(
            check(text, vec![e]).unwrap(),
            "  say(\u{201C}hi\u{201D}) \u{2014} ok\nadded\n"
        );
    }
}
