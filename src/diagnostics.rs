//! The only file that knows codespan-reporting: renders diagnostics like
//! rustc, against the patch text and, where a diagnostic points into a
//! target file (nearest text, candidates), against that file too.

use std::collections::HashMap;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};

use crate::error::{Diagnostic, Severity};
use crate::lossless::visible;

/// Renders `diags` as plain text (for snapshots and pipes).
pub fn render_plain(diags: &[Diagnostic], patch_name: &str, patch_text: &str) -> String {
    let (files, rendered) = build(diags, patch_name, patch_text);
    let config = term::Config::default();
    rendered
        .iter()
        .map(|d| {
            term::emit_into_string(&config, &files, d).unwrap_or_else(|e| format!("error: {e}\n"))
        })
        .collect()
}

/// When diagnostics on stderr are in colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Color {
    /// On a terminal, unless `NO_COLOR` is set (and not empty).
    #[default]
    Auto,
    /// Always (`NO_COLOR` too is overridden), as for a pager that shows it.
    Always,
    /// Never.
    Never,
}

/// Writes `diags` to stderr, in colour as `color` says.
pub fn emit_stderr(diags: &[Diagnostic], patch_name: &str, patch_text: &str, color: Color) {
    use std::io::IsTerminal;
    // Nothing to show: no copy of the patch, no index of its lines.
    if diags.is_empty() {
        return;
    }
    let choice = match color {
        Color::Always => termcolor::ColorChoice::AlwaysAnsi,
        Color::Never => termcolor::ColorChoice::Never,
        Color::Auto
            if std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) =>
        {
            termcolor::ColorChoice::Auto
        }
        Color::Auto => termcolor::ColorChoice::Never,
    };
    // One buffer, one write: codespan writes a label a character at a time.
    let writer = termcolor::BufferWriter::stderr(choice);
    let mut buffer = writer.buffer();
    let (files, rendered) = build(diags, patch_name, patch_text);
    let config = term::Config::default();
    for d in &rendered {
        let _ = term::emit_to_write_style(&mut buffer, &config, &files, d);
    }
    // A closed stderr is not worth a panic.
    let _ = writer.print(&buffer);
}

type Files = SimpleFiles<String, String>;

fn build(
    diags: &[Diagnostic],
    patch_name: &str,
    patch_text: &str,
) -> (Files, Vec<CsDiagnostic<usize>>) {
    // Bytes that are not UTF-8 are shown as `\xHH` (see `lossless`).
    let show = |text: &str| visible(text).into_owned();
    let mut files = SimpleFiles::new();
    let patch = files.add(patch_name.to_string(), show(patch_text));
    let mut targets: HashMap<(String, usize), usize> = HashMap::new();
    let mut out = vec![];
    for d in diags {
        let severity = match d.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
        };
        let mut labels = vec![];
        if let Some(span) = d.span {
            labels.push(
                Label::primary(patch, clamp(span.start, span.end, patch_text))
                    .with_message(show(&d.label)),
            );
        }
        for (span, message) in &d.secondary {
            labels.push(
                Label::secondary(patch, clamp(span.start, span.end, patch_text))
                    .with_message(show(message)),
            );
        }
        for t in &d.targets {
            // One file entry per target text, however many labels point into it.
            let key = (t.path.clone(), t.text.as_ptr() as usize);
            let id = *targets
                .entry(key)
                .or_insert_with(|| files.add(t.path.clone(), show(&t.text)));
            labels.push(
                Label::secondary(id, clamp(t.span.start, t.span.end, &t.text))
                    .with_message(show(&t.message)),
            );
        }
        let mut notes: Vec<String> = d.notes.iter().map(|n| show(n)).collect();
        if let Some(hint) = &d.hint {
            notes.push(format!("help: {}", show(hint)));
        }
        out.push(
            CsDiagnostic::new(severity)
                .with_code(d.code.as_str())
                .with_message(show(&d.message))
                .with_labels(labels)
                .with_notes(notes),
        );
    }
    (files, out)
}

fn clamp(start: usize, end: usize, text: &str) -> std::ops::Range<usize> {
    let start = start.min(text.len());
    start..end.clamp(start, text.len())
}
