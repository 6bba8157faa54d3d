//! Tolerant mode's repair of directive IDs that drifted from the header's.

use super::blocks::is_fence;
use super::KEYWORDS;
use crate::error::{Code, Diagnostic};
use crate::ir::Span;

/// `--tolerant`: a directive line whose ID drifted from the header's (case,
/// or at most two hex digits) is read as that directive: its ID is
/// rewritten in place (same length, so every span stays), with a warning
/// naming the line. Only a line that is exactly `<8 hex> <KEYWORD>[ args]`
/// outside a markdown fence; such a line is never content in the export.
pub fn correct_drifted_ids(text: &mut String, body: Span) -> Vec<Diagnostic> {
    let mut warnings = vec![];
    let mut at = body.start;
    let mut id: Option<String> = None;
    let mut fenced = false;
    let mut fixes = vec![];
    for line in crate::newlines::lines_inclusive(&text[body.start..body.end]) {
        let start = at;
        at += line.len();
        let line = line.trim_end_matches('\n');
        let Some(other) = directive_id(line) else {
            if id.is_some() && is_fence(line) {
                fenced = !fenced;
            }
            continue;
        };
        let Some(want) = id.as_deref() else {
            if line[8..].trim_start().starts_with("AP") {
                id = Some(other.to_string());
            }
            continue;
        };
        let differing = other
            .bytes()
            .zip(want.bytes())
            .filter(|(a, b)| !a.eq_ignore_ascii_case(b))
            .count();
        if fenced || other == want || differing > 2 {
            continue;
        }
        fixes.push((start, want.to_string()));
        warnings.push(
            Diagnostic::new(
                Code::ToleratedFormatSlip,
                format!(
                    "directive ID `{other}` drifted from the header's `{want}`; read as `{want}`"
                ),
            )
            .at(Span::new(start, start + 8), "a drifted patch ID")
            .hint(format!(
                "every directive starts with the header's ID: write `{want}`"
            )),
        );
    }
    for (start, want) in fixes {
        text.replace_range(start..start + 8, &want);
    }
    warnings
}
/// The ID of a line that looks like a directive (`<8 hex> KEYWORD …`).
pub(super) fn directive_id(line: &str) -> Option<&str> {
    let id = line.get(..8)?;
    if !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rest = line[8..].strip_prefix(' ')?.trim_start();
    let word = rest.split_whitespace().next()?;
    (KEYWORDS.contains(&word) || word == "AP").then_some(id)
}
