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
    /// Anthropic's text-editor commands, which `text` renders, and where
    /// each one's parts lie in it; empty for patch text.
    pub commands: Vec<crate::anthropic::Command>,
    pub rendered: Vec<crate::anthropic::Rendered>,
}

impl Unwrapped {
    /// Anthropic's text-editor commands, as the text diagnostics show.
    pub fn commands(commands: Vec<crate::anthropic::Command>) -> Self {
        let (text, rendered) = crate::anthropic::render(&commands);
        Unwrapped {
            body: crate::ir::Span::new(0, text.len()),
            text,
            warnings: vec![],
            commands,
            rendered,
        }
    }

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
    let mut cut = Cut::new(raw);
    cut.trim_blank();
    cut.prose_before();
    cut.fence();
    cut.text_after();
    // Nothing but blank lines is an empty patch (its own error), not a
    // patch with blank lines around it.
    // Blank lines around SEARCH/REPLACE blocks are the message's own.
    if cut.stripped_blank && cut.first < cut.last && !cut.holds_blocks() {
        cut.warnings.push(Diagnostic::new(
            Code::BlankLinesStripped,
            "blank lines before or after the patch were removed",
        ));
    }
    let body = Span::new(cut.first, cut.last.max(cut.first));
    Unwrapped {
        text: cut.text,
        body,
        warnings: cut.warnings,
        commands: vec![],
        rendered: vec![],
    }
}

/// The patch text, LF and ending with a newline, and the part of it still
/// taken for the patch: `first..last`, narrowed by each stage.
struct Cut {
    text: String,
    first: usize,
    last: usize,
    warnings: Vec<Diagnostic>,
    /// Blank lines went from either end.
    stripped_blank: bool,
    /// A `git format-patch` mail: its signature ends the patch.
    is_mail: bool,
}

impl Cut {
    fn new(raw: String) -> Cut {
        let mut warnings = vec![];
        // A text without `\r` (the usual patch) is told by one byte search
        // (in a perf profile of a 19 MB patch's dry run, 0.4% of the
        // samples, where the search for `\r\n` took 0.6%).
        let all_crlf = crate::bytes::find(b'\r', raw.as_bytes()).is_some()
            && raw.contains("\r\n")
            && raw.matches('\n').count() == raw.matches("\r\n").count();
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
        let last = text.len();
        Cut {
            text,
            first: 0,
            last,
            warnings,
            stripped_blank: false,
            is_mail: false,
        }
    }

    /// Leading lines that are only whitespace cannot be part of any patch.
    /// At the end only empty lines go: ` ` is a context line of an empty line.
    fn trim_blank(&mut self) {
        let text = &self.text;
        let before = (self.first, self.last);
        while self.first < self.last
            && text[Span::line_at(text, self.first).range()]
                .trim()
                .is_empty()
        {
            self.first = Span::line_at(text, self.first).end + 1;
        }
        while self.last > self.first && Span::line_before(text, self.last).is_empty() {
            self.last = Span::line_before(text, self.last).start;
        }
        self.stripped_blank |= (self.first, self.last) != before;
    }

    fn line(&self, at: usize) -> &str {
        &self.text[Span::line_at(&self.text, at).range()]
    }

    fn starts_with_fence(&self) -> bool {
        self.first < self.last && is_fence(self.line(self.first))
    }

    /// Prose before the patch ("Here is the patch:"): dropped up to the
    /// first line where a format (or a fence) starts, but only when the
    /// text as it stands is no known format.
    fn prose_before(&mut self) {
        let (first, last) = (self.first, self.last);
        if self.starts_with_fence() || crate::formats::detect(&self.text[first..last]).is_some() {
            return;
        }
        // `git format-patch` mail: the message ends at its first `---` line
        // (as `git mailinfo` reads it); only then can a patch start.
        let body = mail_body(&self.text, first, last);
        self.is_mail = body.is_some();
        let mut at = body.unwrap_or(first);
        while at < last {
            let line = Span::line_at(&self.text, at);
            let rest = &self.text[at..last];
            if at > first && (is_fence(self.line(at)) || crate::formats::detect(rest).is_some()) {
                self.warnings.push(
                    Diagnostic::new(
                        Code::SurroundingTextStripped,
                        "text before the patch was removed",
                    )
                    .at(Span::new(first, at - 1), "not part of the patch")
                    .hint("send the patch text alone, without an introduction"),
                );
                self.first = at;
                break;
            }
            at = line.end + 1;
        }
        // "Here is the patch:", a blank line, then the patch.
        self.trim_blank();
    }

