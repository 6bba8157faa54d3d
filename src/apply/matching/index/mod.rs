//! The line index: a line's key to the lines that have it. Searching
//! the whole file uses it, so a patch with many hunks stays linear in
//! file size plus hunk lines: told the edits' keys first
//! ([`FileText::expect`]), the file indexes only each block's rarest line
//! (its pivot); a search at a kind the file was not told first tells it
//! every block's keys at that kind (`find::expect_at`). Other keys are
//! sought a block at a time, in one pass over the file
//! ([`FileText::seek`]), and only past [`SCANS`] such passes is the whole
//! file indexed for a kind: a hunk that misses, climbing the match levels
//! and then explained, costs a counting pass a level, not an index.
//! Every path gives the answers a scan of the file would (the tests hold
//! each to one).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::beside;
use super::text::{hash_key, line_at, FileText, Key, KEYS};

/// A file's line indexes, per kind of key, each built on first need.
#[derive(Default)]
pub(super) struct Indexes {
    /// Every line under its key.
    whole: [OnceCell<Index>; KEYS],
    /// The keys the patch is expected to look up, counted, and the index
    /// of only the lines of their pivots (see [`FileText::expect`]).
    expected: [OnceCell<Expected>; KEYS],
    /// Other keys, each pass's found together (see [`FileText::seek`]).
    scans: [[OnceCell<Scan>; SCANS]; KEYS],
}

/// Each pivot's hash and how many lines of the file have it.
type Counts = HashMap<u64, u32, foldhash::fast::FixedState>;

/// Each expected key's hash and its number (see [`BlockKeys`]).
type Numbers = HashMap<u64, u32, foldhash::fast::FixedState>;

/// The keys of one kind that blocks will look up, told to the file
/// before the first lookup ([`FileText::expect`]): each key once,
/// numbered in the order first added, and each block's keys (those it may
/// pivot on) by number, so that the counting files a line under its key's
/// number and the pivots are chosen without hashing a block again.
#[derive(Default)]
pub struct BlockKeys {
    /// Each key's hash and number.
    numbers: Numbers,
    /// The blocks' keys by number, block after block.
    blocks: Vec<u32>,
    /// Where each block's keys end in `blocks`.
    ends: Vec<u32>,
}

