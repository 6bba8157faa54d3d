//! Where a block of lines occurs in a file, at one match level: the only
//! matching code, shared by every format.
//!
//! A consecutive level compares line `start + j` with block line `j`. A
//! level that skips blank lines (ap's search) drops the block's blank lines
//! and walks the file's non-blank ones, so a match may span more lines than
//! the block has. Either way a search walks only the positions of the
//! block's rarest line in that level's line index.

use std::borrow::Cow;
use std::collections::HashMap;

use super::beside;
use super::index::BlockKeys;
use super::text::{hash_key, soft_eq, FileText, Key, Region, Split};
use crate::ir::{Edit, Hint, Level, Line, Locator, RangeEnd};
use crate::trim::trim;

/// A block as a level compares it: each line's key, blank lines dropped
/// where the level skips them.
pub struct Want<'b> {
    keys: Vec<Cow<'b, str>>,
    level: Level,
}

impl<'b> Want<'b> {
    pub fn new(block: &'b [Line], level: Level) -> Want<'b> {
        let key = Key::at(level);
        let keys = block
            .iter()
            .map(|l| key.of(l.text))
            .filter(|k| !(level.skips_blank_lines() && k.is_empty()))
            .collect();
        Want { keys, level }
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys, for comparing two blocks at the same level.
    pub fn keys(&self) -> &[Cow<'b, str>] {
        &self.keys
    }
}

/// What was made for a file before [`split_expecting`] splits it: its
/// lines, where the read split it beside the parse, and the edits' keys,
/// where they were made while that read went on (`op.rs`).
#[derive(Default)]
pub struct Made {
    pub lines: Option<Split>,
    pub keys: Option<Keys>,
}

/// `text` split into lines (`lone_cr`: a lone `\r` ends one; `blank_ends`:
/// noting the lines that end in a blank, [`FileText::split`]), or the
/// lines already `made` of it where they fit ([`FileText::adopt`]), told
/// which keys the edits will look up: those of their old blocks, anchors
/// and range ends at each edit's first level, the one every search starts
/// with (or the keys already `made` of them). The file counts them, and
/// indexes only the lines of each block's pivot (its rarest line, chosen
/// as [`find`] chooses it). An edit with a line hint is left out: the
/// exact match at its hint needs no index, and a hint that misses is
/// sought as a later level is ([`expect_at`]). A large file split here
/// has its keys made on the other core meanwhile: their lines are
/// scattered through the patch, each a miss of the cache.
pub fn split_expecting<'t>(
    text: &'t str,
    lone_cr: bool,
    blank_ends: bool,
    made: Made,
    edits: &[Edit],
) -> FileText<'t> {
    let lines = made.lines.filter(|m| m.fits(text, lone_cr));
    let beside = made.keys.is_none() && lines.is_none() && text.len() >= beside::LARGE_FILE;
    let split = || FileText::adopt(text, lines, lone_cr, blank_ends);
    let (file, keys) = match beside {
        true => beside::overlap(|| Keys::of(edits), split),
        false => (split(), made.keys.unwrap_or_else(|| Keys::of(edits))),
    };
    expect_keys(&file, keys);
    file
}

/// Tells `file` the keys of kind `kind` that the edits' blocks have at
/// the first of their levels comparing by it, hint or not: for a file
/// that does not know that kind's keys yet ([`FileText::knows`], which the
/// caller asks before it gathers the edits). A search calls this before
/// its first look at a kind: a hunk that missed its line, a level past
/// the first. One counting pass, and every block searched later at that
/// kind walks its pivot, where without it each would seek its keys in a
/// pass of its own.
pub fn expect_at(file: &FileText, edits: &[&Edit], kind: Key) {
    let at = move |loc: &Locator| loc.levels.iter().find(|&l| Key::at(l) == kind);
    let mut keys = BlockKeys::default();
    for (block, level) in blocks(edits.iter().copied(), at) {
        add_block(&mut keys, block, level);
    }
    file.expect(kind, keys);
}

/// Adds a block's keys at `level` to `keys`: it pivots on its rarest, as
/// [`pivot`] chooses from its `Want`, past a soft first line (a soft
/// block of one line pivots on another kind).
fn add_block(keys: &mut BlockKeys, block: &[Line], level: Level) {
    keys.add(
        key_hashes(block, level),
        usize::from(level == Level::SoftStart),
    );
}

