//! A file's text as lines: the one splitter (line ends, a lone `\r` where
//! the format says so, a byte-order mark), the keys lines are compared by
//! at each [`Level`]. The index from a key to its lines is `index.rs`;
//! `find.rs` does the matching.

use super::index::Indexes;
use super::starts::Starts;
use crate::ir::Level;
use crate::newlines::{line_breaks, newlines};
use crate::trim::trim;
use std::borrow::Cow;
use std::cell::{Cell, OnceCell};

/// Lines `start..end` of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start: usize,
    pub end: usize,
}

impl Region {
    pub fn new(start: usize, end: usize) -> Region {
        Region { start, end }
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
}

/// A file's text split into lines, keeping each line's ending.
pub struct FileText<'a> {
    pub text: &'a str,
    /// Byte offset of each line's start; one more entry holds `text.len()`.
    /// `u32`s (the planner refuses files of 4 GiB or more), about two
    /// bytes a line ([`Starts`]).
    pub(super) starts: Starts,
    /// The text was searched for a `\r` (to split at a lone one) and has
    /// none: nothing else need search it again.
    no_cr: bool,
    /// The line indexes, built on first need (`index.rs`).
    pub(super) indexes: Indexes,
    /// Whether every line's keys of two kinds agree, asked once a pair
    /// ([`FileText::keys_agree`]).
    agree: [OnceCell<bool>; 2],
    /// Where a line feed follows a space or a tab ([`FileText::blank_ended`]).
    blank_ended: OnceCell<Vec<u32>>,
}

/// Where a text's lines start, with what the pass that found them
/// noted on the way: the work of [`FileText::split`], which a file read
/// beside the parse does there (`FileTree::read_ahead`), for the
/// planner's [`FileText`] of the same text to take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    starts: Starts,
    /// The length of the text split, which a text taking these lines must
    /// have.
    len: usize,
    /// The pass broke lines at a lone `\r` too, and so searched the text
    /// for `\r`s.
    searched_cr: bool,
    /// That search found one, lone or not.
    cr: bool,
    /// Where a line feed follows a space or a tab, if asked.
    blank_ended: Option<Vec<u32>>,
}

impl Split {
    /// `text`'s lines: at each `\n`, and with `lone_cr` also at a `\r`
    /// not followed by `\n`; with `blank_ends`, noting the lines that end
    /// in a space or a tab.
    pub fn of(text: &str, lone_cr: bool, blank_ends: bool) -> Split {
        debug_assert!(text.len() < u32::MAX as usize);
        let bytes = text.as_bytes();
        // A byte-order mark belongs to the file, not to its first line.
        let first = if text.starts_with('\u{feff}') { 3 } else { 0 };
        // The last line's end, where the text does not end with a break.
        let broken = text.ends_with('\n') || (lone_cr && text.ends_with('\r'));
        let end = (text.len() != first as usize && !broken).then_some(text.len() as u32);
        let lines = text.len() / 32 + 2;
        let mut blank = vec![];
        let mut note = |i: usize| {
            if blank_ends && blank_end(bytes, i) {
                blank.push(i as u32);
            }
            i as u32 + 1
        };
        // Where a lone `\r` breaks a line, the one pass that finds the
        // breaks also tells whether the text holds a `\r` at all: a
        // search for one first was a second pass over the whole text.
        let cr = Cell::new(false);
        let starts = if lone_cr {
            let ends = line_breaks(bytes).filter(|&i| {
                bytes[i] == b'\n' || {
                    cr.set(true);
                    bytes.get(i + 1) != Some(&b'\n')
                }
            });
            Starts::new(
                std::iter::once(first).chain(ends.map(&mut note)).chain(end),
                lines,
            )
        } else {
            let all = newlines(bytes).map(&mut note);
            Starts::new(std::iter::once(first).chain(all).chain(end), lines)
        };
        Split {
            starts,
            len: text.len(),
            searched_cr: lone_cr,
            cr: cr.get(),
            blank_ended: blank_ends.then_some(blank),
        }
    }