impl BlockKeys {
    /// Adds a block's keys, by their hashes (in the block's order): it
    /// pivots on the rarest of those past the first `skip`, the first of
    /// equals.
    pub fn add(&mut self, hashes: impl Iterator<Item = u64>, skip: usize) {
        for (j, h) in hashes.enumerate() {
            let next = self.numbers.len() as u32;
            let k = *self.numbers.entry(h).or_insert(next);
            if j >= skip {
                self.blocks.push(k);
            }
        }
        if self.ends.last().map_or(0, |&e| e as usize) < self.blocks.len() {
            self.ends.push(self.blocks.len() as u32);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }

    /// Marks with [`PIVOT`] each block's rarest key in `counts` (each
    /// key's count, by number).
    fn mark_pivots(&self, counts: &mut [u32]) {
        let mut start = 0;
        for &end in &self.ends {
            let block = &self.blocks[start..end as usize];
            start = end as usize;
            let rarest = block.iter().min_by_key(|&&k| counts[k as usize] & !PIVOT);
            if let Some(&k) = rarest {
                counts[k as usize] |= PIVOT;
            }
        }
    }
}

/// How many bits the expected keys' hashes are filed under while they
/// are counted (see [`FileText::expect`]).
const PRESENT: usize = 1 << 18;

/// A thread's part of the count (see [`FileText::expect`]).
struct Counting {
    /// Which thread: 0 this one, 1 the other.
    thread: usize,
    /// Each key's lines, by the key's number.
    tally: Vec<u16>,
    /// The numbers of the keys of the lines it found keys on, chunk after
    /// chunk.
    keys: Vec<u32>,
}

/// What the first pass of [`FileText::expect`] leaves for the second.
struct Counted {
    /// Each line with an expected key, as a bit.
    keyed: Vec<AtomicU64>,
    /// Each thread's key numbers of those lines, chunk after chunk.
    keys: [Vec<u32>; 2],
    /// Per chunk, in order: which thread counted it, and its numbers'
    /// range in that thread's list.
    chunks: Vec<(usize, std::ops::Range<usize>)>,
}

/// How many lines a chunk of the count is (see [`FileText::expect`]): a
/// multiple of 64, so that a chunk's bits are whole words.
const CHUNK: usize = 1 << 13;

/// A count's top bit: the key is a pivot, and its lines are indexed.
const PIVOT: u32 = 1 << 31;

/// How many passes over the file may seek keys of one kind beyond the
/// pivots (see [`FileText::seek`]) before the whole file is indexed for
/// it. A search tells the file its blocks' keys at each level before it
/// looks (`find::expect_at`), so what is left is explaining a miss: its
/// new block's keys at the first level (is it applied already?), or the
/// lines above an ambiguous block there, and the rest of its lines at the
/// trimmed one (the nearest text). One pass each; a second means more
/// than one miss is being explained, and the index (one pass and a sort)
/// answers all the rest.
pub(super) const SCANS: usize = 1;

/// The lines of the keys one pass over the file sought.
struct Scan {
    /// Each key's hash and its entries' range.
    keys: HashMap<u64, (u32, u32), foldhash::fast::FixedState>,
    /// `(top 32 hash bits, line)`, a key's lines together and ascending.
    entries: Vec<(u32, u32)>,
}

/// The keys a patch will look up, known before its first lookup: how
/// often each occurs in the file, and the lines of only the keys a
/// search walks (each block's rarest line, its pivot). On a large file
/// edited in a few thousand places the pivots are a few thousand lines,
/// where the lines with any key the patch names can be a third of the
/// file, and the whole-file index is 8 bytes a line.
struct Expected {
    /// Each pivot's count: the other expected keys are counted only while
    /// the pivots are chosen.
    counts: Counts,
    /// The lines whose key is a pivot.
    index: Index,
}

/// Every line filed under its key's hash, in buckets by the hash's top
/// bits: a lookup reads one bucket (two to four lines) instead of
/// binary-searching the whole file, which on a large file is a cache miss
/// per step. An entry keeps the hash's top 32 bits (the bucket's and those
/// below) and the line: 8 bytes a line, and 1 to 2 more for the bucket
/// starts. A collision within those 32 bits only costs a comparison.
struct Index {
    /// `(top 32 hash bits, line)`, sorted within each bucket.
    entries: Vec<(u32, u32)>,
    /// `buckets[b]..buckets[b + 1]` holds the entries whose hash starts with `b`.
    buckets: Vec<u32>,
    /// A bucket is the top `bits` bits of the hash.
    bits: u32,
}

impl Index {
    /// The index of a file's lines, the `i`-th of `hashes` being line `i`'s
    /// key's hash. Each line is hashed once (hashing every line twice took a tenth of a
    /// large apply).
    fn new(hashes: impl Iterator<Item = u64>) -> Index {
        Index::build(
            hashes
                .zip(0..)
                .map(|(h, i)| ((h >> 32) as u32, i))
                .collect(),
        )
    }

