//! Takes off what models wrap around a patch before any grammar sees it: a
//! CRLF patch text, a markdown code fence, blank lines before and after, a
//! missing final newline. Each removal is a warning, never silent (but for
//! the final newline, which changes nothing).
//!
//! This is not a format parser: it only decides which byte range of the text
//! the format's grammar parses. Spans stay valid in [`Unwrapped::text`], so
//! diagnostics point at the lines the user sees.

use crate::error::{Code, Diagnostic};
use crate::formats::Format;
use crate::ir::Span;

/// A patch taken out of what surrounds it.
pub struct Unwrapped {
    /// The patch text as diagnostics show it: LF line ends, ending with a newline.
    pub text: String,
    /// The part the grammar parses.
    pub body: Span,
    /// What was taken off, each a warning.
    pub warnings: Vec<Diagnostic>,
}

impl Unwrapped {
    /// The text the grammar parses.
    pub fn body(&self) -> &str {
        &self.text[self.body.start..self.body.end]
    }
}

fn is_fence(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Unwraps `raw`, taking ownership so that a patch without CRLF is not copied.
pub fn unwrap(raw: String) -> Unwrapped {
    let mut warnings = vec![];
    let all_crlf = raw.contains("\r\n") && raw.matches('\n').count() == raw.matches("\r\n").count();
    let mut text = if all_crlf {
        warnings.push(
            Diagnostic::new(
                Code::CrlfPatchNormalized,
                "the patch text uses CRLF line ends; read as LF",
            )
            .note("line ends of the patched files are kept as they are in each file"),
        );
        raw.replace("\r\n", "\n")
    } else {
        raw
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }

    // Leading lines that are only whitespace cannot be part of any patch. At
    // the end only empty lines go: ` ` is a context line of an empty line.
    let blank = |s: Span| text[s.start..s.end].trim().is_empty();
    let empty = |s: Span| s.start == s.end;
    let (mut first, mut last) = (0, text.len());
    let trim_blank = |first: &mut usize, last: &mut usize| {
        while *first < *last && blank(Span::line_at(&text, *first)) {
            *first = Span::line_at(&text, *first).end + 1;
        }
        while *last > *first && empty(Span::line_before(&text, *last)) {
            *last = Span::line_before(&text, *last).start;
        }
    };
    trim_blank(&mut first, &mut last);
    let mut stripped_blank = first > 0 || last < text.len();

    // Prose before the patch ("Here is the patch:"): dropped up to the
    // first line where a format (or a fence) starts, but only when the text
    // as it stands is no known format.
    let mut is_mail = false;
    let starts_with_fence = first < last
        && is_fence(&text[Span::line_at(&text, first).start..Span::line_at(&text, first).end]);
    if !starts_with_fence && crate::formats::detect(&text[first..last]).is_none() {
        // `git format-patch` mail: the message ends at its first `---` line
        // (as `git mailinfo` reads it); only then can a patch start.
        let body = mail_body(&text, first, last);
        is_mail = body.is_some();
        let mut at = body.unwrap_or(first);
        while at < last {
            let line = Span::line_at(&text, at);
            let rest = &text[at..last];
            if at > first
                && (is_fence(&text[line.start..line.end]) || crate::formats::detect(rest).is_some())
            {
                warnings.push(
                    Diagnostic::new(
                        Code::SurroundingTextStripped,
                        "text before the patch was removed",
                    )
                    .at(Span::new(first, at - 1), "not part of the patch")
                    .hint("send the patch text alone, without an introduction"),
                );
                first = at;
                break;
            }
            at = line.end + 1;
        }
        // "Here is the patch:", a blank line, then the patch.
        let before = first;
        trim_blank(&mut first, &mut last);
        stripped_blank |= first != before;
    }

    if first < last
        && is_fence(&text[Span::line_at(&text, first).start..Span::line_at(&text, first).end])
    {
        let open = Span::line_at(&text, first);
        let open_text = text[open.start..open.end].trim();
        let mut d = Diagnostic::new(
            Code::MarkdownFenceStripped,
            "the patch is wrapped in a markdown code fence",
        )
        .at(open, "this fence line was removed");
        first = open.end + 1;
        let fence = &open_text[..3];
        // The closing fence is the last fence line; text after it
        // ("This renames x to y.") is dropped too.
        let mut close = None;
        let mut at = first;
        while at < last {
            let line = Span::line_at(&text, at);
            if text[line.start..line.end].trim() == fence {
                close = Some(line);
            }
            at = line.end + 1;
        }
        match close {
            Some(close) => {
                d = d.secondary(close, "and this one");
                let after = Span::new(close.end + 1, last);
                if !text[after.start..after.end.max(after.start)]
                    .trim()
                    .is_empty()
                {
                    warnings.push(
                        Diagnostic::new(
                            Code::SurroundingTextStripped,
                            "text after the patch was removed",
                        )
                        .at(
                            Span::new(after.start, after.end.saturating_sub(1).max(after.start)),
                            "not part of the patch",
                        )
                        .hint("send the patch text alone, without a commentary"),
                    );
                }
                last = close.start;
            }
            None => d = d.note("the fence is never closed: the patch may have been cut off"),
        }
        warnings.push(d.hint("send the patch text alone, without ``` fences"));
        let before = (first, last);
        trim_blank(&mut first, &mut last);
        stripped_blank |= (first, last) != before;
    }
    let tail = match crate::formats::detect(&text[first..last]) {
        Some(Format::Udiff) if is_mail => mail_signature(&text, first, last),
        Some(Format::Udiff) => udiff_tail(&text, first, last),
        // A heredoc (`apply_patch <<'EOF'` … `EOF`) is the codex grammar's.
        Some(Format::Codex)
            if !text[first..last]
                .trim_start()
                .starts_with("*** Begin Patch") =>
        {
            None
        }
        Some(Format::Codex) => tail_after_line(&text, first, last, "*** End Patch"),
        Some(Format::Repopatch) => tail_after_line(&text, first, last, "ENDPATCHSET"),
        _ => None,
    };
    if let Some(cut) = tail {
        warnings.push(
            Diagnostic::new(
                Code::SurroundingTextStripped,
                "text after the patch was removed",
            )
            .at(
                Span::new(cut, last.saturating_sub(1).max(cut)),
                "not part of the patch",
            )
            .hint("send the patch text alone, without a commentary"),
        );
        last = cut;
        let before = (first, last);
        trim_blank(&mut first, &mut last);
        stripped_blank |= (first, last) != before;
    }
    if stripped_blank {
        warnings.push(Diagnostic::new(
            Code::BlankLinesStripped,
            "blank lines before or after the patch were removed",
        ));
    }
    let body = Span::new(first, last.max(first));
    Unwrapped {
        text,
        body,
        warnings,
    }
}

/// The lines of `text[first..last]`, as spans without their `\n`.
fn lines(text: &str, first: usize, last: usize) -> impl Iterator<Item = Span> + '_ {
    let mut at = first;
    std::iter::from_fn(move || {
        (at < last).then(|| {
            let line = Span::line_at(text, at);
            at = line.end + 1;
            line
        })
    })
}

