//! What a file will contain, described rather than copied: a list of pieces,
//! each a range of the file's original text or a slice of the patch text.
//!
//! Planning must finish for every file before anything is written, so a
//! materialised copy of every new file would sit in memory beside every
//! original. Pieces cost a few bytes per edited line instead; the commit
//! streams them to the file. A patch of many files need not hold every
//! original either: an output may let its original go
//! ([`Output::release`]), keeping what the results need and a hash, and
//! the commit reads the file again and writes only if it hashes the same
//! ([`Output::restore`]).

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::lossless;

/// The new content of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output<'p> {
    /// The file's current text (empty for a new file): the source of
    /// `Piece::Original`, and what the rollback restores.
    pub original: String,
    pieces: Vec<Piece<'p>>,
    /// The text [`Piece::Original`] ranges index into when it is not the
    /// file's: a new file's content that edits then applied to (ap
    /// `CREATE` or `RECREATE` followed by modifications).
    base: Option<String>,
    /// Whether `original` carries escaped bytes, asked once: the commit
    /// asks for the pieces' bytes and the original's.
    escapes: OnceLock<bool>,
    /// Set when `original` was let go: what was known of it then.
    released: Option<Released>,
}

/// What a released output keeps of its original: enough to answer for
/// the results, and to tell the file's text again when it is read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Released {
    len: usize,
    hash: u64,
    counts: (usize, usize),
    unchanged: bool,
}

/// The hash a released original is known by: keyed afresh in each
/// process, so no text can be made to collide with another on purpose.
fn text_hash(text: &str) -> u64 {
    use std::hash::BuildHasher;
    static STATE: std::sync::OnceLock<foldhash::quality::RandomState> = std::sync::OnceLock::new();
    STATE.get_or_init(Default::default).hash_one(text)
}

/// A range of the original, or a slice of the patch text: 16 bytes (a
/// pair of `u32` fits beside the slice's pointer), where `usize` offsets
/// took 24, and a large edited file has tens of thousands of pieces. The
/// planner refuses texts of 4 GiB or more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'p> {
    Original(u32, u32),
    Text(&'p str),
}

/// Pieces collected by a [`Builder`], ready to join their original text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pieces<'p>(Vec<Piece<'p>>);

/// Collects pieces while the original text is borrowed (by the line index).
pub struct Builder<'p, 'o> {
    original: &'o str,
    pieces: Vec<Piece<'p>>,
    /// The patch text: a text that follows the last one directly in it
    /// joins it, one piece (see [`Builder::joining`]).
    source: &'p str,
}

impl<'p, 'o> Builder<'p, 'o> {
    pub fn new(original: &'o str) -> Self {
        debug_assert!(original.len() < u32::MAX as usize);
        Builder {
            original,
            pieces: vec![],
            source: "",
        }
    }

    /// A builder whose texts from `source` (the patch text) join where
    /// they follow each other there, with room for about `room` pieces
    /// taken at once: ap's content is lines of the patch as they stand,
    /// so a block of them is one piece, not a piece (or two) a line.
    pub fn joining(original: &'o str, source: &'p str, room: usize) -> Self {
        Builder {
            pieces: Vec::with_capacity(room),
            source,
            ..Builder::new(original)
        }
    }

    /// Appends `original[start..end]`, joining it to an adjacent original range.
    pub fn push_original(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let (start, end) = (start as u32, end as u32);
        if let Some(Piece::Original(_, last_end)) = self.pieces.last_mut() {
            if *last_end == start {
                *last_end = end;
                return;
            }
        }
        self.pieces.push(Piece::Original(start, end));
    }

    pub fn push_text(&mut self, text: &'p str) {
        if text.is_empty() {
            return;
        }
        if let Some(Piece::Text(last)) = self.pieces.last_mut() {
            if let Some(joined) = adjacent(self.source, last, text) {
                *last = joined;
                return;
            }
        }
        self.pieces.push(Piece::Text(text));
    }

