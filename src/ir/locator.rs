//! Where an edit applies: its locator (line hint, anchor, range end,
//! uniqueness rule) and the match levels it may use.

use super::Line;

/// Where an edit's old block may match, and how strictly.
#[derive(Debug, Clone)]
pub struct Locator<'a> {
    pub hint: Option<Hint>,
    /// The anchor, range end, scope end and widening, which most edits
    /// lack. Boxed: a large patch keeps thousands of edits until they are
    /// written, and the four inline were 58 of an edit's 176 bytes.
    pub reach: Option<Box<Reach<'a>>>,
    /// An empty old block goes at the start of the file (ap `^`), which
    /// must lie after the cursor.
    pub at_start: bool,
    /// The old block must end at the end of the file.
    pub at_eof: bool,
    /// The match levels tried, in order; each only when the ones before it
    /// found nothing.
    pub levels: Levels,
    pub uniqueness: Uniqueness,
}

/// A locator's rarer parts.
#[derive(Debug, Clone, Default)]
pub struct Reach<'a> {
    /// Lines that must be found first; the old block is sought after them
    /// (from their start, when the two share lines).
    pub anchor: Option<&'a [Line<'a>]>,
    /// The end of a range (ap `snippet_tail`): the edit covers everything
    /// from the old block's start to the end of the first match of these
    /// lines after it, or to the end of the file.
    pub range_end: Option<RangeEnd<'a>>,
    /// The region runs on to the end of the block its last line opens (ap
    /// `scope_end`), by brackets or else indentation.
    pub scope_end: bool,
    /// Blank lines just before and just after the region that it takes in
    /// (ap `include_leading_blank_lines`, `include_trailing_blank_lines`).
    pub widen: (usize, usize),
    /// The anchor is stacked under another (codex `@@ class A` then `@@ def
    /// f():`): it is never ignored, even where the format ignores an anchor
    /// the file lacks; a missing inner header means the model's picture of
    /// the file is wrong.
    pub stacked: bool,
}

/// The end of a range.
#[derive(Debug, Clone)]
pub enum RangeEnd<'a> {
    Lines(&'a [Line<'a>]),
    Eof,
}

impl<'a> Locator<'a> {
    /// A block alone: no hint, anchor, range end or end-of-file rule.
    pub fn plain(uniqueness: Uniqueness, levels: Levels) -> Self {
        Locator {
            hint: None,
            reach: None,
            at_start: false,
            at_eof: false,
            levels,
            uniqueness,
        }
    }

    pub fn anchor(&self) -> Option<&'a [Line<'a>]> {
        self.reach.as_ref()?.anchor
    }

    pub fn range_end(&self) -> Option<&RangeEnd<'a>> {
        self.reach.as_ref()?.range_end.as_ref()
    }

    pub fn scope_end(&self) -> bool {
        self.reach.as_ref().is_some_and(|r| r.scope_end)
    }

    pub fn widen(&self) -> (usize, usize) {
        self.reach.as_ref().map_or((0, 0), |r| r.widen)
    }

    /// The rarer parts, to set one.
    pub fn reach_mut(&mut self) -> &mut Reach<'a> {
        self.reach.get_or_insert_with(Default::default)
    }
}

/// The 0-based hint for a patch's 1-based line number `n` (0 and 1 both
/// the first line), at most `u32::MAX`: past every file's end.
pub fn line_hint(n: usize) -> u32 {
    u32::try_from(n.saturating_sub(1)).unwrap_or(u32::MAX)
}

/// A line-number hint, 0-based. A `u32`, as a file's line numbers are (the
/// planner refuses files of 4 GiB or more): a number past every file's end
/// is `u32::MAX`, past it still.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// udiff: an exact match starting at this line wins outright; the line
    /// is shifted by the drift of the file's earlier edits.
    Near(u32),
    /// codex `@@ :N`: search starts at this line.
    From(u32),
    /// The old block is the whole file, and matches only as such (git's
    /// binary literals, which state a file's old and new bytes).
    Whole,
    /// The old block is text, not lines (Anthropic's `str_replace`): its
    /// lines joined, with a last line end only where the edit has one, are
    /// sought as an exact substring of the file, which may be part of a
    /// line, and must occur once; only where they occur nowhere are they
    /// read as whole lines on the ladder (`planning/textual.rs`).
    Text,
    /// The new block goes after this 1-based line (0: before the first) of
    /// the file as the edits before it left it (Anthropic's `insert`).
    AfterLine(u32),
}

