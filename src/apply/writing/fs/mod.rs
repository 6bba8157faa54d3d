//! The only code that touches the disk: [`DiskTree`], a [`FileTree`] held
//! by a handle on its root directory.
//!
//! - **Beneath the root, through no link.** Every path is opened relative
//!   to the root's handle (`beneath.rs`), never as a string the kernel
//!   resolves from `/`, and no directory on the way may be a symbolic link
//!   (`ELOOP`, reported as `path_escape`): a directory swapped for a link
//!   while we run fails the step. Acting on a name (unlink, mkdir, rename)
//!   goes through its parent directory's handle.
//! - **Regular files only.** A file is opened for reading only after its
//!   type was seen, without following a link and without blocking, and
//!   checked again once open: a FIFO, socket or device is refused
//!   ([`Refusal::Special`]) and never blocks a run.
//! - **No lost update.** Reading a file records its identity (device,
//!   inode, size, modification and change times); the first swap, removal
//!   or rename of that path checks it again, and a file someone else changed
//!   in between fails the step as [`Refusal::Changed`]. A read ahead
//!   ([`FileTree::read_ahead`], on another thread through its own handle on
//!   the root) records the identity the file had when that read opened it,
//!   and only the read of the same path with the same limit takes it.
//! - **Nothing written in place.** New contents are written to a new file
//!   beside the target and swapped in (`renameat2` with `RENAME_EXCHANGE`),
//!   so a reader sees the old file or the new one, never half of one, and
//!   another hard link to the old file keeps the old bytes and mode.
//! - **One writer.** [`DiskTree::lock`] takes `flock` on the root's handle.
//! - **Durability on request.** With [`DiskTree::set_sync`], every new file,
//!   journal record and changed directory is synced.
//! - **The journal outside.** A root's journal is kept in the user's state
//!   directory (`state.rs`), never in the tree.

mod read;

pub use read::{read_sized, Pages};

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{self as rfs, AtFlags, FlockOperation, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::beneath::{self, Resolver};
use super::state::JournalFile;
use crate::apply::matching::beside;
use crate::apply::tree::{Entry, FileTree, Ident, Logged, RootId};
use crate::apply::Split;
use crate::lossless::Decoded;
use crate::paths::RelPath;

/// A step the disk refused for a reason the patch's reader must hear about
/// (carried inside an [`io::Error`]; see [`refusal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The path passes through a symbolic link, or leads outside the root.
    Escapes,
    /// Another process changed the file after it was read.
    Changed,
    /// The file is at or over the size its reader takes: refused before
    /// it is read.
    TooLarge,
    /// Not a regular file (a FIFO, socket or device, or a link where a
    /// file was read): never opened for reading.
    Special,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Escapes => "the path passes through a symbolic link or leaves the root",
            Refusal::Changed => "the file was changed by another process after it was read",
            Refusal::TooLarge => "the file is larger than its reader takes",
            Refusal::Special => "not a regular file",
        })
    }
}

impl std::error::Error for Refusal {}

/// The refusal inside `err`, if it is one.
pub fn refusal(err: &io::Error) -> Option<Refusal> {
    if let Some(r) = err.get_ref().and_then(|e| e.downcast_ref::<Refusal>()) {
        return Some(*r);
    }
    match err.raw_os_error() {
        Some(code) if code == Errno::XDEV.raw_os_error() => Some(Refusal::Escapes),
        Some(code) if code == Errno::LOOP.raw_os_error() => Some(Refusal::Escapes),
        _ => None,
    }
}

pub(crate) fn refused(r: Refusal) -> io::Error {
    io::Error::other(r)
}

/// What identifies a file's content without reading it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    // The field types of `stat` differ between platforms.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &Stat) -> Stamp {
        Stamp {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as i64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }
}

// The field types of `stat` differ between platforms.
#[allow(clippy::unnecessary_cast)]
fn ident_of(st: &Stat) -> Ident {
    Ident {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        size: st.st_size as u64,
        mtime: (st.st_mtime as i64, st.st_mtime_nsec as u32),
        mode: st.st_mode as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        nlink: st.st_nlink as u64,
    }
}

