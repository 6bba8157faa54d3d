//! Locating a file's edits in its text: the one engine every format uses.
//!
//! For each edit, in order: the anchor (whose matches obey the edit's
//! uniqueness rule, or with the policy's `anchor_by_block`, the one whose
//! stretch holds the block), the block at the first match level that finds
//! it, the range end, `scope_end`, blank-line widening, then where the new
//! block goes ([`Place`]) and, under the policy's `skip_applied`, whether
//! its result is there already. Formats that apply in order search from a
//! cursor at the end of the previous edit, so text an edit wrote is never
//! matched again (ap's "self-written text" rule) and each search walks only
//! the untouched rest of the file.
//!
//! Nothing here builds text (`assemble.rs`) or explains a miss
//! (`explain.rs`).

use std::cell::Cell;

use super::explain::{brief_miss, CANDIDATES, EXPLAINED_MISSES};
use super::find::{self, Want};
use super::indent::{self, Indent};
use super::text::{FileText, Key, Region};
use crate::error::{Code, Diagnostic, TargetLabel, TargetText};
use crate::ir::{Edit, Hint, Level, Levels, Line, New, Policy, RangeEnd, Span, Uniqueness};
use crate::paths::RelPath;

/// An edit given its place: the new block replaces the lines `at` (empty
/// for an insertion), after a blank line when the nesting guard moved it.
/// Line and edit numbers are `u32`s (a file has fewer than 2^32 lines, a
/// patch fewer edits than bytes): 24 bytes where `usize`s took 40, one for
/// every edit of a large file.
#[derive(Debug, Clone)]
pub struct Placed {
    start: u32,
    end: u32,
    edit: u32,
    pub blank_first: bool,
    /// Added lines follow the file's indentation (the match ignored it).
    /// Boxed: rare, and a placed edit is kept for every edit of a file.
    pub indent: Option<Box<Indent>>,
}

impl Placed {
    /// Edit `edit` replacing lines `at`.
    pub fn new(at: Region, edit: usize, blank_first: bool) -> Placed {
        debug_assert!(at.end <= u32::MAX as usize && edit <= u32::MAX as usize);
        Placed {
            start: at.start as u32,
            end: at.end as u32,
            edit: edit as u32,
            blank_first,
            indent: None,
        }
    }

    /// The lines the new block replaces.
    pub fn at(&self) -> Region {
        Region::new(self.start as usize, self.end as usize)
    }

    /// The edit placed.
    pub fn edit(&self) -> usize {
        self.edit as usize
    }
}

/// Why an edit was not placed.
#[derive(Debug)]
pub enum Miss {
    /// A block of the edit is not at or after line `from`.
    NotFound { part: Part, from: usize },
    /// A block matches more than once where it must match once.
    Ambiguous {
        part: Part,
        found: Vec<Region>,
        level: Level,
    },
    /// An insertion without context points past the end of the file.
    PastEnd(usize),
    /// The start of the file lies before text an earlier edit changed.
    BeforeCursor,
    /// The nesting guard refused to put a declaration inside this block.
    Nested(Region),
    /// The block matched at `region` ignoring indentation, and its added
    /// lines read two ways the file does not decide between.
    Undecided(Region, indent::Undecided),
    /// The edit's new block is already at `at`, where the edit would put
    /// it (or where its line hint points, the old block being elsewhere):
    /// applied already, or meant to be applied again; never guessed.
    Present { at: Region, old_at: Option<Region> },
    /// A hunk without context lines, whose removed lines are not at the
    /// line its header names but elsewhere (`at`): its line number is all
    /// that placed it.
    AwayFromItsLine { at: Region, line: usize },
}

/// Which block of an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Block,
    Anchor,
    RangeEnd,
}