/// The keys of edits' blocks at their first levels, by kind (made before
/// the file is split into lines, if need be: see `edit.rs`).
pub struct Keys(Vec<(Key, BlockKeys)>);

impl Keys {
    pub fn of(edits: &[Edit]) -> Keys {
        let mut kinds: Vec<(Key, BlockKeys)> = vec![];
        for (block, level) in blocks(edits.iter(), first_level) {
            let kind = Key::at(level);
            let k = match kinds.iter().position(|(k, _)| *k == kind) {
                Some(k) => k,
                None => {
                    kinds.push((kind, BlockKeys::default()));
                    kinds.len() - 1
                }
            };
            add_block(&mut kinds[k].1, block, level);
        }
        Keys(kinds)
    }
}

/// The level an edit's search starts at, unless a line hint places it.
fn first_level(loc: &Locator) -> Option<Level> {
    (loc.levels.first()).filter(|_| !matches!(loc.hint, Some(Hint::Near(_) | Hint::Whole)))
}

/// Each block of `edits` with the level `at` expects it at, if any.
fn blocks<'e, 'a: 'e>(
    edits: impl Iterator<Item = &'e Edit<'a>> + 'e,
    at: impl Fn(&Locator) -> Option<Level> + Copy + 'e,
) -> impl Iterator<Item = (&'e [Line<'a>], Level)> + 'e {
    edits.flat_map(move |edit| {
        let loc = &edit.locator;
        let range_end = match loc.range_end() {
            Some(RangeEnd::Lines(lines)) => *lines,
            _ => &[][..],
        };
        let blocks = [edit.old, loc.anchor().unwrap_or(&[]), range_end];
        at(loc)
            .into_iter()
            .flat_map(move |level| blocks.map(|b| (b, level)))
    })
}

/// [`expect`], the keys made.
pub fn expect_keys(file: &FileText, keys: Keys) {
    for (kind, keys) in keys.0 {
        file.expect(kind, keys);
    }
}

/// The hashes of a block's keys at `level`, as [`Want::new`] makes the keys.
fn key_hashes<'b>(block: &'b [Line], level: Level) -> impl Iterator<Item = u64> + 'b {
    let key = Key::at(level);
    let skip = level.skips_blank_lines();
    block
        .iter()
        .map(move |l| key.of(l.text))
        .filter(move |k| !(skip && k.is_empty()))
        .map(|k| hash_key(&k))
}

/// The line of `want` a search walks: its rarest by `count`, the first
/// of equals; with its key's hash and kind. A soft first line is no pivot
/// (its key has a prefix in the file) unless it is all there is.
fn pivot(want: &Want, file: &FileText) -> (usize, u64, Key) {
    let m = want.keys.len();
    let soft = want.level == Level::SoftStart;
    if soft && m == 1 {
        return (0, hash_key(&want.keys[0]), Key::Undecorated);
    }
    let kind = Key::at(want.level);
    let keys = || (usize::from(soft)..m).map(|k| (k, hash_key(&want.keys[k])));
    // A pivot the file indexed first: a block's own is its rarest line, and
    // the file counts no other key without a scan.
    // Else every line is counted, all sought in one pass.
    let (k, h) = keys()
        .filter(|&(_, h)| file.is_pivot(h, kind))
        .min_by_key(|&(_, h)| file.count(h, kind))
        .or_else(|| {
            file.seek(kind, keys().map(|(_, h)| h));
            keys().min_by_key(|&(_, h)| file.count(h, kind))
        })
        .expect("the block has a line to pivot on");
    (k, h, kind)
}

/// The `k`-th line at or after `at` that the level compares: `at + k`, or
/// with blank lines skipped, the `k`-th non-blank one.
fn step(file: &FileText, at: usize, k: usize, skip_blank: bool) -> Option<usize> {
    if !skip_blank {
        return Some(at + k).filter(|&i| i < file.len());
    }
    let mut seen = 0;
    (at..file.len()).find(|&i| {
        if file.is_blank(i) {
            return false;
        }
        seen += 1;
        seen > k
    })
}

