//! ap's modifications as the patch states them, and as edits of the shared
//! model: the kind becomes a `Place`, the locators a `Locator` with ap's
//! match levels, a repeated locator the cursor's "next match" rule.

use crate::ir::{
    Action, Edit, Level, Levels, Line, Locator, NewLine, Place, RangeEnd, Reach, Span, Uniqueness,
};
use crate::trim::{is_blank, trim};

/// What an ap modification does at the place it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ModKind {
    Replace,
    InsertBefore,
    InsertAfter,
    Delete,
}

/// An ap locator value: lines to find, or a file boundary (3.2 `^`, `$`).
#[derive(Debug, Clone)]
pub(super) enum Target<'a> {
    Lines(&'a [Line<'a>]),
    Start,
    End,
}

/// One ap modification, as the patch states it.
pub(super) struct Modification<'a> {
    pub(super) kind: ModKind,
    pub(super) anchor: Option<&'a [Line<'a>]>,
    pub(super) snippet: Target<'a>,
    /// `snippet_tail`: the region runs to the end of its first match after the snippet.
    pub(super) tail: Option<Target<'a>>,
    /// Trailing whitespace already stripped.
    pub(super) content: &'a [NewLine<'a>],
    pub(super) leading_blank: usize,
    pub(super) trailing_blank: usize,
    pub(super) scope_end: bool,
    /// The action directive, for diagnostics.
    pub(super) span: Span,
}

/// A locator's normalised lines: blank ones dropped, the rest trimmed.
fn normalise<'a>(lines: &'a [Line]) -> impl Iterator<Item = &'a str> + Clone {
    lines.iter().map(|l| trim(l.text)).filter(|t| !t.is_empty())
}

/// What a modification's locator says, normalised (its anchor's lines,
/// then its snippet's): two modifications with the same key name the same
/// place, the documented way to address N identical blocks in order (each
/// takes the next one). Read line by line where it lies: no list is made
/// per modification.
#[derive(Clone, Copy)]
struct LocatorKey<'m> {
    anchor: &'m [Line<'m>],
    snippet: &'m [Line<'m>],
}

impl<'m> LocatorKey<'m> {
    fn of(m: &'m Modification) -> Option<LocatorKey<'m>> {
        let Target::Lines(snippet) = m.snippet else {
            return None;
        };
        Some(LocatorKey {
            anchor: m.anchor.unwrap_or(&[]),
            snippet,
        })
    }

    fn same(self, other: LocatorKey) -> bool {
        normalise(self.anchor).eq(normalise(other.anchor))
            && normalise(self.snippet).eq(normalise(other.snippet))
    }

    fn hash(self) -> u64 {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut state = foldhash::fast::FixedState::with_seed(0x10c).build_hasher();
        for part in [self.anchor, self.snippet] {
            let mut n = 0usize;
            for line in normalise(part) {
                line.hash(&mut state);
                n += 1;
            }
            n.hash(&mut state);
        }
        state.finish()
    }
}

/// Which modifications share their locator with another: hashed once
/// each, grouped by hash, and within a group compared with one member of
/// each distinct key (a collision never makes two keys one). Linear but
/// for a sort of the hashes, where a pair-wise check was quadratic.
fn repeated_locators(mods: &[Modification]) -> Vec<bool> {
    let keys: Vec<Option<LocatorKey>> = mods.iter().map(LocatorKey::of).collect();
    let mut hashed: Vec<(u64, u32)> = (keys.iter().enumerate())
        .filter_map(|(i, k)| Some((k.as_ref()?.hash(), i as u32)))
        .collect();
    hashed.sort_unstable();
    let mut repeated = vec![false; mods.len()];
    for group in hashed.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        // Each distinct key and how many have it; each member's key.
        let mut distinct: Vec<(LocatorKey, usize)> = vec![];
        let mut member = Vec::with_capacity(group.len());
        for &(_, i) in group {
            let key = keys[i as usize].expect("hashed keys exist");
            let d = match distinct.iter().position(|(k, _)| k.same(key)) {
                Some(d) => d,
                None => {
                    distinct.push((key, 0));
                    distinct.len() - 1
                }
            };
            distinct[d].1 += 1;
            member.push(d);
        }
        for (&(_, i), d) in group.iter().zip(member) {
            repeated[i as usize] = distinct[d].1 > 1;
        }
    }
    repeated
}

/// The modifications of one file block as edits of the shared model. A
/// locator repeated within the block takes the first match after the
/// previous modification instead of a unique one. Their lines are in the
/// store already (see [`Edit`]), where the lowering read them into.
pub(super) fn edits(mods: Vec<Modification>) -> Vec<Edit> {
    let repeated = repeated_locators(&mods);
    let mut edits: Vec<Edit> = mods
        .into_iter()
        .zip(repeated)
        .map(|(m, repeated)| {
            let (old, at_start, at_eof) = match m.snippet {
                Target::Lines(lines) => (lines, false, false),
                Target::Start => (&[][..], true, false),
                Target::End => (&[][..], false, true),
            };
            Edit {
                old,
                new: m.content,
                old_no_eol: false,
                new_no_eol: false,
                own_eol: false,
                place: match m.kind {
                    ModKind::Replace | ModKind::Delete => Place::Replace,
                    ModKind::InsertBefore => Place::Before,
                    ModKind::InsertAfter => Place::After,
                },
                locator: Locator {
                    reach: reach(
                        m.anchor,
                        m.tail.map(|t| match t {
                            Target::Lines(lines) => RangeEnd::Lines(lines),
                            _ => RangeEnd::Eof,
                        }),
                        m.scope_end,
                        (m.leading_blank, m.trailing_blank),
                    ),
                    at_start,
                    at_eof,
                    ..Locator::plain(
                        if repeated {
                            Uniqueness::FirstAfterCursor
                        } else {
                            Uniqueness::UniqueAfterCursor
                        },
                        Levels::of(&[Level::BlankLinesIgnored, Level::SoftStart]),
                    )
                },
                span: m.span,
            }
        })
        .collect();
    // The edits took the modifications' room (a collect in place), half
    // as large again as they need and written over to the end of the
    // modifications: a large patch's edits are kept until the files are
    // written, so the spare third would sit in its peak.
    edits.shrink_to_fit();
    edits
}

