//! An edit of the shared model: its old and new lines (slices of the one
//! store beside the patch text; kept lines are runs), their endings, and
//! where the new block goes around the region found.

use super::{Locator, Span};

/// A line ending the patch asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    Crlf,
    Cr,
}

impl Eol {
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::Crlf => "\r\n",
            Eol::Cr => "\r",
        }
    }
}

/// The text of a new file.
#[derive(Debug, Clone, Default)]
pub struct NewText<'a> {
    /// In the store beside the patch text, as every list of lines the
    /// lowering keeps (see [`Edit`]).
    pub lines: &'a [Line<'a>],
    /// Whether the last line ends with a newline.
    pub final_newline: bool,
}

/// One line of patch content, without its line end: a slice of the patch
/// text, or of the store the lowering keeps beside it for the few lines it
/// makes (a binary literal's decoded bytes; see [`crate::formats::parse`]).
///
/// A large patch holds every hunk's lines until it is written, so a line
/// is 16 bytes and no more: a span beside each took 16 of a line's 40
/// bytes, and a `Cow` 8 more than a slice (a kept line, a [`NewLine`], is
/// as large). Where a diagnostic needs a span, [`Line::span`] finds the
/// patch line the text lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub text: &'a str,
}

impl<'a> Line<'a> {
    /// A line borrowed from the patch text.
    pub fn of(text: &'a str) -> Self {
        Line { text }
    }

    /// Where this line's text lies in `source`, the text the patch was
    /// lowered from (after a hunk line's prefix, say); an empty span when
    /// it is not there (a line lowering made, such as a binary literal's
    /// decoded bytes).
    pub fn span(&self, source: &str) -> Span {
        self.offset_in(source)
            .map_or_else(Span::default, |at| Span::new(at, at + self.text.len()))
    }

    /// Where this line's text starts in `source`, when it lies there.
    fn offset_in(&self, source: &str) -> Option<usize> {
        let text = self.text;
        let at = (text.as_ptr() as usize).wrapping_sub(source.as_ptr() as usize);
        (at <= source.len() && source.len() - at >= text.len()).then_some(at)
    }

    /// This line's text and the line end `eol` after it, as one slice of
    /// `source`, when the patch ends the line so: a line written with
    /// its ending is one piece of the output, not two.
    pub fn with_eol<'s>(&self, source: &'s str, eol: &str) -> Option<&'s str> {
        let at = self.offset_in(source)?;
        source
            .get(at..at + self.text.len() + eol.len())
            .filter(|w| w.ends_with(eol))
    }

    /// The whole patch line (prefix included, without its `\n`) this
    /// line's text lies in, for a diagnostic about the line's kind.
    pub fn whole_line(&self, source: &str) -> Span {
        let span = self.span(source);
        if span == Span::default() {
            return span;
        }
        let start =
            crate::bytes::rfind(b'\n', &source.as_bytes()[..span.start]).map_or(0, |i| i + 1);
        Span::line_at(source, start)
    }
}

impl<'a> Line<'a> {
    /// Lines with no place in a patch, for tests that build edits by
    /// hand (leaked: a test's edits live as long as it does).
    #[cfg(test)]
    pub(crate) fn unplaced(texts: &[&'a str]) -> &'a [Line<'a>] {
        texts.iter().map(|t| Line::of(t)).collect::<Vec<_>>().leak()
    }
}

/// Lines of an edit's new block: old lines kept, or a line added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewLine<'a> {
    /// Keep old lines `from..from + count` of the same edit (`count` at
    /// least 1), with the file's own text (which, after a relaxed match,
    /// may differ from the patch's in whitespace). A run, not a line: a
    /// unified diff's context is most of its lines, and one entry a line
    /// took 16 bytes each.
    Keep(u32, u32),
    /// A line the patch adds.
    Add(Line<'a>),
}

impl<'a> NewLine<'a> {
    /// Keep old line `j`.
    pub fn keep(j: usize) -> NewLine<'a> {
        NewLine::Keep(j as u32, 1)
    }

    /// `lines` with each run of kept lines that follow each other made
    /// one entry, where they lie.
    pub fn runs(lines: &mut Vec<NewLine<'a>>) {
        let mut n = 0usize;
        for i in 0..lines.len() {
            match (n.checked_sub(1).map(|p| lines[p]), lines[i]) {
                (Some(NewLine::Keep(from, count)), NewLine::Keep(j, k)) if from + count == j => {
                    lines[n - 1] = NewLine::Keep(from, count + k);
                }
                (_, l) => {
                    lines[n] = l;
                    n += 1;
                }
            }
        }
        lines.truncate(n);
    }
}

/// One line of an edit's new block, as [`Edit::new_lines`] reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum New<'a> {
    /// Keep old line `j`.
    Keep(usize),
    /// A line the patch adds.
    Add(Line<'a>),
}

/// "This old block becomes this new block", somewhere the locator finds.
///
/// Its lists of lines (and its anchor's, its range end's, a new file's)
/// lie in the store [`crate::formats::parse`] takes beside the patch text,
/// one after another: a large patch keeps every hunk until it is written,
/// and a list of its own per block cost each list's allocation and left
/// the lowering's short-lived lists as holes between them, a heap that
/// stayed resident (ap's large patch left 1.9 MB of it free).
#[derive(Debug, Clone)]
pub struct Edit<'a> {
    pub old: &'a [Line<'a>],
    pub new: &'a [NewLine<'a>],
    /// The old block's last line has no newline (udiff `\ No newline`).
    pub old_no_eol: bool,
    /// The new block's last line has no newline.
    pub new_no_eol: bool,
    /// Added lines carry their own line end: a `\r` kept at the end of
    /// their text, and `\n` after it. A diff made by a tool shows the
    /// file's `\r`s, and what it adds is written byte for byte; without
    /// this, added lines get the file's dominant line end (a model writes
    /// LF lines into a CRLF file).
    pub own_eol: bool,
    /// What the new block does to the region the locator finds.
    pub place: Place,
    pub locator: Locator<'a>,
    pub span: Span,
}

impl<'a> Edit<'a> {
    /// The new block line by line, runs of kept lines read out.
    pub fn new_lines(&self) -> impl DoubleEndedIterator<Item = New<'a>> + '_ {
        self.new.iter().flat_map(|n| {
            let (keep, add) = match *n {
                NewLine::Keep(from, count) => (from as usize..(from + count) as usize, None),
                NewLine::Add(l) => (0..0, Some(New::Add(l))),
            };
            keep.map(New::Keep).chain(add)
        })
    }

    /// `old` becomes `new` where `locator` finds it, with the file's line
    /// ends (a hunk as most formats write it).
    pub fn replace(
        old: &'a [Line<'a>],
        new: &'a [NewLine<'a>],
        locator: Locator<'a>,
        span: Span,
    ) -> Self {
        Edit {
            old,
            new,
            old_no_eol: false,
            new_no_eol: false,
            own_eol: false,
            place: Place::Replace,
            locator,
            span,
        }
    }
}

/// Where an edit's new block goes relative to the region its old block
/// (widened by the locator) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The new block replaces the region (every format's hunks; ap
    /// `REPLACE`, `DELETE`).
    Replace,
    /// The new block goes before the region, which stays (ap `INSERT_BEFORE`).
    Before,
    /// The new block goes after the region, which stays (ap `INSERT_AFTER`).
    After,
}
