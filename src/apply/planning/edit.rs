//! The edits of one file, turned into its new text: located in the
//! original from a cursor (udiff, codex, ap; `locate.rs`) or one after the
//! other in the text as the earlier ones left it (RepoPatch;
//! `sequential.rs`), then assembled (`assemble.rs`).

use super::assemble::{assemble, dominant, reshapes, Shape};
use super::op::render_new;
use super::plan::{OpCx, Step};
use crate::apply::matching::beside;
use crate::apply::matching::find::{split_expecting, Keys, Made};
use crate::apply::matching::locate::Locating;
use crate::apply::matching::text::FileText;
use crate::apply::output::{Builder, Output, Pieces};
use crate::error::{Code, Diagnostic, Reported, TargetText};
use crate::ir::{Edit, FileOp, NewText};
use crate::lossless::Decoded;
use crate::paths::RelPath;

/// The text a file's edits apply to.
pub enum Source<'p> {
    /// The file's own text, as read, and the edits' keys where they were
    /// made while it was read (`Made::keys`).
    File(Decoded, Option<Keys>),
    /// A new file's content; there is no file.
    New(&'p NewText<'p>),
    /// The file's text as read (kept for the rollback), replaced by this
    /// content.
    Over(Decoded, &'p NewText<'p>),
}

impl<'s> OpCx<'_, 's> {
    /// Applies `edits` to `source`: the new text, or every edit that could
    /// not be placed, reported.
    pub fn edit_text<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: &RelPath,
        source: Source<'p>,
        edits: &'p [Edit<'_>],
    ) -> Step<Output<'p>>
    where
        's: 'p,
    {
        let shape = Shape {
            eol: op.eol,
            finish: self.policy.finish,
        };
        // Whether the original was found plain when read, which spares
        // its writing a search for escapes; its lines, where the read
        // split it beside the parse, and its edits' keys, where they were
        // made while it was read.
        let (original, plain, base, made) = match source {
            Source::File(read, keys) => {
                let made = Made {
                    lines: read.lines,
                    keys,
                };
                (read.text, read.plain, None, made)
            }
            Source::New(content) if edits.is_empty() => return Ok(render_new(content, op)),
            Source::New(content) => {
                let base = join(content, op, "", false);
                (String::new(), true, Some(base), Made::default())
            }
            Source::Over(read, content) => {
                let base = join(content, op, &read.text, self.policy.lone_cr_breaks);
                (read.text, read.plain, Some(base), Made::default())
            }
        };
        let text = base.as_deref().unwrap_or(&original);
        if text.len() >= u32::MAX as usize {
            return self.fail(
                Diagnostic::new(
                    Code::UnsupportedFile,
                    format!("the new content of `{rel}` is 4 GiB or larger"),
                )
                .path(rel.as_str()),
            );
        }
        if super::textual::as_text(edits) {
            let new = self.edit_as_text(rel, text, edits)?;
            let mut whole = Builder::new(&new);
            whole.push_original(0, new.len());
            let pieces = whole.finish();
            return Ok(Output::over(original, new, pieces).known_plain(plain));
        }
        // The file split into lines, and told its edits' keys: their count
        // is a pass over the file shared with the second core.
        let file = self.split(text, made, edits);
        // A large original's brackets are counted on another core while
        // the edits are placed: the count is needed only at the end, and
        // only when the edits change it, but it is a pass over the whole
        // file that took a twentieth of a large ap apply, and the thread
        // has the placing's time to start in. Started after the keys'
        // count, whose share of the second core it would take (paired
        // runs of large ap applies: 0.97 and 0.99 of the time).
        let counting =
            self.policy.finish.bracket_check && base.is_none() && text.len() >= beside::LARGE_FILE;
        let target = TargetText::default();
        let place = || match self.policy.sequential {
            true => self.in_order(rel, file, edits),
            false => self.in_original(rel, file, edits, shape, &target),
        };
        let (pieces, before) = match counting {
            true => {
                let (pieces, before) = beside::overlap(|| brackets(text), place);
                (pieces, Some(before))
            }
            false => (place(), None),
        };
        // The labels the search made point into `text`: a failure hands
        // them the text itself, a success (warnings) a copy.
        let pieces = match pieces {
            Ok(pieces) => {
                target.copy(text);
                pieces
            }
            Err(e) => {
                target.hand_over(base.unwrap_or(original));
                return Err(e);
            }
        };
        let output = match base {
            Some(base) => Output::over(original, base, pieces),
            None => Output::new(original, pieces),
        }
        .known_plain(plain);
        if self.policy.finish.bracket_check && !output.is_unchanged() && output.base_is_original() {
            self.brackets(rel, &output, before);
        }
        Ok(output)
    }

    /// `text` split into lines, told the keys of `edits` (see
    /// [`split_expecting`]).
    pub fn split<'t>(&self, text: &'t str, made: Made, edits: &[Edit]) -> FileText<'t> {
        split_expecting(
            text,
            self.policy.lone_cr_breaks,
            self.policy.finish.strip_trailing_whitespace,
            made,
            edits,
        )
    }

    /// Edits located in `file` from a cursor, all before any is applied.
    fn in_original<'p>(
        &mut self,
        rel: &RelPath,
        mut file: FileText,
        edits: &'p [Edit<'_>],
        shape: Shape,
        target: &TargetText,
    ) -> Step<Pieces<'p>>
    where
        's: 'p,
    {
        let text = file.text;
        let mut loc = Locating::new(&file, edits, self.source, rel, self.policy, target);
        loc.locate_all(edits);
        self.warnings.append(&mut loc.warnings);
        if !loc.errors.is_empty() {
            self.errors.append(&mut loc.errors);
            return Err(Reported);
        }
        let placed = loc.placed;
        if placed.is_empty() && !reshapes(&file, shape) {
            let mut b = Builder::new(text);
            b.push_original(0, text.len());
            return Ok(b.finish());
        }
        // The search is over: its indexes go before the pieces are built,
        // so the two never peak together.
        file.forget_indexes();
        Ok(assemble(&file, self.source, edits, &placed, shape))
    }

    /// A file whose brackets balanced before the patch and not after it.
    /// `before` is the original's count when it was made beside the
    /// placing: a file that did not balance is not warned about, and the
    /// edits are not walked. Otherwise the edits' change to the counts
    /// (what they added minus what they removed) comes first: when it is
    /// nothing, the file balances after exactly when it did before, and
    /// the original is not scanned whole.
    fn brackets(&mut self, rel: &RelPath, output: &Output, before: Option<[i64; 3]>) {
        if before.is_some_and(|count| count != [0; 3]) {
            return;
        }
        let mut delta = [0i64; 3];
        output.changes(|text, added| {
            let (c, sign) = (brackets(text), if added { 1 } else { -1 });
            (0..3).for_each(|k| delta[k] += sign * c[k]);
        });
        if delta != [0; 3] && before.unwrap_or_else(|| brackets(&output.original)) == [0; 3] {
            self.warnings.push(
                Diagnostic::new(
                    Code::UnbalancedBrackets,
                    format!("`{rel}` had balanced brackets before the patch and does not after it"),
                )
                .path(rel.as_str())
                .hint("check that each modification replaced whole blocks: a range may have stopped one line short of a closing bracket"),
            );
        }
    }
}

