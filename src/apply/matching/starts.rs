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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Starts {
    shift: u32,
    bases: Vec<u32>,
    offsets: Vec<u16>,
}

impl Starts {
    /// The starts `all` yields (ascending), with room for about `lines`.
    /// `all` is walked once, so that whatever it notes on the way (the
    /// splitter's blank-ended lines) it notes once.
    pub fn new(mut all: impl Iterator<Item = u32>, lines: usize) -> Starts {
        let mut bases = Vec::with_capacity((lines >> RUN_SHIFT) + 1);
        let mut offsets = Vec::with_capacity(lines);
        let mut base = 0;
        while let Some(start) = all.next() {
            if offsets.len() & ((1 << RUN_SHIFT) - 1) == 0 {
                base = start;
                bases.push(start);
            }
            match u16::try_from(start - base) {
                Ok(off) => offsets.push(off),
                Err(_) => {
                    // A run too long for offsets: every line a run of one,
                    // the starts read so far included.
                    let runs = Starts {
                        shift: RUN_SHIFT,
                        bases,
                        offsets,
                    };
                    let bases: Vec<u32> = runs.iter().chain([start]).chain(all).collect();
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
}
