//! Opening a path beneath a directory handle, through no symbolic link, so
//! that no path string a racing process can redirect is ever handed to the
//! kernel whole.
//!
//! On Linux this is one `openat2` call with `RESOLVE_BENEATH` and
//! `RESOLVE_NO_SYMLINKS`: the kernel fails with `EXDEV` the moment a
//! component would leave the root and with `ELOOP` at any link on the way
//! (a link in the tree, or one swapped in by another process). Where
//! `openat2` is missing (old kernels, seccomp filters, other Unixes) the
//! same rule is kept by walking the path one component at a time with
//! `O_NOFOLLOW`. A patch never reaches a file through a link, as `git
//! apply` never does ("beyond a symbolic link").

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{self as rfs, Mode, OFlags};
use rustix::io::Errno;

/// Set once `openat2` turns out to be unavailable; every later call walks.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How paths are resolved beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    /// `openat2` where the kernel has it, else [`Resolver::Walk`].
    Kernel,
    /// Component by component with `O_NOFOLLOW` (the portable way; tests force it).
    Walk,
}

/// Opens `path` (relative, `/`-separated, no `..`) beneath `root`. A link
/// on the way fails with `ELOOP`; the last component too, when `flags` has
/// `NOFOLLOW` (otherwise a link there is refused as well).
pub fn open(
    resolver: Resolver,
    root: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if resolver == Resolver::Kernel && !NO_OPENAT2.load(Ordering::Relaxed) {
        use rustix::fs::ResolveFlags;
        let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rfs::openat2(root, path, flags, mode, how) {
            Err(Errno::NOSYS) | Err(Errno::PERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
            Err(Errno::AGAIN) => {} // a rename raced the lookup: walk instead
            other => return other.map_err(io::Error::from),
        }
    }
    let _ = resolver;
    walk(root, path, flags, mode).map_err(io::Error::from)
}

/// The parent directory of `path` opened beneath `root`, and the last
/// component's name, for the `*at` calls that act on a name in a directory
/// without following it (`unlinkat`, `mkdirat`, `renameat`, `statat`).
pub fn parent<'p>(
    resolver: Resolver,
    root: BorrowedFd<'_>,
    path: &'p str,
) -> io::Result<(OwnedFd, &'p str)> {
    let (dir, name) = match path.rsplit_once('/') {
        Some((dir, name)) => (dir, name),
        None => (".", path),
    };
    let fd = open(resolver, root, dir, dir_flags(), Mode::empty())?;
    Ok((fd, name))
}

/// Flags for a directory handle used only as the base of `*at` calls.
pub fn dir_flags() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    return OFlags::PATH | OFlags::DIRECTORY;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    return OFlags::RDONLY | OFlags::DIRECTORY;
}

/// The portable resolution: every directory opened with `O_NOFOLLOW`
/// relative to the one before it; a link anywhere is `ELOOP`.
fn walk(root: BorrowedFd<'_>, path: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut cur = rfs::openat(root, ".", dir_flags, Mode::empty())?;
    let Some((last, dirs)) = parts.split_last() else {
        return rfs::openat(root, ".", flags, mode);
    };
    for name in dirs {
        if *name == ".." {
            return Err(Errno::XDEV);
        }
        cur = match rfs::openat(&cur, *name, dir_flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOTDIR) if is_link(cur.as_fd(), name)? => return Err(Errno::LOOP),
            Err(e) => return Err(e),
        };
    }
    if *last == ".." {
        return Err(Errno::XDEV);
    }
    match rfs::openat(&cur, *last, flags | OFlags::NOFOLLOW, mode) {
        Err(Errno::NOTDIR) if is_link(cur.as_fd(), last)? => Err(Errno::LOOP),
        other => other,
    }
}

/// Whether `name` in `dir` is a symbolic link (`false` when missing).
fn is_link(dir: BorrowedFd<'_>, name: &str) -> Result<bool, Errno> {
    match rfs::statat(dir, name, rfs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::Symlink),
        Err(Errno::NOENT) => Ok(false),
        Err(e) => Err(e),
    }
}
