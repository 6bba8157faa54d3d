//! Pure line search over a file's text: where does a block of lines occur?
//!
//! Passes, each only after the previous found nothing:
//! 1. exact;
//! 2. each [`Relax`] the locator allows (trailing whitespace ignored, then
//!    surrounding whitespace ignored).
//!
//! Checking one position costs the block's length. Searching the whole file
//! uses an index from line text to positions, built once per file and pass
//! on first need, and walks only the positions of the block's rarest line,
//! so a patch with many hunks stays linear in file size plus hunk lines.
//! The nearest-region search for error messages uses the same index.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;

use crate::ir::{Line, Relax};

/// A file's text split into lines, keeping each line's ending.
pub struct FileText<'a> {
    pub text: &'a str,
    /// Byte offset of each line's start; one more entry holds `text.len()`.
    /// `u32` halves the index; the planner refuses files of 4 GiB or more.
    starts: Vec<u32>,
    indexes: [OnceCell<Index>; 4],
}

/// Sorted `(hash, line)` pairs, and where each run of pairs with the same
/// top hash bits starts: a lookup reads one bucket (a line or two on
/// average) instead of binary-searching the whole file, which on a large
/// file is a cache miss per step.
struct Index {
    entries: Vec<(u64, u32)>,
    /// `buckets[b]..buckets[b + 1]` holds the entries whose hash starts with `b`.
    buckets: Vec<u32>,
    shift: u32,
}

impl Index {
    fn new(entries: Vec<(u64, u32)>) -> Index {
        // About one bucket per four lines: a byte a line.
        let bits = entries.len().max(4).ilog2() - 1;
        let shift = 64 - bits;
        let mut buckets = Vec::with_capacity((1 << bits) + 1);
        let mut at = 0;
        for b in 0..=(1u64 << bits) {
            while at < entries.len() && (entries[at].0 >> shift) < b {
                at += 1;
            }
            buckets.push(at as u32);
        }
        Index {
            entries,
            buckets,
            shift,
        }
    }

    fn lookup(&self, h: u64) -> &[(u64, u32)] {
        let b = (h >> self.shift) as usize;
        let bucket = &self.entries[self.buckets[b] as usize..self.buckets[b + 1] as usize];
        let start = bucket.partition_point(|&(k, _)| k < h);
        let end = start + bucket[start..].partition_point(|&(k, _)| k == h);
        &bucket[start..end]
    }
}

impl<'a> FileText<'a> {
    pub fn new(text: &'a str) -> Self {
        Self::with_breaks(text, false)
    }