    /// The index of `entries` (a key's top 32 hash bits and its line),
    /// sorted where they lie: each entry is moved into its bucket's place
    /// (a counting sort that permutes in place), then each bucket sorted.
    /// Linear but for buckets one key crowds, and no second list of
    /// entries (the copy was the index's peak).
    fn build(mut entries: Vec<(u32, u32)>) -> Index {
        let n = entries.len();
        // A bucket per two to four lines; `n < 2^32`, so `bits < 32`.
        let bits = n.max(4).ilog2() - 1;
        let bucket = |k: u32| (k >> (32 - bits)) as usize;
        // Counts at `b + 1`, so that after the prefix sum `b` holds
        // bucket `b`'s start and `b + 1` its end.
        let mut buckets = vec![0u32; (1 << bits) + 1];
        for &(k, _) in &entries {
            buckets[bucket(k) + 1] += 1;
        }
        for b in 1..buckets.len() {
            buckets[b] += buckets[b - 1];
        }
        // `fill[b]`: the next place in bucket `b` not yet holding one of
        // its own. An entry out of place is swapped into its bucket's, and
        // the entry it displaces is placed next, until `b`'s own fills it.
        let mut fill = buckets.clone();
        for b in 0..buckets.len() - 1 {
            while fill[b] < buckets[b + 1] {
                let t = bucket(entries[fill[b] as usize].0);
                if t == b {
                    fill[b] += 1;
                } else {
                    entries.swap(fill[b] as usize, fill[t] as usize);
                    fill[t] += 1;
                }
            }
        }
        drop(fill);
        // The swaps scrambled the order within a bucket: by key, then
        // line. Most buckets hold two to four entries, where insertion
        // beats a general sort's set-up; a line that repeats thousands of
        // times (a blank one) fills one bucket alone, which a sort keeps
        // `n log n`.
        for w in buckets.windows(2) {
            let run = &mut entries[w[0] as usize..w[1] as usize];
            if run.len() > 8 {
                run.sort_unstable();
                continue;
            }
            for i in 1..run.len() {
                let mut j = i;
                while j > 0 && run[j - 1] > run[j] {
                    run.swap(j - 1, j);
                    j -= 1;
                }
            }
        }
        Index {
            entries,
            buckets,
            bits,
        }
    }

    fn lookup(&self, h: u64) -> &[(u32, u32)] {
        let k = (h >> 32) as u32;
        let b = (k >> (32 - self.bits)) as usize;
        let bucket = &self.entries[self.buckets[b] as usize..self.buckets[b + 1] as usize];
        let start = bucket.partition_point(|&(e, _)| e < k);
        let end = start + bucket[start..].partition_point(|&(e, _)| e == k);
        &bucket[start..end]
    }
}

impl FileText<'_> {
    /// Frees the line indexes (a later lookup builds them again).
    pub fn forget_indexes(&mut self) {
        self.indexes = Indexes::default();
    }
    /// The line index for a key: every line under its key's hash. No
    /// allocation per distinct line; a hash collision only costs a
    /// comparison.
    fn index(&self, kind: Key) -> &Index {
        self.indexes.whole[kind as usize]
            .get_or_init(|| Index::new(self.lines().map(|l| hash_key(&kind.of(l)))))
    }

    /// Says which keys of kind `kind` the lookups will ask for (before
    /// the first of them; a later call is ignored): `keys`, the blocks'
    /// keys, each of which pivots on its rarest in the file (the searches
    /// walk those lines; see [`Expected`]). Two passes over the file: one
    /// counts, the other (only on lines that had a key) indexes the
    /// pivots. Any other key is sought as [`FileText::seek`] says; every
    /// path gives the same answer.
    pub fn expect(&self, kind: Key, keys: BlockKeys) {
        if self.indexes.expected[kind as usize].get().is_some() || keys.is_empty() {
            return;
        }
        let (mut by_number, counted) = self.count_expected(kind, &keys.numbers);
        keys.mark_pivots(&mut by_number);
        // Searches count only pivots (a block's own is its rarest line, so
        // a search that prefers pivots needs no other key's count): the
        // rest of the keys go.
        let (pivots, counts) = Pivots::of(keys.numbers, &by_number);
        drop(by_number);
        let entries = pivot_lines(&pivots, counted, self.len());
        let _ = self.indexes.expected[kind as usize].set(Expected {
            counts,
            index: Index::build(entries),
        });
    }