    fn text(&self, piece: Piece<'p>) -> &str {
        match piece {
            Piece::Original(s, e) => &self.original[s as usize..e as usize],
            Piece::Text(t) => t,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Whether the text so far ends with a line end: `\n`, or `eol` (a
    /// lone `\r` where the file's lines end so).
    pub fn ends_with_newline(&self, eol: &str) -> bool {
        self.pieces.last().is_some_and(|&p| {
            let t = self.text(p);
            t.ends_with('\n') || t.ends_with(eol)
        })
    }

    /// Removes the final line end (`\n` or `\r\n`), if there is one.
    pub fn trim_final_eol(&mut self) {
        let Some(last) = self.pieces.pop() else {
            return;
        };
        let text = self.text(last);
        let kept = text
            .strip_suffix('\n')
            .map_or(text, |t| t.strip_suffix('\r').unwrap_or(t))
            .len();
        let trimmed = match last {
            Piece::Original(s, _) => Piece::Original(s, s + kept as u32),
            Piece::Text(t) => Piece::Text(&t[..kept]),
        };
        if kept > 0 {
            self.pieces.push(trimmed);
        }
    }

    pub fn finish(self) -> Pieces<'p> {
        Pieces(self.pieces)
    }
}

impl<'p> Output<'p> {
    /// `pieces` must have been built over this same `original`.
    pub fn new(original: String, pieces: Pieces<'p>) -> Self {
        Output {
            original,
            pieces: pieces.0,
            base: None,
            escapes: OnceLock::new(),
            released: None,
        }
    }

    /// This output, told whether its original was found plain when it was
    /// read (`lossless::Decoded::plain`): a plain one is not searched for
    /// escapes again when it is written, a pass over the whole file.
    pub fn known_plain(self, plain: bool) -> Self {
        if plain {
            let _ = self.escapes.set(false);
        }
        self
    }

    /// `pieces` built over `base`, which replaces `original` (kept for
    /// the rollback and to tell whether anything changed).
    pub fn over(original: String, base: String, pieces: Pieces<'p>) -> Self {
        Output {
            original,
            pieces: pieces.0,
            base: Some(base),
            escapes: OnceLock::new(),
            released: None,
        }
    }

    /// This output, written over the text `earlier` leaves, as one output
    /// over `earlier`'s original (a path that two blocks changed in turn).
    pub fn after(self, earlier: Output<'p>) -> Self {
        Output {
            original: earlier.original,
            pieces: self.pieces,
            base: Some(self.base.unwrap_or(self.original)),
            escapes: earlier.escapes,
            released: None,
        }
    }

    /// Lets the original text go, where the pieces index into it (not
    /// into a text edits built first): the counts and whether anything
    /// changed are kept, with the text's length and hash, for
    /// [`Output::restore`].
    pub fn release(&mut self) {
        if self.released.is_some() || self.base.is_some() || self.original.is_empty() {
            return;
        }
        self.released = Some(Released {
            len: self.original.len(),
            hash: text_hash(&self.original),
            counts: self.counts(),
            unchanged: self.is_unchanged(),
        });
        self.original = String::new();
    }

    /// Whether the original was let go ([`Output::release`]).
    pub fn is_released(&self) -> bool {
        self.released.is_some()
    }

    /// This output over `text`, the file read again, if it is the text the
    /// output was planned over (its length and hash); `None` if the file
    /// changed since. An output that kept its original is itself.
    pub fn restore(&self, text: String) -> Option<Cow<'_, Output<'p>>> {
        let Some(r) = self.released else {
            return Some(Cow::Borrowed(self));
        };
        (text.len() == r.len && text_hash(&text) == r.hash).then(|| {
            Cow::Owned(Output {
                original: text,
                pieces: self.pieces.clone(),
                base: None,
                escapes: OnceLock::new(),
                released: None,
            })
        })
    }

    fn text(&self, piece: &Piece<'p>) -> &str {
        match *piece {
            Piece::Original(s, e) => {
                debug_assert!(self.released.is_none(), "restore a released output first");
                &self.base.as_deref().unwrap_or(&self.original)[s as usize..e as usize]
            }
            Piece::Text(t) => t,
        }
    }

    /// What the pieces change in the original, in order: `each(text,
    /// false)` for each range of it they leave out, `each(text, true)` for
    /// each text they add. (Pieces `assemble` builds run forward through
    /// the original.) Walked, not collected: a large file has tens of
    /// thousands of pieces.
    pub fn changes(&self, mut each: impl FnMut(&str, bool)) {
        let base = self.base.as_deref().unwrap_or(&self.original);
        let mut at = 0;
        for piece in &self.pieces {
            match *piece {
                Piece::Original(s, e) => {
                    let (s, e) = (s as usize, e as usize);
                    if s > at {
                        each(&base[at..s], false);
                    }
                    at = at.max(e);
                }
                Piece::Text(t) => each(t, true),
            }
        }
        if at < base.len() {
            each(&base[at..], false);
        }
    }

    /// Lines added and removed, as a diff of the original and the content
    /// counts them (`--numstat`): each region the pieces change is its
    /// removed text against its added text, with the lines the two share
    /// at its ends not counted. Linear in the changed regions; pieces over
    /// another text than the file's (a path two blocks changed in turn)
    /// are counted as one region, the whole file against the content.
    pub fn counts(&self) -> (usize, usize) {
        if let Some(r) = self.released {
            return r.counts;
        }
        if self.base.is_some() {
            return region_counts(&self.original, &self.to_text());
        }
        let (mut added, mut removed) = (0, 0);
        // A region: the original's range the pieces leave out, and the
        // texts they put there (most often one, read in place).
        let mut texts: Vec<&str> = vec![];
        let mut joined = String::new();
        let mut region = |gone: &str, texts: &mut Vec<&str>| {
            let new = match texts.len() {
                0 => "",
                1 => texts[0],
                _ => {
                    joined.clear();
                    texts.iter().for_each(|t| joined.push_str(t));
                    joined.as_str()
                }
            };
            let (a, r) = region_counts(gone, new);
            added += a;
            removed += r;
            texts.clear();
        };
        let mut at = 0;
        for piece in &self.pieces {
            match *piece {
                Piece::Original(s, e) => {
                    let (s, e) = (s as usize, e as usize);
                    if s > at || !texts.is_empty() {
                        region(&self.original[at.min(s)..s.max(at)], &mut texts);
                    }
                    at = at.max(e);
                }
                Piece::Text(t) => texts.push(t),
            }
        }
        if at < self.original.len() || !texts.is_empty() {
            region(&self.original[at.min(self.original.len())..], &mut texts);
        }
        (added, removed)
    }

    /// How many pieces [`Output::counts`] walks: none once the original
    /// was let go (its counts were kept).
    pub fn pieces_to_count(&self) -> usize {
        match self.released {
            Some(_) => 0,
            None => self.pieces.len(),
        }
    }

    /// How many lines the content has.
    pub fn line_count(&self) -> usize {
        let (newlines, last) = self.texts().fold((0, None), |(n, last), t| {
            (
                n + t.bytes().filter(|&b| b == b'\n').count(),
                t.bytes().last().or(last),
            )
        });
        newlines + usize::from(last.is_some_and(|b| b != b'\n'))
    }

    /// Whether the pieces index into the file's own text.
    pub fn base_is_original(&self) -> bool {
        self.base.is_none()
    }

    /// The content, in order, as text slices.
    fn texts(&self) -> impl Iterator<Item = &str> + '_ {
        self.pieces.iter().map(|p| self.text(p))
    }

    /// The content, in order, as the bytes to write: the text's own bytes
    /// unless it carries bytes that are not UTF-8 (see [`crate::lossless`]).
    /// When none does (the usual case), one list of slices of the text
    /// itself, 16 bytes a piece: the commit's peak, where a large edited
    /// file has tens of thousands of pieces.
    ///
    /// Whether a piece carries escaped bytes is asked of the text its
    /// ranges index into once, not of each range (a second pass over a
    /// large file's bytes).
    pub fn bytes(&self) -> Bytes<'_> {
        let source = match &self.base {
            Some(base) => lossless::has_escapes(base),
            None => self.original_escapes(),
        };
        let escapes = |p: &Piece| match p {
            Piece::Original(..) => false,
            Piece::Text(t) => lossless::has_escapes(t),
        };
        if !source && !self.pieces.iter().any(escapes) {
            Bytes::Plain(self.texts().map(str::as_bytes).collect())
        } else {
            Bytes::Encoded(self.texts().map(lossless::encode).collect())
        }
    }

