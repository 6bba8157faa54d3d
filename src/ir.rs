//! The shared model every format lowers into, and the only thing the
//! validator and the applier see. It never depends on pest: a format module
//! turns its parse tree into these types and nothing else.
//!
//! A [`Patch`] is a list of [`FileOp`]s. A file op that edits text carries
//! [`Edit`]s; an edit is "this old block becomes this new block", located by
//! a [`Locator`] (line hint, anchor, end-of-file, matching policy, uniqueness
//! rule). Every piece carries a [`Span`] back into the patch text so that a
//! diagnostic can underline it.

/// The size from which a file is not patched, nor a binary literal
/// inflated (4 GiB: line starts are `u32`s).
pub const TOO_LARGE: u64 = u32::MAX as u64;

/// A byte range in the (unwrapped) patch text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The byte range, for slicing the text.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    /// Whether it covers no byte.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The line of `text` starting at `start`, without its `\n`.
    pub fn line_at(text: &str, start: usize) -> Span {
        Span::new(
            start,
            crate::bytes::find(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i),
        )
    }

    /// The line whose `\n` ends just before `end` (the first line when
    /// `end` is 0), without that `\n`.
    pub fn line_before(text: &str, end: usize) -> Span {
        let stop = end.saturating_sub(1);
        Span::new(text[..stop].rfind('\n').map_or(0, |i| i + 1), stop)
    }
}

/// A whole patch, in any format.
#[derive(Debug, Clone, Default)]
pub struct Patch<'a> {
    /// The (unwrapped) patch text every span points into, and that lines
    /// borrow from.
    pub source: &'a str,
    pub files: Vec<FileOp<'a>>,
    /// Metadata lines accepted and ignored (udiff `index`, modes), verbatim.
    pub ignored_metadata: Vec<String>,
    /// How the format's edits are placed and its files written.
    pub policy: Policy,
}

/// Everything that differs between formats once they are lowered: data the
/// one applier reads, never a second engine. Every field is read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// How this format phrases the fixes the applier suggests.
    pub advice: Advice,
    /// Whether a lone `\r` ends a line in the target files, as Codex and ap
    /// read them; udiff and RepoPatch follow git, where only `\n` does.
    pub lone_cr_breaks: bool,
    /// Whether a file's edits apply one after the other, each located in
    /// the file as the previous ones left it (RepoPatch), rather than all
    /// located in the original file, in order from a cursor or anywhere
    /// (udiff, codex, ap).
    pub sequential: bool,
    /// ap tolerant mode: a path whose first component is not in the root,
    /// while the rest is, is read without that component (3.2).
    pub strip_project_prefix: bool,
    /// ap §3.1 idempotency: an edit whose result is already in place (or
    /// a deletion whose lines are gone) is skipped with `already_applied`,
    /// and so is a file creation that finds the same lines.
    pub skip_applied: bool,
    /// ap 3.2 §3.6: an insertion of a top-level declaration after a line
    /// that opens a block is refused, or with `Move`, moved past the block.
    pub nesting_guard: Option<NestingGuard>,
    /// ap §3.6: among several matches of an anchor, the one whose stretch
    /// (up to the next match) holds the block is taken, with a warning.
    pub anchor_by_block: bool,
    /// ap §3.6: a range end that is the block's own end, or the new
    /// content, is corrected to the block alone, with a warning.
    pub correct_ranges: bool,
    /// ap: content written at column 0 for an indented target, which opens
    /// no block of its own, is indented as the target is (a dropped
    /// indent), with a warning.
    pub reindent_dropped: bool,
    /// One edit that cannot be placed ends its file's locating: the later
    /// edits' places depend on where it would have left the cursor (ap).
    pub stop_at_miss: bool,
    /// An anchor that is not in the file is ignored, with a warning, when
    /// the block alone then matches exactly once in the whole file, after
    /// the cursor (codex: a `@@` header narrows the search, it never
    /// widens it; models abbreviate signatures there).
    pub unfound_anchor_ignored: bool,
    /// A path named by several blocks: each applies to what the blocks
    /// before it left (codex, ap, RepoPatch, as Codex does). udiff refuses
    /// it (`duplicate_file_patch`), as its RFC says.
    pub repeated_paths: bool,
    /// What happens to every line of a file an edit changed.
    pub finish: Finish,
}

/// What the written text of an edited file gets as a whole (ap).
#[derive(Debug, Clone, Copy, Default)]
pub struct Finish {
    /// Trailing spaces and tabs removed from every line (ap 3.1 §3.5).
    pub strip_trailing_whitespace: bool,
    /// The file always ends with a line end.
    pub final_newline: bool,
    /// A file whose brackets balanced before and not after gets a warning.
    pub bracket_check: bool,
}

