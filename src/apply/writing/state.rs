//! Where a root's journal is kept: in the user's own state directory,
//! outside every root, never in a tree.
//!
//! The directory is `$GRAMMAR_PATCH_STATE_DIR`, else
//! `$XDG_STATE_HOME/grammar-patch`, else `~/.local/state/grammar-patch`,
//! else `/tmp/grammar-patch-<uid>`. It is made with mode 700 and used only
//! while it belongs to this user and no one else may write to it. A
//! journal in it is named for its root's identity (device, inode, birth
//! time), so a root never meets another root's journal; it is read only
//! when it is a regular file of this user's, with one link and no
//! permissions for anyone else, opened without following a link and
//! without blocking; once begun it is written through the handle that
//! created it, never reopened by name.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use rustix::fd::OwnedFd;
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::apply::tree::{Logged, RootId};

/// The largest journal read back: one far larger was not written by us.
const LARGEST: u64 = 1 << 30;

/// The state directory, as the environment names it.
fn state_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("GRAMMAR_PATCH_STATE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = var("XDG_STATE_HOME").map(PathBuf::from) {
        if dir.is_absolute() {
            return dir.join("grammar-patch");
        }
    }
    if let Some(home) = var("HOME").map(PathBuf::from) {
        if home.is_absolute() {
            return home.join(".local/state/grammar-patch");
        }
    }
    PathBuf::from(format!("/tmp/grammar-patch-{}", euid()))
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn untrusted(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, why)
}