    /// Whether the text still taken for the patch is SEARCH/REPLACE
    /// blocks, whose fences, prose and blank lines are their own.
    fn holds_blocks(&self) -> bool {
        crate::formats::detect(&self.text[self.first..self.last]) == Some(Format::Searchreplace)
    }

    /// A markdown fence around the patch, and text after its closing line.
    fn fence(&mut self) {
        // SEARCH/REPLACE blocks are fenced by their own grammar (a fence
        // per file, prose between): nothing around them is taken off.
        if !self.starts_with_fence() || self.holds_blocks() {
            return;
        }
        let open = Span::line_at(&self.text, self.first);
        let fence = self.text[open.start..open.end].trim()[..3].to_string();
        let mut d = Diagnostic::new(
            Code::MarkdownFenceStripped,
            "the patch is wrapped in a markdown code fence",
        )
        .at(open, "this fence line was removed");
        self.first = open.end + 1;
        // The closing fence is the last fence line; text after it
        // ("This renames x to y.") is dropped too.
        let close = lines(&self.text, self.first, self.last)
            .filter(|l| self.text[l.range()].trim() == fence)
            .last();
        match close {
            Some(close) => {
                d = d.secondary(close, "and this one");
                self.text_dropped_after(close.end + 1);
                self.last = close.start;
            }
            None => d = d.note("the fence is never closed: the patch may have been cut off"),
        }
        self.warnings
            .push(d.hint("send the patch text alone, without ``` fences"));
        self.trim_blank();
    }

    /// A warning for text from `from` to the end of the patch, if any is there.
    fn text_dropped_after(&mut self, from: usize) {
        let after = Span::new(from, self.last.max(from));
        if self.text[after.range()].trim().is_empty() {
            return;
        }
        self.warnings.push(
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

    /// Text after the patch: after a codex or RepoPatch end marker, a
    /// mail's signature, or past where a unified diff's hunks end.
    fn text_after(&mut self) {
        let (text, first, last) = (&self.text, self.first, self.last);
        let tail = match crate::formats::detect(&text[first..last]) {
            Some(Format::Udiff) if self.is_mail => mail_signature(text, first, last),
            Some(Format::Udiff) => udiff_tail(text, first, last),
            // A heredoc (`apply_patch <<'EOF'` … `EOF`) is the codex grammar's.
            Some(Format::Codex)
                if !text[first..last]
                    .trim_start()
                    .starts_with("*** Begin Patch") =>
            {
                None
            }
            Some(Format::Codex) => tail_after_line(text, first, last, "*** End Patch"),
            Some(Format::Repopatch) => tail_after_line(text, first, last, "ENDPATCHSET"),
            _ => None,
        };
        if let Some(cut) = tail {
            self.text_dropped_after(cut);
            self.last = cut;
            self.trim_blank();
        }
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
    // The last closing line, sought from the end, where it nearly always is
    // (a forward search read every line of a large patch).
    let starts = crate::bytes::iter(b'\n', &text.as_bytes()[first..last])
        .rev()
        .map(|i| first + i + 1)
        .filter(|&s| s < last)
        .chain(std::iter::once(first));
    let close = starts
        .map(|s| Span::line_at(text, s))
        .find(|l| text[l.start..l.end].trim_end() == end)?;
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
    // (`memmem::rfind` of a longer needle is scalar: it never probes the
    // CPU, so `clippy.toml` lets it be; see `crate::bytes`.)
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

#[cfg(test)]
mod tests {
    use super::tail_after_line;

    #[test]
    fn the_tail_starts_after_the_last_closing_line() {
        let end = "*** End Patch";
        let at = |text: &str| tail_after_line(text, 0, text.len(), end);
        // Prose after the marker, the marker padded with spaces.
        let text = "*** Begin Patch\n*** End Patch  \nThanks!\n";
        assert_eq!(at(text), Some(text.find("Thanks").unwrap()));
        // The last marker counts; the text between two is the patch's.
        let text = "*** End Patch\n+x\n*** End Patch\nbye\n";
        assert_eq!(at(text), Some(text.find("bye").unwrap()));
        // Nothing after it, only blank lines after it, or no marker at all.
        assert_eq!(at("*** Begin Patch\n*** End Patch\n"), None);
        assert_eq!(at("*** Begin Patch\n*** End Patch\n\n  \n"), None);
        assert_eq!(at("*** Begin Patch\n+x\n"), None);
        // A marker on the first line, and a window that starts past one.
        assert_eq!(at("*** End Patch\nok\n"), Some(14));
        let text = "*** End Patch\nkeep\n*** End Patch\ncut\n";
        assert_eq!(
            tail_after_line(text, 14, text.len(), end),
            Some(text.find("cut").unwrap())
        );
        assert_eq!(tail_after_line(text, 14, 19, end), None);
    }
}
