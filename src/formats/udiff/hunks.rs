//! Hunks: the header's numbers as a line hint, the body's lines as an
//! edit, advisory counts, blank separators.

use pest::iterators::Pair;

use super::*;
use crate::error::Reported;
use crate::formats::lowering::prefixed_text;

impl<'a> Lowering<'a, Udiff<'a>> {
    pub(super) fn hunks(&mut self, hunks: Vec<Pair<'a, Rule>>) -> Vec<Edit<'a>> {
        hunks
            .into_iter()
            .filter_map(|h| self.hunk(h).ok())
            .collect()
    }

    fn hunk(&mut self, pair: Pair<'a, Rule>) -> Result<Edit<'a>, Reported> {
        let span = self.line_span(&pair);
        let mut inner = pair.into_inner();
        let header = inner.next().ok_or(Reported)?;
        let header_span = self.line_span(&header);
        if header.as_rule() == Rule::bad_hunk_header {
            self.bad_hunk_header(&header, header_span);
            return Err(Reported);
        }
        if header.as_rule() == Rule::numberless_hunk_header {
            return Ok(self.numberless_hunk(inner.next(), span, header_span));
        }
        let Some([(old_start, old_count), (_, new_count)]) = ranges(header.as_str()) else {
            // The grammar's hunk header has both ranges; say so if not.
            self.bad_hunk_header(&header, header_span);
            return Err(Reported);
        };

        let counts = Some((old_count, new_count, header_span));
        let mut edit = self.body_edit(inner.next(), span, counts);
        // `@@ -l,0` inserts after line l; otherwise the block starts at line l.
        let hint = if old_count == Some(0) {
            old_start.saturating_add(1)
        } else {
            old_start
        };
        edit.locator.hint = Some(Hint::Near(line_hint(hint)));
        Ok(edit)
    }

    /// A hunk under `@@ ... @@` or a bare `@@` (Aider's udiff): no line
    /// hint and no counts; its context and removed lines alone place it,
    /// and must occur once.
    fn numberless_hunk(
        &mut self,
        body: Option<Pair<'a, Rule>>,
        span: Span,
        header_span: Span,
    ) -> Edit<'a> {
        self.diags.push(
            Diagnostic::new(
                Code::ToleratedFormatSlip,
                "a hunk header without line numbers: the hunk is placed by its lines alone",
            )
            .at(header_span, "no `-START,COUNT +START,COUNT`")
            .note("its context and removed lines must occur exactly once in the file")
            .hint(
                "write `@@ -START,COUNT +START,COUNT @@` (the numbers are hints; the lines decide)",
            ),
        );
        self.body_edit(body, span, None)
    }

    /// A hunk's body read into an edit. The header's old and new counts
    /// (and its span), where it has them, decide blank context and are
    /// checked; without them, empty lines that end the hunk separate it
    /// from what follows (Aider writes one before the next file).
    fn body_edit(
        &mut self,
        body: Option<Pair<'a, Rule>>,
        span: Span,
        counts: Option<(Option<usize>, Option<usize>, Span)>,
    ) -> Edit<'a> {
        let mut edit = Edit::replace(
            &[],
            &[],
            Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER),
            span,
        );
        let mut lines = std::mem::take(&mut self.own.lines);
        lines.old.clear();
        lines.new.clear();
        let trailing_empty = self.hunk_body(&mut edit, &mut lines, body);
        match counts {
            Some((old_count, new_count, header_span)) => {
                self.drop_separator(&mut lines, old_count, &trailing_empty);
                self.counted_blank_context(&mut lines, span, old_count, new_count);
                self.check_counts(&lines, header_span, old_count, new_count);
            }
            None => {
                let counted = lines.old.len().saturating_sub(trailing_empty.len());
                self.drop_separator(&mut lines, Some(counted), &trailing_empty);
            }
        }
        (edit.old, edit.new) = (self.keep(&lines.old), self.keep_new(&mut lines.new));
        self.own.lines = lines;
        edit.locator.at_eof = edit.old_no_eol;
        edit
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

    /// The hunk's lines (`body`, one token) into `lines`, its line-end
    /// flags into `edit`; returns the spans of the empty lines at its end.
    fn hunk_body(
        &mut self,
        edit: &mut Edit<'a>,
        lines: &mut HunkLines<'a>,
        body: Option<Pair<'a, Rule>>,
    ) -> Vec<Span> {
        // Which side the previous line was on, for `\ No newline`.
        let mut last: Option<Rule> = None;
        let mut trailing_empty: Vec<Span> = vec![];
        let (mut at, text) =
            body.map_or((0, ""), |b| (self.base + b.as_span().start(), b.as_str()));
        for line in crate::newlines::lines_inclusive(text) {
            let rule = line_rule(line);
            let lspan = Span::new(at, at + line.len() - usize::from(line.ends_with('\n')));
            at += line.len();
            // A body line is its one-byte prefix, its text and `\n`. The
            // text of a CRLF line loses its `\r` (the file's line ends
            // decide the match), except an added line's: when any line of
            // the file's hunks shows a `\r`, the diff is byte-exact and
            // added lines keep their own line ends (`Edit::own_eol`).
            let (text, cr) = prefixed_text(line, rule == Rule::added_line);
            edit.own_eol |= cr;
            let content = Line::of(text);
            if rule == Rule::empty_line {
                trailing_empty.push(lspan);
            } else if rule != Rule::no_newline_line {
                trailing_empty.clear();
            }
            match rule {
                Rule::context_line | Rule::empty_line => {
                    lines.new.push(NewLine::keep(lines.old.len()));
                    lines.old.push(content);
                }
                Rule::removed_line => lines.old.push(content),
                Rule::added_line => lines.new.push(NewLine::Add(content)),
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
        lines: &mut HunkLines<'a>,
        old_count: Option<usize>,
        trailing_empty: &[Span],
    ) {
        let body_old = lines.old.len();
        if let Some(count) = old_count.filter(|&c| c < body_old) {
            let excess = body_old - count;
            if excess <= trailing_empty.len() && lines.new.len() >= excess {
                for _ in 0..excess {
                    lines.old.pop();
                    lines.new.pop();
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

    /// The empty lines that end the patch text were taken off before the
    /// grammar saw it; where the last hunk is short of its header's counts
    /// by as many lines on both sides, and that many empty lines follow it,
    /// they are its blank context lines (a model writes ` ` as an empty
    /// line), not blank lines around the patch.
    fn counted_blank_context(
        &mut self,
        lines: &mut HunkLines<'a>,
        span: Span,
        old_count: Option<usize>,
        new_count: Option<usize>,
    ) {
        let (Some(old_count), Some(new_count)) = (old_count, new_count) else {
            return;
        };
        let Some(rest) = self.text.get(span.end + 1..) else {
            return;
        };
        let short = old_count.saturating_sub(lines.old.len());
        if short == 0
            || new_count.checked_sub(lines.new.len()) != Some(short)
            || rest.len() < short
            || rest.bytes().any(|b| b != b'\n')
        {
            return;
        }
        for _ in 0..short {
            lines.new.push(NewLine::keep(lines.old.len()));
            lines.old.push(Line::of(""));
        }
    }

    /// A warning when the header's counts disagree with the body.
    fn check_counts(
        &mut self,
        lines: &HunkLines<'a>,
        header_span: Span,
        old_count: Option<usize>,
        new_count: Option<usize>,
    ) {
        let body_new = lines.new.len();
        let body_old = lines.old.len();
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
}

/// The two `START[,COUNT]` ranges of a header `hunk_header` matched:
/// `@@ -` and the old range, ` +` and the new one, then ` @@`. The grammar
/// allows at most 9 digits, so each number fits. Read byte by byte: a
/// substring search per header cost more than the rest of its lowering.
fn ranges(header: &str) -> Option<[(usize, Option<usize>); 2]> {
    let (old, rest) = range(header.strip_prefix("@@ -")?)?;
    let (new, rest) = range(rest.strip_prefix(" +")?)?;
    rest.starts_with(" @@").then_some([old, new])
}

/// `START[,COUNT]` at the front of `text`, and the text after it.
fn range(text: &str) -> Option<((usize, Option<usize>), &str)> {
    let (start, rest) = number(text)?;
    match rest.strip_prefix(',') {
        Some(rest) => number(rest).map(|(count, rest)| ((start, Some(count)), rest)),
        None => Some(((start, None), rest)),
    }
}

/// The decimal number at the front of `text`, and the text after it.
fn number(text: &str) -> Option<(usize, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    Some((text[..digits].parse().ok()?, &text[digits..]))
}

/// The line rule that matched `line` in a hunk body: the grammar gives each
/// its own first byte (an empty line is its `\n` alone).
fn line_rule(line: &str) -> Rule {
    match line.as_bytes().first() {
        Some(b' ') => Rule::context_line,
        Some(b'+') => Rule::added_line,
        Some(b'-') => Rule::removed_line,
        Some(b'\\') => Rule::no_newline_line,
        _ => Rule::empty_line,
    }
}

#[cfg(test)]
mod tests {
    use super::ranges;

    /// The numbers of every header form the grammar takes, read from its
    /// text: a count or none, the section text after `@@` ignored.
    #[test]
    fn a_headers_ranges_are_read_from_its_text() {
        assert_eq!(
            ranges("@@ -12,5 +13,6 @@\n"),
            Some([(12, Some(5)), (13, Some(6))])
        );
        assert_eq!(
            ranges("@@ -1 +1 @@ fn main() {\n"),
            Some([(1, None), (1, None)])
        );
        assert_eq!(
            ranges("@@ -0,0 +1,3 @@\n"),
            Some([(0, Some(0)), (1, Some(3))])
        );
        assert_eq!(
            ranges("@@ -999999999,1 +7,999999999 @@ a +b @@\n"),
            Some([(999_999_999, Some(1)), (7, Some(999_999_999))])
        );
        assert_eq!(ranges("@@ -x +1 @@\n"), None);
        assert_eq!(ranges("@@ -1, +1 @@\n"), None);
        assert_eq!(ranges("@@ -1 +1,2@@\n"), None);
        assert_eq!(ranges("@@ ... @@\n"), None);
    }
}