/// Where the message of a `git format-patch` mail ends: after its first
/// `---` line, if the text starts as such a mail does (`From <commit> `).
fn mail_body(text: &str, first: usize, last: usize) -> Option<usize> {
    let head = Span::line_at(text, first);
    let commit = text[head.start..head.end]
        .strip_prefix("From ")?
        .split(' ')
        .next()?;
    if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    lines(text, first, last)
        .find(|l| &text[l.start..l.end] == "---")
        .map(|l| l.end + 1)
}

/// The signature `git format-patch` ends its mail with: the last `-- `
/// line, when only lines that cannot be hunk lines (git's version) follow.
fn mail_signature(text: &str, first: usize, last: usize) -> Option<usize> {
    let all: Vec<Span> = lines(text, first, last).collect();
    let sig = all.iter().rposition(|l| &text[l.start..l.end] == "-- ")?;
    let rest = &all[sig + 1..];
    let not_hunk = |l: &Span| {
        !matches!(
            text.as_bytes().get(l.start),
            Some(b' ' | b'+' | b'-' | b'\\' | b'@')
        ) && l.start < l.end
    };
    (!rest.is_empty() && rest.iter().all(not_hunk)).then_some(all[sig].start)
}

/// Text after a format's closing line (`*** End Patch`): where it starts.
fn tail_after_line(text: &str, first: usize, last: usize, end: &str) -> Option<usize> {
    let close = lines(text, first, last)
        .filter(|l| text[l.start..l.end].trim_end() == end)
        .last()?;
    let rest = &text[(close.end + 1).min(last)..last];
    (!rest.trim().is_empty()).then_some(close.end + 1)
}