    /// Whether these are the lines [`Split::of`] makes of `text` with
    /// `lone_cr`: a split of a text as long, made with the same breaks, or
    /// with a lone `\r` breaking a line in a text that has no `\r`, where
    /// the two kinds of break agree. The planner's reads hand each text
    /// the split made of it, so the length only guards against a mix-up.
    pub fn fits(&self, text: &str, lone_cr: bool) -> bool {
        self.len == text.len() && (self.searched_cr == lone_cr || (self.searched_cr && !self.cr))
    }
}

impl<'a> FileText<'a> {
    #[cfg(test)]
    pub fn new(text: &'a str) -> Self {
        Self::with_breaks(text, false)
    }

    /// Splits at `\n`, and with `lone_cr` also at a `\r` not followed by `\n`.
    pub fn with_breaks(text: &'a str, lone_cr: bool) -> Self {
        Self::split(text, lone_cr, false)
    }

    /// [`FileText::with_breaks`]; with `blank_ends`, also notes where a
    /// line ends in a space or a tab ([`FileText::blank_ended`]) while the
    /// split has each line feed's bytes at hand: asked later, that is a
    /// second pass over the whole text, out of the cache by then.
    pub fn split(text: &'a str, lone_cr: bool, blank_ends: bool) -> Self {
        Self::adopt(text, None, lone_cr, blank_ends)
    }

    /// [`FileText::split`], taking the lines of `made` where they are this
    /// text's lines as that split would make them ([`Split::fits`]): a
    /// file read beside the parse was split there too.
    pub fn adopt(text: &'a str, made: Option<Split>, lone_cr: bool, blank_ends: bool) -> Self {
        let split = match made.filter(|m| m.fits(text, lone_cr)) {
            Some(made) => made,
            None => Split::of(text, lone_cr, blank_ends),
        };
        FileText {
            text,
            starts: split.starts,
            no_cr: split.searched_cr && !split.cr,
            indexes: Indexes::default(),
            agree: Default::default(),
            blank_ended: match split.blank_ended {
                Some(blank) => OnceCell::from(blank),
                None => OnceCell::new(),
            },
        }
    }

    /// Whether every line of the file has the same key of kind `a` as of
    /// kind `b`, so that a search at one finds what a search at the other
    /// does. Answered for two pairs, each with a pass that is cheaper than
    /// counting keys: exact and trailing whitespace where no line ends in
    /// whitespace, trimmed and normalised where the text is ASCII (which
    /// normalising leaves as it is). Any other pair: `false`.
    pub fn keys_agree(&self, a: Key, b: Key) -> bool {
        match (a, b) {
            (Key::Exact, Key::TrailingWhitespace) => {
                *self.agree[0].get_or_init(|| self.ends_bare())
            }
            (Key::Trimmed, Key::Normalized) => *self.agree[1].get_or_init(|| self.text.is_ascii()),
            _ => false,
        }
    }

    /// Whether no line ends in whitespace (its line ending aside): the
    /// last byte of each line, read from the starts, and its last
    /// character where that byte is not ASCII.
    fn ends_bare(&self) -> bool {
        let mut starts = self.starts.iter();
        let Some(mut start) = starts.next() else {
            return true;
        };
        starts.all(|next| {
            let line = without_eol(&self.text[start as usize..next as usize]);
            start = next;
            match line.as_bytes().last() {
                None => true,
                Some(&b) if b.is_ascii() => !char::from(b).is_whitespace(),
                Some(_) => !line.ends_with(char::is_whitespace),
            }
        })
    }

    /// Whether the text is known to hold no `\r` (found while splitting
    /// it; `false` where that was not looked for).
    pub fn has_no_cr(&self) -> bool {
        self.no_cr
    }

    /// Bytes before the first line: a byte-order mark, or nothing.
    pub fn prefix_len(&self) -> usize {
        self.starts.get(0) as usize
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where line `i` starts; the text's end for `i >= len()`.
    pub fn start(&self, i: usize) -> usize {
        self.starts.get(i.min(self.len())) as usize
    }

    /// Line `i` with its ending.
    pub fn raw(&self, i: usize) -> &'a str {
        raw_line(self.text, &self.starts, i)
    }

