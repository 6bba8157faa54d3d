//! Unified diff: the generated parser for `grammars/udiff.pest` and the
//! lowering of its parse tree into the shared model. Matching, paths and I/O
//! are the applier's; this module only says what the diff means.
//!
//! Files: this one (parser, rule names, `parse`, a section's header
//! lines), `hunks.rs`, `ops.rs` (a section as a file op), `binary.rs` (git's
//! binary literals), `paths.rs` (header paths, prefixes, epoch dates).
//!
//! Lowering decisions (docs/decisions.md lists them too):
//! - `a/` is stripped from old paths and `b/` from new paths only when every
//!   real path of the file patch carries its prefix, as git writes them.
//! - `rename from`/`rename to` are authoritative; `---`/`+++` must agree.
//! - Without rename headers, different `---`/`+++` paths are refused rather
//!   than guessed at.
//! - A hunk's start line is a hint (`Hint::Near`); counts are advisory and
//!   only decide whether empty lines after the last hunk line are blank
//!   context or a separator.

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use super::git_binary::{self, Hunk};
use super::lowering::{rule_words, Lowering};
use super::syntax_error;
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{
    line_hint, Action, Advice, Edit, FileOp, GitMode, Hint, Level, Levels, Line, Locator, NewLine,
    NewText, Patch, PathRef, Place, Span, Uniqueness,
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
        | Rule::numberless_hunk_header
        | Rule::bad_hunk_header => "a hunk header `@@ -OLD,COUNT +NEW,COUNT @@`",
        // A body that failed says nothing: the probe after it names the lines.
        Rule::hunk_body | Rule::add_body | Rule::delete_body | Rule::loose_body => "",
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
pub fn parse<'t>(
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
    contents: bool,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    // One section at a time (`section` in the grammar): the parse tree of
    // one file is lowered and dropped before the next is read. Where a
    // section does not parse, the whole patch is parsed, so an error reads
    // exactly as the grammar's `patch` rule reports it.
    let mut lower = lowering(text, store, body, contents);
    let mut at = 0;
    while at < input.len() {
        let end = match UdiffParser::parse(Rule::section, &input[at..]) {
            Ok(pairs) => lower_files(&mut lower, pairs, body.start + at),
            Err(_) => None,
        };
        match end {
            Some(end) => at += end,
            None => return parse_whole(text, store, body, contents),
        }
    }
    lower.base = body.start;
    lower.finish()
}

/// The lowering of a udiff patch, with its advice.
fn lowering<'t>(text: &'t str, store: &'t bumpalo::Bump, body: Span, contents: bool) -> Lower<'t> {
    let format = Udiff {
        contents,
        ..Udiff::default()
    };
    let mut lower = Lower::new(text, store, body.start, format);
    lower.patch.policy.advice = Advice {
        block: "hunk context",
        disambiguate: "add context lines that occur only near the intended place, \
                       or correct the start line in the hunk header",
        create: "create the file with `--- /dev/null` and `+++ b/PATH`",
        update: "edit the existing file with `--- a/PATH`, `+++ b/PATH` and hunks instead of `--- /dev/null`",
        ..Advice::default()
    };
    lower
}

/// The whole patch parsed at once: its syntax error, or its lowering.
fn parse_whole<'t>(
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
    contents: bool,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    let pairs = UdiffParser::parse(Rule::patch, input).map_err(|e| {
        vec![syntax_error(e, text, body.start, rule_name, |_| {
            SYNTAX_HINT
        })]
    })?;
    let mut lower = lowering(text, store, body, contents);
    lower_files(&mut lower, pairs, body.start);
    lower.finish()
}

/// Lowers the files among `pairs` (parsed from `text[base..]`); returns
/// how far they reach, or `None` when they are empty.
fn lower_files<'t>(
    lower: &mut Lower<'t>,
    pairs: pest::iterators::Pairs<'t, Rule>,
    base: usize,
) -> Option<usize> {
    lower.base = base;
    let mut end = 0;
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
                | Rule::only_in_line
        )
    }) {
        end = end.max(pair.as_span().end());
        match pair.as_rule() {
            Rule::binary_files_line => lower.unsupported(&pair),
            Rule::only_in_line => {}
            _ => lower.file(pair),
        }
    }
    (end > 0).then_some(end)
}

/// The names of the grammar rules in the parse tree of `text`, or `None`
/// when it does not parse (for checking the Lark export against pest).
#[cfg(feature = "internals")]
pub fn rules_used(text: &str) -> Option<std::collections::BTreeSet<String>> {
    UdiffParser::parse(Rule::patch, text)
        .ok()
        .map(super::rule_names)
}

/// udiff's own lowering state: a hunk's lines as they are read, before
/// they go to the store (one pair of lists for every hunk).
#[derive(Default)]
struct Udiff<'a> {
    lines: HunkLines<'a>,
    /// Whether binary literals are kept (a check without a tree only
    /// counts their bytes).
    contents: bool,
}

/// A hunk's old and new lines.
#[derive(Default)]
struct HunkLines<'a> {
    old: Vec<Line<'a>>,
    new: Vec<NewLine<'a>>,
}

type Lower<'a> = Lowering<'a, Udiff<'a>>;

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

mod binary;
mod hunks;
mod ops;
mod paths;

use binary::Binary;
use paths::*;

impl<'a> Lowering<'a, Udiff<'a>> {
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
        if let Ok(mut op) = op {
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
                    Ok(data) => h.binary = Some((data, self.line_span(&p))),
                    Err(Reported) => h.unsupported = true,
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
