//! Unified diff: the generated parser for `grammars/udiff.pest` and the
//! lowering of its parse tree into the shared model. Matching, paths and I/O
//! are the applier's; this module only says what the diff means.
//!
//! Lowering decisions (the README lists them too):
//! - `a/` is stripped from old paths and `b/` from new paths only when every
//!   real path of the file patch carries its prefix, as git writes them.
//! - `rename from`/`rename to` are authoritative; `---`/`+++` must agree.
//! - Without rename headers, different `---`/`+++` paths are refused rather
//!   than guessed at.
//! - A hunk's start line is a hint (`Hint::Near`); counts are advisory and
//!   only decide whether empty lines after the last hunk line are blank
//!   context or a separator.

use std::borrow::Cow;

use pest::iterators::{Pair, Pairs};
use pest::Parser;
use pest_derive::Parser;

use super::git_binary::{self, Hunk};
use super::lowering::{rule_words, Lowering};
use super::{rule_names, syntax_error};
use crate::error::{Code, Diagnostic};
use crate::ir::{
    Action, Advice, Edit, FileOp, GitMode, Hint, Level, Line, Locator, NewLine, NewText, Patch,
    PathRef, Place, Span, Uniqueness,
};

#[derive(Parser)]
#[grammar = "../grammars/udiff.pest"]
struct UdiffParser;

/// Human names for the rules pest reports as expected.
fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::EOI => "the end of the patch",
        Rule::git_file
        | Rule::git_meta_file
        | Rule::loose_git_file
        | Rule::git_header
        | Rule::git_ab_header
        | Rule::gnu_diff_line
        | Rule::only_in_line
        | Rule::binary_files_line => "`diff --git a/PATH b/PATH`",
        Rule::plain_file
        | Rule::loose_plain_file
        | Rule::headerless_file
        | Rule::headerless_body
        | Rule::old_file
        | Rule::old_null
        | Rule::old_real => "`--- a/PATH` (or `--- /dev/null`)",
        Rule::new_file | Rule::new_null | Rule::new_real => "`+++ b/PATH` (or `+++ /dev/null`)",
        Rule::hunk
        | Rule::add_hunk
        | Rule::delete_hunk
        | Rule::loose_hunk
        | Rule::hunk_header
        | Rule::bad_hunk_header => "a hunk header `@@ -OLD,COUNT +NEW,COUNT @@`",
        Rule::context_line
        | Rule::removed_line
        | Rule::added_line
        | Rule::no_newline_line
        | Rule::empty_line => "a hunk line (starting with ` `, `-`, `+` or `\\`)",
        Rule::index_line
        | Rule::similarity_line
        | Rule::new_file_mode
        | Rule::deleted_file_mode
        | Rule::old_mode
        | Rule::new_mode
        | Rule::rename_from
        | Rule::rename_to
        | Rule::unsupported_line => "a git extended header line",
        other => return rule_words(other),
    }
    .to_string()
}

const SYNTAX_HINT: &str =
    "a unified diff is `--- a/PATH`, `+++ b/PATH`, then hunks: `@@ -OLD,COUNT +NEW,COUNT @@` \
     followed by lines that each start with ` ` (context), `-` (removed) or `+` (added)";

/// Parses and lowers `text[body]`; spans are offsets into `text`.
pub fn parse(text: &str, body: Span) -> Result<(Patch<'_>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    let pairs = UdiffParser::parse(Rule::patch, input).map_err(|e| {
        vec![syntax_error(e, text, body.start, rule_name, |_| {
            SYNTAX_HINT
        })]
    })?;
    let mut lower = Lower::new(text, body.start, Udiff);
    lower.patch.policy.advice = Advice {
        block: "hunk context",
        disambiguate: "add context lines that occur only near the intended place, \
                       or correct the start line in the hunk header",
        create: "create the file with `--- /dev/null` and `+++ b/PATH`",
        update: "edit the existing file with `--- a/PATH`, `+++ b/PATH` and hunks instead of `--- /dev/null`",
        ..Advice::default()
    };
    for pair in pairs.flatten().filter(|p| {
        matches!(
            p.as_rule(),
            Rule::git_file
                | Rule::git_meta_file
                | Rule::loose_git_file
                | Rule::plain_file
                | Rule::loose_plain_file
                | Rule::headerless_file
                | Rule::binary_files_line
        )
    }) {
        if pair.as_rule() == Rule::binary_files_line {
            lower.unsupported(&pair);
        } else {
            lower.file(pair);
        }
    }
    lower.finish()
}