/// How lines are compared, from strict to loose. A format lists the levels
/// it allows; a relaxed level that matched is reported as a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Line for line, byte for byte.
    Exact,
    /// Lines equal once trailing whitespace is removed.
    TrailingWhitespace,
    /// Lines equal once surrounding whitespace is removed.
    Trimmed,
    /// Lines equal once trimmed and with typographic dashes, quotes and
    /// spaces folded to ASCII.
    Normalized,
    /// ap's search (§3.2): lines trimmed, and blank lines in the block and
    /// in the file skipped. It is ap's definition of a match, not a slip,
    /// so it is not reported.
    BlankLinesIgnored,
    /// As `BlankLinesIgnored`, with the first line allowed to follow a
    /// prefix in the file: numbering, a bullet, a comment marker (ap §3.6
    /// soft start).
    SoftStart,
}

impl Level {
    /// The ladder every line-based format climbs (issue 14): exact, then
    /// trailing whitespace, then indentation, then typographic punctuation.
    /// A level is tried only when every stricter one found nothing.
    pub const LADDER: &'static [Level] = &[
        Level::Exact,
        Level::TrailingWhitespace,
        Level::Trimmed,
        Level::Normalized,
    ];

    /// Whether lines compare without their indentation at this level.
    pub fn ignores_indentation(self) -> bool {
        !matches!(self, Level::Exact | Level::TrailingWhitespace)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Level::Exact => "exactly",
            Level::TrailingWhitespace => "ignoring trailing whitespace",
            Level::Trimmed => "ignoring leading and trailing whitespace",
            Level::Normalized => "ignoring whitespace and typographic punctuation",
            Level::BlankLinesIgnored => "ignoring surrounding whitespace and blank lines",
            Level::SoftStart => "after a prefix on its first line",
        }
    }

    /// Whether a match at this level is a slip the patch should be told about.
    pub fn is_slip(self) -> bool {
        !matches!(self, Level::Exact | Level::BlankLinesIgnored)
    }

    /// Whether blank lines are skipped, so a match may span more lines.
    pub fn skips_blank_lines(self) -> bool {
        matches!(self, Level::BlankLinesIgnored | Level::SoftStart)
    }
}

/// The match levels a locator tries, as a set that lists them in
/// [`Level`]'s order (every format's list is in that order): one byte,
/// where a list was a 16-byte slice in each of a large patch's edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels(u8);

impl Levels {
    /// Every level, in the order a set lists them.
    const ALL: [Level; 6] = [
        Level::Exact,
        Level::TrailingWhitespace,
        Level::Trimmed,
        Level::Normalized,
        Level::BlankLinesIgnored,
        Level::SoftStart,
    ];

    /// The ladder every line-based format climbs ([`Level::LADDER`]).
    pub const LADDER: Levels = Levels::of(Level::LADDER);

    /// The set of `levels`, which must be in [`Level`]'s order.
    pub const fn of(levels: &[Level]) -> Levels {
        let mut bits = 0u8;
        let mut i = 0;
        while i < levels.len() {
            let bit = 1u8 << levels[i] as u8;
            assert!(bit > bits, "levels are listed in Level's order");
            bits |= bit;
            i += 1;
        }
        Levels(bits)
    }

    /// The levels, in order.
    pub fn iter(self) -> impl Iterator<Item = Level> + Clone {
        Levels::ALL
            .into_iter()
            .filter(move |&l| self.0 >> l as u8 & 1 == 1)
    }

    /// The level a search starts with.
    pub fn first(self) -> Option<Level> {
        self.iter().next()
    }
}

/// Which of several matches is acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uniqueness {
    /// Exactly one match in the file (after the hint had its chance).
    UniqueInFile,
    /// The first match after the previous edit (or the anchor).
    FirstAfterCursor,
    /// Exactly one match between the end of the previous edit and the end
    /// of the file (codex hunks without `@@ context` or `@@ :N`; ap).
    UniqueAfterCursor,
}