/// One file's edits being located.
pub struct Locating<'a, 'f> {
    pub file: &'a FileText<'f>,
    /// Every edit of the file, whose blocks the file is told at a level
    /// before the first search there ([`find::expect_at`]); none where
    /// the text is not the original (the file is told nothing).
    edits: &'a [Edit<'a>],
    /// The patch text, where the lines' spans are found.
    pub source: &'a str,
    pub rel: &'a RelPath,
    pub policy: &'a Policy,
    pub target_text: &'a TargetText,
    pub warnings: Vec<Diagnostic>,
    pub errors: Vec<Diagnostic>,
    /// The edits placed so far, in the order they were.
    pub placed: Vec<Placed>,
    /// Where the previous edit left off.
    pub cursor: usize,
    /// The edit being located, and the drift of its line hint.
    at: (usize, isize),
    /// The kinds of key the file was readied for ([`Locating::ready`]),
    /// one bit each: once a kind, even where no block had a key of it.
    readied: Cell<u8>,
}

impl<'a, 'f> Locating<'a, 'f> {
    pub fn new(
        file: &'a FileText<'f>,
        edits: &'a [Edit<'a>],
        source: &'a str,
        rel: &'a RelPath,
        policy: &'a Policy,
        target_text: &'a TargetText,
    ) -> Self {
        Locating {
            file,
            edits,
            source,
            rel,
            policy,
            target_text,
            warnings: vec![],
            errors: vec![],
            placed: vec![],
            cursor: 0,
            at: (0, 0),
            readied: Cell::new(0),
        }
    }

    /// A label on lines `r` of the file.
    pub fn target(&self, r: Region, message: String) -> TargetLabel {
        TargetLabel {
            path: self.rel.to_string(),
            text: self.target_text.clone(),
            span: self.file.label_span(r),
            message,
        }
    }

    /// Locates every edit in the original text, in order, and checks that
    /// no two claim the same lines. Failures go to `errors`.
    pub fn locate_all(&mut self, edits: &[Edit]) {
        self.placed.reserve_exact(edits.len());
        let mut drift: isize = 0;
        for (i, edit) in edits.iter().enumerate() {
            match self.locate(edits, i, drift) {
                Ok(Some(placed)) => {
                    if let Some(Hint::Near(h)) = edit.locator.hint {
                        self.hint_drift(edit, h as usize, drift, placed.at().start);
                        drift = placed.at().start as isize - h as isize;
                    }
                    self.placed.push(placed);
                }
                Ok(None) => {}
                Err(miss) => {
                    let brief = self.errors.len() >= EXPLAINED_MISSES;
                    let d = match miss {
                        Miss::NotFound { part, .. } if brief => {
                            brief_miss(self.rel, edit, part.noun(self.policy), 0)
                        }
                        Miss::Ambiguous { part, found, .. } if brief => {
                            brief_miss(self.rel, edit, part.noun(self.policy), found.len())
                        }
                        miss => self.explain(edits, i, miss, drift),
                    };
                    self.errors.push(d);
                    if self.policy.stop_at_miss {
                        return;
                    }
                }
            }
        }
        self.check_overlaps(edits);
    }

    /// Warns of a hunk placed by its context away from where its header,
    /// shifted by the earlier hunks' drift, points, saying how far from
    /// its header's own line; not of one at that line (the line number
    /// was right, the drift not).
    fn hint_drift(&mut self, edit: &Edit, h: usize, drift: isize, start: usize) {
        let expected = h.saturating_add_signed(drift);
        if start != expected && start != h {
            self.warnings.push(
                Diagnostic::new(
                    Code::LineHintDrift,
                    format!(
                        "hunk matched at line {} of `{}`, {} line(s) from where its header points",
                        start + 1,
                        self.rel,
                        start.abs_diff(h)
                    ),
                )
                .at(edit.span, "the context decided, not the line number")
                .path(self.rel.as_str()),
            );
        }
    }

    fn check_overlaps(&mut self, edits: &[Edit]) {
        let mut sorted = std::mem::take(&mut self.placed);
        sorted.sort_by_key(|p| (p.start, p.edit));
        for pair in sorted.windows(2) {
            let (a, b) = (pair[0].at(), pair[1].at());
            if b.start < a.end || (b.start == a.start && !a.is_empty() && !b.is_empty()) {
                self.errors.push(
                    Diagnostic::new(
                        Code::OverlappingHunks,
                        format!("two hunks of `{}` claim the same lines (from line {})", self.rel, b.start + 1),
                    )
                    .at(edits[pair[1].edit()].span, "this hunk overlaps")
                    .secondary(edits[pair[0].edit()].span, "this one")
                    .path(self.rel.as_str())
                    .hint("merge overlapping hunks into one, or give each hunk context that occurs only once"),
                );
            }
        }
        self.placed = sorted;
    }

    /// Where edit `i` goes: `None` when it has nothing to do (done
    /// already, or an empty insertion). Moves the cursor.
    pub fn locate(
        &mut self,
        edits: &[Edit],
        i: usize,
        drift: isize,
    ) -> Result<Option<Placed>, Miss> {
        self.at = (i, drift);
        let edit = &edits[i];
        let loc = &edit.locator;
        let mut from = match loc.uniqueness {
            Uniqueness::FirstAfterCursor | Uniqueness::UniqueAfterCursor => self.cursor,
            Uniqueness::UniqueInFile => 0,
        };
        if let Some(Hint::From(h)) = loc.hint {
            from = from.max(h as usize);
        }
        let mut first_only = loc.uniqueness == Uniqueness::FirstAfterCursor;
        let anchor = loc.anchor().filter(|a| !a.is_empty());
        let mut anchored_at = None;
        if let Some(anchor) = anchor {
            match self.anchor(edit, anchor, from, first_only) {
                Ok(after) => {
                    from = after;
                    first_only = true;
                    anchored_at = Some(after);
                }
                Err(
                    miss @ Miss::NotFound {
                        part: Part::Anchor, ..
                    },
                ) => {
                    if !self.without_anchor(edit, anchor, from) {
                        return Err(miss);
                    }
                    first_only = false;
                }
                Err(miss) => return Err(miss),
            }
        }
        let found = if edit.old.is_empty() {
            Ok((
                self.insertion_point(edit, from, anchor.is_some(), drift)?,
                Level::Exact,
            ))
        } else {
            self.block(edit, from, first_only, drift)
        };
        let (region, level) = match found {
            Err(Miss::NotFound { .. }) if self.policy.skip_applied => {
                return self.absent(edit, from);
            }
            found => found?,
        };
        self.at_its_line(edit, region, level, drift)?;
        if let Some(after) = anchored_at {
            if let Some(placed) = self.between_anchor_and_block(edit, after, region, level)? {
                return Ok(placed);
            }
        }
        let indent = self.reindented(edit, region, level)?;
        let region = self.extend(edit, region)?;
        let placed = self.place(edits, i, region, level)?;
        Ok(placed.map(|p| Placed {
            indent: indent.map(Box::new).or(p.indent),
            ..p
        }))
    }

    /// How the edit's added lines are re-indented where its block was
    /// found at `level`, with the warning that says so.
    fn reindented(
        &mut self,
        edit: &Edit,
        region: Region,
        level: Level,
    ) -> Result<Option<indent::Indent>, Miss> {
        // Re-indentation happens only at a level that is a slip, so the
        // slip's warning names the mapping.
        let indent = indent::relaxed(self.file, level, region, edit)
            .map_err(|why| Miss::Undecided(region, why))?;
        if level.is_slip() {
            self.slip(edit, Part::Block, region, level, indent.as_ref());
        } else if let Some(indent) = &indent {
            // A level whose matching ignores indentation by definition
            // (ap's search): the mapping is still news.
            let d = Diagnostic::new(
                Code::WhitespaceFuzz,
                format!(
                    "the {} is indented otherwise than `{}` at line {}",
                    Part::Block.noun(self.policy),
                    self.rel,
                    region.start + 1
                ),
            )
            .at(
                self.lines_span(edit.old),
                "indentation differs from the file",
            )
            .path(self.rel.as_str())
            .note(indent.describe());
            self.warnings.push(d);
        }
        Ok(indent)
    }

    /// Where an edit without an old block goes: the start or the end of
    /// the file, right after its anchor, or its line hint.
    fn insertion_point(
        &self,
        edit: &Edit,
        from: usize,
        anchored: bool,
        drift: isize,
    ) -> Result<Region, Miss> {
        let loc = &edit.locator;
        let n = self.file.len();
        let at = if loc.at_start {
            if self.cursor > 0 {
                return Err(Miss::BeforeCursor);
            }
            0
        } else if loc.at_eof {
            n
        } else if anchored {
            from
        } else {
            match loc.hint {
                Some(Hint::Near(h)) => (h as usize).saturating_add_signed(drift),
                _ => from,
            }
        };
        if at > n {
            return Err(Miss::PastEnd(at));
        }
        Ok(Region::new(at, at))
    }

    /// Where the edit's old block is: the whole file (`Hint::Whole`), an
    /// exact match at its line hint, or else the first level that finds it.
    fn block(
        &self,
        edit: &Edit,
        from: usize,
        first_only: bool,
        drift: isize,
    ) -> Result<(Region, Level), Miss> {
        let loc = &edit.locator;
        let n = self.file.len();
        let len = edit.old.len();
        if loc.hint == Some(Hint::Whole) {
            return if n == len && self.exact_at(0, edit.old) {
                Ok((Region::new(0, n), Level::Exact))
            } else {
                Err(Miss::NotFound {
                    part: Part::Block,
                    from: 0,
                })
            };
        }
        if let Some(Hint::Near(h)) = loc.hint {
            let h = (h as usize).saturating_add_signed(drift);
            let fits = h >= from && (!loc.at_eof || h.checked_add(len) == Some(n));
            if fits && self.exact_at(h, edit.old) {
                return Ok((Region::new(h, h + len), Level::Exact));
            }
        }
        self.search(
            edit.old,
            loc.levels,
            from,
            first_only,
            loc.at_eof,
            Part::Block,
        )
    }

    /// Before the first search at `kind` (a hunk that missed its line,
    /// a level past the first), tells the file the keys of the blocks
    /// still to be sought there: this edit's and the later ones', but of
    /// those their line numbers place, only the ones not at their line as
    /// the drift stands (a long patch with one hunk wrong counts one
    /// block; one written against another version, all of them).
    fn ready(&self, kind: Key) {
        let bit = 1 << kind as u8;
        if self.readied.get() & bit != 0 || self.file.knows(kind) || self.edits.is_empty() {
            return;
        }
        self.readied.set(self.readied.get() | bit);
        let (i, drift) = self.at;
        let todo: Vec<&Edit> = (self.edits.iter().enumerate().skip(i))
            .filter(|&(j, e)| match e.locator.hint {
                Some(Hint::Near(h)) => {
                    j == i || !self.exact_at((h as usize).saturating_add_signed(drift), e.old)
                }
                Some(Hint::Whole) => false,
                _ => true,
            })
            .map(|(_, e)| e)
            .collect();
        find::expect_at(self.file, &todo, kind);
    }

    /// Whether `block` matches exactly at line `at`.
    fn exact_at(&self, at: usize, block: &[Line]) -> bool {
        let want = Want::new(block, Level::Exact);
        find::match_at(self.file, at, &want).is_some_and(|r| r.len() == block.len())
    }

    /// Finds `block` at or after `from`, at the first of `levels` that
    /// finds it. Several matches are an error unless `first_only`.
    pub(crate) fn search(
        &self,
        block: &[Line],
        levels: Levels,
        from: usize,
        first_only: bool,
        at_eof: bool,
        part: Part,
    ) -> Result<(Region, Level), Miss> {
        let n = self.file.len();
        // One match, or enough to say how the block is ambiguous. All of
        // them where the end of the file must be one (it is found among
        // them), or where ap picks the anchor whose stretch holds the block.
        let limit = if first_only && !at_eof {
            1
        } else if at_eof || (part == Part::Anchor && self.policy.anchor_by_block) {
            usize::MAX
        } else {
            CANDIDATES
        };
        // The kind of key of the last level that found nothing, comparing
        // every line (not passing over blank ones): a level whose keys are
        // that kind's, in this file and this block, would find nothing
        // again, and is passed over without counting the file's keys.
        let mut missed: Option<Key> = None;
        for level in levels.iter() {
            let kind = Key::at(level);
            if missed.is_some_and(|m| self.same_keys(block, m, kind)) {
                continue;
            }
            self.ready(kind);
            let want = Want::new(block, level);
            let found: Vec<Region> = find::find(self.file, &want, from, n, limit)
                .into_iter()
                .filter(|r| !at_eof || r.end == n)
                .collect();
            match (first_only, found.len()) {
                (_, 0) if level.skips_blank_lines() => continue,
                (_, 0) => missed = Some(kind),
                (true, _) | (_, 1) => return Ok((found[0], level)),
                _ => return Err(Miss::Ambiguous { part, found, level }),
            }
        }
        Err(Miss::NotFound { part, from })
    }

    /// Whether `block` and the file have the same keys of kinds `a` and
    /// `b`, line for line ([`FileText::keys_agree`]).
    fn same_keys(&self, block: &[Line], a: Key, b: Key) -> bool {
        // The block first: the file's answer may take a pass over it.
        block.iter().all(|l| a.of(l.text) == b.of(l.text)) && self.file.keys_agree(a, b)
    }

    /// A block matched at a relaxed level: a warning that names it.
    pub(crate) fn slip(
        &mut self,
        edit: &Edit,
        part: Part,
        r: Region,
        level: Level,
        indent: Option<&Indent>,
    ) {
        let d = if level == Level::SoftStart {
            let lines = part.lines(edit);
            Diagnostic::new(
                Code::SoftStartMatch,
                format!("the {}'s first line matched only after a prefix (numbering, bullet or comment marker) in `{}`", part.noun(self.policy), self.rel),
            )
            .at(self.lines_span(lines), "matched with a prefix dropped")
            .path(self.rel.as_str())
            .target(self.target(r, "matched here".into()))
            .hint("copy the first line exactly as the file has it")
        } else {
            let at = format!("line {}", r.start + 1);
            super::explain::fuzz_warning(self.rel, edit, part.noun(self.policy), &at, level)
        };
        let d = match indent {
            Some(indent) => d.note(indent.describe()),
            None => d,
        };
        self.warnings.push(d);
    }
}

