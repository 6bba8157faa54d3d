//! Edits that apply one after the other (RepoPatch): each is located in
//! the file as the edits before it left it (`evolve.rs`), and every edit
//! that cannot be placed is explained against that text.

use std::cell::OnceCell;

use super::evolve::{self, Evolving, NIL};
use super::explain::{brief_miss, fuzz_warning, CANDIDATES, EXPLAINED_MISSES};
use super::find::{self, Want};
use super::indent::{self, Indent};
use super::locate::{Locating, Miss, Part};
use super::output::Pieces;
use super::plan::{OpCx, Step};
use super::text::FileText;
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{Edit, Level, Uniqueness};
use crate::paths::RelPath;

/// Where a sequential edit goes: after node `after` (an insertion), over
/// the nodes `run`, with the level it needed.
struct Spot {
    after: u32,
    run: Vec<u32>,
    level: Level,
    /// Added lines follow the file's indentation (the match ignored it).
    indent: Option<Indent>,
}

impl<'s> OpCx<'_, 's> {
    /// Places each edit in the text as the ones before it left it.
    pub fn in_order<'p>(
        &mut self,
        rel: &RelPath,
        text: &str,
        edits: &'p [Edit<'_>],
    ) -> Step<Pieces<'p>>
    where
        's: 'p,
    {
        let file = FileText::with_breaks(text, self.policy.lone_cr_breaks);
        if file.len() >= evolve::MAX_LINES {
            return self.fail(
                Diagnostic::new(
                    Code::UnsupportedFile,
                    format!("`{rel}` has 2^31 lines or more"),
                )
                .path(rel.as_str()),
            );
        }
        super::find::expect(&file, edits);
        let mut ev = Evolving::new(file, self.source, edits);
        let mut cursor = NIL;
        let mut failed = 0;
        for (i, edit) in edits.iter().enumerate() {
            match self.spot(&ev, rel, edits, i, cursor) {
                Ok(Spot {
                    after,
                    run,
                    level,
                    indent,
                }) => {
                    if level.is_slip() {
                        let at = match run.first().and_then(|&id| ev.original_line(id)) {
                            Some(line) => {
                                format!("line {} (as numbered before the patch)", line + 1)
                            }
                            None => "lines an earlier operation wrote".to_string(),
                        };
                        let d = fuzz_warning(rel, edit, self.policy.advice.block, &at, level);
                        let d = match &indent {
                            Some(indent) => d.note(indent.describe()),
                            None => d,
                        };
                        self.warnings.push(d);
                    }
                    cursor = ev.splice(after, &run, edit, i, indent);
                }
                Err(matches) => {
                    failed += 1;
                    // Explaining writes the text out; past a few
                    // failures in one file, say only what failed.
                    let d = if failed <= EXPLAINED_MISSES {
                        self.explain_miss(&ev, rel, edits, i, cursor)
                    } else {
                        brief_miss(rel, edit, self.policy.advice.block, matches)
                    };
                    self.errors.push(d);
                }
            }
        }
        if failed > 0 {
            return Err(Reported);
        }
        Ok(ev.pieces())
    }

    /// Where edit `i` goes in the file as it is now: the node it goes
    /// after (for an insertion), the nodes it replaces, and the level it
    /// needed. A plain block, unique in the file, is found through the
    /// line index; anything else is located in the text written out. Err:
    /// how many places matched.
    fn spot(
        &self,
        ev: &Evolving,
        rel: &RelPath,
        edits: &[Edit],
        i: usize,
        cursor: u32,
    ) -> Result<Spot, usize> {
        let edit = &edits[i];
        let loc = &edit.locator;
        let plain = loc.hint.is_none()
            && loc.anchor().is_none()
            && loc.range_end().is_none()
            && !loc.at_eof
            && loc.uniqueness == Uniqueness::UniqueInFile
            && !edit.old.is_empty()
            && loc.levels.iter().all(|l| !l.skips_blank_lines());
        if plain {
            for level in loc.levels.iter() {
                match ev.find_all(edit.old, level, CANDIDATES).as_slice() {
                    [] => continue,
                    [start] => {
                        let run = ev.run(*start, edit.old.len());
                        let indent =
                            indent::relaxed_by(level, edit, |j| run.get(j).map(|&id| ev.line(id)));
                        return Ok(Spot {
                            after: NIL,
                            run,
                            level,
                            indent,
                        });
                    }
                    found => return Err(found.len()),
                }
            }
            return Err(0);
        }
        let (found, order) =
            self.in_current_text(ev, rel, cursor, |locating| locating.locate(edits, i, 0));
        let placed = match found {
            Ok(Some(p)) => p,
            Ok(None) => return Err(0),
            Err(Miss::Ambiguous { found, .. }) => return Err(found.len()),
            Err(_) => return Err(0),
        };
        let start = placed.at().start.min(order.len());
        let end = placed.at().end.min(order.len());
        let after = if start == 0 { NIL } else { order[start - 1] };
        Ok(Spot {
            after,
            run: order[start..end].to_vec(),
            level: Level::Exact,
            indent: placed.indent.map(|i| *i),
        })
    }

    /// Runs `f` with a locator over the text as the edits so far left it,
    /// its cursor after `cursor`; also returns the node of each line.
    fn in_current_text<T>(
        &self,
        ev: &Evolving,
        rel: &RelPath,
        cursor: u32,
        f: impl FnOnce(&mut Locating) -> T,
    ) -> (T, Vec<u32>) {
        let (text, order) = ev.current();
        let file = FileText::with_breaks(&text, self.policy.lone_cr_breaks);
        let target_text = OnceCell::new();
        let mut locating = Locating::new(&file, self.source, rel, self.policy, &target_text);
        locating.cursor = order
            .iter()
            .position(|&id| id == cursor)
            .map_or(0, |p| p + 1);
        (f(&mut locating), order)
    }

    /// Why edit `i` has no place: the applier's usual diagnosis against
    /// the text as the earlier edits left it, and, when the block was in
    /// the original file, the earlier edit that changed it.
    fn explain_miss(
        &self,
        ev: &Evolving,
        rel: &RelPath,
        edits: &[Edit],
        i: usize,
        cursor: u32,
    ) -> Diagnostic {
        let edit = &edits[i];
        let ((mut d, not_found), _) = self.in_current_text(ev, rel, cursor, |locating| {
            let miss = match locating.locate(edits, i, 0) {
                Err(miss) => miss,
                // The index and the text disagree: never guess, refuse.
                Ok(_) => Miss::NotFound {
                    part: Part::Block,
                    from: 0,
                },
            };
            let not_found = matches!(
                miss,
                Miss::NotFound {
                    part: Part::Block,
                    ..
                }
            );
            (locating.explain(edits, i, miss, 0), not_found)
        });
        if not_found && !edit.old.is_empty() {
            let want = Want::new(edit.old, Level::Exact);
            let original = ev.file();
            let earlier = find::find(original, &want, 0, original.len(), usize::MAX)
                .into_iter()
                .flat_map(|r| r.start..r.end)
                .find_map(|line| ev.removed_by(line));
            if let Some(k) = earlier {
                let block = self.policy.advice.block;
                d = d
                    .secondary(edits[k].span, "an earlier operation changed these lines first")
                    .note(format!(
                        "the {block} is in the file before the patch, but operations apply in order, \
                         and the one above changed it"
                    ))
                    .hint(format!(
                        "write each operation against the file as the operations before it leave it: \
                         merge the two operations, or give this one the {block} as it reads after the earlier one"
                    ));
            }
        }
        d
    }
}
