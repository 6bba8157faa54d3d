//! Edits that apply one after the other (RepoPatch): each is located in
//! the file as the edits before it left it (`evolve.rs`), and every edit
//! that cannot be placed is explained against that text.

use super::evolve::{self, Evolving, NIL};
use super::plan::{OpCx, Step};
use crate::apply::matching::explain::{brief_miss, fuzz_warning, CANDIDATES, EXPLAINED_MISSES};
use crate::apply::matching::find::{self, Want};
use crate::apply::matching::indent::{self, Indent};
use crate::apply::matching::locate::{Locating, Miss, Part};
use crate::apply::matching::text::FileText;
use crate::apply::output::Pieces;
use crate::error::{Code, Diagnostic, Reported, TargetText};
use crate::ir::{Edit, Level, Line, Uniqueness};
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
        file: FileText,
        edits: &'p [Edit<'_>],
    ) -> Step<Pieces<'p>>
    where
        's: 'p,
    {
        let text = file.text;
        if file.len() >= evolve::MAX_LINES {
            return self.fail(
                Diagnostic::new(
                    Code::UnsupportedFile,
                    format!("`{rel}` has 2^31 lines or more"),
                )
                .path(rel.as_str()),
            );
        }
        let mut ev = Evolving::new(file, self.source, edits);
        let mut cursor = NIL;
        let mut failed = 0;
        // Whether an operation changes lines an earlier one wrote.
        let mut chained = false;
        for (i, edit) in edits.iter().enumerate() {
            match self.spot(&ev, rel, edits, i, cursor) {
                Ok(Spot {
                    after,
                    run,
                    level,
                    indent,
                }) => {
                    chained |= run.iter().any(|&id| ev.original_line(id).is_none());
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
        // A later operation changed what an earlier one wrote: the lines
        // each adds are not the patch's result, so only the whole patch,
        // read backwards, tells whether its result is here already.
        if chained && self.undone_by_reverse(rel, text, edits) {
            return self.fail(
                Diagnostic::new(
                    Code::AmbiguousContext,
                    format!("the result of these operations is already in `{rel}`: the patch may have been applied already"),
                )
                .path(rel.as_str())
                .note("read backwards, every operation finds its result in the file; applied again, they would change it a second time")
                .hint("if the patch was applied before, there is nothing to do; else give each operation the text as it reads now"),
            );
        }
        Ok(ev.pieces())
    }

    /// Whether every operation, taken back in reverse order (its new block
    /// replaced by its old one), finds its place in `text`.
    fn undone_by_reverse(&self, rel: &RelPath, text: &str, edits: &[Edit]) -> bool {
        let olds: Vec<Vec<Line>> = edits
            .iter()
            .map(crate::apply::matching::locate::new_lines)
            .collect();
        let news: Vec<Vec<crate::ir::NewLine>> = edits
            .iter()
            .map(|e| e.old.iter().map(|&l| crate::ir::NewLine::Add(l)).collect())
            .collect();
        let reversed: Vec<Edit> = edits
            .iter()
            .zip(olds.iter().zip(&news))
            .rev()
            .map(|(e, (old, new))| Edit {
                old,
                new,
                old_no_eol: e.new_no_eol,
                new_no_eol: e.old_no_eol,
                ..e.clone()
            })
            .collect();
        if reversed.iter().any(|e| e.old.is_empty()) {
            return false;
        }
        let file = FileText::with_breaks(text, self.policy.lone_cr_breaks);
        let mut ev = Evolving::new(file, self.source, &reversed);
        let mut cursor = NIL;
        for i in 0..reversed.len() {
            match self.spot(&ev, rel, &reversed, i, cursor) {
                Ok(spot) => cursor = ev.splice(spot.after, &spot.run, &reversed[i], i, spot.indent),
                Err(_) => return false,
            }
        }
        true
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
                        // Lines it adds already there: explained by the
                        // full search, which refuses it.
                        if inserted_already(ev, &run, edit, level) {
                            return Err(1);
                        }
                        // Undecided: explained by the full search.
                        let indent = indent::relaxed_by(level, edit, outside(ev, &run), |j| {
                            run.get(j).map(|&id| ev.line(id))
                        })
                        .map_err(|_| 1usize)?;
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
        let target_text = TargetText::default();
        let found = {
            let file = FileText::with_breaks(&text, self.policy.lone_cr_breaks);
            let mut locating =
                Locating::new(&file, &[], self.source, rel, self.policy, &target_text);
            locating.cursor = order
                .iter()
                .position(|&id| id == cursor)
                .map_or(0, |p| p + 1);
            f(&mut locating)
        };
        // The text was made for this search: its labels take it.
        target_text.hand_over(text);
        (found, order)
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

/// Whether an edit that only adds lines around its old block, found at
/// `run`, finds them there already (the check `place.rs` makes in the text
/// written out, made on the evolving file).
fn inserted_already(ev: &Evolving, run: &[u32], edit: &Edit, level: Level) -> bool {
    let Some((before, after)) = crate::apply::matching::place::insertion(edit, level) else {
        return false;
    };
    let (Some(&first), Some(&last)) = (run.first(), run.last()) else {
        return false;
    };
    let new = crate::apply::matching::locate::new_lines(edit);
    let key = |s: &'_ str| -> String {
        match level.ignores_indentation() {
            true => s.trim().to_string(),
            false => trim_end(s).to_string(),
        }
    };
    let same = |id: u32, line: &Line| id != NIL && key(ev.line(id)) == key(line.text);
    let mut at = first;
    let preceded = new[..before].iter().rev().all(|l| {
        at = ev.prev(at);
        same(at, l)
    });
    let mut at = last;
    let followed = new[new.len() - after..].iter().all(|l| {
        at = ev.next(at);
        same(at, l)
    });
    preceded && followed
}

fn trim_end(s: &str) -> &str {
    s.trim_end_matches([' ', '\t', '\r'])
}

/// The lines just outside a run, as `indent::Outside` wants them.
fn outside<'e>(ev: &'e Evolving, run: &[u32]) -> indent::Outside<'e> {
    let line = |mut id: u32, forward: bool| loop {
        id = if forward { ev.next(id) } else { ev.prev(id) };
        if id == NIL {
            return None;
        }
        let text = ev.line(id);
        if !crate::trim::is_blank(text) {
            return Some(text);
        }
    };
    indent::Outside {
        before: run.first().and_then(|&id| line(id, false)),
        after: run.last().and_then(|&id| line(id, true)),
    }
}
