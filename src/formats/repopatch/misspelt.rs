//! A keyword a model misspelt, named in the syntax error that it caused.

use super::*;

/// A syntax error right after (or at) a line that is a misspelt keyword is
/// that keyword's fault: `replace` leaves its `- ` lines without an
/// operation, and pest can only say so at the first of them.
pub(super) fn misspelt_near(text: &str, error: &Diagnostic) -> Option<Diagnostic> {
    let line_start = Span::line_before(text, error.span?.start + 1).start;
    let before = text[..line_start.saturating_sub(1)]
        .rsplit('\n')
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let here = text[line_start..].split('\n').next().unwrap_or("");
    let (line, kw) = [here, before]
        .into_iter()
        .find_map(|l| misspelt_keyword(l).map(|kw| (l, kw)))?;
    let start = line.as_ptr() as usize - text.as_ptr() as usize;
    Some(
        Diagnostic::new(
            Code::SyntaxError,
            format!("`{}` is not a RepoPatch keyword", line.trim()),
        )
        .at(Span::new(start, start + line.len()), "not a keyword")
        .hint(format!("write `{kw}`, upper case, alone on its line")),
    )
}

/// The keyword a line meant, when it is a keyword in the wrong case or
/// spelling (`replace`, `INSERT_AFTER`, `END PATCH`).
pub(super) fn misspelt_keyword(line: &str) -> Option<&'static str> {
    let folded: String = line
        .trim()
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase();
    [
        ("PATCHSET", "PATCHSET"),
        ("ENDPATCHSET", "ENDPATCHSET"),
        ("ENDPATCH", "ENDPATCH"),
        ("INSERTBEFORE", "INSERT BEFORE"),
        ("INSERTAFTER", "INSERT AFTER"),
        ("REPLACE", "REPLACE"),
        ("DELETE", "DELETE"),
        ("CREATEFILE", "CREATEFILE"),
        ("DELETEFILE", "DELETEFILE"),
        ("INSERT", "INSERT BEFORE` or `INSERT AFTER"),
    ]
    .into_iter()
    .find(|(k, _)| folded == *k)
    .map(|(_, kw)| kw)
    .filter(|kw| line.trim() != *kw)
}