    /// The first pass of [`FileText::expect`]: the count in the file of
    /// each key of `numbers` (hash to number), by number, and which lines
    /// have a key.
    fn count_expected(&self, kind: Key, numbers: &Numbers) -> (Vec<u32>, Counted) {
        // The keys' hashes as bits, 32 KiB: most lines have no key, and a
        // bit turns them away where a probe of the map would miss the cache.
        let mut present = vec![0u64; PRESENT / 64];
        for &h in numbers.keys() {
            present[h as usize % PRESENT / 64] |= 1 << (h % 64);
        }
        // A large file's lines are counted on two threads (`beside.rs`),
        // each into its own tally by number, while the map is only read. A
        // tally is 16 bits, which a key on more than 65,535 lines
        // saturates: counts choose pivots and decide whether a key is
        // common (over 10,000), and a count that large stays larger than
        // any other that matters.
        // A blank line's key is empty, the same for all of them (often a
        // tenth of a file's lines): whether it is a key is looked up once,
        // and none is hashed, even where another key shares its filter bit.
        let empty = hash_key("");
        let empty_k = numbers.get(&empty).copied();
        // Each line with a key as a bit (a chunk's words are its own), and
        // its key's number in its thread's list, in order: the second pass
        // reads there whether the line's key is a pivot, and hashes no
        // line again. One list a thread, not one a chunk, whose spare room
        // would add to the peak.
        let (text, starts, len) = (self.text, &self.starts, self.len());
        let keyed: Vec<AtomicU64> = (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        let count = |part: &mut Counting, chunk: usize| {
            let Counting {
                thread,
                tally,
                keys,
            } = part;
            let lines = chunk * CHUNK..((chunk + 1) * CHUNK).min(len);
            let first = keys.len();
            // Sixty-four lines at a time: their keys hashed and filtered
            // first, then the map probed for those the filter let by. The
            // probes, each a likely miss of the cache, no longer wait on
            // one another's hashing, and the processor overlaps them.
            let mut hashes = [0u64; 64];
            let words = lines.start / 64..lines.end.div_ceil(64);
            for (w, slot) in words.clone().zip(&keyed[words]) {
                let at = w * 64..(w * 64 + 64).min(lines.end);
                let (mut probe, mut blank) = (0u64, 0u64);
                for i in at.clone() {
                    let key = kind.of(line_at(text, starts, i));
                    if key.is_empty() {
                        blank |= 1 << (i % 64);
                        continue;
                    }
                    let h = hash_key(&key);
                    hashes[i % 64] = h;
                    if present[h as usize % PRESENT / 64] >> (h % 64) & 1 == 1 {
                        probe |= 1 << (i % 64);
                    }
                }
                let (mut lines, mut word) = (probe | blank, 0u64);
                while lines != 0 {
                    let j = lines.trailing_zeros() as usize;
                    lines &= lines - 1;
                    let k = match blank >> j & 1 == 1 {
                        true => empty_k,
                        false => numbers.get(&hashes[j]).copied(),
                    };
                    if let Some(k) = k {
                        tally[k as usize] = tally[k as usize].saturating_add(1);
                        word |= 1 << j;
                        keys.push(k);
                    }
                }
                slot.store(word, Ordering::Relaxed);
            }
            (*thread, first..keys.len())
        };
        let counting = |thread| Counting {
            thread,
            tally: vec![0u16; numbers.len()],
            keys: vec![],
        };
        let (mine, theirs, chunks) =
            beside::share(len.div_ceil(CHUNK), counting(0), || counting(1), count);
        let by_number = (0..numbers.len())
            .map(|k| {
                u32::from(mine.tally[k]) + theirs.as_ref().map_or(0, |t| u32::from(t.tally[k]))
            })
            .collect();
        let counted = Counted {
            keyed,
            keys: [mine.keys, theirs.map_or(vec![], |t| t.keys)],
            chunks,
        };
        (by_number, counted)
    }

    /// The index entries of the lines whose key of kind `kind` hashes to `h`.
    fn lookup(&self, h: u64, kind: Key) -> &[(u32, u32)] {
        if let Some(whole) = self.indexes.whole[kind as usize].get() {
            return whole.lookup(h);
        }
        if let Some(e) = self.indexes.expected[kind as usize].get() {
            if e.counts.contains_key(&h) {
                return e.index.lookup(h);
            }
        }
        if let Some(entries) = self.scanned(h, kind) {
            return entries;
        }
        self.seek(kind, [h]);
        match self.scanned(h, kind) {
            Some(entries) => entries,
            None => self.index(kind).lookup(h),
        }
    }

    /// Readies lookups of the keys of kind `kind` hashing to `hashes` (a
    /// block's): those the file cannot answer yet (neither a pivot nor
    /// sought before) are sought together, in one pass over the file,
    /// while fewer than [`SCANS`] passes have sought keys of this kind;
    /// after that the whole file is indexed for it. A search that will
    /// count every line of a block calls this first, or each key would
    /// take a pass of its own.
    pub fn seek(&self, kind: Key, hashes: impl IntoIterator<Item = u64>) {
        if self.indexes.whole[kind as usize].get().is_some() {
            return;
        }
        let mut sought: Vec<u64> = hashes
            .into_iter()
            .filter(|&h| !self.is_pivot(h, kind) && self.scanned(h, kind).is_none())
            .collect();
        if sought.is_empty() {
            return;
        }
        sought.sort_unstable();
        sought.dedup();
        match self.indexes.scans[kind as usize]
            .iter()
            .find(|s| s.get().is_none())
        {
            Some(slot) => {
                let _ = slot.set(self.scan(kind, &sought));
            }
            None => {
                self.index(kind);
            }
        }
    }

    /// One pass over the file for the lines whose key of kind `kind`
    /// hashes to one of `sought` (sorted, no repeats), a large file's
    /// shared with a second thread (`beside.rs`).
    fn scan(&self, kind: Key, sought: &[u64]) -> Scan {
        let empty = hash_key("");
        let blank_sought = sought.binary_search(&empty).is_ok();
        let (text, starts, len) = (self.text, &self.starts, self.len());
        let chunk = |_: &mut (), c: usize| {
            let mut found: Vec<(u64, u32)> = vec![];
            for i in c * CHUNK..((c + 1) * CHUNK).min(len) {
                let key = kind.of(line_at(text, starts, i));
                let h = match key.is_empty() {
                    true if blank_sought => empty,
                    true => continue,
                    false => hash_key(&key),
                };
                if sought.binary_search(&h).is_ok() {
                    found.push((h, i as u32));
                }
            }
            found
        };
        let (_, _, chunks) = beside::share(len.div_ceil(CHUNK), (), || (), chunk);
        let mut found = chunks.concat();
        // Stable: each key's lines stay ascending.
        found.sort_by_key(|&(h, _)| h);
        let mut keys = HashMap::default();
        let mut entries = Vec::with_capacity(found.len());
        for run in found.chunk_by(|a, b| a.0 == b.0) {
            let start = entries.len() as u32;
            entries.extend(run.iter().map(|&(h, i)| ((h >> 32) as u32, i)));
            keys.insert(run[0].0, (start, entries.len() as u32));
        }
        for &h in sought {
            keys.entry(h).or_insert((0, 0));
        }
        Scan { keys, entries }
    }

    /// The entries of key `h` of kind `kind`, if a pass sought it.
    fn scanned(&self, h: u64, kind: Key) -> Option<&[(u32, u32)]> {
        self.indexes.scans[kind as usize]
            .iter()
            .map_while(OnceCell::get)
            .find_map(|s| {
                let &(start, end) = s.keys.get(&h)?;
                Some(&s.entries[start as usize..end as usize])
            })
    }

    /// The lines whose key of kind `kind` hashes to `h`, ascending (a
    /// collision included: compare before trusting one).
    pub fn positions(&self, h: u64, kind: Key) -> impl Iterator<Item = usize> + '_ {
        self.lookup(h, kind).iter().map(|&(_, p)| p as usize)
    }