/// The names of the grammar rules in the parse tree of `text`, or `None`
/// when it does not parse (for checking the Lark export against pest).
pub fn rules_used(text: &str) -> Option<std::collections::BTreeSet<String>> {
    UdiffParser::parse(Rule::patch, text).ok().map(rule_names)
}

/// The Udiff lowering: the shared one, with nothing of its own.
struct Udiff;

type Lower<'a> = Lowering<'a, Udiff>;

/// One side of the `---`/`+++` pair.
#[derive(Clone)]
enum Side {
    DevNull,
    Path(String, Span),
}

/// A `---` or `+++` line: its side and the line's span.
type HeaderLine = Option<(Side, Span)>;

/// What a file patch said before its hunks.
#[derive(Default)]
struct Header {
    git: Option<(String, Span)>,
    old: HeaderLine,
    new: HeaderLine,
    rename_from: Option<PathRef>,
    rename_to: Option<PathRef>,
    new_file: bool,
    deleted_file: bool,
    /// `new file mode` or `new mode`.
    mode: Option<GitMode>,
    /// `old mode`, `deleted file mode`, or the mode of the `index` line.
    old_mode: Option<(GitMode, Span)>,
    headerless: bool,
    unsupported: bool,
    /// GNU diff's `diff -ruN OLD NEW` line came first.
    gnu: bool,
    /// `GIT binary patch` literals: the new bytes, the old ones if given.
    binary: Option<(Binary, Span)>,
    /// A side dated at the Unix epoch: GNU `diff -N`'s missing file.
    old_epoch: bool,
    new_epoch: bool,
}