/// Where a match whose `k`-th compared line is `p` starts.
fn back(file: &FileText, p: usize, k: usize, skip_blank: bool) -> Option<usize> {
    if !skip_blank {
        return p.checked_sub(k);
    }
    let mut left = k;
    let mut at = p;
    while left > 0 {
        at = at.checked_sub(1)?;
        if !file.is_blank(at) {
            left -= 1;
        }
    }
    Some(at)
}

/// The region `want` covers when it matches starting at line `at`.
pub fn match_at(file: &FileText, at: usize, want: &Want) -> Option<Region> {
    let skip = want.level.skips_blank_lines();
    if want.keys.is_empty() || at >= file.len() || (skip && file.is_blank(at)) {
        return None;
    }
    let key = Key::at(want.level);
    let mut i = at;
    for (j, w) in want.keys.iter().enumerate() {
        if j > 0 {
            i = step(file, i + 1, 0, skip)?;
        }
        let line = file.line(i);
        let ok = if j == 0 && want.level == Level::SoftStart {
            soft_eq(trim(line), w)
        } else {
            key.of(line) == *w
        };
        if !ok {
            return None;
        }
    }
    Some(Region::new(at, i + 1))
}

/// Up to `limit` regions where `want` matches, in order, each starting at
/// or after line `from` and ending at or before line `to`.
pub fn find(file: &FileText, want: &Want, from: usize, to: usize, limit: usize) -> Vec<Region> {
    let skip = want.level.skips_blank_lines();
    let m = want.keys.len();
    if m == 0 || limit == 0 {
        return vec![];
    }
    let (pivot, hash, kind) = pivot(want, file);
    let mut found = vec![];
    for p in file.positions(hash, kind) {
        let Some(start) = back(file, p, pivot, skip) else {
            continue;
        };
        if start < from {
            continue;
        }
        if start >= to {
            break;
        }
        if let Some(r) = match_at(file, start, want).filter(|r| r.end <= to) {
            if found.last() != Some(&r) {
                found.push(r);
                if found.len() >= limit {
                    break;
                }
            }
        }
    }
    found
}

/// The place most like `block` at or after line `from`: where most of its
/// lines occur at their offsets (surrounding whitespace ignored; ties go
/// to the one nearest `hint`), or else the line most like its first line
/// by shared characters. With the number of lines that agreed.
pub fn nearest(
    file: &FileText,
    block: &[Line],
    skip_blank: bool,
    from: usize,
    hint: Option<usize>,
) -> Option<(usize, usize)> {
    let mut votes: HashMap<usize, usize> = HashMap::new();
    let keys = block.iter().map(|l| trim(l.text)).filter(|k| !k.is_empty());
    file.seek(Key::Trimmed, keys.map(hash_key));
    let mut k = 0;
    for l in block {
        let key = trim(l.text);
        if key.is_empty() {
            if !skip_blank {
                k += 1;
            }
            continue;
        }
        let h = hash_key(key);
        if file.count(h, Key::Trimmed) <= 10_000 {
            for p in file.positions(h, Key::Trimmed) {
                if trim(file.line(p)) != key {
                    continue; // a hash collision
                }
                if let Some(start) = back(file, p, k, skip_blank).filter(|&s| s >= from) {
                    *votes.entry(start).or_default() += 1;
                }
            }
        }
        k += 1;
    }
    let hint = hint.unwrap_or(from);
    if let Some((s, n)) = votes
        .into_iter()
        .max_by_key(|&(start, n)| (n, std::cmp::Reverse(start.abs_diff(hint))))
    {
        return Some((s, n));
    }
    let first = block.iter().map(|l| trim(l.text)).find(|t| !t.is_empty())?;
    most_like(file, first, from).map(|i| (i, 0))
}