/// A new file's content as text, each line ending with the op's line end,
/// or else the one new lines of `like` would get.
fn join(content: &NewText, op: &FileOp, like: &str, lone_cr: bool) -> String {
    let eol = op.eol.map_or_else(
        || dominant(&FileText::with_breaks(like, lone_cr)),
        |e| e.as_str(),
    );
    let mut s = String::new();
    for l in content.lines {
        s.push_str(l.text);
        s.push_str(eol);
    }
    if !content.final_newline && !s.is_empty() {
        s.truncate(s.len() - eol.len());
    }
    s
}

/// How many more `(`, `[` and `{` than `)`, `]` and `}` `text` holds.
/// Counted sixteen bytes at a time, each bracket in its own sixteen 8-bit
/// lanes that 255 steps cannot overflow: a loop the compiler turns into
/// vector compares and adds. Source code is dense in brackets: a search
/// that stops at each one took a twentieth of a large ap apply, and sums
/// over 64 bytes at a time (three, each reduced at every step) half again
/// as long as this on a file of 2,000,000 lines.
fn brackets(text: &str) -> [i64; 3] {
    const LANES: usize = 16;
    // Per bracket, how many each lane saw: `(`, `)`, `[`, `]`, `{`, `}`.
    type Lanes = [[u8; LANES]; 6];
    let mut n = [0i64; 3];
    let drain = |lanes: &mut Lanes, n: &mut [i64; 3]| {
        let sum = |l: &[u8; LANES]| l.iter().map(|&v| i64::from(v)).sum::<i64>();
        for k in 0..3 {
            n[k] += sum(&lanes[2 * k]) - sum(&lanes[2 * k + 1]);
        }
        *lanes = [[0; LANES]; 6];
    };
    let mut l: Lanes = [[0; LANES]; 6];
    let blocks = text.as_bytes().chunks_exact(LANES);
    // The bytes past the last whole block, in one more block padded with
    // zeros (no bracket).
    let mut last = [0u8; LANES];
    last[..blocks.remainder().len()].copy_from_slice(blocks.remainder());
    for (b, block) in blocks.chain([&last[..]]).enumerate() {
        // Each bracket written out: a loop over them kept the lanes in
        // memory and spread each bracket over a vector at every block.
        for (i, &c) in block.iter().enumerate() {
            l[0][i] = l[0][i].wrapping_add(u8::from(c == b'('));
            l[1][i] = l[1][i].wrapping_add(u8::from(c == b')'));
            l[2][i] = l[2][i].wrapping_add(u8::from(c == b'['));
            l[3][i] = l[3][i].wrapping_add(u8::from(c == b']'));
            l[4][i] = l[4][i].wrapping_add(u8::from(c == b'{'));
            l[5][i] = l[5][i].wrapping_add(u8::from(c == b'}'));
        }
        if b % 255 == 254 {
            drain(&mut l, &mut n);
        }
    }
    drain(&mut l, &mut n);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_are_counted_by_kind() {
        assert_eq!(brackets("f() { [a] }"), [0, 0, 0]);
        assert_eq!(brackets("f(] {{"), [1, -1, 2]);
        // Across 16-byte blocks, and a run longer than an 8-bit sum holds.
        let long = format!("{}{}x]", "(".repeat(300), "{".repeat(70));
        assert_eq!(brackets(&long), [300, -1, 70]);
        // Every lane sees a bracket in each of 600 blocks (more than its
        // 8 bits count), and the rest past the last whole block counts.
        let full = "(".repeat(16 * 600 + 5) + &"}".repeat(16 * 300 + 7);
        assert_eq!(brackets(&full), [16 * 600 + 5, 0, -(16 * 300 + 7)]);
        let s = "def f(a, b): return {'k': [a, (b)]}\n".repeat(50);
        let by_search = |open: char, close: char| {
            s.matches(open).count() as i64 - s.matches(close).count() as i64
        };
        assert_eq!(
            brackets(&s[6..]),
            [
                by_search('(', ')') - 1,
                by_search('[', ']'),
                by_search('{', '}')
            ]
        );
    }
}