impl<'a> Lowering<'a, Udiff> {
    fn file(&mut self, pair: Pair<'a, Rule>) {
        let file_span = self.span(&pair);
        let mut h = Header::default();
        let mut hunks = vec![];
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::headerless_body => {
                    h.headerless = true;
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::old_file => h.old = Some((self.side(&q), self.line_span(&q))),
                            Rule::new_file => h.new = Some((self.side(&q), self.line_span(&q))),
                            _ => hunks.push(q),
                        }
                    }
                }
                Rule::hunk | Rule::add_hunk | Rule::delete_hunk | Rule::loose_hunk => hunks.push(p),
                _ => self.header_line(&mut h, p),
            }
        }
        if h.headerless || (h.git.is_none() && (h.old.is_none() || h.new.is_none())) {
            let span = hunks
                .first()
                .map(|p| self.line_span(&p.clone().into_inner().next().unwrap_or(p.clone())));
            let mut d = Diagnostic::new(Code::MissingFileHeader, "hunk without a `---`/`+++` file header pair")
                .hint("put `--- a/PATH` and `+++ b/PATH` on the two lines before the first `@@` of each file");
            if let Some(span) = span {
                d = d.at(span, "this hunk has no file to apply to");
            }
            self.diags.push(d);
            return;
        }
        let mut edits = self.hunks(hunks);
        let own_eol = edits.iter().any(|e| e.own_eol);
        for e in &mut edits {
            e.own_eol = own_eol;
        }
        if h.unsupported {
            return;
        }
        let (mode, old_mode) = (h.mode, h.old_mode);
        let op = match h.binary.take() {
            Some((data, span)) => self.binary_op(&h, data, span, file_span),
            None => self.file_op(h, edits, file_span),
        };
        if let Some(mut op) = op {
            op.mode = mode;
            op.old_mode = old_mode;
            self.patch.files.push(op);
        }
    }

    /// One line of a section's header, into `h`.
    fn header_line(&mut self, h: &mut Header, p: Pair<'a, Rule>) {
        match p.as_rule() {
            Rule::git_header | Rule::git_ab_header => {
                let rest = p.as_str().trim_end_matches('\n');
                let rest = rest.strip_prefix("diff --git ").unwrap_or(rest);
                h.git = Some((rest.to_string(), self.line_span(&p)));
            }
            Rule::index_line => {
                // `index 83db48f..bf269f4 100644`: the mode it ends with.
                let mode = p.as_str().trim_end().rsplit_once(' ').map(|(_, m)| m);
                if let Some(mode) = mode.and_then(git_mode) {
                    h.old_mode = h.old_mode.or(Some((mode, self.line_span(&p))));
                }
                self.metadata(&p);
            }
            Rule::similarity_line => self.metadata(&p),
            Rule::old_mode => {
                h.old_mode = self.mode(&p).map(|m| (m, self.line_span(&p)));
            }
            Rule::new_mode => {
                h.mode = self.mode(&p);
            }
            Rule::new_file_mode => {
                h.new_file = true;
                h.mode = self.mode(&p);
            }
            Rule::deleted_file_mode => {
                h.deleted_file = true;
                h.old_mode = self.mode(&p).map(|m| (m, self.line_span(&p)));
            }
            Rule::rename_from => h.rename_from = Some(self.path_ref(p)),
            Rule::rename_to => h.rename_to = Some(self.path_ref(p)),
            Rule::unsupported_line if p.as_str().starts_with("GIT binary patch") => {
                match self.binary(&p) {
                    Some(data) => h.binary = Some((data, self.line_span(&p))),
                    None => h.unsupported = true,
                }
            }
            Rule::unsupported_line => {
                h.unsupported = true;
                self.unsupported(&p);
            }
            Rule::old_file | Rule::old_null | Rule::old_real => {
                h.old_epoch = has_epoch_time(&p);
                h.old = Some((self.side(&p), self.line_span(&p)))
            }
            Rule::new_file | Rule::new_null | Rule::new_real => {
                h.new_epoch = has_epoch_time(&p);
                h.new = Some((self.side(&p), self.line_span(&p)))
            }
            Rule::gnu_diff_line => {
                h.gnu = true;
                self.metadata(&p);
            }
            _ => {}
        }
    }

    fn metadata(&mut self, pair: &Pair<Rule>) {
        self.patch
            .ignored_metadata
            .push(pair.as_str().trim_end().to_string());
    }

    /// A mode line: what it says the file is. Applied, so not metadata.
    fn mode(&mut self, pair: &Pair<Rule>) -> Option<GitMode> {
        let mode = pair.clone().into_inner().next().map_or("", |m| m.as_str());
        if mode == "160000" {
            self.diags.push(
                Diagnostic::new(
                    Code::UnsupportedGitPatchFeature,
                    "submodule changes are not supported",
                )
                .at(self.line_span(pair), "mode 160000 is a submodule")
                .hint("leave submodules out of the patch; update them with git"),
            );
        }
        git_mode(mode)
    }

    /// Decodes a `GIT binary patch` section; a delta hunk, or data that
    /// does not decode, is an error.
    fn binary(&mut self, pair: &Pair<Rule>) -> Option<Binary> {
        let first_line = self.line_span(pair);
        let first_line = Span::new(
            first_line.start,
            first_line.start + "GIT binary patch".len(),
        );
        let lines: Vec<&str> = pair.as_str().lines().skip(1).collect();
        let (code, what, hint) = match git_binary::decode(&lines) {
            Ok((Hunk::Literal(new), old)) => match old {
                None | Some(Hunk::Literal(_)) => {
                    let old = old.map(|h| match h {
                        Hunk::Literal(b) => b,
                        Hunk::Delta => vec![],
                    });
                    return Some(Binary { new, old });
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
        None
    }

    /// A file patch of binary literals: its bytes as lines, each keeping
    /// its own line end; a change replaces the whole file, whose old bytes
    /// must be what the reverse literal says.
    fn binary_op(&mut self, h: &Header, data: Binary, at: Span, span: Span) -> Option<FileOp<'a>> {
        let Some((git, gspan)) = &h.git else {
            return None;
        };
        let (a, b) = git_header_sides(git)?;
        let path = |text: String| PathRef { text, span: *gspan };
        let old = data.old.map(|bytes| binary_lines(bytes, at));
        let (new_lines, new_eol) = binary_lines(data.new, at);
        let action = if h.new_file {
            Action::add(NewText {
                lines: new_lines,
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
                return None;
            };
            // The file's lines are matched without their `\r\n`.
            let ended = old_lines.len().saturating_sub(usize::from(!old_eol));
            let old_lines = old_lines
                .into_iter()
                .enumerate()
                .map(|(i, mut l)| {
                    if i < ended && l.text.ends_with('\r') {
                        l.text.to_mut().pop();
                    }
                    l
                })
                .collect();
            let whole = Edit {
                old: old_lines,
                new: if h.deleted_file {
                    vec![]
                } else {
                    new_lines.into_iter().map(NewLine::Add).collect()
                },
                old_no_eol: !old_eol,
                new_no_eol: !new_eol && !h.deleted_file,
                own_eol: true,
                place: Place::Replace,
                locator: Locator {
                    hint: Some(Hint::Whole),
                    ..Locator::plain(Uniqueness::UniqueInFile, &[Level::Exact])
                },
                span: at,
            };
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
        Some(FileOp::new(
            path(if h.new_file { b } else { a }),
            action,
            span,
        ))
    }

    fn unsupported(&mut self, pair: &Pair<Rule>) {
        let text = pair.as_str();
        let (what, hint) = if text.starts_with("copy") {
            (
                "copies are not supported",
                "write the copy as a new file: `--- /dev/null`, `+++ b/NEW`, and its lines as `+` lines",
            )
        } else {
            (
                "a binary file changed, but the diff has no bytes for it",
                "make the diff with `git diff --binary` (its literal hunks are applied), or leave the file out",
            )
        };
        let first_line = Span::new(
            self.span(pair).start,
            self.span(pair).start + text.find('\n').unwrap_or(0),
        );
        self.diags.push(
            Diagnostic::new(Code::UnsupportedGitPatchFeature, what)
                .at(first_line, "outside the supported unified-diff subset")
                .hint(hint),
        );
    }

    fn side(&self, pair: &Pair<Rule>) -> Side {
        let Some(inner) = pair.clone().into_inner().next() else {
            return Side::DevNull;
        };
        match inner.as_rule() {
            Rule::null_path => Side::DevNull,
            Rule::a_path | Rule::b_path => {
                Side::Path(decode_path(inner.as_str()), self.span(&inner))
            }
            _ => match inner.into_inner().find(|p| p.as_rule() == Rule::path) {
                Some(path) => Side::Path(decode_path(path.as_str()), self.span(&path)),
                None => Side::DevNull,
            },
        }
    }

    fn path_ref(&self, pair: Pair<Rule>) -> PathRef {
        let span = self.line_span(&pair);
        let path = pair.into_inner().find(|p| p.as_rule() == Rule::path);
        match path {
            Some(p) => PathRef {
                text: decode_path(p.as_str()),
                span: self.span(&p),
            },
            None => PathRef {
                text: String::new(),
                span,
            },
        }
    }

    fn hunks(&mut self, hunks: Vec<Pair<'a, Rule>>) -> Vec<Edit<'a>> {
        hunks.into_iter().filter_map(|h| self.hunk(h)).collect()
    }

    fn hunk(&mut self, pair: Pair<'a, Rule>) -> Option<Edit<'a>> {
        let span = self.line_span(&pair);
        let mut inner = pair.into_inner();
        let header = inner.next()?;
        let header_span = self.line_span(&header);
        if header.as_rule() == Rule::bad_hunk_header {
            self.bad_hunk_header(&header, header_span);
            return None;
        }
        let ranges: Vec<(usize, Option<usize>)> = header
            .into_inner()
            .filter(|p| p.as_rule() == Rule::range)
            .map(|r| range(r.into_inner()))
            .collect();
        let [(old_start, old_count), (_, new_count)] = ranges[..] else {
            return None;
        };

        let mut edit = Edit {
            old: vec![],
            new: vec![],
            old_no_eol: false,
            new_no_eol: false,
            own_eol: false,
            place: Place::Replace,
            locator: Locator::plain(
                Uniqueness::UniqueInFile,
                &[Level::Exact, Level::TrailingWhitespace],
            ),
            span,
        };
        let trailing_empty = self.hunk_body(&mut edit, inner);
        self.drop_separator(&mut edit, old_count, &trailing_empty);
        self.check_counts(&edit, header_span, old_count, new_count);
        edit.locator.at_eof = edit.old_no_eol;
        // `@@ -l,0` inserts after line l; otherwise the block starts at line l.
        let hint = if old_count == Some(0) {
            old_start
        } else {
            old_start.saturating_sub(1)
        };
        edit.locator.hint = Some(Hint::Near(hint));
        Some(edit)
    }

    fn bad_hunk_header(&mut self, header: &Pair<'a, Rule>, header_span: Span) {
        let long = header
            .as_str()
            .split(|c: char| !c.is_ascii_digit())
            .any(|run| run.len() > 9);
        let what = if long {
            "a number in the hunk header is too large (at most 9 digits)"
        } else {
            "malformed hunk header"
        };
        self.diags.push(
                Diagnostic::new(Code::InvalidHunkHeader, what)
                    .at(header_span, "expected `@@ -OLD_START,OLD_COUNT +NEW_START,NEW_COUNT @@`")
                    .hint("write the header as `@@ -12,5 +12,6 @@`; the numbers may be approximate, the context lines decide"),
            );
    }

    /// The hunk's lines into `edit`; returns the spans of the empty lines
    /// at its end.
    fn hunk_body(&mut self, edit: &mut Edit<'a>, lines: Pairs<'a, Rule>) -> Vec<Span> {
        // Which side the previous line was on, for `\ No newline`.
        let mut last: Option<Rule> = None;
        let mut trailing_empty: Vec<Span> = vec![];
        for line in lines {
            let rule = line.as_rule();
            let lspan = self.line_span(&line);
            // A body line is its one-byte prefix, its text and `\n`. The
            // text of a CRLF line loses its `\r` (the file's line ends
            // decide the match), except an added line's: when any line of
            // the file's hunks shows a `\r`, the diff is byte-exact and
            // added lines keep their own line ends (`Edit::own_eol`).
            let raw = line.as_str();
            let text = raw.get(1..raw.len().saturating_sub(1)).unwrap_or("");
            let stripped = text.strip_suffix('\r');
            edit.own_eol |= stripped.is_some();
            let text = match rule {
                Rule::added_line => text,
                _ => stripped.unwrap_or(text),
            };
            // A byte-order mark is the file's, and the applier keeps it.
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let content = Line {
                text: Cow::Borrowed(text),
                span: lspan,
            };
            if rule == Rule::empty_line {
                trailing_empty.push(lspan);
            } else if rule != Rule::no_newline_line {
                trailing_empty.clear();
            }
            match rule {
                Rule::context_line | Rule::empty_line => {
                    edit.new.push(NewLine::Keep(edit.old.len()));
                    edit.old.push(content);
                }
                Rule::removed_line => edit.old.push(content),
                Rule::added_line => edit.new.push(NewLine::Add(content)),
                Rule::no_newline_line => match last {
                    Some(Rule::context_line | Rule::empty_line) => {
                        edit.old_no_eol = true;
                        edit.new_no_eol = true;
                    }
                    Some(Rule::removed_line) => edit.old_no_eol = true,
                    Some(Rule::added_line) => edit.new_no_eol = true,
                    _ => {
                        self.diags.push(
                            Diagnostic::new(
                                Code::InvalidHunkBody,
                                "`\\ No newline at end of file` must follow a line",
                            )
                            .at(lspan, "there is no line before this marker")
                            .hint("put the marker right after the last line of the file"),
                        );
                    }
                },
                _ => {}
            }
            if rule != Rule::no_newline_line {
                last = Some(rule);
            }
        }

        trailing_empty
    }

    /// Empty lines after the hunk's last counted line separate it from
    /// what follows; they are not blank context.
    fn drop_separator(
        &mut self,
        edit: &mut Edit<'a>,
        old_count: Option<usize>,
        trailing_empty: &[Span],
    ) {
        let body_old = edit.old.len();
        if let Some(count) = old_count.filter(|&c| c < body_old) {
            let excess = body_old - count;
            if excess <= trailing_empty.len() && edit.new.len() >= excess {
                for _ in 0..excess {
                    edit.old.pop();
                    edit.new.pop();
                }
                let first = trailing_empty[trailing_empty.len() - excess];
                self.diags.push(
                    Diagnostic::new(
                        Code::TrailingBlankContextDropped,
                        format!("{excess} empty line(s) after the hunk were read as a separator"),
                    )
                    .at(first, "not counted by the hunk header"),
                );
            }
        }
    }

    /// A warning when the header's counts disagree with the body.
    fn check_counts(
        &mut self,
        edit: &Edit<'a>,
        header_span: Span,
        old_count: Option<usize>,
        new_count: Option<usize>,
    ) {
        let body_new = edit.new.len();
        let body_old = edit.old.len();
        let (want_old, want_new) = (old_count.unwrap_or(1), new_count.unwrap_or(1));
        if body_old != want_old || body_new != want_new {
            self.diags.push(
                Diagnostic::new(
                    Code::HunkCountMismatch,
                    format!(
                        "hunk header counts {want_old} old and {want_new} new lines, the body has {body_old} and {body_new}"
                    ),
                )
                .at(header_span, "counts are advisory: the lines below were used"),
            );
        }
    }

    /// The file op a section's header and hunks make: a rename, a
    /// header-only change, or an add, delete or modify by its two sides.
    fn file_op(&mut self, h: Header, edits: Vec<Edit<'a>>, span: Span) -> Option<FileOp<'a>> {
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
                Some(FileOp::new(at(p, pspan), Action::add(content), span))
            }
            (Some((Side::Path(p, pspan), _)), Some((Side::DevNull, _))) => {
                self.deletion_adds_nothing(&edits)?;
                let expect = Some(edits);
                Some(FileOp::new(at(p, pspan), Action::Delete { expect }, span))
            }
            (Some((Side::Path(a, aspan), _)), Some((Side::Path(b, bspan), _))) => {
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
                    return None;
                }
                let action = Action::Modify {
                    edits,
                    move_to: None,
                };
                Some(FileOp::new(at(b, bspan), action, span))
            }
            (Some((Side::DevNull, s)), Some((Side::DevNull, _)))
            | (Some((_, s)), None)
            | (None, Some((_, s))) => {
                self.diags.push(
                    Diagnostic::new(Code::MissingFileHeader, "need one real path in `---`/`+++`")
                        .at(s, "no file to patch")
                        .hint("write `--- a/PATH` and `+++ b/PATH` (or /dev/null on one side to add or delete)"),
                );
                None
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
    ) -> Option<FileOp<'a>> {
        let (Some(from), Some(to)) = (&h.rename_from, &h.rename_to) else {
            let r = h.rename_from.as_ref().or(h.rename_to.as_ref())?;
            self.diags.push(
                Diagnostic::new(
                    Code::RenamePathMismatch,
                    "a rename needs both `rename from` and `rename to`",
                )
                .at(r.span, "only one half of the rename")
                .hint("write `rename from OLD` and `rename to NEW` on consecutive lines"),
            );
            return None;
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
                    return None;
                }
            }
        }
        let action = Action::Modify {
            edits,
            move_to: Some(to.clone()),
        };
        Some(FileOp::new(from.clone(), action, span))
    }

    /// A `diff --git` section without `---`/`+++`: an empty file added or
    /// deleted, or a mode change, on the path the git line names.
    fn header_only(&mut self, h: &Header, span: Span) -> Option<FileOp<'a>> {
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
            return None;
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
            return None;
        };
        Some(FileOp::new(PathRef { text, span: gspan }, action, span))
    }

    /// A deleted file (`+++ /dev/null`) lists lines; it cannot add any.
    fn deletion_adds_nothing(&mut self, edits: &[Edit<'a>]) -> Option<()> {
        let added = edits.iter().flat_map(|e| &e.new).find_map(|n| match n {
            NewLine::Add(line) => Some(line.span),
            NewLine::Keep(_) => None,
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
            return None;
        }
        Some(())
    }

    fn new_file_content(&mut self, edits: Vec<Edit<'a>>) -> Option<NewText<'a>> {
        let mut content = NewText {
            lines: vec![],
            final_newline: true,
        };
        for e in edits {
            if let Some(old) = e.old.first() {
                self.diags.push(
                    Diagnostic::new(
                        Code::InvalidHunkBody,
                        "a new file (`--- /dev/null`) can only have `+` lines",
                    )
                    .at(old.span, "context or removed line in a new file")
                    .hint("prefix every line of the new file with `+`"),
                );
                return None;
            }
            content
                .lines
                .extend(e.new.into_iter().filter_map(|n| match n {
                    NewLine::Add(l) => Some(l),
                    NewLine::Keep(_) => None,
                }));
            content.final_newline = !e.new_no_eol;
        }
        Some(content)
    }
}

/// The bytes of a binary file patch.
struct Binary {
    new: Vec<u8>,
    old: Option<Vec<u8>>,
}

/// Bytes as patch lines (text standing for bytes, see `lossless`): split
/// at `\n`, a `\r` kept (added lines carry their own line ends), and
/// whether the last line ends with `\n`.
fn binary_lines<'a>(bytes: Vec<u8>, span: Span) -> (Vec<Line<'a>>, bool) {
    let text = crate::lossless::decode(bytes);
    let final_newline = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let lines = if text.is_empty() {
        vec![]
    } else {
        body.split('\n')
            .map(|l| Line {
                text: Cow::Owned(l.to_string()),
                span,
            })
            .collect()
    };
    (lines, final_newline)
}

/// A mode as git writes it: `100644`, `100755`, `120000`.
fn git_mode(text: &str) -> Option<GitMode> {
    match text {
        "120000" => Some(GitMode::Symlink),
        "100755" => Some(GitMode::Executable),
        "100644" => Some(GitMode::File),
        _ => None,
    }
}

/// `START[,COUNT]`; the grammar allows at most 9 digits, so each fits.
fn range(mut numbers: Pairs<Rule>) -> (usize, Option<usize>) {
    let mut next = || {
        numbers
            .next()
            .map(|n| n.as_str().parse::<usize>().unwrap_or(usize::MAX))
    };
    let start = next().unwrap_or(0);
    (start, next())
}

/// Two different paths that are the same but for their first component,
/// without it (`old/x`, `new/x` is `x`; git's `a/`, `b/` are not this).
fn strip_first_components(old: &HeaderLine, new: &HeaderLine) -> Option<(HeaderLine, HeaderLine)> {
    let (Some((Side::Path(a, aspan), al)), Some((Side::Path(b, bspan), bl))) = (old, new) else {
        return None;
    };
    let (a_first, a_rest) = a.split_once('/')?;
    let (b_first, b_rest) = b.split_once('/')?;
    if a == b || a_rest != b_rest || a_rest.is_empty() || (a_first, b_first) == ("a", "b") {
        return None;
    }
    let side = |rest: &str, span: &Span, cut: usize, line: &Span| {
        Some((
            Side::Path(rest.to_string(), Span::new(span.start + cut, span.end)),
            *line,
        ))
    };
    Some((
        side(a_rest, aspan, a_first.len() + 1, al),
        side(b_rest, bspan, b_first.len() + 1, bl),
    ))
}

/// Whether a `---`/`+++` line's timestamp is the Unix epoch, in any time
/// zone (`1970-01-01 00:00:00.000000000 +0000`, `1969-12-31 19:00:00 -0500`).
fn has_epoch_time(pair: &Pair<Rule>) -> bool {
    pair.clone()
        .into_inner()
        .flatten()
        .find(|p| p.as_rule() == Rule::timestamp)
        .is_some_and(|t| is_epoch(t.as_str().trim()))
}

fn is_epoch(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let (Some(date), Some(time), zone) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    let num = |s: &str| s.parse::<i64>().ok();
    let date: Vec<i64> = date.split('-').filter_map(num).collect();
    let time: Vec<i64> = time
        .split('.')
        .next()
        .unwrap_or("")
        .split(':')
        .filter_map(num)
        .collect();
    let (&[y, mo, d], &[h, mi, sec]) = (&date[..], &time[..]) else {
        return false;
    };
    // Seconds from the epoch, of the local time, then the zone taken off.
    let days = days_from_civil(y, mo, d);
    let local = days * 86_400 + h * 3600 + mi * 60 + sec;
    let offset = match zone {
        Some(z) if z.len() == 5 && (z.starts_with('+') || z.starts_with('-')) => {
            let (hh, mm) = (num(&z[1..3]).unwrap_or(0), num(&z[3..5]).unwrap_or(0));
            let sign = if z.starts_with('-') { -1 } else { 1 };
            sign * (hh * 3600 + mm * 60)
        }
        _ => 0,
    };
    local - offset == 0 && !text.contains(|c: char| c.is_ascii_alphabetic())
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Strips `a/` and `b/` when every real path of the pair carries its
/// prefix; else, in GNU diff's output (`gnu`), where two different paths
/// are the same but for their first component (`diff -ruN old new`),
/// strips that, as `patch -p1` does.
fn strip_prefixes(old: HeaderLine, new: HeaderLine, gnu: bool) -> (HeaderLine, HeaderLine) {
    if let Some(stripped) = gnu.then(|| strip_first_components(&old, &new)).flatten() {
        return stripped;
    }
    let has = |side: &HeaderLine, prefix: &str| match side {
        Some((Side::Path(p, _), _)) => p.starts_with(prefix),
        _ => true,
    };
    let real = |side: &HeaderLine| matches!(side, Some((Side::Path(..), _)));
    if !(has(&old, "a/") && has(&new, "b/") && (real(&old) || real(&new))) {
        return (old, new);
    }
    let strip = |side: HeaderLine| {
        side.map(|(s, span)| match s {
            Side::Path(p, ps) => (
                Side::Path(p[2..].to_string(), Span::new(ps.start + 2, ps.end)),
                span,
            ),
            other => (other, span),
        })
    };
    (strip(old), strip(new))
}

/// The path of `diff --git a/P b/P`, when both halves name the same file.
fn git_header_path(text: &str) -> Option<String> {
    let text = text.trim_end();
    let rest = text.strip_prefix("a/")?;
    // "P b/P": the two halves have the same length.
    let n = rest.len().checked_sub(3)? / 2;
    let (left, right) = (rest.get(..n)?, rest.get(n..)?);
    (right.strip_prefix(" b/")? == left).then(|| left.to_string())
}

/// The two paths of `diff --git a/OLD b/NEW`, prefixes taken off: split
/// where both halves are equal if they can be, else at the first blank
/// (each side plain without blanks, or C-quoted).
fn git_header_sides(text: &str) -> Option<(String, String)> {
    if let Some(p) = git_header_path(text) {
        return Some((p.clone(), p));
    }
    // `git diff --no-prefix`: `diff --git P P`, two equal halves.
    let text = text.trim_end();
    if text.len() % 2 == 1 {
        let mid = text.len() / 2;
        let (left, right) = (text.get(..mid).unwrap_or(""), text.get(mid..).unwrap_or(""));
        if let Some(right) = right.strip_prefix(' ') {
            if left == right && !left.starts_with('"') {
                return Some((left.to_string(), left.to_string()));
            }
        }
    }
    let text = text.trim_end();
    let (a, rest) = quoted_or_word(text)?;
    let (b, tail) = quoted_or_word(rest.strip_prefix(' ')?)?;
    if !tail.is_empty() {
        return None;
    }
    let a = decode_path(a);
    let b = decode_path(b);
    Some((
        a.strip_prefix("a/")?.to_string(),
        b.strip_prefix("b/")?.to_string(),
    ))
}

/// A C-quoted string or a run without blanks at the start of `text`, and the rest.
fn quoted_or_word(text: &str) -> Option<(&str, &str)> {
    if let Some(inner) = text.strip_prefix('"') {
        let mut escaped = false;
        for (i, c) in inner.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => return Some(text.split_at(i + 2)),
                _ => {}
            }
        }
        return None;
    }
    let end = text.find(' ').unwrap_or(text.len());
    (end > 0).then(|| text.split_at(end))
}

/// Decodes git's C-style quoting; plain paths lose trailing whitespace.
fn decode_path(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return raw.trim_end().to_string();
    };
    let mut bytes = vec![];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => bytes.push(b'\n'),
            Some('t') => bytes.push(b'\t'),
            Some('r') => bytes.push(b'\r'),
            Some('a') => bytes.push(7),
            Some('b') => bytes.push(8),
            Some('f') => bytes.push(12),
            Some('v') => bytes.push(11),
            Some(d @ '0'..='7') => {
                let mut value = d as u32 - '0' as u32;
                for _ in 0..2 {
                    if let Some(&next @ '0'..='7') = chars.peek() {
                        value = value * 8 + (next as u32 - '0' as u32);
                        chars.next();
                    }
                }
                bytes.push(value as u8);
            }
            Some(other) => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
            None => bytes.push(b'\\'),
        }
    }
    crate::lossless::decode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_header_sides_split_asymmetric_and_quoted_headers() {
        assert_eq!(git_header_sides("a/x b/y"), Some(("x".into(), "y".into())));
        assert_eq!(
            git_header_sides("a/my file b/my file"),
            Some(("my file".into(), "my file".into()))
        );
        assert_eq!(
            git_header_sides("\"a/t\\303\\251 x\" \"b/y z\""),
            Some(("t\u{e9} x".into(), "y z".into()))
        );
        assert_eq!(
            git_header_sides("docs/new file.md docs/new file.md"),
            Some(("docs/new file.md".into(), "docs/new file.md".into()))
        );
        assert_eq!(git_header_sides("something"), None);
        // Found by fuzzing: the middle inside a multi-byte character.
        assert_eq!(git_header_sides("a\u{36c6c}bc"), None);
        assert_eq!(git_header_sides("a/x c/y"), None);
        assert_eq!(git_header_sides("a/x b/y extra"), None);
    }

    #[test]
    fn git_header_paths_split_only_when_symmetric() {
        assert_eq!(git_header_path("a/x y b/x y").as_deref(), Some("x y"));
        assert_eq!(
            git_header_path("a/src/lib.rs b/src/lib.rs").as_deref(),
            Some("src/lib.rs")
        );
        assert_eq!(git_header_path("a/old b/new"), None);
        assert_eq!(git_header_path("old new"), None);
    }

    #[test]
    fn epoch_timestamps_in_any_zone() {
        assert!(is_epoch("1970-01-01 00:00:00.000000000 +0000"));
        assert!(is_epoch("1969-12-31 19:00:00.000000000 -0500"));
        assert!(is_epoch("1970-01-01 05:30:00 +0530"));
        assert!(is_epoch("1970-01-01 00:00:00"));
        assert!(!is_epoch("2026-11-23 18:30:00.123456789 +0000"));
        assert!(!is_epoch("1970-01-01 00:00:01 +0000"));
        assert!(!is_epoch("Thu Jan  1 00:00:00 1970"));
        assert!(!is_epoch("garbage"));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn quoted_paths_are_decoded() {
        assert_eq!(
            decode_path(r#""a/t\303\251st \"q\".txt""#),
            "a/tést \"q\".txt"
        );
        assert_eq!(decode_path("a/plain.txt  "), "a/plain.txt");
    }
}
