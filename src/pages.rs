//! Page advice for a large buffer about to be filled by a read.
//!
//! A read into fresh memory takes a page fault for every 4 KiB page it
//! copies into; on a virtual machine each costs microseconds. Asking the
//! kernel to map the pages first (`MADV_POPULATE_WRITE`) does the same
//! work in a call a window: paired runs of large applies (a patch of
//! 1.4 to 2.3 MB, a file of 7 MB) took 0.90 to 1.01 of the time they took
//! without it. A read on a CPU of its own beside another thread's work
//! does not ask: the call holds the memory map for its window, which the
//! other thread's allocations then wait for (`fs::read::Pages`). Past
//! [`MOST`] no advice is given:
//! with it, applies to a file of 2,000,000 lines (70 MB; the patch 14 to
//! 23 MB) took 0.99 to 1.04 of the time.
//! Huge pages (`MADV_HUGEPAGE`) are not asked for: at 2,000,000 lines
//! they made applies a quarter slower, and their slowest runs slower than
//! GNU patch's, where the kernel compacts memory to find them.

/// How much is mapped a call: a change another thread of ours makes to
/// the memory map meanwhile (a vector growing) waits for one call at most.
const WINDOW: usize = 2 << 20;

/// Below this, the faults cost less than the calls.
const LEAST: usize = 256 << 10;

/// From this on, no advice (see above): the size from which a text is
/// read a piece at a time (`lossless::PIECED`).
const MOST: usize = crate::lossless::PIECED;

/// Maps the pages of `len` bytes from `start` (memory this process owns
/// and has not touched yet: a buffer's spare room), a window at a time,
/// for a read to fill, where `len` is from [`LEAST`] to [`MOST`]. Advice
/// only: where the kernel cannot follow it (a kernel before 5.14),
/// nothing changes.
pub fn populate(start: *const u8, len: usize) {
    if !(LEAST..MOST).contains(&len) {
        return;
    }
    let mut from = (start as usize).next_multiple_of(4096);
    let end = (start as usize + len) / 4096 * 4096;
    while from < end {
        let n = WINDOW.min(end - from);
        // SAFETY: the range lies inside memory the caller owns, and
        // MADV_POPULATE_WRITE faults its pages in as a write would,
        // keeping what they hold (unlike MADV_DONTNEED or MADV_FREE). An
        // error changes nothing.
        let _ = unsafe {
            rustix::mm::madvise(from as *mut _, n, rustix::mm::Advice::LinuxPopulateWrite)
        };
        from += n;
    }
}

/// [`populate`] for the room `bytes` has past its length, which a read
/// is about to fill.
pub fn populate_spare(bytes: &mut Vec<u8>) {
    let spare = bytes.spare_capacity_mut();
    populate(spare.as_ptr().cast(), spare.len());
}

#[cfg(test)]
mod tests {
    /// Mapping pages keeps what they hold, written or not, on both sides
    /// of every window and page boundary; the room after is written and
    /// read back.
    #[test]
    fn populating_keeps_the_bytes() {
        let len = 5 * super::WINDOW + 12345;
        let mut buf: Vec<u8> = Vec::with_capacity(len);
        let half = len / 2 + 7;
        buf.extend((0..half).map(|i| (i * 31 + i / 4096) as u8));
        super::populate(buf.as_ptr(), buf.capacity());
        super::populate_spare(&mut buf);
        assert!(buf
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i * 31 + i / 4096) as u8));
        buf.extend((half..len).map(|i| (i * 7) as u8));
        assert!((half..len).all(|i| buf[i] == (i * 7) as u8));
        // Too small to advise, and empty: nothing happens.
        super::populate(buf.as_ptr(), 10);
        super::populate(std::ptr::null(), 0);
    }
}