/// What the nesting guard does to an insertion it catches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NestingGuard {
    Refuse,
    /// Tolerant mode: the insertion moves past the block, with a warning.
    Move,
}

/// The fixes the applier suggests, in a format's own words.
#[derive(Debug, Clone, Copy)]
pub struct Advice {
    /// What the format calls an edit's old block.
    pub block: &'static str,
    /// How to make an ambiguous block match once.
    pub disambiguate: &'static str,
    /// How to create a file instead of editing it.
    pub create: &'static str,
    /// How to edit a file instead of creating it.
    pub update: &'static str,
    /// What the format calls the end of a range.
    pub range_end: &'static str,
    /// What the format calls an edit that replaces, deletes, inserts
    /// before and inserts after.
    pub ops: [&'static str; 4],
}

impl Advice {
    /// The name of an edit that goes at `place` (and deletes, when a
    /// replacement adds nothing).
    pub fn op_name(&self, place: Place, deletes: bool) -> &'static str {
        match (place, deletes) {
            (Place::Replace, false) => self.ops[0],
            (Place::Replace, true) => self.ops[1],
            (Place::Before, _) => self.ops[2],
            (Place::After, _) => self.ops[3],
        }
    }
}

impl Default for Advice {
    fn default() -> Self {
        Advice {
            block: "hunk context",
            disambiguate: "add context lines that occur only near the intended place",
            create: "create it as a new file instead",
            update: "edit the existing file instead of creating it",
            range_end: "range end",
            ops: ["hunk"; 4],
        }
    }
}

/// A path exactly as the patch names it (after a format's own prefix rules,
/// such as udiff's `a/`/`b/`), not yet resolved against a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRef {
    pub text: String,
    pub span: Span,
}

/// What to do to one path.
#[derive(Debug, Clone)]
pub struct FileOp<'a> {
    pub path: PathRef,
    pub action: Action<'a>,
    pub span: Span,
    /// What git's mode lines say the file is: after an add or a modify
    /// (`new file mode`, `new mode`), or before a delete (`deleted file
    /// mode`). `None`: whatever it is (a new file is a plain file).
    pub mode: Option<GitMode>,
    /// What git says the file was (`old mode`, `deleted file mode`, the
    /// mode at the end of an `index` line), and that line: checked, and a
    /// warning where the file differs (as `git apply` does).
    pub old_mode: Option<(GitMode, Span)>,
    /// The line end every line of the written file gets (ap's `FILE`
    /// option); `None`: each line keeps its own, added lines take the
    /// file's.
    pub eol: Option<Eol>,
}

/// A file's kind and executable bit, as git's modes (`100644`, `100755`,
/// `120000`) state them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitMode {
    File,
    Executable,
    Symlink,
}

#[derive(Debug, Clone)]
pub enum Action<'a> {
    /// Create a file with this content, then apply `edits` to it. An
    /// existing file with the same content is `unchanged` (the policy's
    /// `skip_applied`: the same lines; then `edits` apply to the file);
    /// with other content it is `file_exists`, unless `overwrite` (ap
    /// `RECREATE`), which writes the content whatever the file held.
    Add {
        content: NewText<'a>,
        edits: Vec<Edit<'a>>,
        overwrite: bool,
    },
    /// Delete a file. With `expect`, the edits state what is deleted:
    /// applied to the file they must leave it empty (udiff). Without, the
    /// file goes whatever it holds (codex `*** Delete File:`).
    Delete { expect: Option<Vec<Edit<'a>>> },
    /// Edit a file in place, then optionally move it.
    Modify {
        edits: Vec<Edit<'a>>,
        move_to: Option<PathRef>,
    },
    /// Create a directory (and its parents).
    CreateDir,
    /// ap `RENAME`: move a file or a directory. Done already (the source
    /// is gone and the destination exists) is `unchanged`.
    Rename { to: PathRef },
    /// ap file-level `DELETE`: remove a file or a directory with all it
    /// holds. Already gone is `unchanged`.
    Remove,
}

impl<'a> Action<'a> {
    /// A new file with this content, and nothing more.
    pub fn add(content: NewText<'a>) -> Self {
        Action::Add {
            content,
            edits: vec![],
            overwrite: false,
        }
    }
}

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

impl<'a> FileOp<'a> {
    /// `action` on `path`, with no mode and the file's own line ends.
    pub fn new(path: PathRef, action: Action<'a>, span: Span) -> Self {
        FileOp {
            path,
            action,
            span,
            mode: None,
            old_mode: None,
            eol: None,
        }
    }

