//! A file block's pending directives as file ops: the opening directive
//! (`CREATE`, `RECREATE`, a bare `DELETE`), then each modification, checked
//! against what its action takes.

use super::blocks::Pending;
use super::model::*;
use super::*;

impl<'t> Lowering<'t, Ap<'t>> {
    pub(super) fn lower_file(
        &mut self,
        path: PathRef,
        head: Span,
        eol: Option<Eol>,
        pendings: Vec<Pending<'t>>,
    ) {
        let mut base = Base::Existing;
        let mut mods = vec![];
        let count = pendings.len();
        for (i, mut p) in pendings.into_iter().enumerate() {
            let content = p.take_content().map(content_lines);
            let opening = match p.kw {
                "" | "CREATE" | "RECREATE" => self.opening(&p, i == 0, count, content),
                "DELETE" if p.is_bare() => self.bare_delete(&p, count),
                kw => {
                    mods.extend(self.modification(kw, &mut p, content).ok());
                    Opening::Nothing
                }
            };
            match opening {
                Opening::Base(b) => base = b,
                Opening::Whole(action) => {
                    self.patch.files.push(FileOp::new(path, action, head));
                    return;
                }
                Opening::Nothing => {}
            }
        }
        let edits = edits(mods);
        let text = |lines: &[NewLine<'t>]| NewText {
            lines: self.store.alloc_slice_fill_iter(added(lines)),
            final_newline: true,
        };
        let action = match base {
            Base::Existing => Action::Modify {
                edits,
                move_to: None,
            },
            Base::Create(lines) => Action::Add {
                content: text(lines),
                edits,
                overwrite: false,
            },
            Base::Recreate(lines) => Action::Add {
                content: text(lines),
                edits,
                overwrite: true,
            },
        };
        self.patch.files.push(FileOp {
            eol,
            ..FileOp::new(path, action, head)
        });
    }

    /// What a block's opening directive says: values before any action
    /// (an implicit `CREATE`), `CREATE` (with content, or a directory) or
    /// `RECREATE`. Only the block's first directive (`first`) may open it.
    fn opening(
        &mut self,
        p: &Pending<'t>,
        first: bool,
        count: usize,
        content: Option<&'t [NewLine<'t>]>,
    ) -> Opening<'t> {
        match p.kw {
            "" => {
                if let (Some(content), 1, true, true) =
                    (content, p.count, p.options.is_empty(), first)
                {
                    self.warn(
                        Code::ImplicitCreate,
                        p.span,
                        "a file block with only `content` creates the file (implicit CREATE)",
                        "read as `CREATE`",
                    );
                    return Opening::Base(Base::Create(content));
                }
                if !p.bad {
                    self.error(
                        p.span,
                        "values without an action directive",
                        "no REPLACE/INSERT_AFTER/INSERT_BEFORE/DELETE/CREATE above this",
                        "start each modification with its action: `<ID> REPLACE`, then `<ID> snippet` and `<ID> content`",
                    );
                }
                Opening::Nothing
            }
            "CREATE" if !first => {
                self.error(
                    p.span,
                    "`CREATE` after other modifications",
                    "CREATE",
                    "`CREATE` opens its file block: put it first",
                );
                Opening::Nothing
            }
            "CREATE" => {
                self.no_options(p);
                match content {
                    Some(c) => Opening::Base(Base::Create(c)),
                    None if count == 1 => Opening::Whole(Action::CreateDir),
                    None => {
                        self.error(p.span, "`CREATE` without `content` creates a directory, which takes no modifications", "CREATE", "add `<ID> content` with the file's text");
                        Opening::Nothing
                    }
                }
            }
            _ => {
                self.no_options(p);
                if !first {
                    self.error(
                        p.span,
                        "`RECREATE` after other modifications",
                        "RECREATE",
                        "`RECREATE` replaces the whole file: put it first in its block",
                    );
                    return Opening::Nothing;
                }
                match content {
                    Some(c) => Opening::Base(Base::Recreate(c)),
                    None => {
                        self.error(
                            p.span,
                            "`RECREATE` without `content`",
                            "RECREATE",
                            "add `<ID> content` with the file's new text",
                        );
                        Opening::Nothing
                    }
                }
            }
        }
    }

    /// A `DELETE` with no snippet: the whole file or directory, alone in
    /// its block.
    fn bare_delete(&mut self, p: &Pending<'t>, count: usize) -> Opening<'t> {
        if count == 1 {
            return Opening::Whole(Action::Remove);
        }
        self.error(
            p.span,
            "a bare `DELETE` (which deletes the whole file) beside other modifications",
            "DELETE with no snippet",
            "to delete lines, give `<ID> snippet`; to delete the file, put `DELETE` alone in its own `FILE` block",
        );
        Opening::Nothing
    }

    fn no_options(&mut self, p: &Pending<'t>) {
        for (kw, span, _) in &p.options {
            self.error(
                *span,
                format!("`{kw}` does not apply to `{}`", p.kw),
                "option without a located region",
                "options belong to REPLACE, DELETE, INSERT_AFTER and INSERT_BEFORE",
            );
        }
    }

    fn modification(
        &mut self,
        kw: &'t str,
        p: &mut Pending<'t>,
        content: Option<&'t [NewLine<'t>]>,
    ) -> Result<Modification<'t>, Reported> {
        let mut kind = match kw {
            "REPLACE" => ModKind::Replace,
            "INSERT_AFTER" => ModKind::InsertAfter,
            "INSERT_BEFORE" => ModKind::InsertBefore,
            _ => ModKind::Delete,
        };
        let mut anchor = p.take_find("anchor");
        let snippet = self.snippet(kw, p, &mut anchor)?;
        let tail = self.tail(kw, kind, p)?;
        let content = self.content(kw, &mut kind, p, content)?;
        let mut m = Modification {
            kind,
            anchor,
            snippet,
            tail,
            content,
            leading_blank: 0,
            trailing_blank: 0,
            scope_end: false,
            span: p.span,
        };
        for &(opt, _, n) in &p.options {
            match opt {
                "include_leading_blank_lines" => m.leading_blank = n.unwrap_or(1),
                "include_trailing_blank_lines" => m.trailing_blank = n.unwrap_or(1),
                _ => m.scope_end = n != Some(0),
            }
        }
        Ok(m)
    }

    /// The modification's `snippet` (or, tolerant, its anchor standing in).
    fn snippet(
        &mut self,
        kw: &str,
        p: &mut Pending<'t>,
        anchor: &mut Option<&'t [Line<'t>]>,
    ) -> Result<Target<'t>, Reported> {
        let snippet = match p.take_find("snippet") {
            Some(lines) => lines,
            None => match anchor.take() {
                Some(a) if self.own.tolerant => {
                    self.warn(Code::ToleratedFormatSlip, p.span, format!("`{kw}` has an `anchor` but no `snippet`; the anchor is used as the snippet"), "no snippet");
                    a
                }
                a => {
                    let hint = if a.is_some() {
                        "an anchor only narrows the search; add `<ID> snippet` with the lines to change (or apply with --tolerant)"
                    } else {
                        "add `<ID> snippet` and, on the lines after it, the text to find"
                    };
                    self.error(
                        p.span,
                        format!("`{kw}` without a `snippet`"),
                        "nothing says where",
                        hint,
                    );
                    return Err(Reported);
                }
            },
        };
        let Some(target) = target(snippet) else {
            self.error(
                p.value("snippet").unwrap_or(p.span),
                "an empty `snippet`",
                "no lines to find",
                "put the lines to find under `<ID> snippet`",
            );
            return Err(Reported);
        };
        Ok(target)
    }

    /// The range end, if there is one.
    fn tail(
        &mut self,
        kw: &str,
        kind: ModKind,
        p: &mut Pending<'t>,
    ) -> Result<Option<Target<'t>>, Reported> {
        let span = p.value("snippet_tail");
        Ok(match (span, p.take_find("snippet_tail")) {
            (Some(span), Some(lines)) => {
                if matches!(kind, ModKind::InsertAfter | ModKind::InsertBefore) {
                    self.error(
                        span,
                        format!("`snippet_tail` with `{kw}`"),
                        "a range",
                        "an insertion needs one point: use a single `snippet`",
                    );
                    return Err(Reported);
                }
                match target(lines) {
                    Some(Target::Start) | None => {
                        self.error(span, "an empty or `^` `snippet_tail`", "no end to find", "put the last lines of the range under `<ID> snippet_tail` (or `$` for the end of the file)");
                        return Err(Reported);
                    }
                    t => t,
                }
            }
            _ => None,
        })
    }

    /// The new lines; an empty `REPLACE` content is a `DELETE` in 3.2.
    fn content(
        &mut self,
        kw: &str,
        kind: &mut ModKind,
        p: &Pending<'t>,
        content: Option<&'t [NewLine<'t>]>,
    ) -> Result<&'t [NewLine<'t>], Reported> {
        Ok(match (*kind, content) {
            (ModKind::Delete, Some(_)) => {
                self.error(
                    p.value("content").unwrap_or(p.span),
                    "`DELETE` takes no `content`",
                    "content",
                    "use REPLACE to change lines, DELETE only to remove them",
                );
                return Err(Reported);
            }
            (ModKind::Delete, None) => &[],
            (_, None) => {
                self.error(
                    p.span,
                    format!("`{kw}` without `content`"),
                    "no new text",
                    "add `<ID> content` and the new lines under it",
                );
                return Err(Reported);
            }
            (ModKind::Replace, Some(c)) if c.is_empty() => {
                let at = p.value("content").unwrap_or(p.span);
                if self.own.v31 {
                    self.error(
                        at,
                        "`REPLACE` with an empty `content`",
                        "empty",
                        "to remove the lines, use `DELETE` (ap 3.1 has no empty REPLACE)",
                    );
                    return Err(Reported);
                }
                self.warn(
                    Code::EmptyContentAsDelete,
                    at,
                    "an empty `content` makes this `REPLACE` a `DELETE`",
                    "empty content",
                );
                *kind = ModKind::Delete;
                c
            }
            (_, Some(c)) => c,
        })
    }
}
