//! Edits located as text rather than lines (Anthropic's `str_replace` and
//! `insert`; [`Hint::Text`], [`Hint::AfterLine`]), each in the text as the
//! ones before it left it.
//!
//! A replacement's old text is sought as an exact substring, which may be
//! part of a line, and must occur exactly once; occurrences that overlap
//! count apart (`aa` in `aaa` is two readings, and two readings are
//! refused). Only where it occurs nowhere is it read as whole lines and
//! placed as every format's blocks are (`sequential.rs`: the ladder,
//! re-indenting, the explanation of a miss). An insertion goes after a
//! line number.

use super::plan::{OpCx, Step};
use crate::apply::matching::find::Made;
use crate::apply::matching::locate::new_block;
use crate::apply::output::Output;
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{Edit, Hint, Locator};
use crate::paths::RelPath;

/// How many lines of a text occurring several times a diagnostic lists.
const LISTED: usize = 10;

/// Whether a file's edits are located as text (the lowering gives such a
/// file no other kind).
pub fn as_text(edits: &[Edit]) -> bool {
    edits
        .iter()
        .any(|e| matches!(e.locator.hint, Some(Hint::Text | Hint::AfterLine(_))))
}

impl<'s> OpCx<'_, 's> {
    /// `original` with `edits` made in turn; at the first that cannot be
    /// made, the reason (the later ones were written against its result).
    pub fn edit_as_text(&mut self, rel: &RelPath, original: &str, edits: &[Edit]) -> Step<String> {
        let eol = line_end(original);
        let mut text = original.to_string();
        for edit in edits {
            text = match edit.locator.hint {
                Some(Hint::AfterLine(n)) => self.insert_after(rel, &text, edit, n as usize, eol)?,
                _ => self.replace_text(rel, &text, edit, eol)?,
            };
        }
        Ok(text)
    }

    fn replace_text(&mut self, rel: &RelPath, text: &str, edit: &Edit, eol: &str) -> Step<String> {
        let old = joined(edit, Side::Old);
        let new = in_line_ends(joined(edit, Side::New), eol);
        let starts = occurrences(text, &old);
        match starts.as_slice() {
            [at] if within_new(text, *at, &old, &new) => {
                let line = line_of(text, *at);
                self.fail(applied_already(rel, edit, format!(
                    "`old_str` occurs once in `{rel}`, at line {line}, inside text that reads as `new_str`: the command may have been applied already"
                ))
                .hint("if it was applied, there is nothing to do; else include more of the text around it in `old_str`, so that it does not occur within `new_str`"))
            }
            [at] => Ok([&text[..*at], &new, &text[at + old.len()..]].concat()),
            [] => self.replace_lines(rel, text, edit),
            several => {
                // Line and column, where two share a line (they overlap, or
                // the text is part of a line): `3:5`.
                let lines: Vec<usize> = several.iter().map(|&at| line_of(text, at)).collect();
                let shared = lines.windows(2).any(|w| w[0] == w[1]);
                let places: Vec<String> = several
                    .iter()
                    .zip(&lines)
                    .take(LISTED)
                    .map(|(&at, line)| match shared {
                        true => format!("{line}:{}", column_of(text, at)),
                        false => line.to_string(),
                    })
                    .collect();
                let more = if several.len() > LISTED { ", …" } else { "" };
                let at = if shared { "line:column" } else { "lines" };
                let overlap = several.windows(2).any(|w| w[1] < w[0] + old.len());
                let d = Diagnostic::new(
                    Code::AmbiguousContext,
                    format!(
                        "no replacement was performed: `old_str` occurs {} times in `{rel}`, at {at} {}{more}",
                        several.len(),
                        places.join(", ")
                    ),
                )
                .at(edit.span, "occurs more than once")
                .path(rel.as_str())
                .hint("include more of the lines around the text to change in `old_str`, so that it occurs exactly once");
                self.fail(match overlap {
                    true => d.note(
                        "occurrences that overlap count apart: each is a reading of the edit",
                    ),
                    false => d,
                })
            }
        }
    }

    /// A replacement whose text occurs nowhere, read as whole lines: the
    /// ladder finds them if they are there but for whitespace or
    /// typography, and a miss is explained against the file.
    fn replace_lines(&mut self, rel: &RelPath, text: &str, edit: &Edit) -> Step<String> {
        let lines = Edit {
            old_no_eol: false,
            new_no_eol: false,
            locator: Locator {
                hint: None,
                ..edit.locator.clone()
            },
            ..edit.clone()
        };
        let reported = self.errors.len();
        let one = std::slice::from_ref(&lines);
        match self.in_order(rel, self.split(text, Made::default(), one), one) {
            Ok(pieces) => Ok(Output::new(text.to_string(), pieces).to_text()),
            Err(Reported) => {
                for d in &mut self.errors[reported..] {
                    let why = std::mem::replace(
                        &mut d.message,
                        format!("no replacement was performed: `old_str` does not occur verbatim in `{rel}`"),
                    );
                    d.notes.insert(0, format!("read as whole lines: {why}"));
                }
                Err(Reported)
            }
        }
    }

    fn insert_after(
        &mut self,
        rel: &RelPath,
        text: &str,
        edit: &Edit,
        n: usize,
        eol: &str,
    ) -> Step<String> {
        let count = crate::apply::output::line_count(text);
        if n > count {
            return self.fail(
                Diagnostic::new(
                    Code::ContextNotFound,
                    format!("`insert_line` {n} is past the end of `{rel}`, which has {count} lines"),
                )
                .at(edit.span, "nothing was inserted")
                .path(rel.as_str())
                .hint(format!(
                    "give the line to insert after, from 0 (before the first line) to {count} (after the last)"
                )),
            );
        }
        // Inserted as lines: the last ends as the file's lines do.
        let mut new = in_line_ends(joined(edit, Side::New), eol);
        if new.is_empty() {
            return Ok(text.to_string());
        }
        if !new.ends_with('\n') {
            new.push_str(eol);
        }
        // After line n: at the start of line n + 1.
        let at = match n {
            0 => 0,
            _ => crate::bytes::iter(b'\n', text.as_bytes())
                .nth(n - 1)
                .map_or(text.len(), |i| i + 1),
        };
        let rest = &text[at..];
        if rest.starts_with(&new) || Some(rest) == new.strip_suffix(eol) {
            return self.fail(applied_already(rel, edit, format!(
                "the lines after line {n} of `{rel}` are the text to insert: the command may have been applied already"
            ))
            .hint("if it was applied, there is nothing to do; to insert the lines again, replace the lines around them with `str_replace`"));
        }
        Ok(
            match at == text.len() && !text.is_empty() && !text.ends_with('\n') {
                // After a last line without a line end: the file keeps having none.
                true => [text, eol, new.strip_suffix(eol).unwrap_or(&new)].concat(),
                false => [&text[..at], &new, &text[at..]].concat(),
            },
        )
    }
}