    /// Indexes the whole file for kind `kind` now, not on need.
    #[cfg(test)]
    pub fn index_whole(&self, kind: Key) {
        self.index(kind);
    }

    /// How lookups of kind `kind` were answered beyond the pivots: how
    /// many passes sought keys, and whether the whole file was indexed.
    #[cfg(test)]
    pub fn beyond_pivots(&self, kind: Key) -> (usize, bool) {
        let scans = self.indexes.scans[kind as usize]
            .iter()
            .filter(|s| s.get().is_some())
            .count();
        (scans, self.indexes.whole[kind as usize].get().is_some())
    }

    /// Whether `h` is a pivot of kind `kind`: a key whose lines are
    /// indexed without a scan of its own (see [`FileText::expect`]; only
    /// pivots keep a count).
    pub fn is_pivot(&self, h: u64, kind: Key) -> bool {
        self.indexes.expected[kind as usize]
            .get()
            .is_some_and(|e| e.counts.contains_key(&h))
    }

    /// Whether lookups of kind `kind` are answered without a pass of
    /// their own for a block told before: the file was told the keys
    /// ([`FileText::expect`]) or indexed whole for it.
    pub fn knows(&self, kind: Key) -> bool {
        self.indexes.expected[kind as usize].get().is_some()
            || self.indexes.whole[kind as usize].get().is_some()
    }