/// The regular file at `path` beneath `dir`, read whole by `read`, with
/// the stamp it had when it was opened (taken before the read, so that a
/// change during the read shows as a change); anything else, or a file
/// of `limit` bytes or more, is refused unread.
fn read_regular<T>(
    resolver: Resolver,
    dir: BorrowedFd<'_>,
    path: &RelPath,
    limit: u64,
    read: impl FnOnce(&OwnedFd, usize) -> io::Result<T>,
) -> io::Result<(Stamp, T)> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = beneath::open(resolver, dir, path.as_str(), flags, Mode::empty())?;
    let st = rfs::fstat(&fd)?;
    match rfs::FileType::from_raw_mode(st.st_mode) {
        rfs::FileType::RegularFile => {}
        rfs::FileType::Directory => return Err(refused(Refusal::Changed)),
        _ => return Err(refused(Refusal::Special)),
    }
    if st.st_size as u64 >= limit {
        return Err(refused(Refusal::TooLarge));
    }
    Ok((Stamp::of(&st), read(&fd, st.st_size as usize)?))
}

/// A file's text being read on another thread ([`FileTree::read_ahead`]),
/// for the read of the same path with the same limit to take.
struct Ahead {
    path: RelPath,
    limit: u64,
    read: std::thread::JoinHandle<io::Result<(Stamp, Decoded)>>,
}

/// Which lock [`DiskTree::lock`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// Readers (lint, dry runs) share the root.
    Shared,
    /// One writer, alone.
    Exclusive,
}

pub struct DiskTree {
    root: PathBuf,
    dir: OwnedFd,
    id: RootId,
    resolver: Resolver,
    sync: bool,
    /// Identity of every file read, until its first change.
    stamps: RefCell<HashMap<String, Stamp>>,
    /// A read begun beside other work, not yet taken.
    ahead: RefCell<Option<Ahead>>,
    journal: RefCell<JournalFile>,
}

/// The identity of the directory `dir`: device, inode, and birth time
/// where the file system keeps one.
fn root_id(dir: &OwnedFd) -> io::Result<RootId> {
    let st = rfs::fstat(dir)?;
    #[allow(clippy::unnecessary_cast)]
    let (dev, ino) = (st.st_dev as u64, st.st_ino as u64);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let born = match rfs::statx(dir, "", AtFlags::EMPTY_PATH, rfs::StatxFlags::BTIME) {
        Ok(x) if x.stx_mask & rfs::StatxFlags::BTIME.bits() != 0 => {
            (x.stx_btime.tv_sec, x.stx_btime.tv_nsec)
        }
        _ => (0, 0),
    };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let born = (0, 0);
    Ok(RootId { dev, ino, born })
}