/// A modification's anchor, range end and options, boxed when it has any.
fn reach<'a>(
    anchor: Option<&'a [Line<'a>]>,
    range_end: Option<RangeEnd<'a>>,
    scope_end: bool,
    widen: (usize, usize),
) -> Option<Box<Reach<'a>>> {
    (anchor.is_some() || range_end.is_some() || scope_end || widen != (0, 0)).then(|| {
        Box::new(Reach {
            anchor,
            range_end,
            scope_end,
            widen,
            stacked: false,
        })
    })
}

/// What an opening directive of a file block says.
pub(super) enum Opening<'a> {
    /// The text the block's modifications start from.
    Base(Base<'a>),
    /// The block is one operation on the whole path.
    Whole(Action<'a>),
    Nothing,
}

/// What a file block's text starts from.
pub(super) enum Base<'a> {
    /// The file as it is on disk.
    Existing,
    /// `CREATE` with `content`: a new file (or an identical existing one).
    Create(&'a [NewLine<'a>]),
    /// `RECREATE`: this text, whatever the file held (created if missing).
    Recreate(&'a [NewLine<'a>]),
}

/// A locator value: `^`, `$`, or its lines without blank ones at either
/// end (cut where they lie: a large patch's lines are not copied).
pub(super) fn target<'a>(lines: &'a [Line<'a>]) -> Option<Target<'a>> {
    match trim_blank(lines, |l| l.text) {
        [] => None,
        [one] if trim(one.text) == "^" => Some(Target::Start),
        [one] if trim(one.text) == "$" => Some(Target::End),
        lines => Some(Target::Lines(lines)),
    }
}

/// `lines` without the blank ones at either end.
fn trim_blank<T>(lines: &[T], text: impl Fn(&T) -> &str) -> &[T] {
    let (start, end) = unblank(lines, text);
    &lines[start..end]
}

/// Where `lines` start and end without the blank ones at either end.
fn unblank<T>(lines: &[T], text: impl Fn(&T) -> &str) -> (usize, usize) {
    let blank = |l: &T| is_blank(text(l));
    let end = lines.iter().rposition(|l| !blank(l)).map_or(0, |i| i + 1);
    let start = lines[..end].iter().position(|l| !blank(l)).unwrap_or(end);
    (start, end)
}

/// `content` without blank lines at either end and without trailing
/// whitespace, trimmed where it lies.
pub(super) fn content_lines<'a>(lines: &'a mut [NewLine<'a>]) -> &'a [NewLine<'a>] {
    let (start, end) = unblank(lines, |l| match l {
        NewLine::Add(l) => l.text,
        NewLine::Keep(..) => "",
    });
    let lines = &mut lines[start..end];
    for l in lines.iter_mut() {
        if let NewLine::Add(l) = l {
            l.text = l.text.trim_end_matches([' ', '\t']);
        }
    }
    lines
}

/// A content's lines as the text of a new file.
pub(super) fn added<'l, 'a>(
    lines: &'l [NewLine<'a>],
) -> impl ExactSizeIterator<Item = Line<'a>> + 'l {
    lines.iter().map(|l| match *l {
        NewLine::Add(l) => l,
        NewLine::Keep(..) => Line::of(""),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modification<'a>(anchor: Option<&'a [Line<'a>]>, snippet: Target<'a>) -> Modification<'a> {
        Modification {
            kind: ModKind::Replace,
            anchor,
            snippet,
            tail: None,
            content: &[],
            leading_blank: 0,
            trailing_blank: 0,
            scope_end: false,
            span: Span::default(),
        }
    }

    /// Locators are the same after trimming and dropping blank lines;
    /// where the anchor ends and the snippet starts still tells them apart.
    #[test]
    fn repeated_locators_are_the_same_lines_normalised() {
        let l = |t: &[&'static str]| Line::unplaced(t);
        let mods = [
            modification(None, Target::Lines(l(&["a", "b"]))),
            modification(None, Target::Lines(l(&["  a ", "", "b"]))),
            modification(Some(l(&["a"])), Target::Lines(l(&["b"]))),
            modification(None, Target::Lines(l(&["c"]))),
            modification(None, Target::Start),
            modification(Some(l(&["x"])), Target::Lines(l(&["c"]))),
            modification(Some(l(&["x", ""])), Target::Lines(l(&["\tc"]))),
            modification(None, Target::Start),
        ];
        assert_eq!(
            repeated_locators(&mods),
            [true, true, false, false, false, true, true, false]
        );
    }

    /// A block's edits keep no spare room, whatever room the
    /// modifications had (they grew by doubling, and are larger).
    #[test]
    fn edits_hold_no_spare_room() {
        let l = |t: &[&'static str]| Line::unplaced(t);
        for n in [1, 3, 5, 17, 100] {
            let mut mods = Vec::with_capacity(2 * n + 3);
            mods.extend((0..n).map(|_| modification(None, Target::Lines(l(&["a"])))));
            let edits = edits(mods);
            assert_eq!((edits.len(), edits.capacity()), (n, n));
        }
    }
}
