//! The `*** Begin Patch` format: the generated parser for
//! `grammars/codex.pest` and the lowering of its parse tree into the shared
//! model. Matching and I/O are the applier's.
//!
//! Lowering decisions (docs/decisions.md lists how they differ from Codex):
//! - A hunk with `@@ CONTEXT` seeks that line first (an anchor) and takes the
//!   first match after it; `@@ :N` starts searching at line N; a hunk with
//!   neither must match exactly once between the previous hunk and the end of
//!   the file. A header with no lines narrows the search for the next hunk.
//! - A pure addition without context, anchor or line goes to the end of the
//!   file, as in Codex; after `@@ CONTEXT` it goes right after that line.
//! - Matching allows Codex's relaxations (trailing whitespace, surrounding
//!   whitespace, typographic punctuation), each reported as a warning.

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use super::lowering::{prefixed_text, rule_words, Lowering};
use super::{marker_path, syntax_error};
use crate::error::{Code, Diagnostic};
use crate::ir::{
    line_hint, Action, Advice, Edit, FileOp, Hint, Levels, Line, Locator, NewLine, NewText, Patch,
    PathRef, Span, Uniqueness,
};

#[derive(Parser)]
#[grammar = "../grammars/codex.pest"]
struct CodexParser;

fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::EOI => "the end of the patch",
        Rule::begin | Rule::padded_begin => "`*** Begin Patch`",
        Rule::end | Rule::missing_end | Rule::padded_end => "`*** End Patch`",
        Rule::heredoc_close => "`EOF`",
        Rule::add_file | Rule::add_header | Rule::padded_add => "`*** Add File: PATH`",
        Rule::delete_file | Rule::padded_delete => "`*** Delete File: PATH`",
        Rule::update_file | Rule::update_header | Rule::padded_update => "`*** Update File: PATH`",
        Rule::move_to | Rule::padded_move => "`*** Move to: PATH`",
        Rule::add_line => "a new-file line starting with `+`",
        Rule::hunk | Rule::hunk_header | Rule::padded_gap => {
            "a hunk header (`@@`, `@@ CONTEXT` or `@@ :N`)"
        }
        // Lines that failed say nothing: the probe after them names the lines.
        Rule::hunk_lines => "",
        Rule::bare_hunk
        | Rule::context_line
        | Rule::added_line
        | Rule::removed_line
        | Rule::empty_line => "a hunk line starting with ` `, `-` or `+`",
        Rule::end_of_file | Rule::padded_eof => "`*** End of File`",
        Rule::indent => "",
        other => return rule_words(other),
    }
    .to_string()
}

/// The advice that fits what the parser expected.
fn syntax_hint(expected: &[Rule]) -> &'static str {
    if expected.contains(&Rule::move_to) || expected.contains(&Rule::padded_move) {
        "`*** Update File: PATH` needs hunks after it (`@@`, then lines starting with ` `, `-` or `+`), \
         or `*** Move to: NEW_PATH`"
    } else if expected.contains(&Rule::add_line) {
        "every line of a new file starts with `+` (an empty line is a lone `+`), \
         until the next `*** ` marker"
    } else if expected.iter().any(|r| {
        matches!(
            r,
            Rule::context_line
                | Rule::added_line
                | Rule::removed_line
                | Rule::hunk_header
                | Rule::bare_hunk
                | Rule::hunk
        )
    }) {
        "prefix every hunk line with ` ` (unchanged), `-` (removed) or `+` (added); \
         an empty line of the file is a single space"
    } else {
        "a codex patch is `*** Begin Patch`, then `*** Add File: PATH` (lines starting with `+`), \
         `*** Delete File: PATH` or `*** Update File: PATH` (hunks: `@@`, then lines starting \
         with ` `, `-` or `+`), then `*** End Patch`"
    }
}

