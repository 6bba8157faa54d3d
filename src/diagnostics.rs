//! The only file that knows codespan-reporting: renders diagnostics like
//! rustc, against the patch text and, where a diagnostic points into a
//! target file (nearest text, candidates), against that file too.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::{Error as FilesError, Files};
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

/// The texts the labels point into: the patch and the target files,
/// borrowed where they show as they are (a target file may be megabytes;
/// codespan's own `SimpleFiles` takes a copy of each and indexes its
/// lines char by char), their lines indexed when a label first asks.
#[derive(Default)]
struct Texts<'t> {
    files: Vec<Text<'t>>,
}

struct Text<'t> {
    name: String,
    source: Cow<'t, str>,
    /// Where every [`STRIDE`]th line starts, and how many `\n` the text
    /// holds: a patch may have millions of lines, and a diagnostic names a
    /// few (an index of every line was most of showing a large patch's
    /// warnings).
    lines: OnceCell<(Vec<usize>, usize)>,
}

/// Lines between two starts [`Text`] keeps: finding a line from there is a
/// search over at most this many.
const STRIDE: usize = 256;

impl<'t> Texts<'t> {
    fn add(&mut self, name: String, source: Cow<'t, str>) -> usize {
        self.files.push(Text {
            name,
            source,
            lines: OnceCell::new(),
        });
        self.files.len() - 1
    }

    fn get(&self, id: usize) -> Result<&Text<'t>, FilesError> {
        self.files.get(id).ok_or(FilesError::FileMissing)
    }
}

impl Text<'_> {
    /// Every [`STRIDE`]th line's start, and the number of `\n`.
    fn lines(&self) -> (&[usize], usize) {
        let (starts, breaks) = self
            .lines
            .get_or_init(|| crate::newlines::every_nth_line(self.source.as_bytes(), STRIDE));
        (starts, *breaks)
    }

    /// The line `byte` is on (a byte past the end: the last line).
    fn line_of(&self, byte: usize) -> usize {
        let (starts, _) = self.lines();
        let k = starts.partition_point(|&s| s <= byte) - 1;
        let text = self.source.as_bytes();
        let between = &text[starts[k]..byte.min(text.len())];
        k * STRIDE + crate::newlines::newlines(between).count()
    }

    /// Where line `line` starts and ends (with its `\n`); `None` past
    /// the last line.
    fn range_of(&self, line: usize) -> Option<Range<usize>> {
        let (starts, breaks) = self.lines();
        if line > breaks {
            return None;
        }
        let text = self.source.as_bytes();
        let from = starts[line / STRIDE];
        let start = match line % STRIDE {
            0 => from,
            skip => from + crate::newlines::newlines(&text[from..]).nth(skip - 1)? + 1,
        };
        let end = crate::newlines::newlines(&text[start..])
            .next()
            .map_or(text.len(), |i| start + i + 1);
        Some(start..end)
    }
}

impl<'a> Files<'a> for Texts<'_> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, FilesError> {
        Ok(&self.get(id)?.name)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, FilesError> {
        Ok(&self.get(id)?.source)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.get(id)?.line_of(byte_index))
    }

    fn line_range(&'a self, id: usize, line_index: usize) -> Result<Range<usize>, FilesError> {
        let text = self.get(id)?;
        text.range_of(line_index)
            .ok_or_else(|| FilesError::LineTooLarge {
                given: line_index,
                max: text.lines().1,
            })
    }
}

fn build<'t>(
    diags: &'t [Diagnostic],
    patch_name: &str,
    patch_text: &'t str,
) -> (Texts<'t>, Vec<CsDiagnostic<usize>>) {
    // Bytes that are not UTF-8 are shown as `\xHH` (see `lossless`).
    let show = |text: &str| visible(text).into_owned();
    let mut files = Texts::default();
    let patch = files.add(patch_name.to_string(), visible(patch_text));
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
            let key = (t.path.clone(), t.text.id());
            let text = t.text.as_str();
            let id = *targets
                .entry(key)
                .or_insert_with(|| files.add(t.path.clone(), visible(text)));
            labels.push(
                Label::secondary(id, clamp(t.span.start, t.span.end, text))
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

#[cfg(test)]
mod tests {
    use super::*;
    use codespan_reporting::files::SimpleFile;

    /// Our line index answers as codespan's own file does, for every byte
    /// and every line (one past the last too), on texts with and without
    /// a last newline, empty lines, `\r\n` and characters of several bytes.
    #[test]
    fn lines_are_indexed_as_codespan_indexes_them() {
        let texts = [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "a\nb\n",
            "\n\n",
            "foo\nbar\r\n\nbaz",
            "é\n日本\n\n🎈x",
            "x\n".repeat(70).as_str(),
            // Past several of the index's strides, lines of every length.
            (0..1200)
                .map(|i| format!("{}\n", "é".repeat(i % 7)))
                .collect::<String>()
                .as_str(),
            "y\n".repeat(STRIDE * 2).as_str(),
        ]
        .map(str::to_string);
        for text in &texts {
            let theirs = SimpleFile::new("t", text.as_str());
            let mut ours = Texts::default();
            let id = ours.add("t".into(), Cow::Borrowed(text));
            for byte in 0..=text.len() + 1 {
                assert_eq!(
                    ours.line_index(id, byte).ok(),
                    theirs.line_index((), byte).ok(),
                    "{text:?} at byte {byte}"
                );
            }
            for line in 0..text.len() + 3 {
                assert_eq!(
                    ours.line_range(id, line).ok(),
                    theirs.line_range((), line).ok(),
                    "{text:?} line {line}"
                );
            }
            assert_eq!(ours.source(id).ok(), Some(text.as_str()));
            assert!(ours.line_range(id + 1, 0).is_err());
        }
    }
}
