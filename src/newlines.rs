//! Where `\n` stands in a text: the line splitter's one search, for
//! files and for patch blocks (and `\r` with it, where a lone one breaks
//! a line).

/// Where `\n` stands in `bytes`, ascending, found 64 bytes at a time (a
/// mask of the line feeds in each block, then its bits): a line of code
/// is a few dozen bytes, where a search per line (memchr) spends more on
/// starting than on searching.
pub fn newlines(bytes: &[u8]) -> Newlines<'_> {
    Bits::new(bytes, LineFeeds)
}

/// Where `\n` or `\r` stands, ascending: the breaks of a text whose
/// policy also ends a line at a lone `\r`.
pub fn line_breaks(bytes: &[u8]) -> Bits<'_, Breaks> {
    Bits::new(bytes, Breaks)
}

pub type Newlines<'b> = Bits<'b, LineFeeds>;

/// Where every `nth` line of `bytes` starts (line 0, line `nth`, line
/// `2 * nth`, ...), and how many `\n` it holds: the line feeds of each
/// 64-byte block counted at once, the positions taken only in the blocks
/// that hold a line wanted. A diagnostic names a few lines of a patch that
/// may have millions; this is its index of them, a word per `nth` lines.
pub fn every_nth_line(bytes: &[u8], nth: usize) -> (Vec<usize>, usize) {
    let nth = nth.max(1);
    let mut starts = vec![0];
    let mut count = 0;
    let mut at = 0;
    while let Some(mut mask) = block_mask(bytes, at, |block| equal(block, b'\n')) {
        let here = mask.count_ones() as usize;
        // The next line wanted starts after the `nth`-th `\n` from the last.
        if count + here >= starts.len() * nth {
            while mask != 0 {
                count += 1;
                if count % nth == 0 {
                    starts.push(at + mask.trailing_zeros() as usize + 1);
                }
                mask &= mask - 1;
            }
        } else {
            count += here;
        }
        at += BLOCK;
    }
    (starts, count)
}

/// The lines of `text`, each with its `\n` (the last without one if the
/// text does not end with it): `str::split_inclusive('\n')`, found by
/// [`newlines`], which is faster for lines a few dozen bytes long.
pub fn lines_inclusive(text: &str) -> LinesInclusive<'_> {
    LinesInclusive {
        text,
        start: 0,
        ends: newlines(text.as_bytes()),
    }
}

/// The iterator [`lines_inclusive`] returns: one struct, not a chain of
/// adapters, so that a loop over a hunk's lines inlines it.
pub struct LinesInclusive<'t> {
    text: &'t str,
    /// Where the next line starts.
    start: usize,
    ends: Newlines<'t>,
}

impl<'t> Iterator for LinesInclusive<'t> {
    type Item = &'t str;

    #[inline]
    fn next(&mut self) -> Option<&'t str> {
        // The line ends after a `\n`, or at the text's end: a boundary
        // either way. Past the last line, `end` is where it started.
        let end = self.ends.next().map_or(self.text.len(), |i| i + 1);
        let line = self.text.get(self.start..end).filter(|l| !l.is_empty())?;
        self.start = end;
        Some(line)
    }
}

/// The bits a [`Select`] sets in each block of 64 bytes, as positions.
#[derive(Clone)]
pub struct Bits<'b, S> {
    bytes: &'b [u8],
    /// Where the block after the one `mask` describes starts.
    at: usize,
    /// The bits of the last block read not yet returned.
    mask: u64,
    select: S,
}

/// Which bytes of a block are wanted, as a mask; blocks come in order.
pub trait Select {
    fn mask(&mut self, block: &[u8; BLOCK]) -> u64;
}

#[derive(Clone, Copy)]
pub struct LineFeeds;

impl Select for LineFeeds {
    #[inline]
    fn mask(&mut self, block: &[u8; BLOCK]) -> u64 {
        equal(block, b'\n')
    }
}

#[derive(Clone, Copy)]
pub struct Breaks;

impl Select for Breaks {
    #[inline]
    fn mask(&mut self, block: &[u8; BLOCK]) -> u64 {
        equal(block, b'\n') | equal(block, b'\r')
    }
}

const BLOCK: usize = 64;

impl<'b, S: Select> Bits<'b, S> {
    fn new(bytes: &'b [u8], select: S) -> Self {
        Bits {
            bytes,
            at: 0,
            mask: 0,
            select,
        }
    }
}

impl<S: Select> Iterator for Bits<'_, S> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let select = &mut self.select;
            self.mask = block_mask(self.bytes, self.at, |block| select.mask(block))?;
            self.at += BLOCK;
        }
        let i = self.at - BLOCK + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(i)
    }
}

