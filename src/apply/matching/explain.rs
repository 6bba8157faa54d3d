//! Why an edit has no place, in words a model can act on: the block and
//! the nearest text in the file, what differs, what an earlier edit did to
//! it, or every candidate of an ambiguous block. Only failures come here.

use super::find::{self, Want};
use super::locate::{Locating, Miss, Part};
use super::text::{hash_key, Key, Region};
use crate::error::{Code, Diagnostic};
use crate::ir::{Edit, Hint, Level, Line, Uniqueness};
use crate::paths::RelPath;

/// A block that matched only at a relaxed `level`, at `at` (a place in
/// the file, in words).
pub fn fuzz_warning(rel: &RelPath, edit: &Edit, noun: &str, at: &str, level: Level) -> Diagnostic {
    Diagnostic::new(
        Code::WhitespaceFuzz,
        format!("{noun} matched {at} of `{rel}` only {}", level.describe()),
    )
    .at(
        edit.span,
        if level == Level::Normalized {
            "whitespace or punctuation differs from the file"
        } else {
            "whitespace differs from the file"
        },
    )
    .path(rel.as_str())
    .note("lines kept from the file keep the file's own text")
}

/// How many failing edits of one file are explained in full; the rest get
/// [`brief_miss`]. Explaining reads the file for the nearest text (or
/// writes it out, in order), so a patch whose hundreds of hunks all miss
/// (one applied already, or written against another version) would take
/// time quadratic in the file's size.
pub const EXPLAINED_MISSES: usize = 8;

/// A failure stated without the file's text: the `noun` (the block, the
/// anchor) matched `matches` places.
pub fn brief_miss(rel: &RelPath, edit: &Edit, noun: &str, matches: usize) -> Diagnostic {
    let (code, message) = match matches {
        0 => (
            Code::ContextNotFound,
            format!("{noun} not found in `{rel}`"),
        ),
        n => (
            Code::AmbiguousContext,
            format!("{noun} matches {} in `{rel}`", places(n)),
        ),
    };
    Diagnostic::new(code, message)
        .at(edit.span, "this operation has no single place in the file")
        .path(rel.as_str())
        .note(format!(
            "the first {EXPLAINED_MISSES} failures in this file are explained in full; fix those first"
        ))
}

/// How many candidates of an ambiguous block are shown in the file.
const SHOWN: usize = 8;

/// How many matches a search that must find one place collects: every
/// candidate shown, and one to know there are more. Collecting them all
/// would walk every occurrence of a block for each edit: quadratic in a
/// patch of many hunks of `}`.
pub const CANDIDATES: usize = SHOWN + 1;

/// "2 places", or "more than 8 places" when the search stopped counting.
fn places(n: usize) -> String {
    match n {
        n if n > SHOWN => format!("more than {SHOWN} places"),
        n => format!("{n} places"),
    }
}

