//! One function per file operation: create, delete, modify (and move), and
//! git's links and modes. Each reads what it needs through [`OpCx`] and
//! returns the [`Change`]; the edits of a file are `edit.rs`'s, links
//! `links.rs`'s.

use super::edit::Source;
use super::plan::{mode_of, Change, OpCx, Step};
use crate::apply::matching::find::Keys;
use crate::apply::matching::text::FileText;
use crate::apply::output::{Builder, Output};
use crate::apply::tree::Entry;
use crate::error::{Code, Diagnostic};
use crate::ir::{Edit, FileOp, GitMode, Line, NewText, PathRef};
use crate::paths::RelPath;

impl<'s> OpCx<'_, 's> {
    /// A new file (`Add`): created, or `unchanged` where the same content
    /// is there, or written over whatever is there with `overwrite`.
    pub fn add<'p>(
        &mut self,
        op: &'p FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        content: &'p NewText<'_>,
        edits: &'p [Edit<'_>],
        overwrite: bool,
    ) -> Step<Change<'p>>
    where
        's: 'p,
    {
        let skip = self.policy.skip_applied;
        let current = match entry {
            Entry::Missing => {
                self.creatable(&op.path, &rel)?;
                None
            }
            Entry::File { .. } => Some(self.read_text(&op.path, &rel, entry)?),
            _ => {
                return self.exists(
                    &op.path,
                    &rel,
                    format!("`{rel}` already exists and is not a file"),
                    "something else is at this path",
                    None,
                )
            }
        };
        let source = match current {
            None => Source::New(content),
            Some(current) if overwrite => {
                if edits.is_empty() && skip && same_lines(&current.text, content.lines) {
                    self.done_already(op, &rel, "the file already has this content");
                    return Ok(Change::Unchanged { path: rel });
                }
                Source::Over(current, content)
            }
            Some(current) => {
                let same = if skip {
                    same_lines(&current.text, content.lines)
                } else {
                    render_new(content, op).equals(&current.text)
                };
                if !same {
                    let hint = self.policy.advice.update;
                    return self.exists(
                        &op.path,
                        &rel,
                        format!("`{rel}` already exists with other content"),
                        "this file would be created",
                        Some(hint),
                    );
                }
                if skip {
                    self.done_already(op, &rel, "the file exists with this content");
                }
                if edits.is_empty() {
                    return Ok(Change::Unchanged { path: rel });
                }
                Source::File(current, None)
            }
        };
        let existed = matches!(entry, Entry::File { .. });
        let output = self.edit_text(op, &rel, source, edits)?;
        Ok(match (existed, output.is_unchanged()) {
            (false, _) => Change::Create {
                path: rel,
                output,
                mode: (op.mode == Some(GitMode::Executable)).then_some(0o755),
            },
            (true, true) => Change::Unchanged { path: rel },
            (true, false) => Change::Write {
                path: rel,
                output,
                mode: mode_of(entry),
            },
        })
    }

    /// The edits' keys, made now where `rel` is still read ahead: the
    /// parse of a large patch often ends first, and the keys need no text
    /// (`None`: [`split_expecting`](crate::apply::matching::find::split_expecting)
    /// makes them).
    fn keys_ahead(&self, rel: &RelPath, edits: &[Edit<'_>]) -> Option<Keys> {
        self.tree.reads_ahead(rel).then(|| Keys::of(edits))
    }

    /// Deleting a file; with `expect`, its edits must leave it empty.
    pub fn delete<'p>(
        &mut self,
        op: &'p FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        expect: Option<&'p [Edit<'_>]>,
    ) -> Step<Change<'p>>
    where
        's: 'p,
    {
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
        let keys = expect.and_then(|edits| self.keys_ahead(&rel, edits));
        let original = self.read_text(&op.path, &rel, entry)?;
        let mode = mode_of(entry);
        let Some(edits) = expect else {
            return Ok(Change::Delete {
                path: rel,
                original: original.text,
                mode,
            });
        };
        let rest = self.edit_text(op, &rel, Source::File(original, keys), edits)?;
        if !rest.is_empty() {
            let n = rest.to_vec().iter().filter(|&&b| b == b'\n').count().max(1);
            return self.fail(
                Diagnostic::new(
                    Code::ContextNotFound,
                    format!("deleting `{rel}`: {n} line(s) would remain"),
                )
                .at(op.span, "this deletion does not list the whole file")
                .path(rel.as_str())
                .hint(
                    "a deletion must list every line of the file as a `-` line; re-read the file",
                ),
            );
        }
        Ok(Change::Delete {
            path: rel,
            original: rest.original,
            mode,
        })
    }

    /// Editing a file in place, then moving it where `move_to` says.
    pub fn modify<'p>(
        &mut self,
        op: &'p FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        edits: &'p [Edit<'_>],
        move_to: Option<&PathRef>,
    ) -> Step<Change<'p>>
    where
        's: 'p,
    {
        let keys = self.keys_ahead(&rel, edits);
        let original = self.read_text(&op.path, &rel, entry)?;
        let output = self.edit_text(op, &rel, Source::File(original, keys), edits)?;
        let mode = mode_of(entry);
        let to = match move_to {
            Some(to_ref) => Some((to_ref, self.resolve(to_ref)?)),
            None => None,
        };
        let Some((to_ref, to)) = to.filter(|(_, to)| *to != rel) else {
            if output.is_unchanged() {
                return Ok(Change::Unchanged { path: rel });
            }
            return Ok(Change::Write {
                path: rel,
                output,
                mode,
            });
        };
        self.movable(to_ref, &to, &rel)?;
        Ok(Change::Move {
            from: rel,
            to,
            output,
            mode,
        })
    }

    /// Checks that `from` can move to `to`: nothing there, and its parents
    /// directories or missing.
    pub fn movable(&mut self, to_ref: &PathRef, to: &RelPath, from: &RelPath) -> Step<()> {
        if self.entry(to_ref, to)? != Entry::Missing {
            let message = format!("cannot move `{from}` onto existing `{to}`");
            return self.exists(
                to_ref,
                to,
                message,
                "this destination exists",
                Some("move to a path that does not exist, or delete the destination first"),
            );
        }
        self.creatable(to_ref, to)
    }

    /// git's `old mode` (or the `index` line's mode) against the file: a
    /// difference is a warning, and the patch applies, as with `git apply`.
    pub fn check_old_mode(&mut self, op: &FileOp<'_>, rel: &RelPath, entry: Entry) {
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
    pub fn chmod<'p>(&mut self, op: &FileOp<'_>, change: &Change<'p>) -> Option<Change<'p>> {
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
}

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
    let file = FileText::with_breaks(text, false);
    file.len() == lines.len()
        && lines
            .iter()
            .enumerate()
            .all(|(i, l)| file.line(i) == l.text)
}

/// A new file: each line as the patch gives it (a `\r` it shows kept), and
/// `\n` or the line end the op asks for.
pub fn render_new<'p>(content: &'p NewText<'_>, op: &FileOp<'_>) -> Output<'p> {
    let eol = op.eol.map_or("\n", |e| e.as_str());
    let mut out = Builder::new("");
    for line in content.lines {
        out.push_text(line.text);
        out.push_text(eol);
    }
    if !content.final_newline {
        out.trim_final_eol();
    }
    Output::new(String::new(), out.finish())
}
