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

use std::cell::OnceCell;
use std::sync::Arc;

use super::find::{self, Want};
use super::text::{FileText, Region};
use crate::error::{Code, Diagnostic, TargetLabel};
use crate::ir::{
    Edit, Hint, Level, Line, NestingGuard, NewLine, Place, Policy, RangeEnd, Span, Uniqueness,
};
use crate::paths::RelPath;

/// An edit given its place: the new block replaces the lines `at` (empty
/// for an insertion), after a blank line when the nesting guard moved it.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub at: Region,
    pub edit: usize,
    pub blank_first: bool,
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
    pub rel: &'a RelPath,
    pub policy: &'a Policy,
    pub target_text: &'a OnceCell<Arc<str>>,
    pub warnings: Vec<Diagnostic>,
    pub errors: Vec<Diagnostic>,
    /// The edits placed so far, in the order they were.
    pub placed: Vec<Placed>,
    /// Where the previous edit left off.
    pub cursor: usize,
}

/// An edit's lines after locating, before a place is decided.
struct Found {
    region: Region,
    /// The block matched only at a relaxed level.
    level: Level,
}

impl<'a, 'f> Locating<'a, 'f> {
    pub fn new(
        file: &'a FileText<'f>,
        rel: &'a RelPath,
        policy: &'a Policy,
        target_text: &'a OnceCell<Arc<str>>,
    ) -> Self {
        Locating {
            file,
            rel,
            policy,
            target_text,
            warnings: vec![],
            errors: vec![],
            placed: vec![],
            cursor: 0,
        }
    }

    /// A label on lines `r` of the file.
    pub fn target(&self, r: Region, message: String) -> TargetLabel {
        let text = self
            .target_text
            .get_or_init(|| Arc::from(self.file.text))
            .clone();
        TargetLabel {
            path: self.rel.to_string(),
            text,
            span: self.file.label_span(r),
            message,
        }
    }

    /// Locates every edit in the original text, in order, and checks that
    /// no two claim the same lines. Failures go to `errors`.
    pub fn locate_all(&mut self, edits: &[Edit]) {
        let mut drift: isize = 0;
        for (i, edit) in edits.iter().enumerate() {
            match self.locate(edits, i, drift) {
                Ok(Some(placed)) => {
                    if let Some(Hint::Near(h)) = edit.locator.hint {
                        self.hint_drift(edit, h, drift, placed.at.start);
                        drift = placed.at.start as isize - h as isize;
                    }
                    self.placed.push(placed);
                }
                Ok(None) => {}
                Err(miss) => {
                    let d = self.explain(edits, i, miss, drift);
                    self.errors.push(d);
                    if self.policy.stop_at_miss {
                        return;
                    }
                }
            }
        }
        self.check_overlaps(edits);
    }

    fn hint_drift(&mut self, edit: &Edit, h: usize, drift: isize, start: usize) {
        let expected = h.saturating_add_signed(drift);
        if start != expected {
            self.warnings.push(
                Diagnostic::new(
                    Code::LineHintDrift,
                    format!(
                        "hunk matched at line {} of `{}`, {} line(s) from where its header points",
                        start + 1,
                        self.rel,
                        start.abs_diff(expected)
                    ),
                )
                .at(edit.span, "the context decided, not the line number")
                .path(self.rel.as_str()),
            );
        }
    }

