//! Where an edit's new block goes around the region its locator found
//! ([`Place`]), and, under the policy's `skip_applied` (ap §3.1), whether
//! its result is there already: the content already in place, following
//! or preceding, a deleted block gone and not by an earlier edit. The
//! nesting guard (ap 3.2 §3.6) is decided here too.

use super::extent::{depth, indent};
use super::find::{self, Want};
use super::indent::{opens, Indent};
use super::locate::{new_block, new_lines, Locating, Miss, Part, Placed};
use super::text::Region;
use crate::error::{Code, Diagnostic};
use crate::ir::{Edit, Level, Line, NestingGuard, Place};
use crate::trim::{is_blank, trim};

impl Locating<'_, '_> {
    /// Decides where the new block goes around `region`, or that it is
    /// there already; moves the cursor.
    pub(crate) fn place(
        &mut self,
        edits: &[Edit],
        i: usize,
        region: Region,
        level: Level,
    ) -> Result<Option<Placed>, Miss> {
        let Some(mut placed) = self.placement(edits, i, region, level)? else {
            return Ok(None);
        };
        if self.policy.reindent_dropped && !placed.blank_first {
            placed.indent = self.dropped_indent(&edits[i], region)?.map(Box::new);
        }
        Ok(Some(placed))
    }

    /// ap's dropped indent: content whose least indented line is at column
    /// 0, none of whose lines opens a block (ends with `:` or an opening
    /// bracket), for a target the file indents (the region's least indented
    /// line; for an insertion after it, its last). Content with a line
    /// written exactly as an indented line of the snippet keeps the file's
    /// indentation, and is written as it is; so is content whose lines are
    /// all at the file's indentation for their place (`indent.rs`).
    fn dropped_indent(&mut self, edit: &Edit, region: Region) -> Result<Option<Indent>, Miss> {
        let Some(indent) = self.column_zero(edit, region) else {
            return Ok(None);
        };
        let file_ws = super::indent::file_indents(self.file, region, edit);
        let outside = super::indent::Outside::of(self.file, region);
        let indent = match indent.clone().decide(edit, &file_ws, outside) {
            Ok(Some(decided)) => decided,
            Ok(None) => return Ok(None),
            // Both readings fit the file: content written flat for an
            // indented target is a dropped indent, by ap's rule.
            Err(_) => indent,
        };
        // Which line was at column 0: the first, or a later one that is
        // the least indented (the first may be a continuation).
        let flat = match new_lines(edit).iter().find(|l| !is_blank(l.text)) {
            Some(l) if super::extent::indent(l.text) == 0 => "the content starts at column 0",
            _ => "the content's least indented line is at column 0",
        };
        self.warnings.push(
            Diagnostic::new(
                Code::ToleratedFormatSlip,
                format!(
                    "{flat} where `{}` indents its target with {}; it was indented the same",
                    self.rel,
                    indent.file_words()
                ),
            )
            .at(edit.span, "content with its indentation dropped")
            .path(self.rel.as_str())
            .hint("write `content` with the indentation the file has at that place"),
        );
        Ok(Some(indent))
    }

    /// The mapping of a dropped indent, if the content has one.
    fn column_zero(&self, edit: &Edit, region: Region) -> Option<Indent> {
        let content = new_lines(edit);
        // The content's least indented line stands for it: a block whose
        // first line is a continuation starts deeper.
        let first = content
            .iter()
            .filter(|l| !is_blank(l.text))
            .min_by_key(|l| indent(l.text))?;
        // A line opens a block when the lines after it belong inside it
        // (`opens`: it ends with `:` or an opening bracket, before any
        // trailing comment; a bracket opened and left mid-line, as prose
        // in a docstring does, opens none).
        //
        // Content that replaces lines all inside a block stays inside it,
        // whatever it opens; an insertion that opens a block may be meant
        // to start one of its own (the nesting guard's case).
        let inserted = edit.place != Place::Replace || edit.old.is_empty();
        if indent(first.text) != 0 || (inserted && content.iter().any(|l| opens(l.text))) {
            return None;
        }
        // Content at column 0 is content written flat. A line of it written
        // exactly as an indented line of the snippet shows the content keeps
        // the file's indentation: its lines at column 0 are meant there.
        let kept_indented =
            |l: &crate::ir::Line| indent(l.text) != 0 && edit.old.iter().any(|o| o.text == l.text);
        if content.iter().any(kept_indented) {
            return None;
        }
        let mut lines = (region.start..region.end).filter(|&l| !self.file.is_blank(l));
        let target = if edit.place == Place::After {
            lines.next_back()
        } else {
            // The region's least indented line, as for the content.
            lines.min_by_key(|&l| indent(self.file.line(l)))
        }?;
        let line = self.file.line(target);
        let ws = super::indent::leading(line);
        if ws.is_empty() || (edit.place == Place::After && opens(line)) {
            return None;
        }
        Some(Indent::from_column_zero(ws))
    }