    /// The original file's bytes, for the rollback.
    #[cfg(feature = "internals")]
    pub fn original_bytes(&self) -> Cow<'_, [u8]> {
        match self.original_escapes() {
            false => Cow::Borrowed(self.original.as_bytes()),
            true => lossless::encode(&self.original),
        }
    }

    fn original_escapes(&self) -> bool {
        *self
            .escapes
            .get_or_init(|| lossless::has_escapes(&self.original))
    }

    pub fn len(&self) -> usize {
        self.texts().map(str::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the content equals `text`, without building it.
    pub fn equals(&self, text: &str) -> bool {
        let mut at = 0;
        for chunk in self.texts() {
            if text.get(at..at + chunk.len()) != Some(chunk) {
                return false;
            }
            at += chunk.len();
        }
        at == text.len()
    }

    /// Whether the content is the original text, unchanged.
    pub fn is_unchanged(&self) -> bool {
        match self.released {
            Some(r) => r.unchanged,
            None => self.equals(&self.original),
        }
    }

    /// The content as one string.
    pub fn to_text(&self) -> String {
        self.texts().collect()
    }

    /// The content as one buffer of bytes (for the in-memory tree and tests).
    pub fn to_vec(&self) -> Vec<u8> {
        self.bytes().slices().concat()
    }
}

/// `a` and then `b` as one slice of `source`, when both lie in it and `b`
/// starts where `a` ends. Offsets are taken from the pointers only to find
/// the one slice of `source` that covers both; a slice from elsewhere
/// (a line end of the program's own) is not in `source` and joins nothing.
fn adjacent<'p>(source: &'p str, a: &str, b: &str) -> Option<&'p str> {
    let base = source.as_ptr() as usize;
    let start = (a.as_ptr() as usize).checked_sub(base)?;
    let mid = (b.as_ptr() as usize).checked_sub(base)?;
    let end = mid.checked_add(b.len())?;
    (start.checked_add(a.len()) == Some(mid) && end <= source.len())
        .then(|| source.get(start..end))
        .flatten()
}