/// Parses and lowers `text[body]`; spans are offsets into `text`.
pub fn parse<'t>(
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    let pairs = CodexParser::parse(Rule::patch, input)
        .map_err(|e| vec![syntax_error(e, text, body.start, rule_name, syntax_hint)])?;
    let mut lower = Lower::new(text, store, body.start, Codex::default());
    lower.patch.policy.lone_cr_breaks = true;
    lower.patch.policy.repeated_paths = true;
    lower.patch.policy.unfound_anchor_ignored = true;
    lower.patch.policy.advice = Advice {
        block: "hunk context",
        disambiguate:
            "put `@@ CONTEXT` before the hunk, with a line that occurs once above the change \
                       (a function or class header), or `@@ :N` to start searching at line N",
        create: "create the file with `*** Add File: PATH`",
        update: "edit the existing file with `*** Update File: PATH` instead of `*** Add File:`",
        ..Advice::default()
    };
    let mut last_content: Option<Span> = None;
    for pair in pairs.flatten() {
        match pair.as_rule() {
            Rule::add_file | Rule::delete_file | Rule::update_file => {
                lower.file(pair.clone());
                if pair.as_rule() == Rule::delete_file {
                    lower.marker(&pair);
                }
            }
            Rule::begin
            | Rule::end
            | Rule::add_header
            | Rule::update_header
            | Rule::move_to
            | Rule::end_of_file
            | Rule::hunk_header => lower.marker(&pair),
            Rule::add_line => last_content = Some(lower.span(&pair)),
            // The last of a hunk's lines that is not empty.
            Rule::hunk_lines => {
                let full = pair.as_str().trim_end_matches('\n').len();
                if full > 0 {
                    let start = lower.span(&pair).start;
                    last_content = Some(Span::new(start, start + full + 1));
                }
            }
            Rule::missing_end => {
                // Point at the last line of the text.
                let last_line = Span::line_before(text, lower.span(&pair).start);
                let end = last_line.end;
                let mut d =
                    Diagnostic::new(Code::SyntaxError, "the patch ends without `*** End Patch`")
                        .at(last_line, "the text stops after this line");
                d = match last_content {
                    Some(last) if last.end >= end => d
                        .note("the last line is patch content: the patch looks cut off")
                        .hint("send the whole patch again, ending with `*** End Patch`"),
                    _ => d.hint("add `*** End Patch` as the last line"),
                };
                lower.diags.push(d);
            }
            _ => {}
        }
    }
    lower.finish()
}

/// The names of the grammar rules in the parse tree of `text`, or `None`
/// when it does not parse (for checking the Lark export against pest).
#[cfg(feature = "internals")]
pub fn rules_used(text: &str) -> Option<std::collections::BTreeSet<String>> {
    CodexParser::parse(Rule::patch, text)
        .ok()
        .map(super::rule_names)
}

/// The Codex lowering: the shared one, with nothing of its own.
/// codex's own lowering state: a hunk's lines as they are read, before
/// they go to the store (one list for every hunk, so reading a hunk
/// allocates nothing).
#[derive(Default)]
struct Codex<'a> {
    old: Vec<Line<'a>>,
    new: Vec<NewLine<'a>>,
}

type Lower<'a> = Lowering<'a, Codex<'a>>;

/// The old start line of a unified diff's hunk header written where codex
/// wants `@@ CONTEXT` (`-30,10 +30,9 @@`, the opening `@@ ` already read).
fn udiff_range(text: &str) -> Option<usize> {
    let rest = text.trim_end().strip_prefix('-')?;
    let (old, rest) = rest.split_once(' ')?;
    let new = rest.strip_prefix('+')?;
    let (new, tail) = new.split_once(' ').unwrap_or((new, ""));
    let tail = tail.trim_start();
    let numbers = |r: &str| {
        let (start, count) = r.split_once(',').unwrap_or((r, "1"));
        let digits =
            |d: &str| !d.is_empty() && d.len() <= 9 && d.bytes().all(|b| b.is_ascii_digit());
        (digits(start) && digits(count))
            .then(|| start.parse::<usize>().ok())
            .flatten()
    };
    let start = numbers(old)?;
    numbers(new)?;
    (tail == "@@" || tail.starts_with("@@ ")).then_some(start)
}