    /// Line `i` without its ending.
    pub fn line(&self, i: usize) -> &'a str {
        line_at(self.text, &self.starts, i)
    }

    /// Every line without its ending, in order: a walk over all of them
    /// without looking each one's start up.
    pub fn lines(&self) -> impl Iterator<Item = &'a str> + '_ {
        let mut starts = self.starts.iter();
        let mut at = starts.next().unwrap_or(0) as usize;
        starts.map(move |end| {
            let raw = &self.text[at..end as usize];
            at = end as usize;
            without_eol(raw)
        })
    }

    /// Where a line feed ends a line right after a space or a tab, as
    /// offsets, ascending: noted by the split if it was asked to, else
    /// (a file split without) a byte check at each line's end, not a scan
    /// of the whole text.
    pub fn blank_ended(&self) -> &[u32] {
        self.blank_ended.get_or_init(|| {
            let ends = self.starts.iter().skip(1).map(|s| s as usize - 1);
            ends.filter(|&i| blank_end(self.text.as_bytes(), i))
                .map(|i| i as u32)
                .collect()
        })
    }

    /// The ending of line `i`: `"\n"`, `"\r\n"` or `""` for a last line without one.
    pub fn eol(&self, i: usize) -> &'a str {
        let raw = self.raw(i);
        &raw[self.line(i).len()..]
    }

    /// The byte span of lines `start..end`, without the final line end.
    pub fn span_of(&self, start: usize, end: usize) -> (usize, usize) {
        let s = self.starts.get(start.min(self.len())) as usize;
        let e = (self.starts.get(end.min(self.len())) as usize).max(s);
        (s, s + self.text[s..e].trim_end_matches(['\n', '\r']).len())
    }

    /// Whether line `i` is blank (whitespace only).
    pub fn is_blank(&self, i: usize) -> bool {
        trim(self.line(i)).is_empty()
    }

    /// The byte range of lines `r` for a label, without the final line end
    /// (an empty region: its place).
    pub fn label_span(&self, r: Region) -> crate::ir::Span {
        let (s, e) = self.span_of(r.start, r.end.max(r.start));
        crate::ir::Span::new(s, e)
    }
}

/// The kinds of line key an index is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Exact,
    TrailingWhitespace,
    Trimmed,
    Normalized,
    /// Trimmed, without a leading decoration (numbering, bullet, comment marker).
    Undecorated,
}

/// How many kinds of key there are.
pub(super) const KEYS: usize = 5;

impl Key {
    /// The key lines are compared by at `level`.
    pub fn at(level: Level) -> Key {
        match level {
            Level::Exact => Key::Exact,
            Level::TrailingWhitespace => Key::TrailingWhitespace,
            Level::Trimmed | Level::BlankLinesIgnored | Level::SoftStart => Key::Trimmed,
            Level::Normalized => Key::Normalized,
        }
    }

    #[inline]
    pub fn of(self, line: &str) -> Cow<'_, str> {
        match self {
            Key::Exact => Cow::Borrowed(line),
            Key::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            Key::Trimmed => Cow::Borrowed(trim(line)),
            Key::Normalized => normalize(trim(line)),
            Key::Undecorated => Cow::Borrowed(strip_decoration(trim(line))),
        }
    }
}

/// Whether `bytes[i]` is a line feed right after a space or a tab.
fn blank_end(bytes: &[u8], i: usize) -> bool {
    i > 0 && bytes[i] == b'\n' && matches!(bytes[i - 1], b' ' | b'\t')
}

/// Line `i` of `text`, whose lines start at `starts`, with its ending.
fn raw_line<'a>(text: &'a str, starts: &Starts, i: usize) -> &'a str {
    &text[starts.get(i) as usize..starts.get(i + 1) as usize]
}

/// Line `i` of `text` without its ending.
pub(super) fn line_at<'a>(text: &'a str, starts: &Starts, i: usize) -> &'a str {
    without_eol(raw_line(text, starts, i))
}

/// A line without its `\n`, `\r\n` or `\r`.
fn without_eol(raw: &str) -> &str {
    let raw = raw.strip_suffix('\n').unwrap_or(raw);
    raw.strip_suffix('\r').unwrap_or(raw)
}

/// The hash the line index files a key under: foldhash with a fixed seed
/// (the same key hashes the same in every index of the run), sixteen bytes
/// a step; collisions are checked anyway.
pub fn hash_key(text: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x5eed).hash_one(text)
}