/// An output's bytes, as [`Output::bytes`] makes them.
pub enum Bytes<'a> {
    /// Slices of the text itself.
    Plain(Vec<&'a [u8]>),
    /// Chunks with their escaped bytes restored.
    Encoded(Vec<Cow<'a, [u8]>>),
}

impl Bytes<'_> {
    /// The bytes as slices, as a tree writes them.
    pub fn slices(&self) -> Cow<'_, [&[u8]]> {
        match self {
            Bytes::Plain(s) => Cow::Borrowed(s),
            Bytes::Encoded(c) => Cow::Owned(c.iter().map(AsRef::as_ref).collect()),
        }
    }
}

/// How many lines `text` has (a last line without a line end counts).
pub fn line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// Lines added and removed where `gone` became `new`: the lines the two
/// share at their start and end are kept, the rest counted. No copies, and
/// no walk line by line: the lines shared at the start are those the
/// texts' common start holds whole, and at the end those their common end
/// does (see `tests::by_lines`, the walk this stands for).
fn region_counts(gone: &str, new: &str) -> (usize, usize) {
    let (old_n, new_n) = (line_count(gone), line_count(new));
    let (g, n) = (gone.as_bytes(), new.as_bytes());
    let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    // Each line end in the common start ends a line both have (a last
    // line without one, in two texts that are the same, is counted at
    // their end).
    let head = newlines(&g[..common_start(g, n)]);
    // Each line end in the common end (the texts' last byte aside) starts
    // a line both have, and so does the common end's first byte where it
    // starts a line in both texts. No more than the lines the start left.
    let s = common_end(g, n);
    let starts_line = |b: &[u8]| b.len() == s || b[b.len() - s - 1] == b'\n';
    let first = starts_line(g) && starts_line(n);
    let end = &g[g.len() - s..];
    let inner = end.split_last().map_or(end, |(_, rest)| rest);
    let tail = (newlines(inner) + usize::from(first)).min(old_n.min(new_n) - head);
    (new_n - head - tail, old_n - head - tail)
}