    /// Where the new block goes, or that it is there already.
    fn placement(
        &mut self,
        edits: &[Edit],
        i: usize,
        region: Region,
        level: Level,
    ) -> Result<Option<Placed>, Miss> {
        let edit = &edits[i];
        match edit.place {
            Place::Replace => {
                if self.policy.skip_applied && !edit.new.is_empty() && self.reads_as(region, edit) {
                    self.done_already(edit, region.end, "the target already reads as the content");
                    return Ok(None);
                }
                if let Some(at) = self.inserted_already(edit, region, level) {
                    return self.present(edit, at, at.end, "the lines it adds are there already");
                }
                self.cursor = region.end;
                Ok(Some(Placed::new(region, i, false)))
            }
            _ if edit.new.is_empty() => Ok(None),
            Place::After => self.place_after(edits, i, region),
            Place::Before => self.place_before(edits, i, region),
        }
    }

    /// The content of `edit` found already where it would go (`at`): with
    /// ap's §3.1 idempotency the edit is skipped (the cursor past `end`),
    /// else it is refused as possibly applied already.
    fn present(
        &mut self,
        edit: &Edit,
        at: Region,
        end: usize,
        why: &str,
    ) -> Result<Option<Placed>, Miss> {
        if !self.policy.skip_applied {
            return Err(Miss::Present { at, old_at: None });
        }
        self.done_already(edit, end, why);
        Ok(None)
    }

    /// The content of an insertion after `region`, unless it follows it
    /// already; ap's nesting guard may move it past the block the region
    /// opens.
    fn place_after(
        &mut self,
        edits: &[Edit],
        i: usize,
        region: Region,
    ) -> Result<Option<Placed>, Miss> {
        let edit = &edits[i];
        let content = new_lines(edit);
        let moved = self.nested(region, &content);
        // After the end of the file (`$`), the content is there when the
        // file ends with it.
        if region.is_empty() && self.precedes(edits, region.start, &content) {
            let at = Region::new(region.start.saturating_sub(content.len()), region.start);
            return self.present(
                edit,
                at,
                region.end,
                "the file already ends with the content",
            );
        }
        for end in [Some(region.end), moved].into_iter().flatten() {
            if let Some(r) = self.follows(end, &content) {
                return self.present(edit, r, r.end, "the content already follows the snippet");
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
        Ok(Some(Placed::new(at, i, moved.is_some())))
    }

    /// The content of an insertion before `region`, unless it precedes it
    /// already.
    fn place_before(
        &mut self,
        edits: &[Edit],
        i: usize,
        region: Region,
    ) -> Result<Option<Placed>, Miss> {
        let edit = &edits[i];
        let content = new_lines(edit);
        // Before the start of the file (`^`), the content is there when the
        // file starts with it.
        if region.is_empty() {
            if let Some(r) = self.follows(region.start, &content) {
                return self.present(edit, r, r.end, "the file already starts with the content");
            }
        }
        if self.precedes(edits, region.start, &content) {
            let at = Region::new(region.start.saturating_sub(content.len()), region.start);
            return self.present(
                edit,
                at,
                region.start,
                "the content already precedes the snippet",
            );
        }
        self.cursor = self.cursor.max(region.start);
        Ok(Some(Placed::new(
            Region::new(region.start, region.start),
            i,
            false,
        )))
    }

    /// An edit that only adds lines around its old block (or, with none,
    /// at a point), whose added lines are already there, in place: the
    /// lines the new block covers. Applying it would add them twice. The
    /// lines compare as the old block matched (ignoring indentation where
    /// its match did, since the added lines then follow the file's).
    fn inserted_already(&self, edit: &Edit, region: Region, level: Level) -> Option<Region> {
        let (before, _) = insertion(edit, level)?;
        if region.len() != edit.old.len() {
            return None;
        }
        let new = new_lines(edit);
        let level = if level.ignores_indentation() {
            Level::Trimmed
        } else {
            Level::TrailingWhitespace
        };
        let want = Want::new(&new, level);
        let at =
            |start: usize| find::match_at(self.file, start, &want).filter(|r| r.len() == new.len());
        match (edit.old.is_empty(), region.start.checked_sub(before)) {
            // With no old block, the lines may stand just before the point
            // (an append at the end) or just after it (after an anchor).
            (true, _) => region
                .start
                .checked_sub(new.len())
                .and_then(at)
                .or_else(|| at(region.start)),
            (false, Some(start)) => at(start),
            (false, None) => None,
        }
    }

    /// The nesting guard (ap 3.2 §3.6): an insertion after a line that
    /// opens a block, of content that is itself a block-opening
    /// declaration at column 0, belongs after that block: its end.
    pub(crate) fn nested(&self, region: Region, content: &[Line]) -> Option<usize> {
        self.policy.nesting_guard?;
        if region.is_empty() {
            return None;
        }
        let line = self.file.line(region.end - 1);
        // The guard's own test (§3.6): brackets left open anywhere on the
        // line, or a trailing `:`.
        let starts_block = |l: &str| depth(l) > 0 || l.trim_end().ends_with(':');
        let first = content.iter().find(|l| !is_blank(l.text))?;
        let guarded = starts_block(line) && starts_block(first.text) && indent(first.text) == 0;
        guarded.then(|| self.block_end(region.end - 1)).flatten()
    }

    /// A block that is not there, under `skip_applied`: a deletion whose
    /// lines no earlier edit removed is done already, and so is a
    /// replacement whose content is there; anything else is a miss. A
    /// deletion whose lines are still there in the main, in order (one of
    /// them changed since the patch was written), is stale, not done.
    pub(crate) fn absent(&mut self, edit: &Edit, from: usize) -> Result<Option<Placed>, Miss> {
        let content = new_lines(edit);
        if edit.place == Place::Replace
            && content.is_empty()
            && self.consumed_by(edit.old).is_none()
            && !self.mostly_there(edit.old, from)
        {
            self.done_already(edit, self.cursor, "the snippet is not in the file");
            return Ok(None);
        }
        if edit.place == Place::Replace && !content.is_empty() {
            let want = Want::new(&content, Level::BlankLinesIgnored);
            // A replacement whose content lines all occur in its snippet
            // (it deletes some of them, or reorders them) reads the same
            // before and after: its content's presence proves nothing, and
            // the snippet alone decides (a stale patch is refused, never
            // "done").
            let snippet = Want::new(edit.old, Level::BlankLinesIgnored);
            let proves = !want.keys().iter().all(|k| snippet.keys().contains(k));
            if proves {
                if let Some(r) = find::find(self.file, &want, from, self.file.len(), 1).first() {
                    self.done_already(edit, r.end, "the snippet is gone and the content is there");
                    return Ok(None);
                }
            }
        }
        Err(Miss::NotFound {
            part: Part::Block,
            from,
        })
    }

    /// Whether more than half of `block`'s lines (two at least) still
    /// stand in the file at their offsets, at or after `from`.
    fn mostly_there(&self, block: &[Line], from: usize) -> bool {
        let lines = block.iter().filter(|l| !is_blank(l.text)).count();
        match find::nearest(self.file, block, true, from, None) {
            Some((_, agree)) => agree >= 2 && agree * 2 > lines,
            None => false,
        }
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
                    .find(|p| !p.at().is_empty() && r.start < p.at().end && p.at().start < r.end)
                    .map(|p| p.edit())
            })
    }