    fn check_overlaps(&mut self, edits: &[Edit]) {
        let mut sorted = self.placed.clone();
        sorted.sort_by_key(|p| (p.at.start, p.edit));
        for pair in sorted.windows(2) {
            let (a, b) = (pair[0].at, pair[1].at);
            if b.start < a.end || (b.start == a.start && !a.is_empty() && !b.is_empty()) {
                self.errors.push(
                    Diagnostic::new(
                        Code::OverlappingHunks,
                        format!("two hunks of `{}` claim the same lines (from line {})", self.rel, b.start + 1),
                    )
                    .at(edits[pair[1].edit].span, "this hunk overlaps")
                    .secondary(edits[pair[0].edit].span, "this one")
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
        let edit = &edits[i];
        let loc = &edit.locator;
        let n = self.file.len();
        let mut from = match loc.uniqueness {
            Uniqueness::FirstAfterCursor | Uniqueness::UniqueAfterCursor => self.cursor,
            Uniqueness::UniqueInFile => 0,
        };
        if let Some(Hint::From(h)) = loc.hint {
            from = from.max(h);
        }
        let mut first_only = loc.uniqueness == Uniqueness::FirstAfterCursor;
        let anchor = loc.anchor.as_deref().filter(|a| !a.is_empty());
        if let Some(anchor) = anchor {
            from = self.anchor(edit, anchor, from, first_only)?;
            first_only = true;
        }
        let found = if loc.hint == Some(Hint::Whole) {
            let whole = n == edit.old.len() && self.exact_at(0, &edit.old);
            if !whole {
                return Err(Miss::NotFound {
                    part: Part::Block,
                    from: 0,
                });
            }
            Found {
                region: Region::new(0, n),
                level: Level::Exact,
            }
        } else if edit.old.is_empty() {
            let at = if loc.at_start {
                if self.cursor > 0 {
                    return Err(Miss::BeforeCursor);
                }
                0
            } else if loc.at_eof {
                n
            } else if anchor.is_some() {
                from
            } else {
                match loc.hint {
                    Some(Hint::Near(h)) => h.saturating_add_signed(drift),
                    _ => from,
                }
            };
            if at > n {
                return Err(Miss::PastEnd(at));
            }
            Found {
                region: Region::new(at, at),
                level: Level::Exact,
            }
        } else {
            let near = match loc.hint {
                Some(Hint::Near(h)) => Some(h.saturating_add_signed(drift)),
                _ => None,
            };
            let at_hint = near.filter(|&h| {
                h >= from
                    && (!loc.at_eof || h.checked_add(edit.old.len()) == Some(n))
                    && self.exact_at(h, &edit.old)
            });
            match at_hint {
                Some(h) => Found {
                    region: Region::new(h, h + edit.old.len()),
                    level: Level::Exact,
                },
                None => match self.search(
                    &edit.old,
                    loc.levels,
                    from,
                    first_only,
                    loc.at_eof,
                    Part::Block,
                ) {
                    Ok((region, level)) => Found { region, level },
                    Err(Miss::NotFound { .. }) if self.policy.skip_applied => {
                        return self.absent(edit, from);
                    }
                    Err(miss) => return Err(miss),
                },
            }
        };
        if found.level.is_slip() {
            self.slip(edit, Part::Block, found.region, found.level);
        }
        let region = self.extend(edit, found.region)?;
        self.place(edits, i, region)
    }

    /// Whether `block` matches exactly at line `at`.
    fn exact_at(&self, at: usize, block: &[Line]) -> bool {
        let want = Want::new(block, Level::Exact);
        find::match_at(self.file, at, &want).is_some_and(|r| r.len() == block.len())
    }

    /// Finds `block` at or after `from`, at the first of `levels` that
    /// finds it. Several matches are an error unless `first_only`.
    fn search(
        &self,
        block: &[Line],
        levels: &[Level],
        from: usize,
        first_only: bool,
        at_eof: bool,
        part: Part,
    ) -> Result<(Region, Level), Miss> {
        let n = self.file.len();
        let limit = if first_only && !at_eof { 1 } else { usize::MAX };
        for &level in levels {
            let want = Want::new(block, level);
            let found: Vec<Region> = find::find(self.file, &want, from, n, limit)
                .into_iter()
                .filter(|r| !at_eof || r.end == n)
                .collect();
            match (first_only, found.len()) {
                (_, 0) => continue,
                (true, _) | (_, 1) => return Ok((found[0], level)),
                _ => return Err(Miss::Ambiguous { part, found, level }),
            }
        }
        Err(Miss::NotFound { part, from })
    }

    /// Finds the anchor; returns where the block's search starts: after
    /// the anchor, or at its start when the two share lines.
    fn anchor(
        &mut self,
        edit: &Edit,
        anchor: &[Line],
        from: usize,
        first_only: bool,
    ) -> Result<usize, Miss> {
        let levels = edit.locator.levels;
        let (hit, level) = match self.search(anchor, levels, from, first_only, false, Part::Anchor)
        {
            Err(Miss::Ambiguous { part, found, level }) if self.policy.anchor_by_block => (
                self.anchor_holding(edit, anchor, part, found, level)?,
                level,
            ),
            other => other?,
        };
        if level.is_slip() {
            self.slip(edit, Part::Anchor, hit, level);
        }
        Ok(self.after_anchor(edit, anchor, hit, level))
    }

    /// ap §3.6: of several anchors, the one whose stretch (up to the next
    /// one) holds the block.
    fn anchor_holding(
        &mut self,
        edit: &Edit,
        anchor: &[Line],
        part: Part,
        hits: Vec<Region>,
        level: Level,
    ) -> Result<Region, Miss> {
        let holding: Vec<Region> = hits
            .iter()
            .enumerate()
            .filter(|&(k, &h)| {
                let start = self.after_anchor(edit, anchor, h, level);
                let end = hits.get(k + 1).map_or(self.file.len(), |r| r.start);
                !edit.old.is_empty()
                    && edit.locator.levels.iter().any(|&l| {
                        let want = Want::new(&edit.old, l);
                        !find::find(self.file, &want, start, end.max(start), 1).is_empty()
                    })
            })
            .map(|(_, &h)| h)
            .collect();
        let [one] = holding[..] else {
            let found = if holding.is_empty() { hits } else { holding };
            return Err(Miss::Ambiguous { part, found, level });
        };
        let d = Diagnostic::new(
            Code::AnchorDisambiguated,
            format!(
                "the anchor occurs {} times in `{}`; the one followed by the {} is used",
                hits.len(),
                self.rel,
                self.policy.advice.block
            ),
        )
        .at(lines_span(anchor), "ambiguous anchor")
        .path(self.rel.as_str())
        .target(self.target(one, "this occurrence".into()));
        self.warnings.push(d);
        Ok(one)
    }

    /// Where the block is sought after the anchor at `hit`: after it, or
    /// from its start when the anchor's end is the block's start, or one
    /// holds the other.
    fn after_anchor(&self, edit: &Edit, anchor: &[Line], hit: Region, level: Level) -> usize {
        let a = Want::new(anchor, level);
        let b = Want::new(&edit.old, level);
        let (a, b) = (a.keys(), b.keys());
        let overlap = !b.is_empty()
            && ((1..=a.len().min(b.len())).any(|k| a[a.len() - k..] == b[..k])
                || a.windows(b.len()).any(|w| w == b)
                || b.windows(a.len()).any(|w| w == a));
        if overlap {
            hit.start
        } else {
            hit.end
        }
    }

    /// The region after the range end, `scope_end` and blank-line widening.
    fn extend(&mut self, edit: &Edit, mut region: Region) -> Result<Region, Miss> {
        let loc = &edit.locator;
        let n = self.file.len();
        match &loc.range_end {
            None => {}
            Some(RangeEnd::Eof) => region.end = n,
            Some(RangeEnd::Lines(tail)) => region.end = self.range_end(edit, tail, region)?,
        }
        if loc.scope_end {
            // An empty region (`^`, `$`) has no last line to open a block.
            match (!region.is_empty())
                .then(|| self.block_end(region.end - 1))
                .flatten()
            {
                Some(end) => region.end = end.max(region.end),
                None => self.warnings.push(
                    Diagnostic::new(
                        Code::ScopeEndIgnored,
                        "`scope_end` is ignored: the snippet's last line opens no block",
                    )
                    .at(edit.span, "no block to extend to")
                    .path(self.rel.as_str())
                    .hint(
                        "point the snippet at a line that opens a block (`fn f() {`, `def f():`)",
                    ),
                ),
            }
        }
        for _ in 0..loc.widen.0 {
            if region.start > self.cursor && self.file.is_blank(region.start - 1) {
                region.start -= 1;
            }
        }
        for _ in 0..loc.widen.1 {
            if region.end < n && self.file.is_blank(region.end) {
                region.end += 1;
            }
        }
        Ok(region)
    }

    /// Where the range that starts with `region` ends.
    fn range_end(&mut self, edit: &Edit, tail: &[Line], region: Region) -> Result<usize, Miss> {
        let level = Level::BlankLinesIgnored;
        let want = Want::new(tail, level);
        let corrected = |why: &str, label: &str| {
            Diagnostic::new(
                Code::RangeAutoCorrected,
                format!("the `snippet_tail` is {why}; the snippet alone is the region"),
            )
            .at(lines_span(tail), label.to_string())
        };
        if self.policy.correct_ranges && Want::new(&edit.old, level).keys().ends_with(want.keys()) {
            let d = corrected("the end of the `snippet`", "already inside the snippet")
                .path(self.rel.as_str())
                .hint("give `snippet_tail` only when the range runs past the snippet");
            self.warnings.push(d);
            return Ok(region.end);
        }
        match self.search(
            tail,
            edit.locator.levels,
            region.end,
            true,
            false,
            Part::RangeEnd,
        ) {
            Ok((r, level)) => {
                if level.is_slip() {
                    self.slip(edit, Part::RangeEnd, r, level);
                }
                Ok(r.end)
            }
            Err(_)
                if self.policy.correct_ranges
                    && want.keys() == Want::new(&new_lines(edit), level).keys() =>
            {
                let d = corrected(
                    "the new `content`, not text of the file",
                    "this is the content",
                )
                .path(self.rel.as_str());
                self.warnings.push(d);
                Ok(region.end)
            }
            Err(_) => Err(Miss::NotFound {
                part: Part::RangeEnd,
                from: region.end,
            }),
        }
    }

    /// The end (exclusive) of the block that line `l` opens: by bracket
    /// nesting, else by indentation.
    fn block_end(&self, l: usize) -> Option<usize> {
        let file = self.file;
        let mut d = depth(file.line(l));
        if d > 0 {
            for j in l + 1..file.len() {
                d += depth(file.line(j));
                if d <= 0 {
                    return Some(j + 1);
                }
            }
            return None;
        }
        let base = indent(file.line(l));
        let mut last = l;
        for j in l + 1..file.len() {
            if file.is_blank(j) {
                continue;
            }
            if indent(file.line(j)) > base {
                last = j;
            } else {
                break;
            }
        }
        (last > l).then_some(last + 1)
    }

    /// Decides where the new block goes around `region`, or that it is
    /// there already; moves the cursor.
    fn place(&mut self, edits: &[Edit], i: usize, region: Region) -> Result<Option<Placed>, Miss> {
        let edit = &edits[i];
        let content = new_lines(edit);
        let skip = self.policy.skip_applied;
        let placed = |at: Region| Placed {
            at,
            edit: i,
            blank_first: false,
        };
        match edit.place {
            Place::Replace => {
                if skip && !content.is_empty() && self.reads_as(region, &content) {
                    self.done_already(edit, region.end, "the target already reads as the content");
                    return Ok(None);
                }
                self.cursor = region.end;
                Ok(Some(placed(region)))
            }
            Place::After => {
                if content.is_empty() {
                    return Ok(None);
                }
                let moved = self.nested(region, &content);
                for end in [Some(region.end), moved].into_iter().flatten() {
                    if let Some(r) = skip.then(|| self.follows(end, &content)).flatten() {
                        self.done_already(edit, r.end, "the content already follows the snippet");
                        return Ok(None);
                    }
                }
                let mut at = Region::new(region.end, region.end);
                if let Some(end) = moved {
                    if self.policy.nesting_guard != Some(NestingGuard::Move) {
                        return Err(Miss::Nested(region));
                    }
                    let d = Diagnostic::new(Code::NestingGuardMoved, "the content is a top-level declaration; it goes after the block the snippet opens, not inside it")
                        .at(edit.span, "moved past the block")
                        .path(self.rel.as_str())
                        .target(self.target(Region::new(region.start, end), "this block".into()));
                    self.warnings.push(d);
                    at = Region::new(end, end);
                }
                self.cursor = self.cursor.max(at.end);
                Ok(Some(Placed {
                    at,
                    edit: i,
                    blank_first: moved.is_some(),
                }))
            }
            Place::Before => {
                if content.is_empty() {
                    return Ok(None);
                }
                if skip && self.precedes(edits, region.start, &content) {
                    self.done_already(
                        edit,
                        region.start,
                        "the content already precedes the snippet",
                    );
                    return Ok(None);
                }
                self.cursor = self.cursor.max(region.start);
                Ok(Some(placed(Region::new(region.start, region.start))))
            }
        }
    }

    /// The nesting guard (ap 3.2 §3.6): an insertion after a line that
    /// opens a block, of content that is itself a block-opening
    /// declaration at column 0, belongs after that block: its end.
    fn nested(&self, region: Region, content: &[Line]) -> Option<usize> {
        self.policy.nesting_guard?;
        if region.is_empty() {
            return None;
        }
        let line = self.file.line(region.end - 1);
        let opens = |l: &str| depth(l) > 0 || l.trim_end().ends_with(':');
        let first = content.iter().find(|l| !l.text.trim().is_empty())?;
        let guarded = opens(line) && opens(&first.text) && indent(&first.text) == 0;
        guarded.then(|| self.block_end(region.end - 1)).flatten()
    }

    /// A block that is not there, under `skip_applied`: a deletion whose
    /// lines no earlier edit removed is done already, and so is a
    /// replacement whose content is there; anything else is a miss.
    fn absent(&mut self, edit: &Edit, from: usize) -> Result<Option<Placed>, Miss> {
        let content = new_lines(edit);
        if edit.place == Place::Replace
            && content.is_empty()
            && self.consumed_by(&edit.old).is_none()
        {
            self.done_already(edit, self.cursor, "the snippet is not in the file");
            return Ok(None);
        }
        if edit.place == Place::Replace && !content.is_empty() {
            let want = Want::new(&content, Level::BlankLinesIgnored);
            if let Some(r) = find::find(self.file, &want, from, self.file.len(), 1).first() {
                self.done_already(edit, r.end, "the snippet is gone and the content is there");
                return Ok(None);
            }
        }
        Err(Miss::NotFound {
            part: Part::Block,
            from,
        })
    }

    /// The earlier edit that replaced or removed lines where `block` was.
    pub fn consumed_by(&self, block: &[Line]) -> Option<usize> {
        if block.is_empty() {
            return None;
        }
        let want = Want::new(block, Level::BlankLinesIgnored);
        find::find(self.file, &want, 0, self.cursor, usize::MAX)
            .iter()
            .find_map(|r| {
                self.placed
                    .iter()
                    .find(|p| !p.at.is_empty() && r.start < p.at.end && p.at.start < r.end)
                    .map(|p| p.edit)
            })
    }

    /// Whether the non-blank lines of `region` are `content`'s.
    fn reads_as(&self, region: Region, content: &[Line]) -> bool {
        let want = Want::new(content, Level::BlankLinesIgnored);
        let Some(first) = (region.start..region.end).find(|&l| !self.file.is_blank(l)) else {
            return false;
        };
        find::match_at(self.file, first, &want).is_some_and(|r| {
            r.end <= region.end && (r.end..region.end).all(|l| self.file.is_blank(l))
        })
    }

    /// The lines `content` covers when its non-blank lines come next from
    /// line `at` on.
    fn follows(&self, at: usize, content: &[Line]) -> Option<Region> {
        let first = (at..self.file.len()).find(|&l| !self.file.is_blank(l))?;
        find::match_at(
            self.file,
            first,
            &Want::new(content, Level::BlankLinesIgnored),
        )
    }

    /// Whether the text just before line `at`, as the edits so far leave
    /// it, ends with `content` (blank lines and surrounding whitespace aside).
    fn precedes(&self, edits: &[Edit], at: usize, content: &[Line]) -> bool {
        let want = Want::new(content, Level::BlankLinesIgnored);
        let need = want.keys().len();
        let mut seen: Vec<&str> = vec![];
        let mut pos = at;
        for p in self.placed.iter().rev() {
            if seen.len() >= need {
                break;
            }
            seen.extend(
                (p.at.end..pos.max(p.at.end))
                    .rev()
                    .map(|l| self.file.line(l).trim())
                    .filter(|t| !t.is_empty()),
            );
            let edit = &edits[p.edit];
            for new in edit.new.iter().rev() {
                let text = match new {
                    NewLine::Keep(j) => edit.old[*j].text.trim(),
                    NewLine::Add(l) => l.text.trim(),
                };
                if !text.is_empty() {
                    seen.push(text);
                }
            }
            pos = p.at.start;
        }
        if seen.len() < need {
            seen.extend(
                (0..pos)
                    .rev()
                    .map(|l| self.file.line(l).trim())
                    .filter(|t| !t.is_empty())
                    .take(need),
            );
        }
        seen.len() >= need
            && seen[..need]
                .iter()
                .rev()
                .copied()
                .eq(want.keys().iter().map(|k| k.as_ref()))
    }

    /// An edit skipped because its result is there already.
    fn done_already(&mut self, edit: &Edit, to: usize, why: &str) {
        self.warnings.push(
            Diagnostic::new(
                Code::AlreadyApplied,
                format!(
                    "{} skipped: {why}",
                    self.policy.advice.op_name(edit.place, edit.new.is_empty())
                ),
            )
            .at(edit.span, "already applied")
            .path(self.rel.as_str()),
        );
        self.cursor = self.cursor.max(to);
    }

    /// A block matched at a relaxed level: a warning that names it.
    fn slip(&mut self, edit: &Edit, part: Part, r: Region, level: Level) {
        let d = if level == Level::SoftStart {
            let lines = part.lines(edit);
            Diagnostic::new(
                Code::SoftStartMatch,
                format!("the {}'s first line matched only after a prefix (numbering, bullet or comment marker) in `{}`", part.noun(self.policy), self.rel),
            )
            .at(lines_span(lines), "matched with a prefix dropped")
            .path(self.rel.as_str())
            .target(self.target(r, "matched here".into()))
            .hint("copy the first line exactly as the file has it")
        } else {
            let at = format!("line {}", r.start + 1);
            super::explain::fuzz_warning(self.rel, edit, part.noun(self.policy), &at, level)
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
            Part::Block => &edit.old,
            Part::Anchor => loc.anchor.as_deref().unwrap_or(&[]),
            Part::RangeEnd => match &loc.range_end {
                Some(RangeEnd::Lines(l)) => l,
                _ => &[],
            },
        }
    }
}

/// The lines an edit adds, in order (ap's content).
pub fn new_lines<'a>(edit: &Edit<'a>) -> Vec<Line<'a>> {
    edit.new
        .iter()
        .map(|n| match n {
            NewLine::Keep(j) => edit.old[*j].clone(),
            NewLine::Add(l) => l.clone(),
        })
        .collect()
}

/// The span covering `lines` in the patch.
pub fn lines_span(lines: &[Line]) -> Span {
    match (lines.first(), lines.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => Span::default(),
    }
}

/// Brackets a line opens minus those it closes.
fn depth(line: &str) -> i64 {
    line.chars()
        .map(|c| match c {
            '(' | '[' | '{' => 1,
            ')' | ']' | '}' => -1,
            _ => 0,
        })
        .sum()
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    //! The locator features no udiff fixture reaches: anchors, range ends,
    //! the cursor rule and the normalised pass, on hand-built edits.
    use crate::apply::{plan, Change, MemTree};
    use crate::error::Code;
    use crate::ir::{
        Action, Edit, FileOp, Level, Line, Locator, NewLine, Patch, PathRef, Place, RangeEnd, Span,
        Uniqueness,
    };

    fn lines(texts: &[&'static str]) -> Vec<Line<'static>> {
        Line::unplaced(texts)
    }

    fn edit(
        old: &[&'static str],
        add: &[&'static str],
        locator: Locator<'static>,
    ) -> Edit<'static> {
        Edit {
            old: lines(old),
            new: lines(add).into_iter().map(NewLine::Add).collect(),
            old_no_eol: false,
            new_no_eol: false,
            own_eol: false,
            place: Place::Replace,
            locator,
            span: Span::default(),
        }
    }

    fn locator(uniqueness: Uniqueness) -> Locator<'static> {
        Locator::plain(uniqueness, &[Level::Exact])
    }

    /// Applies `edits` to `f.txt` holding `text`: the new text, or the codes.
    fn check(text: &str, edits: Vec<Edit<'static>>) -> Result<String, Vec<(Code, String)>> {
        let tree = MemTree::default().with_file("f.txt", text);
        let path = PathRef {
            text: "f.txt".into(),
            span: Span::default(),
        };
        let op = FileOp {
            path,
            action: Action::Modify {
                edits,
                move_to: None,
            },
            span: Span::default(),
            mode: None,
            old_mode: None,
            eol: None,
        };
        let patch = Patch {
            files: vec![op],
            ..Patch::default()
        };
        let plan = plan(&patch, &tree, None).map_err(|ds| {
            ds.into_iter()
                .map(|d| (d.code, d.message))
                .collect::<Vec<_>>()
        })?;
        Ok(match &plan.changes[0] {
            Change::Write { output, .. } => output.to_text(),
            other => format!("{other:?}"),
        })
    }

    #[test]
    fn anchor_scopes_the_block() {
        let text = "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n";
        let mut loc = locator(Uniqueness::UniqueInFile);
        assert_eq!(
            check(
                text,
                vec![edit(&["    x = 1;"], &["    x = 2;"], loc.clone())]
            )
            .unwrap_err()[0]
                .0,
            Code::AmbiguousContext
        );
        loc.anchor = Some(lines(&["fn b() {"]));
        assert_eq!(
            check(
                text,
                vec![edit(&["    x = 1;"], &["    x = 2;"], loc.clone())]
            )
            .unwrap(),
            text.replace("fn b() {\n    x = 1;", "fn b() {\n    x = 2;")
        );
        // A pure insertion goes right after the anchor.
        assert_eq!(
            check(text, vec![edit(&[], &["    y = 0;"], loc.clone())]).unwrap(),
            text.replace("fn b() {\n", "fn b() {\n    y = 0;\n")
        );
        loc.anchor = Some(lines(&["fn c() {"]));
        let errs = check(text, vec![edit(&["    x = 1;"], &[], loc.clone())]).unwrap_err();
        assert_eq!(errs[0].0, Code::ContextNotFound);
        assert!(errs[0].1.starts_with("anchor not found"), "{}", errs[0].1);
        loc.anchor = Some(lines(&["}"]));
        let errs = check(text, vec![edit(&["    x = 1;"], &[], loc)]).unwrap_err();
        assert_eq!(errs[0].0, Code::AmbiguousContext);
        assert!(
            errs[0].1.starts_with("anchor matches 2 places"),
            "{}",
            errs[0].1
        );
    }

    #[test]
    fn range_end_extends_the_region() {
        let mut loc = locator(Uniqueness::UniqueInFile);
        loc.range_end = Some(RangeEnd::Lines(lines(&["end"])));
        let text = "start\na\nb\nend\nafter\n";
        assert_eq!(
            check(text, vec![edit(&["start"], &["X"], loc.clone())]).unwrap(),
            "X\nafter\n"
        );
        let errs = check("start\na\n", vec![edit(&["start"], &["X"], loc)]).unwrap_err();
        assert!(
            errs[0].1.starts_with("range end not found"),
            "{}",
            errs[0].1
        );
    }

    #[test]
    fn cursor_rule_takes_the_first_match_after_the_previous_edit() {
        let loc = locator(Uniqueness::FirstAfterCursor);
        let edits = vec![
            edit(&["x"], &["one"], loc.clone()),
            edit(&["x"], &["two"], loc),
        ];
        assert_eq!(check("x\nx\nx\n", edits).unwrap(), "one\ntwo\nx\n");
    }

    #[test]
    fn normalised_pass_folds_typographic_punctuation_and_keeps_file_text() {
        let mut loc = locator(Uniqueness::UniqueInFile);
        loc.levels = &[Level::Exact, Level::Trimmed, Level::Normalized];
        let mut e = edit(&["say(\"hi\") - ok", "next"], &["added"], loc);
        e.new = vec![NewLine::Keep(0), NewLine::Add(lines(&["added"]).remove(0))];
        let text = "  say(\u{201C}hi\u{201D}) \u{2014} ok\nnext\n";
        assert_eq!(
            check(text, vec![e]).unwrap(),
            "  say(\u{201C}hi\u{201D}) \u{2014} ok\nadded\n"
        );
    }
}