impl Part {
    /// What the format calls this block.
    pub fn noun(self, policy: &Policy) -> &'static str {
        match self {
            Part::Block => policy.advice.block,
            Part::Anchor => "anchor",
            Part::RangeEnd => policy.advice.range_end,
        }
    }

    pub fn lines<'e, 'a>(self, edit: &'e Edit<'a>) -> &'e [Line<'a>] {
        let loc = &edit.locator;
        match self {
            Part::Block => edit.old,
            Part::Anchor => loc.anchor().unwrap_or(&[]),
            Part::RangeEnd => match loc.range_end() {
                Some(RangeEnd::Lines(l)) => l,
                _ => &[],
            },
        }
    }
}

/// The lines of an edit's new block, in order (ap's content), kept lines
/// as the patch gives them.
pub fn new_block<'e, 'a>(edit: &'e Edit<'a>) -> impl DoubleEndedIterator<Item = Line<'a>> + 'e {
    edit.new_lines().map(|n| match n {
        New::Keep(j) => edit.old[j],
        New::Add(l) => l,
    })
}

/// [`new_block`], as a list.
pub fn new_lines<'a>(edit: &Edit<'a>) -> Vec<Line<'a>> {
    new_block(edit).collect()
}

impl Locating<'_, '_> {
    /// The span covering `lines` in the patch.
    pub fn lines_span(&self, lines: &[Line]) -> Span {
        match (lines.first(), lines.last()) {
            (Some(a), Some(b)) => a.span(self.source).to(b.span(self.source)),
            _ => Span::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::text::hash_key;
    use super::*;
    use crate::ir::{Levels, Locator, NewLine, Uniqueness};

    /// A udiff-like hunk of lines `at..at + 3`, numbered `hint`, keeping
    /// its first and last line (context that places it).
    fn hinted<'a>(lines: &[&'a str], at: usize, hint: usize) -> Edit<'a> {
        let mut locator = Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER);
        locator.hint = Some(Hint::Near(hint as u32));
        let keep = &[NewLine::Keep(0, 1), NewLine::Keep(2, 1)];
        Edit::replace(
            Line::unplaced(&lines[at..at + 3]),
            keep,
            locator,
            Span::default(),
        )
    }

    /// Hunks placed by line numbers that all missed, and one whose text
    /// is not in the file: the file is told each level's keys before it is
    /// searched there, so the searches walk pivots, the miss is explained
    /// with one pass a kind, and no kind is indexed whole.
    #[test]
    fn missed_line_hints_and_an_explained_miss_index_no_kind_whole() {
        let text: String = (0..3000)
            .map(|i| format!("    row {i} of {}\n", i % 17))
            .collect();
        let lines: Vec<&str> = text.lines().collect();
        let hunk = |at: usize, hint: usize| hinted(&lines, at, hint);
        let mut edits: Vec<Edit> = (0..40).map(|k| hunk(k * 70, k * 70 + 5)).collect();
        let typo = Line::unplaced(&[
            "    row 2950 of 9",
            "    row 2951 of 10 (not so)",
            "    row 2952 of 11",
        ]);
        edits.push(Edit {
            old: typo,
            ..hunk(2950, 2950)
        });
        let file = FileText::new(&text);
        let (rel, policy, target) = (
            RelPath::new("f").unwrap(),
            Policy::default(),
            TargetText::default(),
        );
        let mut loc = Locating::new(&file, &edits, "", &rel, &policy, &target);
        loc.locate_all(&edits);
        let placed: Vec<usize> = loc.placed.iter().map(|p| p.at().start).collect();
        assert_eq!(placed, (0..40).map(|k| k * 70).collect::<Vec<_>>());
        assert_eq!(loc.errors.len(), 1);
        let d = &loc.errors[0];
        assert_eq!(d.code, Code::ContextNotFound);
        assert!(
            d.hint
                .as_deref()
                .unwrap()
                .contains("re-read lines 2951-2953"),
            "{:?}",
            d.hint
        );
        for kind in [
            Key::Exact,
            Key::TrailingWhitespace,
            Key::Trimmed,
            Key::Normalized,
        ] {
            let (passes, whole) = file.beyond_pivots(kind);
            assert!(
                passes <= 1 && !whole,
                "{kind:?}: {passes} passes, whole {whole}"
            );
        }
    }

    /// A long patch whose hunks are at their lines but for one: the file
    /// is told that one's keys, not the keys of the hunks already placed
    /// or still to come at their lines.
    #[test]
    fn a_miss_tells_the_file_only_the_blocks_not_at_their_lines() {
        let text: String = (0..3000).map(|i| format!("row {i}\n")).collect();
        let lines: Vec<&str> = text.lines().collect();
        let hunk = |at: usize, hint: usize| hinted(&lines, at, hint);
        // Hunk 20's header is 7 lines off. The next, shifted by the drift
        // that leaves, misses too: it was at its line when hunk 20 was
        // sought, so its keys are sought in a pass of their own.
        let edits: Vec<Edit> = (0..40)
            .map(|k| hunk(k * 70, if k == 20 { k * 70 + 7 } else { k * 70 }))
            .collect();
        let file = FileText::new(&text);
        let (rel, policy, target) = (
            RelPath::new("f").unwrap(),
            Policy::default(),
            TargetText::default(),
        );
        let mut loc = Locating::new(&file, &edits, "", &rel, &policy, &target);
        loc.locate_all(&edits);
        assert!(loc.errors.is_empty());
        assert_eq!(loc.placed.len(), 40);
        let told =
            |k: usize| (k * 70..k * 70 + 3).any(|i| file.is_pivot(hash_key(lines[i]), Key::Exact));
        assert!(told(20));
        let others: Vec<usize> = (0..40).filter(|&k| k != 20 && told(k)).collect();
        assert_eq!(others, Vec::<usize>::new());
    }

    /// A placed edit is kept for every edit of a file until it is written.
    #[test]
    fn a_placed_edit_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Placed>(), 24);
        let p = Placed::new(Region::new(7, 9), 3, true);
        assert_eq!(
            (p.at(), p.edit(), p.blank_first),
            (Region::new(7, 9), 3, true)
        );
    }

    /// Blocks sought on the ladder in a file with lines ending bare or in
    /// whitespace, ASCII or not: a level whose keys are the missed one's,
    /// in file and block, is passed over without counting the file's keys
    /// (none of its kind is known after), and every other level is still
    /// searched and finds what it finds.
    #[test]
    fn a_level_whose_keys_are_the_missed_ones_is_passed_over() {
        let (rel, policy) = (RelPath::new("f").unwrap(), Policy::default());
        let locate = |text: &str, block: &[&str]| {
            let file = FileText::new(text);
            let old = Line::unplaced(block);
            let keep = [NewLine::Keep(0, block.len() as u32)];
            let edits = [Edit::replace(
                old,
                &keep,
                Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER),
                Span::default(),
            )];
            let target = TargetText::default();
            let mut loc = Locating::new(&file, &edits, "", &rel, &policy, &target);
            loc.locate_all(&edits);
            let placed = loc.placed.first().map(|p| p.at().start);
            let known = [Key::TrailingWhitespace, Key::Normalized].map(|k| file.knows(k));
            (placed, loc.errors.len(), known)
        };
        let bare: String = (0..50).map(|i| format!("  line {i}\n")).collect();
        // Absent: trailing whitespace is exact here, normalised is trimmed.
        assert_eq!(
            locate(&bare, &["  line 3", "  nowhere"]),
            (None, 1, [false, false])
        );
        // A block line ending in a space: that level is sought, and finds it.
        assert_eq!(
            locate(&bare, &["  line 3 ", "  line 4"]),
            (Some(3), 0, [true, false])
        );
        // Indented otherwise: found trimmed, trailing whitespace passed over.
        assert_eq!(
            locate(&bare, &["line 3", "line 4"]),
            (Some(3), 0, [false, false])
        );
        // A file line ending in a tab, far from the block: sought again.
        let tabbed = bare.replace("line 40\n", "line 40\t\n");
        assert_eq!(locate(&tabbed, &["  line 3", "  nowhere"]).2, [true, false]);
        // A file that is not ASCII: normalised keys are counted, and find
        // a dash the block writes plainly.
        let dashed = bare.replace("line 7\n", "line 7 \u{2014} x\n");
        assert_eq!(
            locate(&dashed, &["  line 7 - x", "  line 8"]),
            (Some(7), 0, [false, true])
        );
        assert_eq!(
            locate(&dashed, &["  line 3", "  nowhere"]),
            (None, 1, [false, true])
        );
        // A block that is not ASCII, in an ASCII file: counted too.
        assert_eq!(
            locate(&bare, &["  line 3 \u{2014}", "  nowhere"]).2,
            [false, true]
        );
    }
}