    /// Splits at `\n`, and with `lone_cr` also at a `\r` not followed by `\n`.
    pub fn with_breaks(text: &'a str, lone_cr: bool) -> Self {
        debug_assert!(text.len() < u32::MAX as usize);
        let bytes = text.as_bytes();
        let mut starts = Vec::with_capacity(text.len() / 32 + 2);
        // A byte-order mark belongs to the file, not to its first line.
        starts.push(if text.starts_with('\u{feff}') { 3 } else { 0 });
        if lone_cr {
            starts.extend(
                memchr::memchr2_iter(b'\n', b'\r', bytes)
                    .filter(|&i| bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n'))
                    .map(|i| i as u32 + 1),
            );
        } else {
            starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i as u32 + 1));
        }
        if *starts.last().unwrap_or(&0) as usize != text.len() {
            starts.push(text.len() as u32);
        }
        FileText {
            text,
            starts,
            indexes: Default::default(),
        }
    }

    /// Bytes before the first line: a byte-order mark, or nothing.
    pub fn prefix_len(&self) -> usize {
        self.starts[0] as usize
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` with its ending.
    pub fn raw(&self, i: usize) -> &'a str {
        &self.text[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// Line `i` without its ending.
    pub fn line(&self, i: usize) -> &'a str {
        let raw = self.raw(i);
        let raw = raw.strip_suffix('\n').unwrap_or(raw);
        raw.strip_suffix('\r').unwrap_or(raw)
    }

    /// The ending of line `i`: `"\n"`, `"\r\n"` or `""` for a last line without one.
    pub fn eol(&self, i: usize) -> &'a str {
        let raw = self.raw(i);
        &raw[self.line(i).len()..]
    }

    /// The byte span of lines `start..end`, without the final line end.
    pub fn span_of(&self, start: usize, end: usize) -> (usize, usize) {
        let s = self.starts[start.min(self.len())] as usize;
        let e = (self.starts[end.min(self.len())] as usize).max(s);
        (s, s + self.text[s..e].trim_end_matches(['\n', '\r']).len())
    }

    /// The line index for a pass: `(hash of the line's key, line)` for
    /// every line, sorted. 12 bytes a line and no allocation per distinct
    /// line; a hash collision only costs a comparison in `matches_at`.
    fn index(&self, relax: Option<Relax>) -> &Index {
        let slot = match relax {
            None => 0,
            Some(Relax::TrailingWhitespace) => 1,
            Some(Relax::Trimmed) => 2,
            Some(Relax::Normalized) => 3,
        };
        self.indexes[slot].get_or_init(|| {
            let mut entries: Vec<(u64, u32)> = (0..self.len())
                .map(|i| (hash_key(&key(self.line(i), relax)), i as u32))
                .collect();
            entries.sort_unstable();
            Index::new(entries)
        })
    }

    /// The lines whose key hashes like `line`'s, ascending.
    fn positions(&self, line: &str, relax: Option<Relax>) -> &[(u64, u32)] {
        self.positions_of_hash(hash_key(&key(line, relax)), relax)
    }

    /// The lines whose key under `relax` hashes to `h`, ascending.
    pub fn positions_of_hash(&self, h: u64, relax: Option<Relax>) -> &[(u64, u32)] {
        self.index(relax).lookup(h)
    }

    /// Whether `block` matches starting at line `at`.
    pub fn matches_at(&self, at: usize, block: &[Line], relax: Option<Relax>) -> bool {
        at.checked_add(block.len())
            .is_some_and(|end| end <= self.len())
            && block
                .iter()
                .enumerate()
                .all(|(j, l)| key(self.line(at + j), relax) == key(&l.text, relax))
    }

    /// Every start line where `block` (non-empty) matches, ascending, within `from..`.
    pub fn find_all(&self, block: &[Line], relax: Option<Relax>, from: usize) -> Vec<usize> {
        let Some((pivot, positions)) = block
            .iter()
            .enumerate()
            .map(|(j, l)| (j, self.positions(&l.text, relax)))
            .min_by_key(|(_, p)| p.len())
        else {
            return vec![];
        };
        positions
            .iter()
            .filter_map(|&(_, p)| (p as usize).checked_sub(pivot))
            .filter(|&start| start >= from && self.matches_at(start, block, relax))
            .collect()
    }

    /// The region most like `block`, by how many of its lines occur at the
    /// same offsets (whitespace ignored); ties go to the one nearest `hint`.
    pub fn nearest(&self, block: &[Line], hint: Option<usize>) -> Option<usize> {
        let mut votes: HashMap<usize, usize> = HashMap::new();
        for (j, l) in block.iter().enumerate() {
            if l.text.trim().is_empty() {
                continue;
            }
            let positions = self.positions(&l.text, Some(Relax::Trimmed));
            if positions.len() > 10_000 {
                continue;
            }
            for &(_, p) in positions {
                if key(self.line(p as usize), Some(Relax::Trimmed)) != l.text.trim() {
                    continue; // a hash collision
                }
                if let Some(start) = (p as usize).checked_sub(j) {
                    *votes.entry(start).or_default() += 1;
                }
            }
        }
        let hint = hint.unwrap_or(0);
        votes
            .into_iter()
            .max_by_key(|&(start, n)| (n, std::cmp::Reverse(start.abs_diff(hint))))
            .map(|(s, _)| s)
    }
}

/// The hash the line index files a key under. FNV-1a: fast on short
/// lines, and collisions are checked anyway.
pub fn hash_key(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// [`hash_key`]'s FNV-1a as a `Hasher`, for maps keyed by lines (std's
/// SipHash costs more than the lookups it serves).
#[derive(Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`Fnv`] hashers.
pub type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

/// A line as a pass compares it.
pub fn key(line: &str, relax: Option<Relax>) -> Cow<'_, str> {
    match relax {
        None => Cow::Borrowed(line),
        Some(Relax::TrailingWhitespace) => Cow::Borrowed(line.trim_end()),
        Some(Relax::Trimmed) => Cow::Borrowed(line.trim()),
        Some(Relax::Normalized) => normalize(line.trim()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn block<'a>(lines: &[&'a str]) -> Vec<Line<'a>> {
        Line::unplaced(lines)
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
    }

    #[test]
    fn find_all_uses_each_pass() {
        let f = FileText::new("x\n  y  \nz\nx\ny\nz\n");
        assert_eq!(f.find_all(&block(&["x", "y"]), None, 0), vec![3]);
        assert_eq!(
            f.find_all(&block(&["x", "  y"]), Some(Relax::TrailingWhitespace), 0),
            vec![0]
        );
        assert_eq!(
            f.find_all(&block(&["x", "y"]), Some(Relax::Trimmed), 0),
            vec![0, 3]
        );
        assert_eq!(
            f.find_all(&block(&["x", "y"]), Some(Relax::Trimmed), 1),
            vec![3]
        );
        assert_eq!(f.find_all(&block(&["q"]), None, 0), Vec::<usize>::new());
        let typo = FileText::new("say(\u{201C}hi\u{201D}) \u{2014} ok\n");
        assert_eq!(
            typo.find_all(&block(&["say(\"hi\") - ok"]), Some(Relax::Trimmed), 0),
            Vec::<usize>::new()
        );
        assert_eq!(
            typo.find_all(&block(&["  say(\"hi\") - ok"]), Some(Relax::Normalized), 0),
            vec![0]
        );
    }

    #[test]
    fn nearest_prefers_most_shared_lines() {
        let f = FileText::new("fn a() {\n    one();\n}\nfn b() {\n    two();\n    three();\n}\n");
        assert_eq!(
            f.nearest(&block(&["fn b() {", "two();", "four();"]), None),
            Some(3)
        );
        assert_eq!(f.nearest(&block(&["nothing"]), None), None);
    }
}