/// Folds the typographic punctuation and spaces models write for ASCII
/// (the same classes Codex's `apply_patch` folds): dashes to `-`, single
/// quotes to `'`, double quotes to `"`, exotic spaces to ` `.
fn normalize(line: &str) -> Cow<'_, str> {
    if line.is_ascii() {
        return Cow::Borrowed(line);
    }
    Cow::Owned(
        line.chars()
            .map(|c| match c {
                '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
                '\u{2018}'..='\u{201B}' => '\'',
                '\u{201C}'..='\u{201F}' => '"',
                '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
                c => c,
            })
            .collect(),
    )
}

/// Strips what carries no meaning at the start of a line: whitespace,
/// comment openers, bullets, diff markers and list numbering (ap §3.6).
pub fn strip_decoration(s: &str) -> &str {
    let mut s = s;
    loop {
        let t = s.trim_start();
        let t = [
            "<!--", "//", "/*", "--", "#", ";", "*", "-", "+", "\u{2022}", ">",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .or_else(|| {
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            (digits > 0)
                .then(|| t[digits..].strip_prefix(['.', ')']))
                .flatten()
        })
        .unwrap_or(t);
        if t.len() == s.len() {
            return s;
        }
        s = t;
    }
}

/// The soft start: `file` is `want` with decoration in front.
pub fn soft_eq(file: &str, want: &str) -> bool {
    file.len() > want.len()
        && file.ends_with(want)
        && strip_decoration(&file[..file.len() - want.len()]).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Read from the bytes, "no line ends in whitespace" is what
        /// trimming each line's end says, whatever ends the lines.
        #[test]
        fn bare_ends_are_what_trimming_says(
            text in "\u{feff}?[a \t\r\n\u{a0}\u{3000}\u{85}é\x0b]{0,24}",
            lone_cr in any::<bool>(),
        ) {
            let file = FileText::with_breaks(&text, lone_cr);
            let trimmed = (0..file.len()).all(|i| file.line(i).trim_end() == file.line(i));
            prop_assert_eq!(file.ends_bare(), trimmed);
        }
    }

    #[test]
    fn lines_keep_their_endings() {
        let f = FileText::new("a\r\nb\nc");
        assert_eq!(f.len(), 3);
        assert_eq!((f.line(0), f.eol(0)), ("a", "\r\n"));
        assert_eq!((f.line(1), f.eol(1)), ("b", "\n"));
        assert_eq!((f.line(2), f.eol(2)), ("c", ""));
        assert_eq!(FileText::new("").len(), 0);
        let cr = FileText::with_breaks("one\r\ntwo\rthree\n", true);
        assert_eq!(cr.len(), 3);
        assert_eq!((cr.line(1), cr.eol(1)), ("two", "\r"));
        assert_eq!(FileText::new("one\r\ntwo\rthree\n").len(), 2);
        let bom = FileText::new("\u{feff}first\nsecond\n");
        assert_eq!((bom.len(), bom.line(0), bom.prefix_len()), (2, "first", 3));
        assert_eq!(FileText::new("\u{feff}").len(), 0);
        assert_eq!(FileText::new("x\n").len(), 1);
        let end_cr = FileText::with_breaks("a\rb\r", true);
        assert_eq!(
            (end_cr.len(), end_cr.line(1), end_cr.eol(1)),
            (2, "b", "\r")
        );
        assert_eq!(FileText::with_breaks("a\r", false).line(0), "a");
        // Known to hold no `\r` only where it was searched for.
        let no_cr = |t, lone_cr| FileText::with_breaks(t, lone_cr).has_no_cr();
        assert!(no_cr("a\nb", true));
        assert!(!no_cr("a\r\nb", true) && !no_cr("a\nb\r", true) && !no_cr("a\nb", false));
        // Lines long enough that a run of 64 spans over 64 KiB.
        let long: String = (0..200)
            .map(|i| format!("{i}{}\n", "x".repeat(1500)))
            .collect();
        let f = FileText::new(&long);
        assert_eq!(f.len(), 200);
        assert!((0..200).all(|i| f.line(i) == format!("{i}{}", "x".repeat(1500))));
    }

    /// Every `\n` right after a space or a tab and no other, whatever the
    /// file's breaks (a lone `\r`, `\r\n`, a byte-order mark, no final
    /// line end), and in a file whose lines are too long for runs.
    #[test]
    fn blank_ended_are_every_line_feed_after_a_blank() {
        let mut texts: Vec<String> = [
            "",
            "\n",
            " \n",
            "\u{feff} \n",
            "a \nb\t\n\n \n\tc \n\n",
            "a \r\nb \r \nc\t\r\n \t",
            " \r\n\t\n \r",
        ]
        .map(String::from)
        .to_vec();
        texts.push(
            (0..3000)
                .map(|i| [' ', '\n', 'x', '\t', '\r'][i % 7 % 5])
                .collect(),
        );
        texts.push(
            (0..200)
                .map(|i| format!("{}{}\n", "y".repeat(1500), [" ", ""][i % 2]))
                .collect(),
        );
        // Runs of short lines, then lines too long for runs: the split
        // goes over to a run a line after noting blank ends.
        texts.push("a \n".repeat(130) + &format!("{} \n", "z".repeat(70_000)).repeat(3));
        for t in texts {
            let b = t.as_bytes();
            let want: Vec<u32> = (1..b.len())
                .filter(|&i| b[i] == b'\n' && matches!(b[i - 1], b' ' | b'\t'))
                .map(|i| i as u32)
                .collect();
            for lone_cr in [false, true] {
                let f = FileText::with_breaks(&t, lone_cr);
                assert_eq!(f.blank_ended(), want, "{t:?}, lone_cr {lone_cr}");
                // Noted by the split: the same, and the same lines.
                let noted = FileText::split(&t, lone_cr, true);
                assert_eq!(noted.blank_ended.get().map(Vec::as_slice), Some(&want[..]));
                assert!((0..=f.len()).all(|i| noted.start(i) == f.start(i)));
                assert_eq!(noted.len(), f.len());
            }
        }
    }

    /// A file read ahead is split breaking at a lone `\r` and noting blank
    /// ends; the planner takes those lines exactly where its own split
    /// would make the same ones. A text with a `\r` split so is not taken
    /// where a lone `\r` does not break a line, nor lines of a text of
    /// another length; what the split learnt of `\r`s is kept.
    #[test]
    fn lines_made_ahead_are_taken_only_where_they_are_the_texts_own() {
        let texts = [
            "",
            "a\nb",
            "\u{feff}a \n\tb\n",
            "a\r\nb\r\n",
            "a\rb\nc\r",
            "x\n".repeat(5000).as_str(),
        ]
        .map(String::from);
        for t in &texts {
            let cr = t.contains('\r');
            for lone_cr in [false, true] {
                let own = FileText::with_breaks(t, lone_cr);
                let made = Split::of(t, true, true);
                let taken = made.fits(t, lone_cr);
                assert_eq!(taken, lone_cr || !cr, "{t:?}, lone_cr {lone_cr}");
                let f = FileText::adopt(t, Some(made), lone_cr, false);
                assert_eq!(f.len(), own.len(), "{t:?}, lone_cr {lone_cr}");
                assert!((0..=f.len()).all(|i| f.start(i) == own.start(i)));
                assert_eq!(f.blank_ended(), own.blank_ended());
                // Searched for a `\r` (by the split made ahead, or by its
                // own with `lone_cr`): it says there is none just where
                // there is none.
                assert_eq!(f.has_no_cr(), !cr && (taken || lone_cr));
            }
            // A longer text: its own lines, not those made of `t`.
            let other = format!("{t}\n");
            let f = FileText::adopt(&other, Some(Split::of(t, true, true)), true, false);
            let own = FileText::with_breaks(&other, true);
            assert_eq!(f.len(), own.len());
            assert!((0..=f.len()).all(|i| f.start(i) == own.start(i)));
        }
    }

    #[test]
    fn decoration_is_numbering_bullets_and_comment_markers_only() {
        assert!(soft_eq("# 1. First item", "First item"));
        assert!(soft_eq("- [x]", "[x]"));
        assert!(soft_eq("// 2) step", "step"));
        assert!(!soft_eq("self.count = 0", "count = 0"));
        assert!(!soft_eq("x", "x"));
        assert_eq!(strip_decoration("  * 12. foo"), "foo");
    }
}