/// How many bytes `a` and `b` share at their start.
fn common_start(a: &[u8], b: &[u8]) -> usize {
    common(a, b, |s, i| s[i])
}

/// How many bytes `a` and `b` share at their end.
fn common_end(a: &[u8], b: &[u8]) -> usize {
    common(a, b, |s, i| s[s.len() - 1 - i])
}

/// How many bytes `a` and `b` share, read by `at` (byte `i` from the side
/// compared), eight at a time.
fn common(a: &[u8], b: &[u8], at: impl Fn(&[u8], usize) -> u8) -> usize {
    let len = a.len().min(b.len());
    // Bytes `i..i + 8` from the side compared, nearest it lowest.
    let word = |s: &[u8], i: usize| {
        let mut w = [0; 8];
        w.iter_mut()
            .enumerate()
            .for_each(|(j, w)| *w = at(s, i + j));
        u64::from_le_bytes(w)
    };
    let mut i = 0;
    while i + 8 <= len {
        let diff = word(a, i) ^ word(b, i);
        if diff != 0 {
            return i + diff.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    i + (i..len).take_while(|&j| at(a, j) == at(b, j)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line-by-line walk [`region_counts`] stands for.
    fn by_lines(gone: &str, new: &str) -> (usize, usize) {
        let (old_n, new_n) = (line_count(gone), line_count(new));
        let lines = |t| str::split_inclusive(t, '\n');
        let head = lines(gone)
            .zip(lines(new))
            .take_while(|(a, b)| a == b)
            .count();
        let tail = lines(gone)
            .rev()
            .zip(lines(new).rev())
            .take(old_n.min(new_n) - head)
            .take_while(|(a, b)| a == b)
            .count();
        (new_n - head - tail, old_n - head - tail)
    }

    proptest::proptest! {
        /// Texts of a few short lines, most alike, ending with a line end
        /// or not: the counts are the walk's.
        #[test]
        fn region_counts_are_the_line_walk_s(
            gone in "(a|b|ab|\n|ba|aaaaaaaaa|\r){0,14}",
            new in "(a|b|ab|\n|ba|aaaaaaaaa|\r){0,14}",
            shared in "(a|\n|b){0,20}",
        ) {
            for (g, n) in [
                (gone.clone(), new.clone()),
                (format!("{shared}{gone}"), format!("{shared}{new}")),
                (format!("{gone}{shared}"), format!("{new}{shared}")),
                (format!("{shared}{gone}{shared}"), format!("{shared}{new}{shared}")),
                (gone.clone(), gone.clone()),
            ] {
                proptest::prop_assert_eq!(region_counts(&g, &n), by_lines(&g, &n), "{:?} {:?}", g, n);
            }
        }
    }

    #[test]
    fn common_start_and_end_count_bytes_past_eight() {
        let a = b"0123456789abcdefXYZ";
        let b = b"0123456789abcdefxYZ";
        assert_eq!(common_start(a, b), 16);
        assert_eq!(common_end(a, b), 2);
        assert_eq!(common_start(a, a), a.len());
        assert_eq!(common_end(&a[3..], a), a.len() - 3);
        assert_eq!(common_end(b"Q0123456789abcdefg", b"R0123456789abcdefg"), 17);
        assert_eq!((common_start(b"", a), common_end(a, b"")), (0, 0));
    }

    #[test]
    fn a_piece_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Piece>(), 16);
    }

    #[test]
    fn pieces_join_trim_and_compare() {
        let original = "a\r\nb\r\n".to_string();
        let mut b = Builder::new(&original);
        b.push_original(0, 3);
        b.push_original(3, 6);
        assert_eq!(b.pieces.len(), 1);
        b.push_text("c");
        b.push_text("\r\n");
        assert!(b.ends_with_newline("\n"));
        b.trim_final_eol();
        let pieces = b.finish();
        let out = Output::new(original.clone(), pieces);
        assert_eq!(out.to_vec(), b"a\r\nb\r\nc");
        assert_eq!(out.len(), 7);
        assert!(out.equals("a\r\nb\r\nc") && !out.equals("a\r\nb\r\nc\n") && !out.is_unchanged());
        let x = "x\n".to_string();
        let mut b = Builder::new(&x);
        b.push_original(0, 2);
        assert!(Output::new(x.clone(), b.finish()).is_unchanged());
        let mut b = Builder::new(&x);
        b.push_original(0, 2);
        b.trim_final_eol();
        assert_eq!(Output::new(x.clone(), b.finish()).to_vec(), b"x");
        assert!(Output::new(String::new(), Pieces::default()).is_empty());
    }

    /// Texts join only where they follow each other in the patch text.
    #[test]
    fn patch_texts_join_only_where_they_are_adjacent() {
        let source = "one\ntwo\n+three\n".to_string();
        let original = String::new();
        let mut b = Builder::joining(&original, &source, 4);
        b.push_text(&source[0..3]);
        b.push_text(&source[3..4]);
        b.push_text(&source[4..8]);
        assert_eq!(b.pieces, [Piece::Text("one\ntwo\n")]);
        // The `+` stands between: no join.
        b.push_text(&source[9..14]);
        // A line end of the program's own, equal text but elsewhere.
        b.push_text("\n");
        assert_eq!(b.pieces.len(), 3);
        let joined = Output::new(original.clone(), b.finish()).to_text();
        assert_eq!(joined, "one\ntwo\nthree\n");
        // Without a source, nothing joins.
        let mut b = Builder::new(&original);
        b.push_text(&source[0..4]);
        b.push_text(&source[4..8]);
        assert_eq!(b.pieces.len(), 2);
        assert_eq!(adjacent(&source, &source[0..4], &source[5..8]), None);
        assert_eq!(adjacent(&source, "x", &source[0..1]), None);
    }

    /// Counts are of the lines each region changes, less the lines its
    /// two sides share at their ends; a last line without a newline counts.
    #[test]
    fn counts_leave_out_lines_shared_at_a_region_s_ends() {
        assert_eq!(region_counts("a\nb\nc\n", "a\nB\nc\n"), (1, 1));
        assert_eq!(region_counts("", "x\ny"), (2, 0));
        assert_eq!(region_counts("x\n", ""), (0, 1));
        assert_eq!(region_counts("same\n", "same\n"), (0, 0));
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count(""), 0);
        let original = "one\ntwo\nthree\n".to_string();
        let mut b = Builder::new(&original);
        b.push_original(0, 4);
        b.push_text("TWO\n2\n");
        b.push_original(8, 14);
        let out = Output::new(original.clone(), b.finish());
        assert_eq!(out.counts(), (2, 1));
        assert_eq!(out.line_count(), 4);
    }
}