/// Two readings of an edit whose result may be in the file: refused.
fn applied_already(rel: &RelPath, edit: &Edit, message: String) -> Diagnostic {
    Diagnostic::new(Code::AmbiguousContext, message)
        .at(edit.span, "its result may be there already")
        .path(rel.as_str())
        .note("two readings: not yet applied (make the change), or applied before (then making it again would change the file a second time)")
}

/// Whether the one occurrence of `old` at `at` lies inside an occurrence
/// of `new` (which holds `old`): the replacement's result, perhaps.
fn within_new(text: &str, at: usize, old: &str, new: &str) -> bool {
    occurrences(new, old).into_iter().any(|k| {
        at.checked_sub(k)
            .and_then(|start| text.get(start..))
            .is_some_and(|t| t.starts_with(new))
    })
}

/// The 1-based column (in characters) of byte `at`.
fn column_of(text: &str, at: usize) -> usize {
    let start = crate::bytes::rfind(b'\n', &text.as_bytes()[..at]).map_or(0, |i| i + 1);
    text[start..at].chars().count() + 1
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    crate::bytes::iter(b'\n', &text.as_bytes()[..at]).count() + 1
}

enum Side {
    Old,
    New,
}

/// One side of `edit` as the text it states: its lines joined by `\n`,
/// with a last `\n` unless that side has none (the new side reads its
/// kept lines from the old).
fn joined(edit: &Edit, side: Side) -> String {
    let (texts, no_eol): (Vec<&str>, bool) = match side {
        Side::Old => (edit.old.iter().map(|l| l.text).collect(), edit.old_no_eol),
        Side::New => (new_block(edit).map(|l| l.text).collect(), edit.new_no_eol),
    };
    let mut s = texts.join("\n");
    if !texts.is_empty() && !no_eol {
        s.push('\n');
    }
    s
}

/// Every start of `needle` in `text`, overlapping ones included (an
/// empty needle occurs everywhere: two starts say so).
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    let Some(first) = needle.chars().next() else {
        return vec![0, 0];
    };
    let mut starts = vec![];
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        starts.push(from + i);
        from += i + first.len_utf8();
    }
    starts
}

/// The file's line end: its first line's, or LF.
fn line_end(text: &str) -> &'static str {
    match crate::bytes::find(b'\n', text.as_bytes()) {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// A text a model wrote with `\n` alone, in a file whose lines end with
/// `\r\n`, given the file's line ends; a text with any `\r` is as written.
fn in_line_ends(text: String, eol: &str) -> String {
    match eol == "\r\n" && !text.contains('\r') {
        true => text.replace('\n', "\r\n"),
        false => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_occurrences_count_apart() {
        assert_eq!(occurrences("aaa", "aa"), [0, 1]);
        assert_eq!(occurrences("xax", "a"), [1]);
        assert!(occurrences("abc", "d").is_empty());
    }

    #[test]
    fn a_model_s_line_ends_follow_the_file_s() {
        assert_eq!(in_line_ends("a\nb\n".into(), "\r\n"), "a\r\nb\r\n");
        assert_eq!(in_line_ends("a\r\nb\n".into(), "\r\n"), "a\r\nb\n");
        assert_eq!(in_line_ends("a\nb\n".into(), "\n"), "a\nb\n");
        assert_eq!(line_end("x\r\ny\n"), "\r\n");
        assert_eq!(line_end("x"), "\n");
    }
}
