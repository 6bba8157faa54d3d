//! The contract's JSON result, built from an [`Outcome`]. Internal types stay
//! free of `Serialize`; this module is the edge.

use serde::Serialize;

use crate::error::{Code, Diagnostic, Severity};
use crate::{FileResult, Mode, Outcome};

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    action: &'a str,
    from: Option<&'a str>,
    added: usize,
    removed: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    severity: &'static str,
    code: &'static str,
    message: &'a str,
    patch_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
}

#[derive(Serialize)]
struct JsonError<'a> {
    code: &'static str,
    message: &'a str,
    path: Option<&'a str>,
    patch_line: Option<usize>,
    hint: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
}

/// The one shape of every result, success or failure
/// (`schema/result.schema.json`): a failure adds `error`.
#[derive(Serialize)]
struct Result<'a> {
    ok: bool,
    format: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<JsonError<'a>>,
    dry_run: bool,
    files: Vec<JsonFile<'a>>,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    ignored_metadata: &'a [String],
}

/// The 1-based line of a byte offset of the patch. The line ends are found
/// once, on the first question (a patch with 20,000 diagnostics counted
/// them from the start for each, quadratic), and not at all without one.
struct LineNumbers<'t> {
    text: &'t str,
    ends: std::cell::OnceCell<Vec<usize>>,
}

impl<'t> LineNumbers<'t> {
    fn new(text: &'t str) -> Self {
        LineNumbers {
            text,
            ends: Default::default(),
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        let ends = self
            .ends
            .get_or_init(|| crate::newlines::newlines(self.text.as_bytes()).collect());
        ends.partition_point(|&e| e < offset) + 1
    }
}

fn diagnostic<'a>(d: &'a Diagnostic, text: &LineNumbers) -> JsonDiagnostic<'a> {
    JsonDiagnostic {
        severity: match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        },
        code: d.code.as_str(),
        message: &d.message,
        patch_line: d.span.map(|s| text.line_of(s.start)),
        path: d.path.as_deref(),
        hint: d.hint.as_deref(),
        notes: &d.notes,
    }
}

/// The one JSON object `--json` prints.
pub fn to_json(outcome: &Outcome) -> String {
    to_value(outcome).to_string()
}

/// The same object as a JSON value (keys in the contract's order).
pub fn to_value(outcome: &Outcome) -> serde_json::Value {
    let text = &LineNumbers::new(&outcome.text);
    let format = match outcome.commands.is_empty() {
        true => outcome.format.map(|f| f.name()),
        false => Some("anthropic"),
    };
    let failed = outcome.diagnostics.iter().position(Diagnostic::is_error);
    let error = failed.map(|i| {
        let e = &outcome.diagnostics[i];
        JsonError {
            code: e.code.as_str(),
            message: &e.message,
            path: e.path.as_deref(),
            patch_line: e.span.map(|s| text.line_of(s.start)),
            hint: e.hint.as_deref(),
            notes: &e.notes,
        }
    });
    let value = serde_json::to_value(Result {
        ok: failed.is_none(),
        format,
        error,
        dry_run: matches!(outcome.mode, Mode::Apply { dry_run: true } | Mode::Lint),
        // Nothing is written when a patch fails.
        files: match failed {
            Some(_) => vec![],
            None => outcome
                .files
                .iter()
                .map(|f| JsonFile {
                    path: &f.path,
                    action: f.action.word(),
                    from: f.from.as_deref(),
                    added: f.added,
                    removed: f.removed,
                    diff: f.diff.as_deref(),
                })
                .collect(),
        },
        diagnostics: outcome
            .diagnostics
            .iter()
            .enumerate()
            .filter(|&(j, _)| Some(j) != failed)
            .map(|(_, d)| diagnostic(d, text))
            .collect(),
        ignored_metadata: &outcome.ignored_metadata,
    });
    let mut value = value.unwrap_or_else(|e| failure(Code::IoError, &e.to_string(), None, false));
    show_bytes(&mut value);
    value
}

/// The result of a command that failed before any patch was read or
/// applied (`usage_error`, `io_error`), in the same shape as every other.
pub fn failure(code: Code, message: &str, hint: Option<&str>, dry_run: bool) -> serde_json::Value {
    let result = Result {
        ok: false,
        format: None,
        error: Some(JsonError {
            code: code.as_str(),
            message,
            path: None,
            patch_line: None,
            hint,
            notes: &[],
        }),
        dry_run,
        files: vec![],
        diagnostics: vec![],
        ignored_metadata: &[],
    };
    // Strings, numbers and booleans only: serialising cannot fail.
    serde_json::to_value(result).unwrap_or_default()
}

/// Bytes that are not UTF-8, in any string, shown as `\xHH` (see `lossless`).
fn show_bytes(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => {
            if let std::borrow::Cow::Owned(shown) = crate::lossless::visible(s) {
                *s = shown;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(show_bytes),
        serde_json::Value::Object(map) => map.values_mut().for_each(show_bytes),
        _ => {}
    }
}

/// How a file's path reads in a diffstat: `from => to` for a move.
fn stat_name(f: &FileResult) -> String {
    match &f.from {
        Some(from) => format!("{from} => {}", f.path),
        None => f.path.clone(),
    }
}

/// `git apply --numstat`: lines added, lines removed and the path, tab-
/// separated, a line a file.
pub fn numstat(files: &[FileResult]) -> String {
    files
        .iter()
        .map(|f| format!("{}\t{}\t{}\n", f.added, f.removed, stat_name(f)))
        .collect()
}

/// `git apply --stat`: a line a file with its count of changed lines and
/// a bar of `+` and `-` (scaled to 50 columns at most), then the totals.
pub fn diffstat(files: &[FileResult]) -> String {
    let names: Vec<String> = files.iter().map(stat_name).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let widest = files.iter().map(|f| f.added + f.removed).max().unwrap_or(0);
    let digits = widest.to_string().len();
    let scale = |n: usize| match widest {
        0..=50 => n,
        _ => (n * 50).div_ceil(widest),
    };
    let mut out = String::new();
    for (f, name) in files.iter().zip(&names) {
        let bar = "+".repeat(scale(f.added)) + &"-".repeat(scale(f.removed));
        let pad = width - name.chars().count();
        let total = f.added + f.removed;
        out += &format!(" {name}{:pad$} | {total:>digits$} {bar}\n", "");
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let (added, removed) = files
        .iter()
        .fold((0, 0), |(a, r), f| (a + f.added, r + f.removed));
    out += &format!(
        " {}, {}, {}\n",
        plural(files.len(), "file changed", "files changed"),
        plural(added, "insertion(+)", "insertions(+)"),
        plural(removed, "deletion(-)", "deletions(-)")
    );
    out
}