impl Locating<'_, '_> {
    /// The diagnostic for edit `i`, which missed with `miss`.
    pub fn explain(&self, edits: &[Edit], i: usize, miss: Miss, drift: isize) -> Diagnostic {
        let edit = &edits[i];
        let rel = self.rel;
        match miss {
            Miss::PastEnd(at) => Diagnostic::new(
                Code::ContextNotFound,
                format!("`{rel}` has {} line(s); the hunk inserts after line {at}", self.file.len()),
            )
            .at(edit.span, "this hunk has no context lines to place it")
            .path(rel.as_str())
            .hint("add a few unchanged context lines around the insertion, and fix the hunk header's line number"),
            Miss::BeforeCursor => Diagnostic::new(
                Code::ContextNotFound,
                format!("the start of the file lies before text an earlier edit of `{rel}` already changed"),
            )
            .at(edit.span, "out of order")
            .path(rel.as_str())
            .hint("edits of one file apply top to bottom: move this one first"),
            Miss::Nested(region) => Diagnostic::new(
                Code::ContextNotFound,
                "INSERT_AFTER would put a top-level declaration inside the block its snippet opens",
            )
            .at(edit.span, "inserts after a line that opens a block")
            .path(rel.as_str())
            .target(self.target(region, "this line opens a block".into()))
            .hint("to add it after the whole construct, add `<ID> scope_end 1` (or apply with --tolerant)"),
            Miss::Undecided(region, why) => Diagnostic::new(
                Code::AmbiguousContext,
                format!(
                    "the {} matches `{rel}` at line {} only ignoring indentation, and its added lines read two ways: as written ({}), or moved as the {} was ({})",
                    self.policy.advice.block,
                    region.start + 1,
                    why.written,
                    self.policy.advice.block,
                    why.mapped
                ),
            )
            .at(edit.span, "the added lines' indentation is in doubt")
            .path(rel.as_str())
            .target(self.target(region, "indented otherwise than the patch".into()))
            .note("the lines around the insertion fit both readings (or the added lines disagree), so the file does not decide")
            .hint(format!(
                "write the {} with the file's own indentation, and the added lines as they must appear in the file",
                self.policy.advice.block
            )),
            Miss::Present { at, old_at } => self.applied_already(edit, at, old_at),
            Miss::AwayFromItsLine { at, line } => Diagnostic::new(
                Code::ContextNotFound,
                format!(
                    "the lines this hunk removes are not at line {} of `{rel}`, where its header points, and it has no context lines to place it",
                    line + 1
                ),
            )
            .at(edit.span, "a hunk without context")
            .path(rel.as_str())
            .target(self.target(at, "the same lines occur here".into()))
            .note("a patch applied before, or a wrong line number: without context the two cannot be told apart")
            .hint("add unchanged context lines around the change, or correct the line number"),
            Miss::Ambiguous { part, found, level } => self.ambiguous(edit, part, &found, level, drift),
            Miss::NotFound { part, from } => self.not_found(edits, i, part, from, drift),
        }
    }

    /// Edit `edit` whose result is in the file already, at `at` (and its
    /// old text at `old_at`, when that occurs too).
    fn applied_already(&self, edit: &Edit, at: Region, old_at: Option<Region>) -> Diagnostic {
        let rel = self.rel;
        let d = Diagnostic::new(
            Code::AmbiguousContext,
            format!(
                "what this change writes is already in `{rel}` at line {}: the patch may have been applied already",
                at.start + 1
            ),
        )
        .at(edit.span, "its result is there already")
        .path(rel.as_str())
        .target(self.target(at, "the new text, already here".into()))
        .note("applied again, it would change the file a second time; applied only once, it changes nothing");
        let fix = match (old_at, edit.locator.hint) {
            (Some(_), Some(crate::ir::Hint::Near(_))) => "else correct the line numbers",
            (Some(_), _) => "else point the header (or anchor) at the text to change",
            (None, _) => "to add the lines again, give the change more context that shows where",
        };
        let d = match old_at {
            Some(old) => d.target(self.target(old, "the old text occurs here too".into())),
            None => d,
        };
        d.hint(format!(
            "if the patch was applied before, there is nothing to do; {fix}"
        ))
    }

    /// The span of a part's lines when they lie outside the edit's own
    /// span (an anchor, a range end, ap's snippet below its directive), to
    /// underline them instead of the whole edit.
    fn apart(&self, edit: &Edit, part: Part) -> Option<crate::ir::Span> {
        let span = self.lines_span(part.lines(edit));
        let inside = span.start >= edit.span.start && span.end <= edit.span.end;
        (span != crate::ir::Span::default() && !inside).then_some(span)
    }

