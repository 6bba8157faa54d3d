//! The anchor of an edit: found under its uniqueness rule (or, with the
//! policy's `anchor_by_block`, the match whose stretch holds the block),
//! and where the block's search starts from it.

use super::find::{self, Want};
use super::locate::{new_lines, Locating, Miss, Part, Placed};
use super::text::Region;
use crate::error::{Code, Diagnostic};
use crate::ir::{Edit, Hint, Level, Line};

impl Locating<'_, '_> {
    /// Finds the anchor; returns where the block's search starts: after
    /// the anchor, or at its start when the two share lines.
    pub(super) fn anchor(
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
            self.slip(edit, Part::Anchor, hit, level, None);
        }
        Ok(self.after_anchor(edit, anchor, hit, level))
    }

    /// A block found away from the line its hint names: refused where the
    /// new block is already at that line (the patch was applied, and the
    /// old block occurs elsewhere too), or where the hunk has no context
    /// lines, so that only its line number placed it.
    pub(super) fn at_its_line(
        &self,
        edit: &Edit,
        region: Region,
        level: Level,
        drift: isize,
    ) -> Result<(), Miss> {
        let Some(Hint::Near(h)) = edit.locator.hint else {
            return Ok(());
        };
        let expected = (h as usize).saturating_add_signed(drift);
        if region.start == expected || edit.old.is_empty() {
            return Ok(());
        }
        let new = new_lines(edit);
        if !new.is_empty() {
            if let Some(at) = find::match_at(self.file, expected, &Want::new(&new, level)) {
                return Err(Miss::Present {
                    at,
                    old_at: Some(region),
                });
            }
        }
        let no_context = edit
            .new
            .iter()
            .all(|n| matches!(n, crate::ir::NewLine::Add(_)));
        if no_context {
            return Err(Miss::AwayFromItsLine {
                at: region,
                line: expected,
            });
        }
        Ok(())
    }

    /// A block found after its anchor, further on than the edit's new
    /// block, which already stands between the two: the edit was applied
    /// (the old block occurs again further on). Skipped as done under the
    /// policy's `skip_applied`, else refused; never applied further on.
    pub(super) fn between_anchor_and_block(
        &mut self,
        edit: &Edit,
        after: usize,
        region: Region,
        level: Level,
    ) -> Result<Option<Option<Placed>>, Miss> {
        let new = new_lines(edit);
        if new.is_empty() || region.end <= after {
            return Ok(None);
        }
        let level = if level.ignores_indentation() {
            Level::Trimmed
        } else {
            Level::TrailingWhitespace
        };
        let want = Want::new(&new, level);
        // Between the anchor and the end of the block found: the content
        // may end with the block itself, where it writes the block again.
        let hit = find::find(self.file, &want, after, region.end, usize::MAX)
            .into_iter()
            .find(|r| r.end <= region.end && *r != region);
        let Some(at) = hit else {
            return Ok(None);
        };
        if !self.policy.skip_applied {
            return Err(Miss::Present {
                at,
                old_at: Some(region),
            });
        }
        self.done_already(
            edit,
            at.end,
            "its content already follows the anchor, and its snippet is further on",
        );
        Ok(Some(None))
    }

    /// Whether an anchor that is not in the file may be ignored: the
    /// format allows it, and the block matches exactly once in the whole
    /// file, at or after `from`. Warns when it is.
    pub(super) fn without_anchor(&mut self, edit: &Edit, anchor: &[Line], from: usize) -> bool {
        let stacked = edit.locator.reach.as_ref().is_some_and(|r| r.stacked);
        if !self.policy.unfound_anchor_ignored || edit.old.is_empty() || stacked {
            return false;
        }
        let loc = &edit.locator;
        let Ok((hit, _)) = self.search(edit.old, loc.levels, 0, false, loc.at_eof, Part::Block)
        else {
            return false;
        };
        if hit.start < from {
            return false;
        }
        let shown: Vec<&str> = anchor.iter().map(|l| l.text).collect();
        let d = Diagnostic::new(
            Code::AnchorIgnored,
            format!(
                "`{}` is not in `{}`; the {} occurs once in the file, and is placed there",
                shown.join(" "),
                self.rel,
                self.policy.advice.block
            ),
        )
        .at(self.lines_span(anchor), "not found in the file")
        .path(self.rel.as_str())
        .target(self.target(hit, "the only match".into()))
        .hint("copy the header line exactly from the file, or leave it out when the context is unique");
        self.warnings.push(d);
        true
    }

    /// ap §3.6: of several anchors, the one whose stretch (up to the next
    /// one) holds the block.
    pub(super) fn anchor_holding(
        &mut self,
        edit: &Edit,
        anchor: &[Line],
        part: Part,
        hits: Vec<Region>,
        level: Level,
    ) -> Result<Region, Miss> {
        // Hit `k`'s stretch runs from where the block is sought after it
        // (`after_anchor`: its end, or its start when anchor and block
        // share lines) to the next hit's start. The block's matches are
        // found once and each is given to the last hit at or before it,
        // the only one whose stretch can hold it: searching each stretch
        // took time quadratic in a common anchor's hits.
        let n = self.file.len();
        let shared = self.shares_lines(edit, anchor, level);
        let sought = |h: Region| if shared { h.start } else { h.end };
        let mut holds = vec![false; hits.len()];
        if !edit.old.is_empty() {
            for l in edit.locator.levels.iter() {
                let want = Want::new(edit.old, l);
                for r in find::find(self.file, &want, sought(hits[0]), n, usize::MAX) {
                    let Some(k) = hits.partition_point(|h| h.start <= r.start).checked_sub(1)
                    else {
                        continue;
                    };
                    let end = hits.get(k + 1).map_or(n, |h| h.start);
                    if sought(hits[k]) <= r.start && r.end <= end {
                        holds[k] = true;
                    }
                }
            }
        }
        let holding: Vec<Region> = (hits.iter().zip(&holds))
            .filter(|&(_, &held)| held)
            .map(|(&h, _)| h)
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
        .at(self.lines_span(anchor), "ambiguous anchor")
        .path(self.rel.as_str())
        .target(self.target(one, "this occurrence".into()));
        self.warnings.push(d);
        Ok(one)
    }

    /// Where the block is sought after the anchor at `hit`: after it, or
    /// from its start when the two share lines.
    pub(super) fn after_anchor(
        &self,
        edit: &Edit,
        anchor: &[Line],
        hit: Region,
        level: Level,
    ) -> usize {
        if self.shares_lines(edit, anchor, level) {
            hit.start
        } else {
            hit.end
        }
    }

    /// Whether the anchor and the block share lines at `level`: the
    /// anchor's end is the block's start, or one holds the other.
    pub(super) fn shares_lines(&self, edit: &Edit, anchor: &[Line], level: Level) -> bool {
        let a = Want::new(anchor, level);
        let b = Want::new(edit.old, level);
        let (a, b) = (a.keys(), b.keys());
        !b.is_empty()
            && ((1..=a.len().min(b.len())).any(|k| a[a.len() - k..] == b[..k])
                || a.windows(b.len()).any(|w| w == b)
                || b.windows(a.len()).any(|w| w == a))
    }
}