    /// Whether the file was told which keys of kind `kind` the patch looks
    /// up (see [`FileText::expect`]).
    pub fn has_pivots(&self, kind: Key) -> bool {
        self.indexes.expected[kind as usize].get().is_some()
    }

    /// How many lines' keys hash to `h`.
    pub fn count(&self, h: u64, kind: Key) -> usize {
        if let (None, Some(e)) = (
            self.indexes.whole[kind as usize].get(),
            self.indexes.expected[kind as usize].get(),
        ) {
            if let Some(&c) = e.counts.get(&h) {
                return c as usize;
            }
        }
        // Any other key is sought (see `seek`).
        self.lookup(h, kind).len()
    }
}

/// The pivots among the expected keys, by the keys' numbers: what the
/// second pass of [`FileText::expect`] reads for a line the first found a
/// key on, instead of hashing the line again.
struct Pivots {
    /// Whether key `k` is a pivot, as bit `k`.
    bits: Vec<u64>,
    /// Key `k`'s top 32 hash bits (what an index entry keeps), for a pivot.
    top: Vec<u32>,
}

impl Pivots {
    /// The pivots among `numbers` (hash to number), marked in `counts`
    /// (by number), and each pivot's count by its hash.
    fn of(numbers: Numbers, counts: &[u32]) -> (Pivots, Counts) {
        let mut bits = vec![0u64; counts.len().div_ceil(64)];
        let mut top = vec![0u32; counts.len()];
        let mut kept = Counts::default();
        for (h, k) in numbers {
            let (k, c) = (k as usize, counts[k as usize]);
            if c & PIVOT != 0 {
                bits[k / 64] |= 1 << (k % 64);
                top[k] = (h >> 32) as u32;
                kept.insert(h, c & !PIVOT);
            }
        }
        (Pivots { bits, top }, kept)
    }

    /// The top hash bits of key `k`, if it is a pivot.
    fn top(&self, k: u32) -> Option<u32> {
        let k = k as usize;
        (self.bits[k / 64] >> (k % 64) & 1 == 1).then(|| self.top[k])
    }
}

/// The second pass of [`FileText::expect`]: the index entries of the lines
/// (of `len`) whose key is a pivot, read from the first pass's bits and key
/// numbers.
fn pivot_lines(pivots: &Pivots, counted: Counted, len: usize) -> Vec<(u32, u32)> {
    let mut entries = vec![];
    for (chunk, (thread, at)) in counted.chunks.into_iter().enumerate() {
        let mut keys = counted.keys[thread][at].iter();
        let words = chunk * CHUNK / 64..((chunk + 1) * CHUNK).min(len).div_ceil(64);
        for w in words {
            let mut bits = counted.keyed[w].load(Ordering::Relaxed);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let k = *keys.next().expect("a key number for each line with a key");
                if let Some(top) = pivots.top(k) {
                    entries.push((top, i as u32));
                }
            }
        }
    }
    entries
}

#[cfg(test)]
mod tests;