    /// " after the previous edit", where the format searches from there.
    fn after_previous(&self, edit: &Edit) -> &'static str {
        let cursor_rule = edit.locator.uniqueness != Uniqueness::UniqueInFile;
        if cursor_rule && self.cursor > 0 {
            " after the previous edit"
        } else {
            ""
        }
    }

    fn hint_line(&self, edit: &Edit, drift: isize) -> Option<usize> {
        match edit.locator.hint {
            Some(Hint::Near(h)) => Some((h as usize).saturating_add_signed(drift)),
            Some(Hint::From(h)) => Some(h as usize),
            Some(Hint::Whole) => Some(0),
            Some(Hint::AfterLine(h)) => Some(h as usize),
            Some(Hint::Text) | None => None,
        }
    }

    fn ambiguous(
        &self,
        edit: &Edit,
        part: Part,
        found: &[Region],
        level: Level,
        drift: isize,
    ) -> Diagnostic {
        let rel = self.rel;
        let hint_line = self.hint_line(edit, drift);
        let mut where_ = found
            .iter()
            .take(SHOWN)
            .map(|r| match hint_line {
                Some(h) => format!(
                    "line {} ({} from the hint)",
                    r.start + 1,
                    r.start.abs_diff(h)
                ),
                None => format!("line {}", r.start + 1),
            })
            .collect::<Vec<_>>()
            .join(", ");
        if found.len() > SHOWN {
            where_.push_str(", ...");
        }
        let how = if level.is_slip() {
            format!(" ({})", level.describe())
        } else {
            String::new()
        };
        let mut d = Diagnostic::new(
            Code::AmbiguousContext,
            format!(
                "{} matches {} in `{rel}`{}{how}",
                part.noun(self.policy),
                places(found.len()),
                self.after_previous(edit)
            ),
        );
        d = match self.apart(edit, part) {
            None => d.at(edit.span, "this block occurs more than once"),
            Some(span) => d
                .at(span, "matches more than one place")
                .secondary(edit.span, "in this edit"),
        };
        d = d.path(rel.as_str()).note(format!("candidates: {where_}"));
        for r in found.iter().take(SHOWN) {
            d = d.target(self.target(*r, format!("candidate at line {}", r.start + 1)));
        }
        if let Some(a) = self.unique_line_above(found[0].start) {
            d = d.note(format!(
                "line {} occurs once in the file, above the first candidate: `{}`",
                a + 1,
                self.file.line(a).trim()
            ));
        }
        d.hint(self.policy.advice.disambiguate)
    }

    /// The nearest line above `at` (and after the cursor) that occurs once.
    fn unique_line_above(&self, at: usize) -> Option<usize> {
        let above = || (self.cursor..at).rev().take(200);
        // Each line's count: the lines sought together, in one pass.
        let keys = above().map(|i| self.file.line(i)).filter(|l| !l.is_empty());
        self.file.seek(Key::Exact, keys.map(hash_key));
        above().find(|&i| {
            let line = [Line::of(self.file.line(i))];
            let want = Want::new(&line, Level::Exact);
            !self.file.is_blank(i) && find::find(self.file, &want, 0, self.file.len(), 2).len() == 1
        })
    }

    fn not_found(
        &self,
        edits: &[Edit],
        i: usize,
        part: Part,
        from: usize,
        drift: isize,
    ) -> Diagnostic {
        let edit = &edits[i];
        let rel = self.rel;
        let lines = part.lines(edit);
        let place = match part {
            Part::RangeEnd => " after the start of the range",
            _ => self.after_previous(edit),
        };
        let label = match lines.len() {
            1 => "this line does not occur in the file".to_string(),
            n => format!("these {n} lines do not occur together in the file"),
        };
        let mut d = Diagnostic::new(
            Code::ContextNotFound,
            format!("{} not found in `{rel}`{place}", part.noun(self.policy)),
        );
        d = match self.apart(edit, part) {
            None => d.at(edit.span, label),
            Some(span) => d.at(span, label).secondary(edit.span, "in this edit"),
        };
        d = d.path(rel.as_str());
        if edit.locator.levels.iter().any(|l| l.skips_blank_lines()) {
            d = d.note("lines are compared with surrounding whitespace and blank lines ignored");
        }
        if part == Part::Anchor {
            d = d.note(
                "the anchor must repeat a whole line of the file (spaces aside), above the change",
            );
        }
        if let Some(k) = (part != Part::Anchor)
            .then(|| self.consumed_by(lines))
            .flatten()
        {
            return d
                .secondary(edits[k].span, "an earlier edit changed these lines first")
                .note(format!(
                    "the {} was in the file, but edit {} of this file already replaced or removed it",
                    part.noun(self.policy),
                    k + 1
                ))
                .hint("fold the two changes into one edit, or locate this one by text that is still there");
        }
        if from > 0 && self.occurs_before(edit, lines, from) {
            return match part {
                Part::RangeEnd => d
                    .note("it occurs before the start of the range: a range runs down from its start to the first match of its end")
                    .hint("swap the start and the end of the range, or pick an end below the start"),
                _ if edit.locator.anchor().is_some() && from > self.cursor => d
                    .note("it occurs above the anchor; the block is sought below the anchor")
                    .hint("choose an anchor above the block"),
                _ => d
                    .note("it occurs above the point where the previous edit ended; edits of one file apply top to bottom")
                    .hint("order the edits of this file as their targets appear in it"),
            };
        }
        if part == Part::Block && !self.policy.skip_applied && self.already_applied(edit) {
            d = d.note(
                "the file already has this hunk's result: the patch may have been applied before",
            );
        }
        self.nearest_text(d, edit, lines, from, drift)
    }

    /// Whether `lines` match, at one of the edit's levels, before `from`.
    fn occurs_before(&self, edit: &Edit, lines: &[Line], from: usize) -> bool {
        edit.locator.levels.iter().any(|level| {
            let want = Want::new(lines, level);
            !want.is_empty() && !find::find(self.file, &want, 0, from, 1).is_empty()
        })
    }

    /// Adds the nearest text to `d`, and what differs in it.
    fn nearest_text(
        &self,
        d: Diagnostic,
        edit: &Edit,
        lines: &[Line],
        from: usize,
        drift: isize,
    ) -> Diagnostic {
        let rel = self.rel;
        let skip_blank = edit.locator.levels.iter().any(|l| l.skips_blank_lines());
        let search_from = if skip_blank { from } else { 0 };
        let Some((start, _)) = find::nearest(
            self.file,
            lines,
            skip_blank,
            search_from,
            self.hint_line(edit, drift),
        ) else {
            return d.hint(format!(
                "none of these lines occurs in {rel}; re-read the file before writing the patch"
            ));
        };
        let end = (start + lines.len()).min(self.file.len());
        let (summary, notes) = self.differences(lines, start);
        let mut d =
            d.target(self.target(Region::new(start, end), format!("nearest text: {summary}")));
        for note in notes {
            d = d.note(note);
        }
        let nearest = self.file.line(start).trim();
        if let [one] = lines {
            let want = one.text.trim();
            if !want.is_empty() && nearest != want && nearest.contains(want) {
                return d.hint(format!(
                    "a block is whole lines: write the full line `{nearest}`"
                ));
            }
        }
        d.hint(format!(
            "re-read lines {}-{} of {rel}; the nearest text {summary}",
            start + 1,
            end.max(start + 1)
        ))
    }

    /// Whether the edit's new block occurs in the file (and it changes something).
    fn already_applied(&self, edit: &Edit) -> bool {
        let new = super::locate::new_lines(edit);
        let changes = edit
            .new
            .iter()
            .any(|n| matches!(n, crate::ir::NewLine::Add(_)))
            || new.len() != edit.old.len();
        let want = Want::new(&new, Level::Exact);
        changes
            && !new.is_empty()
            && !find::find(self.file, &want, 0, self.file.len(), 1).is_empty()
    }

    /// What differs between the block and the file at `start`.
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
                changed.push((at, line.text, have));
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