/// The line at or after `from` most like `first` (not empty, trimmed),
/// the first of them where several are: a line of text, not blank, that
/// shares the most with it.
fn most_like(file: &FileText, first: &str, from: usize) -> Option<usize> {
    // What a line shares with `first`: their common start and end, and all
    // of `first` where the line holds it whole, or is at least half of it
    // and within it (a line `a` is within almost any sentence).
    let want = first.as_bytes();
    // One searcher for every line, built once (`str::contains` builds one a
    // call), and without the CPU probe of `memchr`'s own (see `bytes.rs`).
    let within = memchr::arch::all::twoway::Finder::new(want);
    let pairs = Pairs::of(want);
    // A line's score where it beats `bar`: its common start and end, and
    // `want`'s length where it holds `want` (or lies within it), sought
    // only where that could lift the line over the bar.
    let score = |line: &str, bar: usize| -> Option<usize> {
        let head = line.bytes().zip(want).take_while(|(x, y)| x == *y).count();
        let tail = (line.bytes().rev().zip(want.iter().rev()))
            .take_while(|(x, y)| x == *y)
            .count();
        let n = line.len();
        let holds = || {
            (n >= want.len() && within.find(line.as_bytes(), want).is_some())
                || (2 * n >= want.len()
                    && n < want.len()
                    && pairs.may_hold(line.as_bytes())
                    && first.contains(line))
        };
        let s = head
            + tail
            + if head + tail + want.len() > bar && holds() {
                want.len()
            } else {
                0
            };
        (s > bar).then_some(s)
    };
    // Only lines of text: a binary line is no advice. Asked only of a line
    // that would be the best so far; the first of the best scores wins.
    let text = |l: &str| !has_control(l) && !crate::lossless::has_escapes(l);
    let mut best: Option<(usize, usize)> = None;
    for i in from..file.len() {
        let bar = best.map_or(0, |(s, _)| s);
        if let Some(s) = score(trim(file.line(i)), bar) {
            // A blank line scores nothing, so it is never a new best.
            if text(file.line(i)) {
                best = Some((s, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

/// Whether `line` holds a control character other than a tab (Unicode's
/// `Cc`: U+0000 to U+001F and U+007F to U+009F), read from its bytes:
/// U+0080 to U+009F are `C2 80` to `C2 9F` in UTF-8.
fn has_control(line: &str) -> bool {
    let b = line.as_bytes();
    b.iter().enumerate().any(|(i, &x)| match x {
        b'\t' => false,
        0..=0x1f | 0x7f => true,
        0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)),
        _ => false,
    })
}

/// The pairs of adjacent bytes in a text, a bit each (8 KiB): a text
/// holds another only if it holds each of the other's pairs, so most lines
/// are ruled out without a substring search (which builds a searcher for
/// its needle, a line here, at every call).
struct Pairs(Vec<u64>);

impl Pairs {
    fn of(text: &[u8]) -> Pairs {
        let mut bits = vec![0u64; 1 << 10];
        for w in text.windows(2) {
            let at = usize::from(w[0]) << 8 | usize::from(w[1]);
            bits[at >> 6] |= 1 << (at & 63);
        }
        Pairs(bits)
    }

    /// Whether a text with these pairs may hold `needle`.
    fn may_hold(&self, needle: &[u8]) -> bool {
        needle.windows(2).all(|w| {
            let at = usize::from(w[0]) << 8 | usize::from(w[1]);
            self.0[at >> 6] & (1 << (at & 63)) != 0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The byte reading of "a control character other than a tab" is
        /// the character one, on any text.
        #[test]
        fn control_bytes_are_control_characters(s in "(\\PC|[\\x00-\\x1f\\x7f-\\u{a0}]){0,12}") {
            prop_assert_eq!(has_control(&s), s.chars().any(|c| c.is_control() && c != '\t'));
        }

        /// The line most like another is the one scoring every line, then
        /// taking the best, would pick: the bar and the late checks of
        /// `most_like` change what it reads, not what it finds.
        #[test]
        fn the_most_like_line_is_the_best_scored_eligible_line(
            lines in proptest::collection::vec("[ab \\t\\x01\\u{85}]{0,6}", 0..24),
            first in "[ab]{1,4}",
            from in 0usize..4,
        ) {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let file = FileText::new(&text);
            let want = first.as_bytes();
            let score = |line: &str| {
                let head = line.bytes().zip(want).take_while(|(x, y)| x == *y).count();
                let tail = line.bytes().rev().zip(want.iter().rev()).take_while(|(x, y)| x == *y).count();
                let n = line.len();
                let holds = (n >= want.len() && line.contains(first.as_str()))
                    || (2 * n >= want.len() && n < want.len() && first.contains(line));
                head + tail + if holds { want.len() } else { 0 }
            };
            let text_line = |l: &str| !l.chars().any(|c| c.is_control() && c != '\t');
            let expected = (from..file.len())
                .filter(|&i| !file.is_blank(i) && text_line(file.line(i)))
                .map(|i| (i, score(trim(file.line(i)))))
                .max_by_key(|&(i, s)| (s, std::cmp::Reverse(i)))
                .filter(|&(_, s)| s > 0)
                .map(|(i, _)| i);
            prop_assert_eq!(most_like(&file, &first, from), expected);
        }

        /// The pair filter never rules out a text that holds the needle,
        /// and rules out one that lacks a pair of it.
        #[test]
        fn pairs_rule_out_only_what_is_not_held(hay in "[a-d]{0,16}", needle in "[a-d]{0,5}") {
            let pairs = Pairs::of(hay.as_bytes());
            if hay.contains(needle.as_str()) {
                prop_assert!(pairs.may_hold(needle.as_bytes()));
            }
            let lacks = needle.as_bytes().windows(2).any(|w| !hay.as_bytes().windows(2).any(|h| h == w));
            prop_assert_eq!(pairs.may_hold(needle.as_bytes()), !lacks);
        }
    }

    fn find_at(f: &FileText, block: &[&str], level: Level, from: usize) -> Vec<usize> {
        let block = Line::unplaced(block);
        let want = Want::new(block, level);
        find(f, &want, from, f.len(), usize::MAX)
            .into_iter()
            .map(|r| r.start)
            .collect()
    }

    #[test]
    fn each_level_finds_what_it_should() {
        let f = FileText::new("x\n  y  \nz\nx\ny\nz\n");
        assert_eq!(find_at(&f, &["x", "y"], Level::Exact, 0), vec![3]);
        assert_eq!(
            find_at(&f, &["x", "  y"], Level::TrailingWhitespace, 0),
            vec![0]
        );
        assert_eq!(find_at(&f, &["x", "y"], Level::Trimmed, 0), vec![0, 3]);
        assert_eq!(find_at(&f, &["x", "y"], Level::Trimmed, 1), vec![3]);
        assert!(find_at(&f, &["q"], Level::Exact, 0).is_empty());
        let typo = FileText::new("say(\u{201C}hi\u{201D}) \u{2014} ok\n");
        assert!(find_at(&typo, &["say(\"hi\") - ok"], Level::Trimmed, 0).is_empty());
        assert_eq!(
            find_at(&typo, &["  say(\"hi\") - ok"], Level::Normalized, 0),
            vec![0]
        );
    }

    #[test]
    fn blank_lines_are_skipped_in_block_and_file() {
        let f = FileText::new("a\n\n  b\nc\n\n# 1. item\n");
        let block = Line::unplaced(&["a", "", "", "b"]);
        let want = Want::new(block, Level::BlankLinesIgnored);
        assert_eq!(find(&f, &want, 0, f.len(), 8), vec![Region::new(0, 3)]);
        assert!(find(&f, &want, 1, f.len(), 8).is_empty());
        assert!(find(&f, &want, 0, 2, 8).is_empty());
        assert_eq!(
            find_at(&f, &["c", "item"], Level::BlankLinesIgnored, 0),
            Vec::<usize>::new()
        );
        assert_eq!(find_at(&f, &["item"], Level::SoftStart, 0), vec![5]);
        assert_eq!(
            find_at(&f, &["b", "c"], Level::SoftStart, 0),
            Vec::<usize>::new()
        );
    }

    /// The pivots `expect` indexes are the lines `find` walks: a search of
    /// every expected block at its first level scans for no key on its
    /// own and indexes nothing more.
    #[test]
    fn searches_walk_only_the_pivots_expect_indexed() {
        use crate::ir::{Levels, Locator, Place, Span, Uniqueness};
        let text: String = (0..400)
            .map(|i| match i % 7 {
                0 => String::new(),
                1 => "    }".to_string(),
                k => format!("  line {} of {}", i % 13, k),
            })
            .map(|l| l + "\n")
            .collect();
        let lines: Vec<&str> = text.lines().collect();
        for levels in [
            Level::LADDER,
            &[Level::BlankLinesIgnored, Level::SoftStart][..],
        ] {
            let f = FileText::new(&text);
            let edits: Vec<Edit> = (0..60)
                .map(|i| {
                    let at = (i * 37) % 390;
                    let old = Line::unplaced(&lines[at..at + 1 + i % 4]);
                    let anchor = Line::unplaced(&lines[(at + 200) % 390..(at + 200) % 390 + 1]);
                    let mut loc = Locator::plain(Uniqueness::UniqueInFile, Levels::of(levels));
                    if i % 5 == 0 {
                        loc.reach_mut().anchor = Some(anchor);
                    }
                    Edit {
                        old,
                        new: &[],
                        old_no_eol: false,
                        new_no_eol: false,
                        own_eol: false,
                        place: Place::Replace,
                        locator: loc,
                        span: Span::default(),
                    }
                })
                .collect();
            expect_keys(&f, Keys::of(&edits));
            let kind = Key::at(levels[0]);
            for e in &edits {
                for block in [e.old, e.locator.anchor().unwrap_or(&[])] {
                    let want = Want::new(block, levels[0]);
                    if !want.is_empty() {
                        assert!(!find(&f, &want, 0, f.len(), usize::MAX).is_empty());
                    }
                }
            }
            assert_eq!(f.beyond_pivots(kind), (0, false), "{levels:?}");
        }
    }

    /// Keys made before the split (while the file was read ahead) are the
    /// keys the file is told: the same as made there, and nothing more
    /// made in their place (keys of no edit leave it told nothing).
    #[test]
    fn keys_made_ahead_are_the_keys_the_file_is_told() {
        use crate::ir::{Levels, Locator, Place, Span, Uniqueness};
        let text: String = (0..300).map(|i| format!("line {}\n", i % 97)).collect();
        let lines: Vec<&str> = text.lines().collect();
        let edits: Vec<Edit> = (0..5)
            .map(|i| Edit {
                old: Line::unplaced(&lines[i * 50..i * 50 + 2]),
                new: &[],
                old_no_eol: false,
                new_no_eol: false,
                own_eol: false,
                place: Place::Replace,
                locator: Locator::plain(Uniqueness::UniqueInFile, Levels::of(Level::LADDER)),
                span: Span::default(),
            })
            .collect();
        let split = |keys: Option<Keys>| {
            let made = Made { lines: None, keys };
            split_expecting(&text, false, false, made, &edits)
        };
        let (here, ahead, none) = (
            split(None),
            split(Some(Keys::of(&edits))),
            split(Some(Keys::of(&[]))),
        );
        assert!(here.has_pivots(Key::Exact) && ahead.has_pivots(Key::Exact));
        assert!(!none.has_pivots(Key::Exact));
        for (i, e) in edits.iter().enumerate() {
            let want = Want::new(e.old, Level::Exact);
            let found = |f: &FileText| find(f, &want, 0, f.len(), usize::MAX);
            // Where the block's two lines stand, as a reader counts them.
            let naive: Vec<Region> = (0..299)
                .filter(|p| p % 97 == i * 50 % 97)
                .map(|p| Region::new(p, p + 2))
                .collect();
            assert_eq!(found(&ahead), naive);
            assert_eq!(found(&here), naive);
        }
    }

    #[test]
    fn nearest_prefers_most_shared_lines_then_similar_text() {
        let f = FileText::new("fn a() {\n    one();\n}\nfn b() {\n    two();\n    three();\n}\n");
        let near = |b: &[&str]| nearest(&f, Line::unplaced(b), false, 0, None);
        assert_eq!(near(&["fn b() {", "two();", "four();"]), Some((3, 2)));
        assert_eq!(near(&["three"]), Some((5, 0)));
        assert_eq!(near(&["qqq"]), None);
        // A line within the first counts whole only when it is half of
        // it: `}` is within this line, and shares less than `fn b() {`.
        assert_eq!(near(&["two(); again"]), Some((4, 0)));
        assert_eq!(
            near(&["fn b() { } closes nothing in this file"]),
            Some((3, 0))
        );
        // A common start and end.
        assert_eq!(near(&["fn b() -> u8 {"]), Some((3, 0)));
    }
}
