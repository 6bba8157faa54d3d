//! Reading a whole file into memory: sized by `fstat` but read to its
//! end whatever it turns out to be, refused past a limit, its buffer's
//! pages mapped before the read fills them (`pages.rs`) unless the read
//! runs on a CPU of its own beside other work of ours ([`Pages`]).

use std::io;

use crate::lossless::Decoded;
use std::os::fd::AsFd;

/// How a read's buffer gets its pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// Mapped before the read fills them, a window a call
    /// (`pages::populate`): for a read that is all the process is doing.
    Mapped,
    /// Faulted in one by one as the read copies into them: for a read on
    /// a CPU of its own beside another thread's work (the file read beside
    /// the parse, where `beside::start_awaited` moved it). Mapping holds
    /// the process's memory map for a whole window, and every change the
    /// other thread makes to the map (the heap growing) waits for it:
    /// paired runs of large applies took 0.91 to 0.94 of the time without
    /// it (issue 46).
    Faulted,
}

/// The whole of an open file whose size is known (`size`, from `fstat`):
/// read into a buffer one byte larger, so the second read sees the end
/// (`read_to_end` would ask the size again, and the position: two more
/// system calls a file); a file that grew meanwhile is read to its end.
/// The read fills the buffer's spare room: nothing zeroes it first (a
/// `calloc`) for the read to overwrite, and a buffer that cannot be had
/// is an error, not an abort.
pub fn read_sized(fd: impl AsFd, size: usize, pages: Pages) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reserve(&mut bytes, size.saturating_add(1))?;
    if pages == Pages::Mapped {
        crate::pages::populate_spare(&mut bytes);
    }
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

/// The text of an open file whose size is known (`lossless::decoded` of
/// its bytes, read to its end as [`read_sized`] reads). A file of
/// `lossless::PIECED` bytes or more is read a piece at a time, each piece
/// decoded while it is in the cache (`lossless::read`): decoding it after
/// reading it whole made two more passes over a file that no longer
/// fitted there (UTF-8 validation, and a search for escapes): with the
/// one-pass split, 4% of a 2,000,000-line dry run.
pub fn read_text(fd: impl AsFd, size: usize, pages: Pages) -> io::Result<Decoded> {
    if size < crate::lossless::PIECED {
        // Read whole: fewer system calls, and the cache still holds it.
        return Ok(crate::lossless::decoded(read_sized(fd, size, pages)?));
    }
    crate::lossless::read(Reader(fd), size)
}

/// An open file as `io::Read`, borrowed.
struct Reader<F>(F);

impl<F: AsFd> io::Read for Reader<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(rustix::io::read(&self.0, buf)?)
    }
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