/// The digits of `@@ CONTEXT` that is `:N` with spaces or tabs around it.
fn line_number(context: &str) -> Option<&str> {
    let digits = context.trim().strip_prefix(':')?.trim_start();
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

/// The text of a prefixed line: without its one-byte prefix, its `\n`, and a `\r`.
fn body_of(line: &str) -> &str {
    prefixed_text(line, false).0
}

impl<'a> Lowering<'a, Codex<'a>> {
    /// Warns when a marker line has spaces or tabs the export would not
    /// admit (see `pad` in the grammar).
    fn marker(&mut self, pair: &Pair<'a, Rule>) {
        let line = pair.as_str();
        let raw = line.trim_end_matches(['\n', '\r']);
        let start = pair.as_span().start();
        let inner = |rule| {
            pair.clone()
                .into_inner()
                .find(|p| p.as_rule() == rule)
                .map(|p| (p.as_span().start() - start, p.as_str()))
        };
        let (written, canonical) = match pair.as_rule() {
            Rule::begin => (raw.trim_matches(' '), "*** Begin Patch".to_string()),
            Rule::end => (raw.trim_matches(' '), "*** End Patch".to_string()),
            Rule::end_of_file => (raw.trim_end_matches(' '), "*** End of File".to_string()),
            Rule::hunk_header => match inner(Rule::context_text) {
                Some((_, text)) if line_number(text).is_some_and(|n| n.len() <= 9) => {
                    let n = line_number(text).unwrap_or_default();
                    (raw, format!("@@ :{n}"))
                }
                Some((at, _)) => (&raw[..at], "@@ ".to_string()),
                // `@@ :N` and a bare `@@` admit only spaces.
                None => return,
            },
            rule => {
                let Some((at, _)) = inner(Rule::path) else {
                    return;
                };
                let words = match rule {
                    Rule::add_header => "*** Add File: ",
                    Rule::update_header => "*** Update File: ",
                    Rule::delete_file => "*** Delete File: ",
                    _ => "*** Move to: ",
                };
                (&raw[..at], words.to_string())
            }
        };
        let span = self.line_span(pair);
        self.padded(span, written, &canonical);
    }

    /// The path of a marker line, trailing spaces trimmed.
    fn path(&self, marker: Pair<'a, Rule>) -> PathRef {
        marker_path(self.base, marker, Rule::path)
    }

    fn file(&mut self, pair: Pair<'a, Rule>) {
        let span = self.line_span(&pair);
        let rule = pair.as_rule();
        if rule == Rule::delete_file {
            let path = self.path(pair);
            self.patch
                .files
                .push(FileOp::new(path, Action::Delete { expect: None }, span));
            return;
        }
        let mut inner = pair.into_inner();
        let Some(header) = inner.next() else { return };
        let path = self.path(header);
        if rule == Rule::add_file {
            let lines: Vec<_> = inner.map(|l| Line::of(body_of(l.as_str()))).collect();
            let content = NewText {
                lines: self.keep(&lines),
                final_newline: true,
            };
            self.patch
                .files
                .push(FileOp::new(path, Action::add(content), span));
            return;
        }
        let mut move_to = None;
        let mut hunks = vec![];
        for p in inner {
            match p.as_rule() {
                Rule::move_to => move_to = Some(self.path(p)),
                Rule::hunk | Rule::bare_hunk | Rule::empty_hunk => hunks.push(p),
                _ => {}
            }
        }
        let n_hunks = hunks.len();
        let reported = self.diags.len();
        let mut edits = vec![];
        for (i, hunk) in hunks.into_iter().enumerate() {
            if let Some(mut edit) = self.hunk(hunk, i + 1 == n_hunks) {
                // `@@ class A` then `@@ def f():`: the second header is
                // stacked under the first, and must be found too.
                let under_header = edits.last().is_some_and(|e: &Edit| {
                    e.old.is_empty() && e.new.is_empty() && e.locator.anchor().is_some()
                });
                if under_header && edit.locator.anchor().is_some() {
                    edit.locator.reach_mut().stacked = true;
                }
                edits.push(edit);
            }
        }
        // A trailing `@@` with nothing after it changes nothing; only an
        // update with no change at all is refused.
        if edits.iter().all(|e| e.old.is_empty() && e.new.is_empty())
            && move_to.is_none()
            && self.diags.len() == reported
        {
            self.diags.push(
                Diagnostic::new(Code::InvalidHunkBody, "this update changes nothing")
                    .at(span, "no hunk line follows")
                    .hint("follow `@@` with the lines to change: ` ` unchanged, `-` removed, `+` added"),
            );
            return;
        }
        self.patch
            .files
            .push(FileOp::new(path, Action::Modify { edits, move_to }, span));
    }

    /// A hunk header's line number, context line or (a slip) unified diff
    /// range, into `edit`'s locator.
    fn hunk_header(&mut self, header: Pair<'a, Rule>, edit: &mut Edit<'a>) {
        for part in header.into_inner() {
            match part.as_rule() {
                Rule::line_number => {
                    // At most 9 digits, by the grammar.
                    let n: usize = part.as_str().parse().unwrap_or(usize::MAX);
                    edit.locator.hint = Some(Hint::From(line_hint(n)));
                }
                Rule::context_text if !part.as_str().trim().is_empty() => {
                    let text = part.as_str().strip_suffix('\r').unwrap_or(part.as_str());
                    if let Some(n) = line_number(text) {
                        // `@@ :N` padded with tabs or spaces (warned as a
                        // marker), or with more digits than a line number
                        // has: a line past any file's end.
                        let n = n.parse::<usize>().unwrap_or(usize::MAX);
                        edit.locator.hint = Some(Hint::From(line_hint(n)));
                        continue;
                    }
                    if let Some(start) = udiff_range(text) {
                        // A unified diff's `@@ -30,10 +30,9 @@`: a line hint.
                        edit.locator.hint = Some(Hint::Near(line_hint(start)));
                        self.diags.push(
                            Diagnostic::new(
                                Code::ToleratedFormatSlip,
                                "a unified diff's hunk header in a codex patch: read as a line hint",
                            )
                            .at(self.span(&part), "udiff's line numbers")
                            .hint(format!("codex takes `@@ CONTEXT` (a line above the change) or `@@ :{start}`")),
                        );
                        continue;
                    }
                    let line = self.keep(&[Line::of(text)]);
                    edit.locator.reach_mut().anchor = Some(line);
                }
                _ => {}
            }
        }
    }

    /// Lowers one hunk; `None` for a header with no lines at the end, which
    /// changes nothing.
    fn hunk(&mut self, pair: Pair<'a, Rule>, last: bool) -> Option<Edit<'a>> {
        let span = self.line_span(&pair);
        let mut edit = Edit::replace(
            &[],
            &[],
            Locator::plain(Uniqueness::UniqueAfterCursor, Levels::LADDER),
            span,
        );
        let (mut old, mut new) = (
            std::mem::take(&mut self.own.old),
            std::mem::take(&mut self.own.new),
        );
        old.clear();
        new.clear();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::hunk_header => self.hunk_header(p, &mut edit),
                // Each line is read by its first byte, the prefix its line
                // rule requires (an empty line is its `\n` alone).
                Rule::hunk_lines => {
                    for line in crate::newlines::lines_inclusive(p.as_str()) {
                        match line.as_bytes()[0] {
                            b'-' => old.push(Line::of(body_of(line))),
                            b'+' => new.push(NewLine::Add(Line::of(body_of(line)))),
                            first => {
                                new.push(NewLine::keep(old.len()));
                                let text = if first == b'\n' { "" } else { body_of(line) };
                                old.push(Line::of(text));
                            }
                        }
                    }
                }
                Rule::end_of_file => edit.locator.at_eof = true,
                _ => {}
            }
        }
        (edit.old, edit.new) = (self.keep(&old), self.keep_new(&mut new));
        (self.own.old, self.own.new) = (old, new);
        let loc = &mut edit.locator;
        // `@@ CONTEXT` and `@@ :N` take the first match after them; a
        // unified diff's range header is a line hint as in a unified diff:
        // an exact match at its line wins, else the hunk must be unique.
        if loc.anchor().is_some() || matches!(loc.hint, Some(Hint::From(_))) {
            loc.uniqueness = Uniqueness::FirstAfterCursor;
        }
        if edit.old.is_empty() && edit.new.is_empty() {
            if last || loc.at_eof {
                return None;
            }
            // A header alone narrows the search for the next hunk: an edit
            // that only moves the cursor past its context line.
            loc.uniqueness = Uniqueness::FirstAfterCursor;
        } else if edit.old.is_empty() && loc.anchor().is_none() && loc.hint.is_none() {
            // Codex appends a context-free addition at the end of the file.
            loc.at_eof = true;
        }
        Some(edit)
    }
}

#[cfg(test)]
mod tests {
    use super::udiff_range;

    #[test]
    fn only_a_whole_udiff_range_is_a_line_hint() {
        assert_eq!(udiff_range("-30,10 +30,9 @@"), Some(30));
        assert_eq!(udiff_range("-7 +7 @@ def f():"), Some(7));
        assert_eq!(udiff_range("-30,10 +30,9"), None);
        assert_eq!(udiff_range("- item +1 @@"), None);
        assert_eq!(udiff_range("def f():"), None);
        assert_eq!(udiff_range("-1234567890 +1 @@"), None);
    }
}
