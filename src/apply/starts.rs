//! Where each line of a file starts, in about two bytes a line.

/// Lines per run, as a shift: each run keeps where it starts, each line
/// its offset in the run.
const RUN_SHIFT: u32 = 6;

/// The byte offsets of a file's line starts, ascending. A run of 64 lines
/// keeps its first start (4 bytes) and each line its offset from it (2
/// bytes): a 200,000-line file's starts take 400 KB less than as `u32`s.
/// Where a run spans more than 64 KiB (lines over 1 KiB on average) every
/// line is a run of its own, 6 bytes a line, in a file that long lines
/// make large for its count of lines. Either way a start is one shift, two
/// loads and an add.
pub struct Starts {
    shift: u32,
    bases: Vec<u32>,
    offsets: Vec<u16>,
}

impl Starts {
    /// The starts `all` yields (ascending), with room for about `lines`.
    pub fn new<I: Iterator<Item = u32> + Clone>(all: I, lines: usize) -> Starts {
        let mut bases = Vec::with_capacity((lines >> RUN_SHIFT) + 1);
        let mut offsets = Vec::with_capacity(lines);
        let mut base = 0;
        for start in all.clone() {
            if offsets.len() & ((1 << RUN_SHIFT) - 1) == 0 {
                base = start;
                bases.push(start);
            }
            match u16::try_from(start - base) {
                Ok(off) => offsets.push(off),
                Err(_) => {
                    let bases: Vec<u32> = all.collect();
                    let offsets = vec![0; bases.len()];
                    return Starts {
                        shift: 0,
                        bases,
                        offsets,
                    };
                }
            }
        }
        Starts {
            shift: RUN_SHIFT,
            bases,
            offsets,
        }
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Every start, in order (cheaper than [`Starts::get`] for each).
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let runs = self.offsets.chunks(1 << self.shift);
        runs.zip(&self.bases)
            .flat_map(|(run, &base)| run.iter().map(move |&off| base + u32::from(off)))
    }

    /// Start `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        self.bases[i >> self.shift] + u32::from(self.offsets[i])
    }
}

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

    /// Starts read back as given, in runs or one a line: a run over 64 KiB
    /// makes every line a run, the runs before it included.
    #[test]
    fn starts_read_back_as_given() {
        for gaps in [
            vec![40u32; 1000],
            vec![0, 1, 65535, 1, 2],
            [vec![100; 130], vec![70_000], vec![3; 200]].concat(),
            [vec![1000; 65], vec![65_000; 70]].concat(),
            vec![],
        ] {
            let want: Vec<u32> = gaps
                .iter()
                .scan(0, |at, g| {
                    *at += g;
                    Some(*at)
                })
                .collect();
            let starts = Starts::new(want.iter().copied(), 4);
            let got: Vec<u32> = (0..starts.len()).map(|i| starts.get(i)).collect();
            assert_eq!(got, want);
            assert_eq!(starts.iter().collect::<Vec<_>>(), want);
            let long = want
                .chunks(1 << RUN_SHIFT)
                .any(|run| run[run.len() - 1] - run[0] > u32::from(u16::MAX));
            assert_eq!(starts.shift == 0, long, "{want:?}");
        }
    }

    /// Every `\n` and nothing else, whatever the bytes around it (the
    /// zero test borrows from no neighbour).
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
        for t in texts {
            let want: Vec<usize> = (0..t.len()).filter(|&i| t[i] == b'\n').collect();
            assert_eq!(newlines(&t).collect::<Vec<_>>(), want, "{t:?}");
        }
    }
}
