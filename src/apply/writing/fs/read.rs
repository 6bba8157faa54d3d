//! Reading a whole file into memory: sized by `fstat` but read to its
//! end whatever it turns out to be, refused past a limit, with page advice
//! for a large buffer.

use std::io;
use std::os::fd::AsFd;

/// The whole of an open file whose size is known (`size`, from `fstat`):
/// read into a buffer one byte larger, so the second read sees the end
/// (`read_to_end` would ask the size again, and the position: two more
/// system calls a file); a file that grew meanwhile is read to its end.
/// The read fills the buffer's spare room: nothing zeroes it first (a
/// `calloc`) for the read to overwrite, and a buffer that cannot be had
/// is an error, not an abort.
pub fn read_sized(fd: impl AsFd, size: usize) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reserve(&mut bytes, size.saturating_add(1))?;
    advise(bytes.spare_capacity_mut(), Advice::HugePages);
    advise(bytes.spare_capacity_mut(), Advice::Populate);
    loop {
        if bytes.len() == bytes.capacity() {
            // The file grew while read: take the rest.
            let more = bytes.len();
            reserve(&mut bytes, more)?;
        }
        match rustix::io::read(&fd, rustix::buffer::spare_capacity(&mut bytes)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(bytes)
}

/// Room for `more` bytes in `bytes`, or an error where memory has none
/// (not the abort of a failed allocation).
pub(super) fn reserve(bytes: &mut Vec<u8>, more: usize) -> io::Result<()> {
    bytes.try_reserve_exact(more).map_err(|_| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("no memory for {more} more bytes"),
        )
    })
}

/// Advice for a large buffer not yet touched, given for the part of it
/// aligned to the advice's unit. Kept because it makes large applies
/// measurably faster (paired runs with and without it); small buffers
/// get none. Advice only: where the kernel cannot follow it (no huge
/// pages to give, THP off, a kernel before 5.14), nothing changes.
#[derive(Clone, Copy)]
pub(super) enum Advice {
    /// Transparent huge pages over the 2 MiB-aligned interior of a buffer
    /// of 4 MiB or more: a large file is read in a few page faults instead
    /// of one per 4 KiB page.
    HugePages,
    /// Every page of a buffer of 256 KiB or more mapped in one call,
    /// before the read fills it; the kernel otherwise takes a fault for
    /// each page while it copies (`MADV_POPULATE_WRITE`).
    Populate,
}

/// Gives `advice` for the memory of `buf` (bytes, read or still to be:
/// a `Vec`'s spare room).
pub(super) fn advise<T>(buf: &mut [T], advice: Advice) {
    let (unit, least, advice) = match advice {
        Advice::HugePages => (2 << 20, 4 << 20, rustix::mm::Advice::LinuxHugepage),
        Advice::Populate => (4 << 10, 256 << 10, rustix::mm::Advice::LinuxPopulateWrite),
    };
    let len = std::mem::size_of_val(buf);
    if len < least {
        return;
    }
    let start = (buf.as_mut_ptr() as usize).next_multiple_of(unit);
    let end = (buf.as_mut_ptr() as usize + len) / unit * unit;
    if end > start {
        // SAFETY: the range lies inside `buf`, which we own mutably, and
        // neither advice changes the contents of memory (unlike
        // MADV_DONTNEED or MADV_FREE): MADV_HUGEPAGE only says how to back
        // it, MADV_POPULATE_WRITE faults its pages in as a write would,
        // keeping what they hold. An error changes nothing.
        let _ = unsafe { rustix::mm::madvise(start as *mut _, end - start, advice) };
    }
}