    /// Whether the non-blank lines of `region` are those of `edit`'s new
    /// block (surrounding whitespace aside), and there is one at least.
    /// Compared a line at a time, nothing collected: a replacement not yet
    /// made usually differs at its first line.
    fn reads_as(&self, region: Region, edit: &Edit) -> bool {
        let have = filled((region.start..region.end).map(|l| self.file.line(l)));
        let mut want = filled(new_block(edit).map(|l| l.text)).peekable();
        want.peek().is_some() && have.eq(want)
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
            // Only the nearest `need` lines are compared: the file's lines
            // between two edits are often many more.
            let kept = (p.at().end..pos.max(p.at().end)).map(|l| self.file.line(l));
            seen.extend(filled(kept.rev()).take(need - seen.len()));
            let written = new_block(&edits[p.edit()]).map(|l| l.text).rev();
            seen.extend(filled(written).take(need - seen.len()));
            pos = p.at().start;
        }
        if seen.len() < need {
            let before = (0..pos).rev().map(|l| self.file.line(l));
            seen.extend(filled(before).take(need - seen.len()));
        }
        seen.len() >= need
            && seen[..need]
                .iter()
                .rev()
                .copied()
                .eq(want.keys().iter().map(|k| k.as_ref()))
    }

    /// An edit skipped because its result is there already.
    pub(crate) fn done_already(&mut self, edit: &Edit, to: usize, why: &str) {
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
}

/// How many lines an edit adds before and after its old block, when it
/// only adds lines around it: its new block is the old block (as `level`
/// compares lines) with lines before and after; `None` for an edit that
/// removes or changes a line, or adds none.
pub fn insertion(edit: &Edit, level: Level) -> Option<(usize, usize)> {
    let new = new_lines(edit);
    let n = edit.old.len();
    let key = |s: &str| match level.ignores_indentation() {
        true => trim(s).to_string(),
        false => s.trim_end().to_string(),
    };
    let aligned = |k: usize| (0..n).all(|j| key(new[k + j].text) == key(edit.old[j].text));
    // Where the format kept old lines, they say where the old block is;
    // else the first place its text is.
    let kept = edit.new_lines().enumerate().find_map(|(p, n)| match n {
        crate::ir::New::Keep(j) => Some(p.checked_sub(j)),
        crate::ir::New::Add(_) => None,
    });
    let k = match kept {
        Some(k) => k.filter(|&k| k + n <= new.len() && aligned(k))?,
        None => (0..=new.len().checked_sub(n)?).find(|&k| aligned(k))?,
    };
    let (before, after) = (k, new.len() - k - n);
    (before + after > 0).then_some((before, after))
}

/// The lines that are not blank, trimmed, in the order given.
fn filled<'a>(lines: impl Iterator<Item = &'a str>) -> impl Iterator<Item = &'a str> {
    lines.map(trim).filter(|t| !t.is_empty())
}