impl DiskTree {
    /// A tree rooted at the directory `root` (canonicalised for messages and
    /// absolute paths; every access goes through the handle opened here).
    pub fn new(root: &Path) -> io::Result<DiskTree> {
        let root = std::fs::canonicalize(root)?;
        let dir = rfs::open(
            &root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOTDIR => io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{}: not a directory", root.display()),
            ),
            e => e.into(),
        })?;
        let id = root_id(&dir)?;
        Ok(DiskTree {
            root,
            dir,
            id,
            resolver: Resolver::Kernel,
            sync: false,
            stamps: RefCell::default(),
            ahead: RefCell::default(),
            journal: RefCell::new(JournalFile::for_root(id)),
        })
    }

    /// Resolves paths component by component, as where `openat2` is missing.
    pub fn walk_components(mut self) -> Self {
        self.resolver = Resolver::Walk;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where this root's journal is kept, for messages.
    pub fn journal_path(&self) -> String {
        self.journal.borrow().shown()
    }

    /// `fsync` every file written and every directory changed.
    pub fn set_sync(&mut self, on: bool) {
        self.sync = on;
        self.journal.get_mut().set_sync(on);
    }

    /// Takes `lock` on the root, waiting up to `wait` while `go_on` says
    /// to; `false` if another process held it all that time (or `go_on`
    /// stopped the wait). Held until the tree is dropped.
    pub fn lock(&self, lock: Lock, wait: Duration, go_on: &dyn Fn() -> bool) -> io::Result<bool> {
        let op = match lock {
            Lock::Shared => FlockOperation::NonBlockingLockShared,
            Lock::Exclusive => FlockOperation::NonBlockingLockExclusive,
        };
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_millis(1);
        loop {
            match rfs::flock(&self.dir, op) {
                Ok(()) => return Ok(true),
                Err(Errno::WOULDBLOCK) | Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            let now = Instant::now();
            if now >= deadline || !go_on() {
                return Ok(false);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    fn open(&self, path: &RelPath, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        beneath::open(self.resolver, self.dir.as_fd(), path.as_str(), flags, mode)
    }

    /// The regular file at `path`, read whole by `read` (bytes or text)
    /// and stamped; anything else, or a file of `limit` bytes or more, is
    /// refused unread.
    fn read_with<T>(
        &self,
        path: &RelPath,
        limit: u64,
        read: impl FnOnce(&OwnedFd, usize) -> io::Result<T>,
    ) -> io::Result<T> {
        let (stamp, read) = read_regular(self.resolver, self.dir.as_fd(), path, limit, read)?;
        self.stamps.borrow_mut().insert(path.to_string(), stamp);
        Ok(read)
    }

    fn parent<'p>(&self, path: &'p RelPath) -> io::Result<(OwnedFd, &'p str)> {
        beneath::parent(self.resolver, self.dir.as_fd(), path.as_str())
    }

    /// Fails with [`Refusal::Changed`] if `st` is not what was read at
    /// `path`; forgets the stamp, since this step is about to change it.
    /// A FIFO, socket or device put in its place is [`Refusal::Special`].
    fn unchanged(&self, path: &RelPath, st: &Stat) -> io::Result<()> {
        match self.stamps.borrow_mut().remove(path.as_str()) {
            Some(read) if read != Stamp::of(st) => {
                use rfs::FileType::*;
                Err(refused(match rfs::FileType::from_raw_mode(st.st_mode) {
                    RegularFile | Directory | Symlink => Refusal::Changed,
                    _ => Refusal::Special,
                }))
            }
            _ => Ok(()),
        }
    }

    /// Checks a name about to be swapped, removed or renamed away.
    fn unchanged_at(&self, dir: &OwnedFd, name: &str, path: &RelPath) -> io::Result<()> {
        if !self.stamps.borrow().contains_key(path.as_str()) {
            return Ok(());
        }
        let st = rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| self.gone(path, e.into()))?;
        self.unchanged(path, &st)
    }

    /// A file that was read and is now missing was removed by someone else.
    fn gone(&self, path: &RelPath, e: io::Error) -> io::Error {
        if missing(&e) && self.stamps.borrow().contains_key(path.as_str()) {
            refused(Refusal::Changed)
        } else {
            e
        }
    }

    fn synced_dir(&self, dir: &OwnedFd) -> io::Result<()> {
        if self.sync {
            // An O_PATH handle cannot be synced; open the directory itself.
            let d = rfs::openat(
                dir,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            rfs::fsync(&d)?;
        }
        Ok(())
    }
}

/// How many pieces one `writev` takes (the usual `IOV_MAX`).
const IOV_BATCH: usize = 1024;

/// Writes `chunks` with `writev`, up to [`IOV_BATCH`] pieces a call
/// (pieces are often single lines); returns the number of bytes written.
/// Written from where they lie: a buffer would copy every byte once more
/// and take room of its own for every file written.
fn write_chunks(mut file: &std::fs::File, chunks: &[&[u8]]) -> io::Result<u64> {
    let mut len = 0;
    let mut slices: Vec<io::IoSlice> = Vec::with_capacity(IOV_BATCH.min(chunks.len()));
    for batch in chunks.chunks(IOV_BATCH) {
        slices.clear();
        slices.extend(
            batch
                .iter()
                .filter(|c| !c.is_empty())
                .map(|c| io::IoSlice::new(c)),
        );
        let mut rest = &mut slices[..];
        while !rest.is_empty() {
            match file.write_vectored(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    len += n as u64;
                    io::IoSlice::advance_slices(&mut rest, n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(len)
}

fn missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

impl FileTree for DiskTree {
    fn entry(&self, path: &RelPath) -> io::Result<Entry> {
        Ok(match self.ident(path)? {
            None => Entry::Missing,
            Some(id) => match rfs::FileType::from_raw_mode(id.mode as _) {
                rfs::FileType::Symlink => Entry::Symlink,
                rfs::FileType::RegularFile => Entry::File { mode: id.perm() },
                rfs::FileType::Directory => Entry::Dir,
                _ => Entry::Other,
            },
        })
    }

    fn ident(&self, path: &RelPath) -> io::Result<Option<Ident>> {
        let (dir, name) = match self.parent(path) {
            Ok(p) => p,
            Err(e) if missing(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        match rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(ident_of(&st))),
            Err(Errno::NOENT) | Err(Errno::NOTDIR) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn link_on_path(&self, path: &RelPath) -> io::Result<Option<(RelPath, String)>> {
        // One open of the parent, which refuses every link on the way, for
        // the common case; the walk names the link (or finds none, where
        // the parent is still to be made).
        let Some(parent) = path.ancestors().pop() else {
            return Ok(None);
        };
        match self.open(&parent, beneath::dir_flags(), Mode::empty()) {
            Ok(_) => Ok(None),
            Err(e) if missing(&e) || refusal(&e) == Some(Refusal::Escapes) => {
                crate::apply::tree::first_link(self, path)
            }
            Err(e) => Err(e),
        }
    }

    fn read(&self, path: &RelPath, limit: u64) -> io::Result<Vec<u8>> {
        self.read_with(path, limit, |fd, size| read_sized(fd, size, Pages::Mapped))
    }

    fn read_text(&self, path: &RelPath, limit: u64) -> io::Result<Decoded> {
        // A read ahead of this path is taken with the stamp the file had
        // when that read opened it: a change since then shows at the
        // commit as one made after this read. Any other is let go (its
        // thread ends by itself), and a read ahead that failed is done
        // again here, for its own error.
        let ahead = self.ahead.borrow_mut().take();
        if let Some(a) = ahead.filter(|a| a.path == *path && a.limit == limit) {
            if let Ok(Ok((stamp, text))) = a.read.join() {
                self.stamps.borrow_mut().insert(path.to_string(), stamp);
                return Ok(text);
            }
        }
        self.read_with(path, limit, |fd, size| {
            read::read_text(fd, size, Pages::Mapped)
        })
    }

    fn read_ahead(&self, path: &RelPath, limit: u64) {
        // The thread reads through its own handle on the root, beneath it
        // as every read is; without one, nothing is read ahead.
        let Ok(dir) = self.dir.try_clone() else {
            return;
        };
        // It splits what it read into lines too, as the planner will,
        // breaking at a lone `\r` where the text has one (which holds for
        // every format when it has none) and noting the lines that end in
        // a blank: the planner takes that split, which otherwise would
        // come after the parse ([`Split`]).
        let (resolver, rel) = (self.resolver, path.clone());
        let read = beside::start_awaited(move |moved| {
            // Moved to a CPU of its own, it takes its page faults as it
            // reads (`Pages::Faulted`); beside the parse on one CPU, the
            // faults would be the parse's time, and the pages are mapped
            // first.
            let pages = if moved { Pages::Faulted } else { Pages::Mapped };
            read_regular(resolver, dir.as_fd(), &rel, limit, |fd, size| {
                read::read_text(fd, size, pages).map(|mut read| {
                    crate::timings::mark("read ahead: file read");
                    read.lines = Some(Split::of(&read.text, true, true));
                    crate::timings::mark("read ahead: lines split");
                    read
                })
            })
        });
        if let Ok(read) = read {
            *self.ahead.borrow_mut() = Some(Ahead {
                path: path.clone(),
                limit,
                read,
            });
        }
    }

    fn reads_ahead(&self, path: &RelPath) -> bool {
        self.ahead
            .borrow()
            .as_ref()
            .is_some_and(|a| a.path == *path)
    }

    fn stage(
        &mut self,
        path: &RelPath,
        chunks: &[&[u8]],
        mode: Option<u32>,
        owner: Option<(u32, u32)>,
    ) -> io::Result<Ident> {
        let (dir, name) = self.parent(path)?;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let perm = Mode::from_bits_truncate(mode.unwrap_or(0o666));
        let file = std::fs::File::from(rfs::openat(&dir, name, flags, perm)?);
        let staged = write_chunks(&file, chunks).and_then(|_| {
            let st = rfs::fstat(&file)?;
            if let Some((uid, gid)) = owner.filter(|&o| o != (st.st_uid, st.st_gid)) {
                // Kept where this user may; a file of another owner that
                // cannot keep it is theirs to mind, as with `patch`.
                let (uid, gid) = (rfs::Uid::from_raw(uid), rfs::Gid::from_raw(gid));
                let _ = rfs::fchown(&file, Some(uid), Some(gid));
            }
            // After the owner: a change of owner clears setuid and setgid.
            if let Some(mode) = mode {
                rfs::fchmod(&file, Mode::from_bits_truncate(mode))?;
            }
            if self.sync {
                file.sync_data()?;
            }
            Ok(ident_of(&rfs::fstat(&file)?))
        });
        if staged.is_err() {
            drop(file);
            let _ = rfs::unlinkat(&dir, name, AtFlags::empty());
        }
        staged
    }

    fn exchange(&mut self, a: &RelPath, b: &RelPath) -> io::Result<()> {
        let (da, na) = self.parent(a)?;
        let (db, nb) = self.parent(b)?;
        self.unchanged_at(&db, nb, b)?;
        self.unchanged_at(&da, na, a)?;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        match rfs::renameat_with(&da, na, &db, nb, rfs::RenameFlags::EXCHANGE) {
            Ok(()) => {
                self.synced_dir(&da)?;
                return self.synced_dir(&db);
            }
            Err(Errno::INVAL) | Err(Errno::NOSYS) | Err(Errno::OPNOTSUPP) => {}
            Err(e) => return Err(e.into()),
        }
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this file system cannot swap two names",
        ))
    }

    fn symlink(&mut self, path: &RelPath, target: &str) -> io::Result<()> {
        let (dir, name) = self.parent(path)?;
        rfs::symlinkat(&*crate::lossless::encode(target), &dir, name)?;
        self.synced_dir(&dir)
    }

    fn read_link(&self, path: &RelPath) -> io::Result<String> {
        let (dir, name) = self.parent(path)?;
        let target = rfs::readlinkat(&dir, name, Vec::new())?;
        Ok(crate::lossless::decode(target.into_bytes()))
    }

    fn remove(&mut self, path: &RelPath) -> io::Result<()> {
        let (dir, name) = self.parent(path)?;
        self.unchanged_at(&dir, name, path)?;
        rfs::unlinkat(&dir, name, AtFlags::empty())?;
        self.synced_dir(&dir)
    }

    fn create_dir(&mut self, path: &RelPath) -> io::Result<()> {
        let (dir, name) = self.parent(path)?;
        rfs::mkdirat(&dir, name, Mode::from_bits_truncate(0o777))?;
        self.synced_dir(&dir)
    }

    fn remove_dir(&mut self, path: &RelPath) -> io::Result<()> {
        let (dir, name) = self.parent(path)?;
        rfs::unlinkat(&dir, name, AtFlags::REMOVEDIR).map_err(|e| match e {
            Errno::NOTEMPTY | Errno::EXIST => io::Error::new(
                io::ErrorKind::DirectoryNotEmpty,
                format!("{path}: directory not empty"),
            ),
            e => e.into(),
        })?;
        self.synced_dir(&dir)
    }

    fn list(&self, path: &RelPath) -> io::Result<Vec<String>> {
        let fd = self.open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        let mut names = vec![];
        for entry in rfs::Dir::read_from(&fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            names.push(String::from_utf8(name.to_vec()).map_err(|n| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: a name that is not UTF-8",
                        String::from_utf8_lossy(n.as_bytes())
                    ),
                )
            })?);
        }
        names.sort();
        Ok(names)
    }

    fn rename(&mut self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        let (src, from_name) = self.parent(from)?;
        let (dst, to_name) = self.parent(to)?;
        self.unchanged_at(&src, from_name, from)?;
        rename_noreplace(&src, from_name, &dst, to_name)?;
        self.synced_dir(&src)?;
        self.synced_dir(&dst)
    }

    fn root_id(&self) -> RootId {
        self.id
    }

    fn log_read(&self) -> io::Result<Logged> {
        self.journal.borrow_mut().read()
    }

    fn log_begin(&mut self, header: &[u8]) -> io::Result<()> {
        self.journal.get_mut().begin(header)
    }

    fn log_append(&mut self, record: &[u8]) -> io::Result<()> {
        self.journal.get_mut().append(record)
    }

    fn log_end(&mut self) -> io::Result<()> {
        self.journal.get_mut().end()
    }

    fn log_set_aside(&mut self) -> io::Result<String> {
        self.journal.get_mut().set_aside()
    }
}

/// Renames without replacing what is at the destination.
fn rename_noreplace(src: &OwnedFd, from: &str, dst: &OwnedFd, to: &str) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    match rfs::renameat_with(src, from, dst, to, rfs::RenameFlags::NOREPLACE) {
        Err(Errno::INVAL) | Err(Errno::NOSYS) => {} // the file system lacks it
        other => return other.map_err(io::Error::from),
    }
    // Check, then rename: a window another writer could use, where the
    // kernel offers nothing better.
    match rfs::statat(dst, to, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{to}: exists"),
        )),
        Err(Errno::NOENT) => Ok(rfs::renameat(src, from, dst, to)?),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests;
