//! ap's operations on whole paths, files or directories alike: `RENAME`,
//! file-level `DELETE`, `CREATE` of a directory, and tolerant mode's
//! project prefix. They are operations of the shared model of their own
//! because no edit describes them: a directory has no text to locate in.

use super::plan::{mode_of, Change, OpCx, Step, TreeFile};
use crate::apply::output::{Builder, Output};
use crate::apply::tree::Entry;
use crate::error::{Code, Diagnostic};
use crate::ir::{FileOp, PathRef};
use crate::paths::RelPath;

impl OpCx<'_, '_> {
    /// ap `RENAME` of a file or a directory; done already when only the
    /// destination exists.
    pub fn rename<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        to_ref: &PathRef,
    ) -> Step<Change<'p>> {
        let to = self.resolve(to_ref)?;
        if self.made_dir(&rel) {
            // Not on disk yet, so neither gone (done already) nor a tree
            // to walk: what earlier blocks make is made where they say.
            let message = format!(
                "`{rel}` is a directory earlier blocks of this patch make; a later block cannot move it"
            );
            return self.fail(
                Diagnostic::new(Code::DuplicateFilePatch, message)
                    .at(op.path.span, "moved here, after earlier blocks made it")
                    .path(rel.as_str())
                    .hint(format!(
                        "make what goes in it under `{to}` in the first place"
                    )),
            );
        }
        let to_entry = self.entry(to_ref, &to)?;
        match (entry, to_entry) {
            // Reports `file_not_found`.
            (Entry::Missing, Entry::Missing) => {
                self.read_text(&op.path, &rel, entry)?;
            }
            (Entry::Missing, _) => {
                self.done_already(op, &rel, "the source is gone and the destination exists");
                return Ok(Change::Unchanged { path: to });
            }
            (_, Entry::Missing) => {}
            _ => {
                let message = format!("cannot rename `{rel}` onto existing `{to}`");
                return self.exists(
                    to_ref,
                    &to,
                    message,
                    "this destination exists",
                    Some("rename to a path that does not exist"),
                );
            }
        }
        self.creatable(to_ref, &to)?;
        if entry == Entry::Dir {
            if to.as_str().starts_with(&format!("{rel}/")) {
                return self.exists(
                    to_ref,
                    &to,
                    format!("cannot move `{rel}` into itself"),
                    "inside the source",
                    None,
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
            return Ok(Change::MoveTree {
                from: rel,
                to,
                files,
                dirs,
            });
        }
        let original = self.read_text(&op.path, &rel, entry)?;
        let mut b = Builder::new(&original.text);
        b.push_original(0, original.text.len());
        let pieces = b.finish();
        Ok(Change::Move {
            from: rel,
            to,
            output: Output::new(original.text, pieces).known_plain(original.plain),
            mode: mode_of(entry),
        })
    }

    /// ap file-level `DELETE`: a file, or a directory and all it holds;
    /// done already when nothing is there.
    pub fn remove<'p>(&mut self, op: &FileOp<'_>, rel: RelPath, entry: Entry) -> Step<Change<'p>> {
        match entry {
            // Made by earlier blocks, so not on disk to walk (nor missing
            // once they have run): all it holds is what they put there,
            // which `Plan::add` refuses to remove with it.
            Entry::Missing | Entry::Dir if self.made_dir(&rel) => Ok(Change::RemoveTree {
                path: rel.clone(),
                files: vec![],
                dirs: vec![rel],
            }),
            Entry::Missing => {
                self.done_already(op, &rel, "there is nothing to delete");
                Ok(Change::Unchanged { path: rel })
            }
            Entry::Dir => {
                let (files, dirs) = self.walk(&op.path, &rel)?;
                Ok(Change::RemoveTree {
                    path: rel,
                    files,
                    dirs,
                })
            }
            _ => {
                let original = self.read_text(&op.path, &rel, entry)?.text;
                Ok(Change::Delete {
                    path: rel,
                    original,
                    mode: mode_of(entry),
                })
            }
        }
    }

    /// ap `CREATE` without content: a directory (and its parents).
    pub fn create_dir<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        entry: Entry,
    ) -> Step<Change<'p>> {
        match entry {
            Entry::Missing => {
                self.creatable(&op.path, &rel)?;
                Ok(Change::CreateDir { path: rel })
            }
            Entry::Dir => Ok(Change::Unchanged { path: rel }),
            _ => self.exists(
                &op.path,
                &rel,
                format!("`{rel}` exists and is not a directory"),
                "a directory would be created here",
                None,
            ),
        }
    }

    /// The files (with text and mode) and directories under `dir`;
    /// directories innermost first, `dir` last.
    fn walk(&mut self, path: &PathRef, dir: &RelPath) -> Step<(Vec<TreeFile>, Vec<RelPath>)> {
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
                if !crate::paths::is_plain(&name) {
                    let d = crate::error::Diagnostic::new(
                        crate::error::Code::PathEscape,
                        format!("`{dir}` holds `{child}`, which no patch may move or remove"),
                    )
                    .at(
                        path.span,
                        "this directory holds git's metadata or grammar-patch's own files",
                    )
                    .path(child.as_str())
                    .hint(
                        "move or delete the files you mean one by one; `.git` is git's to change",
                    );
                    return self.fail(d);
                }
                match self.entry(path, &child)? {
                    Entry::Dir => stack.push((child, false)),
                    e @ Entry::File { mode } => {
                        let text = self.read_text(path, &child, e)?.text;
                        files.push((child, text, mode));
                    }
                    // Reports what cannot be moved or removed.
                    e => {
                        self.read_text(path, &child, e)?;
                    }
                }
            }
        }
        Ok((files, dirs))
    }

    /// `rel` without its first component, when that component is not in
    /// the root and the rest (or its directory) is.
    pub fn without_project_prefix(
        &mut self,
        path: &PathRef,
        rel: &RelPath,
    ) -> Step<Option<(RelPath, Entry)>> {
        let Some((first, rest)) = rel.as_str().split_once('/') else {
            return Ok(None);
        };
        let (Some(first), Some(shorter)) = (RelPath::new(first), RelPath::new(rest)) else {
            return Ok(None);
        };
        if self.entry(path, &first)? != Entry::Missing {
            return Ok(None);
        }
        let e = self.entry(path, &shorter)?;
        let parent_there = match shorter.ancestors().last() {
            Some(dir) => self.entry(path, dir)? == Entry::Dir,
            None => false,
        };
        Ok((e != Entry::Missing || parent_there).then_some((shorter, e)))
    }
}