/// Opens the state directory (making it, with `create`), refusing one that
/// is not this user's alone to write. `None`: it does not exist.
fn open_dir(create: bool) -> io::Result<Option<(PathBuf, OwnedFd)>> {
    let path = state_dir();
    if create {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match rfs::mkdir(&path, Mode::from_bits_truncate(0o700)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        }
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = match rfs::open(&path, flags, Mode::empty()) {
        Ok(dir) => dir,
        Err(Errno::NOENT) if !create => return Ok(None),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    };
    let st = rfs::fstat(&dir)?;
    if st.st_uid != euid() || st.st_mode & 0o022 != 0 {
        return Err(untrusted(format!(
            "the state directory {} is not this user's alone to write",
            path.display()
        )));
    }
    Ok(Some((path, dir)))
}

/// One root's journal file.
pub struct JournalFile {
    name: String,
    /// Where it lives, once opened.
    dir: Option<(PathBuf, OwnedFd)>,
    /// The open journal, once begun or reopened to append.
    file: Option<File>,
    sync: bool,
}

impl JournalFile {
    /// The journal of the root `id`.
    pub fn for_root(id: RootId) -> JournalFile {
        JournalFile {
            name: format!(
                "journal-{:x}-{:x}-{:x}-{:x}",
                id.dev, id.ino, id.born.0, id.born.1
            ),
            dir: None,
            file: None,
            sync: false,
        }
    }

    /// `fsync` every record and the directory.
    pub fn set_sync(&mut self, on: bool) {
        self.sync = on;
    }

    /// Where the journal is, for messages.
    pub fn shown(&self) -> String {
        state_dir().join(&self.name).display().to_string()
    }

    fn dir(&mut self, create: bool) -> io::Result<Option<&OwnedFd>> {
        if self.dir.is_none() {
            self.dir = open_dir(create)?;
        }
        Ok(self.dir.as_ref().map(|(_, fd)| fd))
    }

    /// Opens the journal without following a link or blocking, and checks
    /// it is this user's own regular file, alone.
    fn open_checked(dir: &OwnedFd, name: &str, flags: OFlags) -> io::Result<Result<File, String>> {
        let flags = flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match rfs::openat(dir, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::LOOP) => return Ok(Err("it is a symbolic link".into())),
            Err(e) => return Err(e.into()),
        };
        let st = rfs::fstat(&fd)?;
        let why = if rfs::FileType::from_raw_mode(st.st_mode) != rfs::FileType::RegularFile {
            "it is not a regular file"
        } else if st.st_uid != euid() {
            "it belongs to another user"
        } else if st.st_nlink != 1 {
            "it has other hard links"
        } else if st.st_mode & 0o077 != 0 {
            "others may read or write it"
        } else if st.st_size as u64 > LARGEST {
            "it is larger than any journal grammar-patch writes"
        } else {
            return Ok(Ok(File::from(fd)));
        };
        Ok(Err(why.to_string()))
    }

    /// The journal, if there is one. Appending then reopens it: one
    /// descriptor at a time, for a process that has few to spare.
    pub fn read(&mut self) -> io::Result<Logged> {
        self.file = None;
        let name = self.name.clone();
        let dir = match self.dir(false) {
            Ok(Some(dir)) => dir,
            Ok(None) => return Ok(Logged::Missing),
            // A directory others may write says nothing of its journals;
            // where there is none, there is nothing to report.
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                return match std::fs::symlink_metadata(state_dir().join(&name)) {
                    Err(none) if none.kind() == io::ErrorKind::NotFound => Ok(Logged::Missing),
                    _ => Ok(Logged::Untrusted(e.to_string())),
                };
            }
            Err(e) => return Err(e),
        };
        let file = match Self::open_checked(dir, &name, OFlags::RDONLY) {
            Ok(Ok(file)) => file,
            Ok(Err(why)) => return Ok(Logged::Untrusted(why)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Logged::Missing),
            Err(e) => return Err(e),
        };
        let mut bytes = vec![];
        file.take(LARGEST).read_to_end(&mut bytes)?;
        Ok(Logged::Found(bytes))
    }

    /// Creates the journal with `header`; fails if one exists.
    pub fn begin(&mut self, header: &[u8]) -> io::Result<()> {
        let (sync, name) = (self.sync, self.name.clone());
        let dir = self.dir(true)?.expect("made when missing");
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut file = File::from(rfs::openat(
            dir,
            name.as_str(),
            flags,
            Mode::from_bits_truncate(0o600),
        )?);
        let written = file.write_all(header).and_then(|()| match sync {
            true => file
                .sync_data()
                .and_then(|()| rfs::fsync(dir).map_err(Into::into)),
            false => Ok(()),
        });
        if let Err(e) = written {
            let _ = rfs::unlinkat(dir, name.as_str(), AtFlags::empty());
            return Err(e);
        }
        self.file = Some(file);
        Ok(())
    }

    /// Appends a record: through the handle that began the journal, or a
    /// journal read back, reopened for appending and checked again.
    pub fn append(&mut self, record: &[u8]) -> io::Result<()> {
        if self.file.is_none() {
            let name = self.name.clone();
            let dir = self.dir(false)?.ok_or(io::ErrorKind::NotFound)?;
            let flags = OFlags::WRONLY | OFlags::APPEND;
            self.file = Some(Self::open_checked(dir, &name, flags)?.map_err(untrusted)?);
        }
        let file = self.file.as_mut().expect("opened above");
        file.write_all(record)?;
        if self.sync {
            file.sync_data()?;
        }
        Ok(())
    }

    /// Removes the journal.
    pub fn end(&mut self) -> io::Result<()> {
        self.file = None;
        let name = self.name.clone();
        let sync = self.sync;
        let Some(dir) = self.dir(false)? else {
            return Ok(());
        };
        match rfs::unlinkat(dir, name.as_str(), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
        if sync {
            rfs::fsync(dir)?;
        }
        Ok(())
    }

    /// Renames an untrusted journal aside, in the state directory.
    pub fn set_aside(&mut self) -> io::Result<String> {
        self.file = None;
        let name = self.name.clone();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let aside = format!("{name}.untrusted-{}-{nanos}", std::process::id());
        let dir = self.dir(false)?.ok_or(io::ErrorKind::NotFound)?;
        rfs::renameat(dir, name.as_str(), dir, aside.as_str())?;
        Ok(state_dir().join(aside).display().to_string())
    }
}
