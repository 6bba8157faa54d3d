//! `GIT binary patch` sections: the literal hunks' bytes, as a file op
//! whose whole old and new text are those bytes.

use pest::iterators::Pair;

use super::*;
use crate::error::Reported;

impl<'a> Lowering<'a, Udiff<'a>> {
    /// Decodes a `GIT binary patch` section; a delta hunk, or data that
    /// does not decode, is an error.
    pub(super) fn binary(&mut self, pair: &Pair<Rule>) -> Result<Binary, Reported> {
        let first_line = self.line_span(pair);
        let first_line = Span::new(
            first_line.start,
            first_line.start + "GIT binary patch".len(),
        );
        let lines: Vec<&str> = pair.as_str().lines().skip(1).collect();
        let (code, what, hint) = match git_binary::decode(&lines, self.own.contents) {
            Ok((Hunk::Literal(new), old)) => match old {
                None | Some(Hunk::Literal(_)) => {
                    let old = old.map(|h| match h {
                        Hunk::Literal(b) => b,
                        Hunk::Delta => vec![],
                    });
                    return Ok(Binary { new, old });
                }
                Some(Hunk::Delta) => (
                    Code::UnsupportedGitPatchFeature,
                    "binary delta hunks are not supported".to_string(),
                    "make the diff with `git diff --binary --full-index` against a tree where the file is new, or leave the file out",
                ),
            },
            Ok((Hunk::Delta, _)) => (
                Code::UnsupportedGitPatchFeature,
                "binary delta hunks are not supported".to_string(),
                "literal binary hunks are applied; leave this file out, or apply the patch with git",
            ),
            Err(e) => (
                Code::InvalidHunkBody,
                format!("the binary patch does not decode: {e}"),
                "binary data is written by `git diff --binary`; do not edit it",
            ),
        };
        self.diags.push(
            Diagnostic::new(code, what)
                .at(first_line, "this binary hunk")
                .hint(hint),
        );
        Err(Reported)
    }

    /// A file patch of binary literals: its bytes as lines, each keeping
    /// its own line end; a change replaces the whole file, whose old bytes
    /// must be what the reverse literal says.
    pub(super) fn binary_op(
        &mut self,
        h: &Header,
        data: Binary,
        at: Span,
        span: Span,
    ) -> Result<FileOp<'a>, Reported> {
        let sides = h
            .git
            .as_ref()
            .and_then(|(git, gspan)| Some((git_header_sides(git)?, gspan)));
        let Some(((a, b), gspan)) = sides else {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingFileHeader,
                    "a binary patch needs its `diff --git a/PATH b/PATH` line",
                )
                .at(at, "no file named for this binary patch")
                .hint("give the section's `diff --git` line, as git writes it"),
            );
            return Err(Reported);
        };
        let path = |text: String| PathRef { text, span: *gspan };
        let store = self.store;
        let old = data.old.map(|b| binary_lines(b, store));
        let (new_lines, new_eol) = binary_lines(data.new, store);
        let action = if h.new_file {
            Action::add(NewText {
                lines: self.keep(&new_lines),
                final_newline: new_eol,
            })
        } else {
            let Some((old_lines, old_eol)) = old else {
                self.diags.push(
                    Diagnostic::new(
                        Code::UnsupportedGitPatchFeature,
                        "a binary change without the old bytes",
                    )
                    .at(at, "no reverse literal to check the file against")
                    .hint("make the diff with `git diff --binary`, which states both sides"),
                );
                return Err(Reported);
            };
            let whole = self.whole_file(old_lines, old_eol, new_lines, new_eol, h.deleted_file, at);
            if h.deleted_file {
                Action::Delete {
                    expect: Some(vec![whole]),
                }
            } else {
                Action::Modify {
                    edits: vec![whole],
                    move_to: (a != b).then(|| path(b.clone())),
                }
            }
        };
        Ok(FileOp::new(
            path(if h.new_file { b } else { a }),
            action,
            span,
        ))
    }

    /// The one edit of a binary change: the whole file, whose old bytes
    /// must be `old_lines`, becomes `new_lines` (nothing, when `deleted`).
    fn whole_file(
        &mut self,
        old_lines: Vec<Line<'a>>,
        old_eol: bool,
        new_lines: Vec<Line<'a>>,
        new_eol: bool,
        deleted: bool,
        at: Span,
    ) -> Edit<'a> {
        // The file's lines are matched without their `\r\n`.
        let ended = old_lines.len().saturating_sub(usize::from(!old_eol));
        let old_lines: Vec<_> = old_lines
            .into_iter()
            .enumerate()
            .map(|(i, l)| match l.text.strip_suffix('\r') {
                Some(text) if i < ended => Line::of(text),
                _ => l,
            })
            .collect();
        let new_lines: Vec<_> = match deleted {
            true => vec![],
            false => new_lines.into_iter().map(NewLine::Add).collect(),
        };
        Edit {
            old: self.keep(&old_lines),
            new: self.keep(&new_lines),
            old_no_eol: !old_eol,
            new_no_eol: !new_eol && !deleted,
            own_eol: true,
            place: Place::Replace,
            locator: Locator {
                hint: Some(Hint::Whole),
                ..Locator::plain(Uniqueness::UniqueInFile, Levels::of(&[Level::Exact]))
            },
            span: at,
        }
    }
}

/// The bytes of a binary file patch.
pub(super) struct Binary {
    new: Vec<u8>,
    old: Option<Vec<u8>>,
}

/// Bytes as patch lines (text standing for bytes, see `lossless`): split
/// at `\n`, a `\r` kept (added lines carry their own line ends), and
/// whether the last line ends with `\n`. They are made here, so they
/// have no span in the patch.
pub(super) fn binary_lines(bytes: Vec<u8>, store: &bumpalo::Bump) -> (Vec<Line<'_>>, bool) {
    let text: &str = store.alloc_str(&crate::lossless::decode(bytes));
    let final_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines = if text.is_empty() {
        vec![]
    } else {
        body.split('\n').map(Line::of).collect()
    };
    (lines, final_newline)
}
