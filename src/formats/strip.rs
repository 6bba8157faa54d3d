//! `-p N` (`--strip N`): leading components taken off every path of a
//! lowered patch, as GNU `patch` counts them on the path the patch writes.
//! A unified diff's git `a/` and `b/` (and GNU diff's `old/`, `new/`) are
//! taken off by the lowering already; they count as the first component,
//! so `-p1` there is the lowering's own reading.

use super::Format;
use crate::error::{Code, Diagnostic};
use crate::ir::{Action, Patch, PathRef};

/// Takes `n` leading components off each path of `patch`; a path with no
/// more than that many is refused.
pub fn strip(
    patch: &mut Patch,
    text: &str,
    format: Format,
    n: usize,
) -> Result<(), Vec<Diagnostic>> {
    let mut errors = vec![];
    for op in &mut patch.files {
        let mut paths = vec![&mut op.path];
        match &mut op.action {
            Action::Modify {
                move_to: Some(to), ..
            }
            | Action::Rename { to } => paths.push(to),
            _ => {}
        }
        for path in paths {
            let prefixed = format == Format::Udiff && prefix_taken(path, text);
            let taken = if prefixed { n.saturating_sub(1) } else { n };
            let written = match prefixed {
                true => as_written(path, text),
                false => path.text.clone(),
            };
            if let Some(e) = strip_path(path, taken, n, &written) {
                errors.push(e);
            }
        }
    }
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors),
    }
}

/// Whether the lowering took a first component off this udiff path: the
/// path then starts right after a `/` in the patch, or it was read from a
/// `diff --git` line, whose sides always carry one.
fn prefix_taken(path: &PathRef, text: &str) -> bool {
    let before = path
        .span
        .start
        .checked_sub(1)
        .and_then(|i| text.as_bytes().get(i));
    before == Some(&b'/') || text[path.span.range()].starts_with("diff --git")
}

/// A prefixed udiff path with its prefix, as the patch writes it.
fn as_written(path: &PathRef, text: &str) -> String {
    let line_start = text[..path.span.start]
        .rfind([' ', '\t', '"', '\n'])
        .map_or(0, |i| i + 1);
    text[line_start..path.span.end].to_string()
}

/// Takes `taken` components off `path`; the error when too few are there.
fn strip_path(path: &mut PathRef, taken: usize, n: usize, written: &str) -> Option<Diagnostic> {
    if taken == 0 {
        return None;
    }
    let parts: Vec<&str> = path.text.split('/').filter(|c| !c.is_empty()).collect();
    if parts.len() <= taken {
        return Some(
            Diagnostic::new(
                Code::FileNotFound,
                format!("`-p {n}` takes off every component of `{written}`"),
            )
            .at(path.span, "too few directories to strip")
            .path(&path.text)
            .hint(format!(
                "give a smaller -p: `{written}` has {} component(s)",
                parts.len() + n - taken
            )),
        );
    }
    path.text = parts[taken..].join("/");
    None
}
