//! ap's modifications as the patch states them, and as edits of the shared
//! model: the kind becomes a `Place`, the locators a `Locator` with ap's
//! match levels, a repeated locator the cursor's "next match" rule.

use crate::ir::{
    Action, Edit, Level, Line, Locator, NewLine, Place, RangeEnd, Reach, Span, Uniqueness,
};

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
    Lines(Vec<Line<'a>>),
    Start,
    End,
}

/// One ap modification, as the patch states it.
pub(super) struct Modification<'a> {
    pub(super) kind: ModKind,
    pub(super) anchor: Option<Vec<Line<'a>>>,
    pub(super) snippet: Target<'a>,
    /// `snippet_tail`: the region runs to the end of its first match after the snippet.
    pub(super) tail: Option<Target<'a>>,
    /// Trailing whitespace already stripped.
    pub(super) content: Vec<Line<'a>>,
    pub(super) leading_blank: usize,
    pub(super) trailing_blank: usize,
    pub(super) scope_end: bool,
    /// The action directive, for diagnostics.
    pub(super) span: Span,
}

/// A locator's normalised lines: blank ones dropped, the rest trimmed.
pub(super) fn normalise<'a>(lines: &'a [Line]) -> Vec<&'a str> {
    lines
        .iter()
        .map(|l| l.text.trim())
        .filter(|t| !t.is_empty())
        .collect()
}

/// What a modification's locator says, normalised (its anchor's lines,
/// then its snippet's): two modifications with the same key name the same
/// place, the documented way to address N identical blocks in order (each
/// takes the next one). Slices of the patch: no text is copied.
pub(super) fn locator_key<'m>(m: &'m Modification) -> Option<(Vec<&'m str>, Vec<&'m str>)> {
    let Target::Lines(lines) = &m.snippet else {
        return None;
    };
    let anchor = m.anchor.as_deref().map(normalise).unwrap_or_default();
    Some((anchor, normalise(lines)))
}

/// The modifications of one file block as edits of the shared model. A
/// locator repeated within the block takes the first match after the
/// previous modification instead of a unique one.
pub(super) fn edits(mods: Vec<Modification>) -> Vec<Edit> {
    let keys: Vec<_> = mods.iter().map(locator_key).collect();
    // Counted once per file: comparing every pair is quadratic in modifications.
    // foldhash, as for the line index: SipHash over every snippet cost more.
    let mut uses: std::collections::HashMap<_, usize, foldhash::fast::FixedState> =
        std::collections::HashMap::default();
    for k in keys.iter().flatten() {
        *uses.entry(k).or_default() += 1;
    }
    let repeated: Vec<bool> = keys
        .iter()
        .map(|k| k.as_ref().is_some_and(|k| uses[k] > 1))
        .collect();
    drop(uses);
    drop(keys);
    mods.into_iter()
        .zip(repeated)
        .map(|(m, repeated)| {
            let (old, at_start, at_eof) = match m.snippet {
                Target::Lines(lines) => (lines, false, false),
                Target::Start => (vec![], true, false),
                Target::End => (vec![], false, true),
            };
            Edit {
                old,
                new: m.content.into_iter().map(NewLine::Add).collect(),
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
                        m.tail,
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
                        &[Level::BlankLinesIgnored, Level::SoftStart],
                    )
                },
                span: m.span,
            }
        })
        .collect()
}

/// A modification's anchor, range end and options, boxed when it has any.
fn reach<'a>(
    anchor: Option<Vec<Line<'a>>>,
    tail: Option<Target<'a>>,
    scope_end: bool,
    widen: (usize, usize),
) -> Option<Box<Reach<'a>>> {
    let range_end = tail.map(|t| match t {
        Target::Lines(lines) => RangeEnd::Lines(lines),
        _ => RangeEnd::Eof,
    });
    (anchor.is_some() || range_end.is_some() || scope_end || widen != (0, 0)).then(|| {
        Box::new(Reach {
            anchor,
            range_end,
            scope_end,
            widen,
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
    Create(Vec<Line<'a>>),
    /// `RECREATE`: this text, whatever the file held (created if missing).
    Recreate(Vec<Line<'a>>),
}

/// A locator value: `^`, `$`, or its lines without blank ones at either
/// end (cut where they lie: a large patch's lines are not copied).
pub(super) fn target(mut lines: Vec<Line<'_>>) -> Option<Target<'_>> {
    trim_blank(&mut lines);
    match &lines[..] {
        [] => None,
        [one] if one.text.trim() == "^" => Some(Target::Start),
        [one] if one.text.trim() == "$" => Some(Target::End),
        _ => Some(Target::Lines(lines)),
    }
}

/// Drops the blank lines at either end.
fn trim_blank(lines: &mut Vec<Line<'_>>) {
    let end = lines
        .iter()
        .rposition(|l| !l.text.trim().is_empty())
        .map_or(0, |i| i + 1);
    lines.truncate(end);
    let start = lines
        .iter()
        .position(|l| !l.text.trim().is_empty())
        .unwrap_or(end);
    lines.drain(..start);
}

/// `content` without blank lines at either end and without trailing whitespace.
pub(super) fn content_lines(mut lines: Vec<Line<'_>>) -> Vec<Line<'_>> {
    trim_blank(&mut lines);
    for l in &mut lines {
        l.text = l.text.trim_end_matches([' ', '\t']);
    }
    lines
}