/// Text after a unified diff that cannot be part of it: where it starts.
///
/// Hunk headers count their lines, so the end of the last hunk is known.
/// What follows it is cut only where it cannot continue a hunk: from the
/// first line that is no hunk line ("Thanks!"), or whole when it is the
/// signature `git format-patch` ends its mail with (`-- ` and git's
/// version, which the counts say is not a removed line `- `). Lines that
/// could be hunk lines stay (a model's count is often wrong), and nothing
/// is cut after a hunk cut short.
fn udiff_tail(text: &str, first: usize, last: usize) -> Option<usize> {
    // Only the last hunk can end before the text does: start at its header.
    let body = &text[first..last];
    let header = if body.starts_with("@@ ") {
        memchr::memmem::rfind(body.as_bytes(), b"\n@@ ").map_or(0, |i| i + 1)
    } else {
        memchr::memmem::rfind(body.as_bytes(), b"\n@@ ")? + 1
    };
    let mut left: Option<(usize, usize)> = None;
    let mut end = None;
    for line in lines(text, first + header, last) {
        let l = &text[line.start..line.end];
        match left {
            Some((old, new)) if old > 0 || new > 0 => {
                left = Some(match l.as_bytes().first() {
                    Some(b' ') | None => (old.saturating_sub(1), new.saturating_sub(1)),
                    Some(b'-') => (old.saturating_sub(1), new),
                    Some(b'+') => (old, new.saturating_sub(1)),
                    Some(b'\\') => (old, new),
                    _ => return None,
                });
                if left == Some((0, 0)) {
                    end = Some(line.end + 1);
                }
            }
            _ if l.starts_with("@@ ") => {
                left = Some(hunk_counts(l)?);
                end = None;
            }
            // `\ No newline` after the hunk's last line belongs to it.
            _ if l.starts_with('\\') && end == Some(line.start) => end = Some(line.end + 1),
            _ => {}
        }
    }
    let end = end?;
    let tail: Vec<Span> = lines(text, end, last).collect();
    let said = |s: &Span| &text[s.start..s.end];
    let hunk_like = |s: &Span| {
        matches!(
            said(s).as_bytes().first(),
            None | Some(b' ' | b'+' | b'-' | b'\\')
        )
    };
    // Lines that start a patch's next part: nothing after them is cut.
    let patch_lines = ["@@", "diff ", "--- ", "+++ ", "Binary files ", "Only in "];
    if tail
        .iter()
        .any(|s| patch_lines.iter().any(|p| said(s).starts_with(p)))
    {
        return None;
    }
    match &tail[..] {
        [sig, version, ..] if said(sig) == "-- " && !hunk_like(version) => Some(end),
        _ => tail.iter().find(|s| !hunk_like(s)).map(|s| s.start),
    }
}

/// The old and new line counts of a hunk header (`@@ -1,3 +1,4 @@`).
fn hunk_counts(header: &str) -> Option<(usize, usize)> {
    let mut ranges = header.strip_prefix("@@ ")?.split(' ');
    let count = |r: Option<&str>, sign: char| -> Option<usize> {
        let r = r?.strip_prefix(sign)?;
        match r.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => r.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((count(ranges.next(), '-')?, count(ranges.next(), '+')?))
}