/// `mask` of the block of `bytes` from `at`: the last bytes padded with
/// zeros (no `\n`, no `\r`); `None` past the end.
#[inline]
fn block_mask(bytes: &[u8], at: usize, mask: impl FnOnce(&[u8; BLOCK]) -> u64) -> Option<u64> {
    match bytes.get(at..at + BLOCK) {
        Some(block) => Some(mask(block.try_into().expect("a block"))),
        None => {
            let rest = bytes.get(at..).filter(|r| !r.is_empty())?;
            let mut block = [0u8; BLOCK];
            block[..rest.len()].copy_from_slice(rest);
            Some(mask(&block))
        }
    }
}

/// Bit `i` set where `block[i]` is `byte`: SSE2 compares, 16 bytes each.
/// SSE2 is part of x86-64 itself, so every CPU this code runs on has it.
#[cfg(target_arch = "x86_64")]
#[inline]
fn equal(block: &[u8; BLOCK], byte: u8) -> u64 {
    // SAFETY: `sse2` is in the x86-64 baseline: the target enables it for
    // all code, and `equal_sse2` reads only its argument.
    unsafe { equal_sse2(block, byte) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn equal_sse2(block: &[u8; BLOCK], byte: u8) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x};
    let wanted = _mm_set1_epi8(byte as i8);
    let mut mask = 0u64;
    for (k, part) in block.chunks_exact(16).enumerate() {
        let half = |h: usize| i64::from_le_bytes(part[h..h + 8].try_into().expect("8 bytes"));
        let v = _mm_set_epi64x(half(8), half(0));
        let bits = _mm_movemask_epi8(_mm_cmpeq_epi8(v, wanted)) as u16;
        mask |= u64::from(bits) << (16 * k);
    }
    mask
}

/// Bit `i` set where `block[i]` is `byte`.
#[cfg(not(target_arch = "x86_64"))]
fn equal(block: &[u8; BLOCK], byte: u8) -> u64 {
    let mut mask = 0u64;
    for (i, &b) in block.iter().enumerate() {
        mask |= u64::from(b == byte) << i;
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `nth` line's start and the count of `\n`, as a walk over
    /// the lines finds them: for texts across and inside 64-byte blocks,
    /// ending with and without a `\n`, runs of empty lines.
    #[test]
    fn every_nth_line_is_where_the_lines_start() {
        let mut texts = vec![String::new(), "\n".into(), "abc".into(), "\n\n\n".into()];
        for seed in 0..40usize {
            let text: String = (0..seed * 13)
                .map(|i| match (i * 7 + seed) % 11 {
                    0 | 5 => '\n',
                    3 => 'é',
                    _ => 'x',
                })
                .collect();
            texts.push(text);
        }
        texts.push("\n".repeat(300));
        for text in &texts {
            let walked: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            for nth in [1, 2, 3, 7, 64, 1000] {
                let want: Vec<usize> = walked.iter().copied().step_by(nth).collect();
                let got = every_nth_line(text.as_bytes(), nth);
                assert_eq!(got, (want, walked.len() - 1), "{text:?} every {nth}");
            }
        }
    }

    /// Every `\n` and nothing else (and every break, `\n` or `\r`),
    /// whatever the bytes around it, in a whole block, across blocks and in
    /// the padded last one.
    #[test]
    fn newlines_are_every_line_feed() {
        let mut texts: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\n".to_vec(),
            b"a\nb\n\n\ncd".to_vec(),
            b"\x0b\x0a\x09\x8a\x0a\x00\x0a\xff\x01\x0a\x7f\x8b\x0a".to_vec(),
        ];
        texts.push((0..=255u8).cycle().take(3000).collect());
        texts.push(vec![b'\n'; 17]);
        texts.push(vec![b'\n'; 64]);
        texts.push([vec![b'x'; 63], vec![b'\n'; 2], vec![b'y'; 62]].concat());
        for t in texts {
            let want: Vec<usize> = (0..t.len()).filter(|&i| t[i] == b'\n').collect();
            assert_eq!(newlines(&t).collect::<Vec<_>>(), want, "{t:?}");
            let breaks: Vec<usize> = (0..t.len())
                .filter(|&i| matches!(t[i], b'\n' | b'\r'))
                .collect();
            assert_eq!(line_breaks(&t).collect::<Vec<_>>(), breaks, "{t:?}");
            let text = String::from_utf8_lossy(&t);
            let lines: Vec<&str> = lines_inclusive(&text).collect();
            assert_eq!(
                lines,
                text.split_inclusive('\n').collect::<Vec<_>>(),
                "{t:?}"
            );
        }
    }
}