    /// Paths this op reads or writes, for duplicate detection.
    pub fn paths(&self) -> impl Iterator<Item = &PathRef> {
        let dest = match &self.action {
            Action::Modify {
                move_to: Some(to), ..
            }
            | Action::Rename { to } => Some(to),
            _ => None,
        };
        std::iter::once(&self.path).chain(dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large patch holds every hunk's lines until it is written: a line
    /// is a slice alone, and a kept line is no larger than an added one.
    #[test]
    fn lines_are_their_text_alone() {
        assert_eq!(std::mem::size_of::<Line>(), 16);
        assert_eq!(std::mem::size_of::<NewLine>(), 16);
    }

    /// An edit keeps its locator's rarer parts boxed: every edit of a
    /// large patch is held until the patch is written.
    #[test]
    fn an_edit_boxes_what_most_edits_lack() {
        assert_eq!(std::mem::size_of::<Option<Box<Reach>>>(), 8);
        assert!(
            std::mem::size_of::<Edit>() <= 80,
            "{}",
            std::mem::size_of::<Edit>()
        );
    }

    #[test]
    fn kept_lines_are_runs_read_out_line_by_line() {
        let add = NewLine::Add(Line::of("x"));
        let mut runs = vec![
            NewLine::keep(0),
            NewLine::keep(1),
            add,
            NewLine::keep(2),
            NewLine::keep(4),
            NewLine::keep(5),
        ];
        NewLine::runs(&mut runs);
        assert_eq!(
            runs,
            [
                NewLine::Keep(0, 2),
                add,
                NewLine::Keep(2, 1),
                NewLine::Keep(4, 2)
            ]
        );
        let mut e = Edit::replace(
            &[],
            &[],
            Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER),
            Span::default(),
        );
        e.new = runs.leak();
        let want = [
            New::Keep(0),
            New::Keep(1),
            New::Add(Line::of("x")),
            New::Keep(2),
            New::Keep(4),
            New::Keep(5),
        ];
        assert!(e.new_lines().eq(want));
        assert!(e.new_lines().rev().eq(want.into_iter().rev()));
    }

    #[test]
    fn a_set_of_levels_lists_them_in_order() {
        assert!(Levels::LADDER.iter().eq(Level::LADDER.iter().copied()));
        let ap = [Level::BlankLinesIgnored, Level::SoftStart];
        assert!(Levels::of(&ap).iter().eq(ap));
        assert_eq!(Levels::of(&[Level::Trimmed]).first(), Some(Level::Trimmed));
        assert_eq!(Levels::of(&[]).first(), None);
        let unordered = std::panic::catch_unwind(|| Levels::of(&[Level::Trimmed, Level::Exact]));
        assert!(unordered.is_err());
    }

    #[test]
    fn a_line_finds_its_text_in_the_patch() {
        let source = "@@ -1 +1,2 @@\n-old\n+\n+new";
        let old = Line::of(&source[15..18]);
        assert_eq!(old.span(source), Span::new(15, 18));
        assert_eq!(old.whole_line(source), Span::new(14, 18));
        let empty = Line::of(&source[20..20]);
        assert_eq!(empty.span(source), Span::new(20, 20));
        assert_eq!(empty.whole_line(source), Span::new(19, 20));
        let elsewhere = Line::of("old");
        assert_eq!(elsewhere.span(source), Span::default());
        let made = String::from("old");
        assert_eq!(Line::of(&made).span(source), Span::default());
    }

    #[test]
    fn a_line_takes_its_ending_only_as_the_patch_writes_it() {
        let source = "-old\r\n+new\n+last";
        let new = Line::of(&source[7..10]);
        assert_eq!(new.with_eol(source, "\n"), Some("new\n"));
        // The output wants CRLF; the patch ends the line with LF.
        assert_eq!(new.with_eol(source, "\r\n"), None);
        let old = Line::of(&source[1..4]);
        assert_eq!(old.with_eol(source, "\r\n"), Some("old\r\n"));
        assert_eq!(old.with_eol(source, "\n"), None);
        // The patch's last line has no ending to take.
        let last = Line::of(&source[12..]);
        assert_eq!(last.with_eol(source, "\n"), None);
        // Trimmed of trailing whitespace the patch has: not its ending.
        let spaced = "+x  \n";
        assert_eq!(Line::of(&spaced[1..2]).with_eol(spaced, "\n"), None);
        let elsewhere = Line::of("new");
        assert_eq!(elsewhere.with_eol(source, "\n"), None);
        let made = String::from("new");
        assert_eq!(Line::of(&made).with_eol(source, "\n"), None);
    }
}
