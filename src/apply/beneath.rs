//! Opening a path beneath a directory handle, so that no path string a
//! racing process can redirect is ever handed to the kernel whole.
//!
//! On Linux this is one `openat2` call with `RESOLVE_BENEATH`: the kernel
//! follows symbolic links only while they stay beneath the root, and fails
//! with `EXDEV` the moment a component (a `..`, an absolute link, a link
//! swapped in by another process) would leave it. Where `openat2` is missing
//! (old kernels, seccomp filters, other Unixes) the same rule is kept by
//! walking the path one component at a time with `O_NOFOLLOW`, reading each
//! link and resolving it against the components walked so far.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// At most this many links on one path, as the kernel's own limit.
const MAX_LINKS: usize = 40;

/// Set once `openat2` turns out to be unavailable; every later call walks.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How paths are resolved beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    /// `openat2` with `RESOLVE_BENEATH` where the kernel has it, else [`Resolver::Walk`].
    Kernel,
    /// Component by component with `O_NOFOLLOW` (the portable way; tests force it).
    Walk,
}

/// Opens `path` (relative, `/`-separated, no `..`) beneath `root`. Links on
/// the way are followed while they stay beneath the root; the last one too,
/// unless `flags` has `NOFOLLOW`. A path that would leave the root fails
/// with `EXDEV`.
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
        let how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
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
/// relative to the one before it; a link is read and its target spliced
/// into the components still to walk, resolved against the directories
/// walked so far (never above the root).
fn walk(root: BorrowedFd<'_>, path: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let mut pending: VecDeque<String> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect();
    let mut walked: Vec<String> = vec![];
    let mut cur = reopen(root, &walked)?;
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            if walked.pop().is_none() {
                return Err(Errno::XDEV);
            }
            cur = reopen(root, &walked)?;
            continue;
        }
        let last = pending.is_empty();
        let follow_last = !flags.contains(OFlags::NOFOLLOW);
        if last && !is_link(cur.as_fd(), &name)? {
            return rfs::openat(&cur, name.as_str(), flags | OFlags::NOFOLLOW, mode);
        }
        if last && !follow_last {
            return Err(Errno::LOOP);
        }
        match rfs::openat(&cur, name.as_str(), walk_flags(), Mode::empty()) {
            Ok(fd) if !last => {
                cur = fd;
                walked.push(name);
            }
            // Swapped from a link to a directory since: open it as asked.
            Ok(_) => return rfs::openat(&cur, name.as_str(), flags | OFlags::NOFOLLOW, mode),
            Err(Errno::LOOP) | Err(Errno::NOTDIR) | Err(Errno::MLINK) => {
                let target = match rfs::readlinkat(&cur, name.as_str(), vec![]) {
                    Ok(t) => t.into_string().map_err(|_| Errno::INVAL)?,
                    Err(Errno::INVAL) => return Err(Errno::NOTDIR), // not a link
                    Err(e) => return Err(e),
                };
                links += 1;
                if links > MAX_LINKS {
                    return Err(Errno::LOOP);
                }
                if target.starts_with('/') {
                    return Err(Errno::XDEV);
                }
                for c in target.rsplit('/').filter(|c| !c.is_empty() && *c != ".") {
                    pending.push_front(c.to_string());
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(cur)
}

/// Whether `name` in `dir` is a symbolic link (`false` when missing).
fn is_link(dir: BorrowedFd<'_>, name: &str) -> Result<bool, Errno> {
    match rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::Symlink),
        Err(Errno::NOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

fn walk_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The directory `walked` beneath `root`, each component without following.
fn reopen(root: BorrowedFd<'_>, walked: &[String]) -> Result<OwnedFd, Errno> {
    let mut cur = rfs::openat(root, ".", walk_flags(), Mode::empty())?;
    for name in walked {
        cur = rfs::openat(&cur, name.as_str(), walk_flags(), Mode::empty())?;
    }
    Ok(cur)
}
