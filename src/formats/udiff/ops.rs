//! A section's header and hunks as a file op: renames, header-only
//! sections, adds, deletes and modifies.

use super::*;
use crate::error::Reported;

impl<'a> Lowering<'a, Udiff<'a>> {
    /// The file op a section's header and hunks make: a rename, a
    /// header-only change, or an add, delete or modify by its two sides.
    pub(super) fn file_op(
        &mut self,
        h: Header,
        edits: Vec<Edit<'a>>,
        span: Span,
    ) -> Result<FileOp<'a>, Reported> {
        let (mut old, mut new) = strip_prefixes(h.old.clone(), h.new.clone(), h.gnu);
        // `diff -N` dates a missing file at the epoch, as `patch` reads it;
        // never both sides.
        if h.old_epoch != h.new_epoch {
            let absent = if h.old_epoch { &mut old } else { &mut new };
            if let Some((side, _)) = absent {
                *side = Side::DevNull;
            }
        }
        if h.rename_from.is_some() || h.rename_to.is_some() {
            return self.renamed(&h, [&old, &new], edits, span);
        }
        let at = |text: String, span: Span| PathRef { text, span };
        match (old, new) {
            (None, None) => self.header_only(&h, span),
            (Some((Side::DevNull, _)), Some((Side::Path(p, pspan), _))) => {
                let content = self.new_file_content(edits)?;
                Ok(FileOp::new(at(p, pspan), Action::add(content), span))
            }
            (Some((Side::Path(p, pspan), _)), Some((Side::DevNull, _))) => {
                self.deletion_adds_nothing(&edits)?;
                let expect = Some(edits);
                Ok(FileOp::new(at(p, pspan), Action::Delete { expect }, span))
            }
            (Some((Side::Path(a, aspan), _)), Some((Side::Path(b, bspan), _))) => {
                if let Some((name, nspan)) = h
                    .git
                    .is_none()
                    .then(|| backup_pair(&a, aspan, &b, bspan))
                    .flatten()
                {
                    let (backup, bkspan) = if name == a { (&b, bspan) } else { (&a, aspan) };
                    self.diags.push(
                        Diagnostic::new(
                            Code::ToleratedFormatSlip,
                            format!("`{backup}` is a backup copy of `{name}`: the patch applies to `{name}`"),
                        )
                        .at(bkspan, "a backup's name, as `diff -u FILE.orig FILE` writes it")
                        .note("GNU patch and git apply read it so")
                        .hint(format!("write `{name}` on both lines")),
                    );
                    let action = Action::Modify {
                        edits,
                        move_to: None,
                    };
                    return Ok(FileOp::new(at(name, nspan), action, span));
                }
                if a != b {
                    self.diags.push(
                        Diagnostic::new(Code::RenamePathMismatch, format!("`---` names `{a}` but `+++` names `{b}`"))
                            .at(bspan, "a different path")
                            .secondary(aspan, "the old path")
                            .hint(
                                "use the same path on both lines; to rename, add `diff --git a/OLD b/NEW`, \
                                 `rename from OLD` and `rename to NEW` before them",
                            ),
                    );
                    return Err(Reported);
                }
                let action = Action::Modify {
                    edits,
                    move_to: None,
                };
                Ok(FileOp::new(at(b, bspan), action, span))
            }
            (Some((Side::DevNull, s)), Some((Side::DevNull, _)))
            | (Some((_, s)), None)
            | (None, Some((_, s))) => {
                self.diags.push(
                    Diagnostic::new(Code::MissingFileHeader, "need one real path in `---`/`+++`")
                        .at(s, "no file to patch")
                        .hint("write `--- a/PATH` and `+++ b/PATH` (or /dev/null on one side to add or delete)"),
                );
                Err(Reported)
            }
        }
    }

    /// A rename: both halves, agreeing with `---`/`+++` where they are given.
    fn renamed(
        &mut self,
        h: &Header,
        sides: [&HeaderLine; 2],
        edits: Vec<Edit<'a>>,
        span: Span,
    ) -> Result<FileOp<'a>, Reported> {
        let (Some(from), Some(to)) = (&h.rename_from, &h.rename_to) else {
            let r = h
                .rename_from
                .as_ref()
                .or(h.rename_to.as_ref())
                .ok_or(Reported)?;
            self.diags.push(
                Diagnostic::new(
                    Code::RenamePathMismatch,
                    "a rename needs both `rename from` and `rename to`",
                )
                .at(r.span, "only one half of the rename")
                .hint("write `rename from OLD` and `rename to NEW` on consecutive lines"),
            );
            return Err(Reported);
        };
        for (side, want, which) in [(sides[0], from, "---"), (sides[1], to, "+++")] {
            if let Some((Side::Path(p, pspan), _)) = side {
                if p != &want.text {
                    self.diags.push(
                        Diagnostic::new(
                            Code::RenamePathMismatch,
                            format!("`{which} {p}` disagrees with the rename header `{}`", want.text),
                        )
                        .at(*pspan, format!("this says `{p}`"))
                        .secondary(want.span, format!("the rename says `{}`", want.text))
                        .hint("use the same path in `rename from`/`rename to` and in `---`/`+++` (with a/ and b/)"),
                    );
                    return Err(Reported);
                }
            }
        }
        let action = Action::Modify {
            edits,
            move_to: Some(to.clone()),
        };
        Ok(FileOp::new(from.clone(), action, span))
    }

    /// A `diff --git` section without `---`/`+++`: an empty file added or
    /// deleted, or a mode change, on the path the git line names.
    fn header_only(&mut self, h: &Header, span: Span) -> Result<FileOp<'a>, Reported> {
        // The new side of an added file, the old side of a deleted one.
        let git_path = h.git.as_ref().and_then(|(text, span)| {
            let (a, b) = git_header_sides(text)?;
            Some((if h.new_file { b } else { a }, *span))
        });
        let Some((text, gspan)) = git_path else {
            let gspan = h.git.as_ref().map_or(span, |g| g.1);
            self.diags.push(
                Diagnostic::new(
                    Code::MissingFileHeader,
                    "cannot tell the file from this `diff --git` line",
                )
                .at(gspan, "expected `diff --git a/PATH b/PATH`")
                .hint("follow it with `--- a/PATH`, `+++ b/PATH` and the hunks"),
            );
            return Err(Reported);
        };
        let action = if h.new_file {
            Action::add(NewText::default())
        } else if h.deleted_file {
            Action::Delete {
                expect: Some(vec![]),
            }
        } else if h.mode.is_some() {
            // A mode-only change: the file's text stays.
            Action::Modify {
                edits: vec![],
                move_to: None,
            }
        } else {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingFileHeader,
                    "`diff --git` with no change after it",
                )
                .at(
                    gspan,
                    "expected `---`/`+++` and hunks, or a rename, after this",
                )
                .hint("follow it with `--- a/PATH`, `+++ b/PATH` and the hunks"),
            );
            return Err(Reported);
        };
        Ok(FileOp::new(PathRef { text, span: gspan }, action, span))
    }

    /// A deleted file (`+++ /dev/null`) lists lines; it cannot add any.
    fn deletion_adds_nothing(&mut self, edits: &[Edit<'a>]) -> Result<(), Reported> {
        let added = edits.iter().flat_map(|e| e.new).find_map(|n| match n {
            NewLine::Add(line) => Some(line.whole_line(self.text)),
            NewLine::Keep(..) => None,
        });
        if let Some(at) = added {
            self.diags.push(
                Diagnostic::new(
                    Code::InvalidHunkBody,
                    "a deleted file (`+++ /dev/null`) cannot gain lines",
                )
                .at(at, "added line in a deletion")
                .hint("a deletion lists every line of the file as `-` lines"),
            );
            return Err(Reported);
        }
        Ok(())
    }

    fn new_file_content(&mut self, edits: Vec<Edit<'a>>) -> Result<NewText<'a>, Reported> {
        let mut lines = vec![];
        let mut final_newline = true;
        for e in edits {
            if let Some(old) = e.old.first() {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidHunkBody,
                        "a new file (`--- /dev/null`) can only have `+` lines",
                    )
                    .at(
                        old.whole_line(self.text),
                        "context or removed line in a new file",
                    )
                    .hint("prefix every line of the new file with `+`"),
                );
                return Err(Reported);
            }
            lines.extend(e.new.iter().filter_map(|n| match *n {
                NewLine::Add(l) => Some(l),
                NewLine::Keep(..) => None,
            }));
            final_newline = !e.new_no_eol;
        }
        Ok(NewText {
            lines: self.keep(&lines),
            final_newline,
        })
    }
}

/// The suffixes of a backup copy, as `diff -u FILE.orig FILE` compares it.
const BACKUP_SUFFIXES: [&str; 4] = [".orig", "~", ".bak", ".old"];

/// Where one path is the other and a backup suffix (`foo.c.orig` and
/// `foo.c`, in either order): the name without it, which the patch edits.
fn backup_pair(a: &str, aspan: Span, b: &str, bspan: Span) -> Option<(String, Span)> {
    let is_backup = |long: &str, short: &str| {
        BACKUP_SUFFIXES
            .iter()
            .any(|s| long.strip_suffix(s) == Some(short))
    };
    if is_backup(a, b) {
        Some((b.to_string(), bspan))
    } else if is_backup(b, a) {
        Some((a.to_string(), aspan))
    } else {
        None
    }
}
