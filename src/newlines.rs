//! Where `\n` stands in a text: the line splitter's one search, for
//! files and for patch blocks.

/// Where `\n` stands in `bytes`, ascending, found 64 bytes at a time (a
/// mask of the line feeds in each block, then its bits): a line of code
/// is a few dozen bytes, where a search per line (memchr) spends more on
/// starting than on searching.
pub fn newlines(bytes: &[u8]) -> Newlines<'_> {
    Newlines {
        bytes,
        at: 0,
        mask: 0,
    }
}

#[derive(Clone)]
pub struct Newlines<'b> {
    bytes: &'b [u8],
    /// Where the block after the one `mask` describes starts.
    at: usize,
    /// A bit for each `\n` of the last block read.
    mask: u64,
}

const BLOCK: usize = 64;

impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.mask = match self.bytes.get(self.at..self.at + BLOCK) {
                Some(block) => line_feeds(block.try_into().expect("a block")),
                None => {
                    // The last bytes, padded with zeros (no `\n`).
                    let rest = self.bytes.get(self.at..).filter(|r| !r.is_empty())?;
                    let mut block = [0u8; BLOCK];
                    block[..rest.len()].copy_from_slice(rest);
                    line_feeds(&block)
                }
            };
            self.at += BLOCK;
        }
        let i = self.at - BLOCK + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(i)
    }
}

/// Bit `i` set where `block[i]` is `\n`: SSE2 compares, 16 bytes each.
/// SSE2 is part of x86-64 itself, so every CPU this code runs on has it.
#[cfg(target_arch = "x86_64")]
fn line_feeds(block: &[u8; BLOCK]) -> u64 {
    // SAFETY: `sse2` is in the x86-64 baseline: the target enables it for
    // all code, and `line_feeds_sse2` reads only its argument.
    unsafe { line_feeds_sse2(block) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn line_feeds_sse2(block: &[u8; BLOCK]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x};
    let nl = _mm_set1_epi8(b'\n' as i8);
    let mut mask = 0u64;
    for (k, part) in block.chunks_exact(16).enumerate() {
        let half = |h: usize| i64::from_le_bytes(part[h..h + 8].try_into().expect("8 bytes"));
        let v = _mm_set_epi64x(half(8), half(0));
        let bits = _mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) as u16;
        mask |= u64::from(bits) << (16 * k);
    }
    mask
}

/// Bit `i` set where `block[i]` is `\n`.
#[cfg(not(target_arch = "x86_64"))]
fn line_feeds(block: &[u8; BLOCK]) -> u64 {
    let mut mask = 0u64;
    for (i, &b) in block.iter().enumerate() {
        mask |= u64::from(b == b'\n') << i;
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `\n` and nothing else, whatever the bytes around it, in a
    /// whole block, across blocks and in the padded last one.
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
        }
    }
}
