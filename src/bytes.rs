//! Byte searches that never ask the CPU what it has.
//!
//! The `memchr` crate's own functions choose between AVX2 and SSE2 code at
//! their first call, with Rust's `std_detect`: a dozen CPUID instructions.
//! Under a hypervisor every CPUID traps to it, and for a small apply that
//! first call was a visible share of the whole process. The C library has
//! already probed once, at start-up, for its own use. These searches use
//! SSE2, which every x86-64 CPU has, so nothing probes again. The searches
//! over many lines (the line split, a patch's line numbers) read 64 bytes a
//! step instead (`newlines`). Elsewhere these are `memchr`'s.
//!
//! `clippy.toml` refuses the `memchr` functions that would probe, so a new
//! call cannot bring the probe back unnoticed.

#[cfg(target_arch = "x86_64")]
mod imp {
    use memchr::arch::x86_64::sse2::memchr::One as SseOne;

    #[derive(Clone, Copy)]
    pub struct One(SseOne);

    impl One {
        pub fn new(b: u8) -> One {
            One(SseOne::new(b).expect("SSE2 is part of x86-64"))
        }
        pub fn find(&self, hay: &[u8]) -> Option<usize> {
            self.0.find(hay)
        }
        pub fn rfind(&self, hay: &[u8]) -> Option<usize> {
            self.0.rfind(hay)
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[allow(clippy::disallowed_methods)]
mod imp {
    #[derive(Clone, Copy)]
    pub struct One(u8);

    impl One {
        pub fn new(b: u8) -> One {
            One(b)
        }
        pub fn find(&self, hay: &[u8]) -> Option<usize> {
            memchr::memchr(self.0, hay)
        }
        pub fn rfind(&self, hay: &[u8]) -> Option<usize> {
            memchr::memrchr(self.0, hay)
        }
    }
}

use imp::One;

/// The first `b` in `hay`.
pub fn find(b: u8, hay: &[u8]) -> Option<usize> {
    One::new(b).find(hay)
}

/// The last `b` in `hay`.
pub fn rfind(b: u8, hay: &[u8]) -> Option<usize> {
    One::new(b).rfind(hay)
}

/// Every `b` in `hay`, from either end.
pub fn iter(b: u8, hay: &[u8]) -> Iter<'_> {
    Iter {
        one: One::new(b),
        hay,
        front: 0,
        back: hay.len(),
    }
}

#[derive(Clone)]
pub struct Iter<'h> {
    one: One,
    hay: &'h [u8],
    /// What is left to search: `hay[front..back]`.
    front: usize,
    back: usize,
}

impl Iterator for Iter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let at = self.front + self.one.find(&self.hay[self.front..self.back])?;
        self.front = at + 1;
        Some(at)
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<usize> {
        let at = self.front + self.one.rfind(&self.hay[self.front..self.back])?;
        self.back = at;
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts() -> Vec<Vec<u8>> {
        let mut texts: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\n".to_vec(),
            b"a\r\nb\n\n\rcd\r".to_vec(),
            vec![b'\n'; 70],
        ];
        // Every length around the 16- and 32-byte steps, with the
        // bytes at every position.
        texts.push((0..=255u8).cycle().take(3000).collect());
        for len in 0..70 {
            texts.push((0..len).map(|i| [b'x', b'\n', b'\r'][i % 7 % 3]).collect());
        }
        texts
    }

    #[test]
    fn searches_find_every_byte_from_either_end() {
        for t in texts() {
            let at = |b: u8| (0..t.len()).filter(|&i| t[i] == b).collect::<Vec<_>>();
            let lf = at(b'\n');
            assert_eq!(iter(b'\n', &t).collect::<Vec<_>>(), lf);
            assert_eq!(
                iter(b'\n', &t).rev().collect::<Vec<_>>(),
                lf.iter().rev().copied().collect::<Vec<_>>()
            );
            assert_eq!(find(b'\n', &t), lf.first().copied());
            assert_eq!(rfind(b'\n', &t), lf.last().copied());
            // Taken from both ends at once, each position comes once.
            let mut it = iter(b'\n', &t);
            let mut met = vec![];
            while let Some(i) = if met.len() % 2 == 0 {
                it.next()
            } else {
                it.next_back()
            } {
                met.push(i);
            }
            met.sort_unstable();
            assert_eq!(met, lf);
        }
    }
}
