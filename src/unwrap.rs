//! Takes off what models wrap around a patch before any grammar sees it: a
//! CRLF patch text, a markdown code fence, blank lines before and after, a
//! missing final newline. Each removal is a warning, never silent (but for
//! the final newline, which changes nothing).
//!
//! This is not a format parser: it only decides which byte range of the text
//! the format's grammar parses. Spans stay valid in [`Unwrapped::text`], so
//! diagnostics point at the lines the user sees.

use crate::error::{Code, Diagnostic};
use crate::ir::Span;

pub struct Unwrapped {
    /// The patch text as diagnostics show it: LF line ends, ending with a newline.
    pub text: String,
    /// The part the grammar parses.
    pub body: Span,
    pub warnings: Vec<Diagnostic>,
}

impl Unwrapped {
    pub fn body(&self) -> &str {
        &self.text[self.body.start..self.body.end]
    }
}

/// Byte spans of the lines of `text` (without their `\n`).
fn line_spans(text: &str) -> Vec<Span> {
    let mut spans = vec![];
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            spans.push(Span::new(start, i));
            start = i + 1;
        }
    }
    if start < text.len() {
        spans.push(Span::new(start, text.len()));
    }
    spans
}

fn is_fence(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("```") || t.starts_with("~~~")
}

pub fn unwrap(raw: &str) -> Unwrapped {
    let mut warnings = vec![];
    let n_lf = raw.matches('\n').count();
    let n_crlf = raw.matches("\r\n").count();
    let mut text = if n_lf > 0 && n_crlf == n_lf {
        warnings.push(
            Diagnostic::new(
                Code::CrlfPatchNormalized,
                "the patch text uses CRLF line ends; read as LF",
            )
            .note("line ends of the patched files are kept as they are in each file"),
        );
        raw.replace("\r\n", "\n")
    } else {
        raw.to_string()
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }

    let lines = line_spans(&text);
    let line = |s: Span| &text[s.start..s.end];
    let blank = |s: Span| line(s).trim().is_empty();
    let (mut first, mut last) = (0, lines.len());
    while first < last && blank(lines[first]) {
        first += 1;
    }
    while last > first && blank(lines[last - 1]) {
        last -= 1;
    }
    let mut stripped_blank = first > 0 || last < lines.len();

    if first < last && is_fence(line(lines[first])) {
        let open = lines[first];
        let mut d = Diagnostic::new(
            Code::MarkdownFenceStripped,
            "the patch is wrapped in a markdown code fence",
        )
        .at(open, "this fence line was removed");
        first += 1;
        if last > first && line(lines[last - 1]).trim() == &line(open).trim()[..3] {
            d = d.secondary(lines[last - 1], "and this one");
            last -= 1;
        } else {
            d = d.note("the fence is never closed: the patch may have been cut off");
        }
        warnings.push(d.hint("send the patch text alone, without ``` fences"));
        while first < last && blank(lines[first]) {
            first += 1;
            stripped_blank = true;
        }
        while last > first && blank(lines[last - 1]) {
            last -= 1;
            stripped_blank = true;
        }
    }
    if stripped_blank {
        warnings.push(Diagnostic::new(
            Code::BlankLinesStripped,
            "blank lines before or after the patch were removed",
        ));
    }
    let body = if first < last {
        Span::new(lines[first].start, lines[last - 1].end + 1)
    } else {
        Span::new(text.len(), text.len())
    };
    Unwrapped {
        text,
        body,
        warnings,
    }
}
