//! The file tree the applier reads and writes, as a trait, so that planning
//! and committing run the same code against the disk (`writing/fs/`), memory
//! (tests, in-memory applies), or a tree that fails on purpose (fault
//! injection, crash points).
//!
//! Every mutating call is one step of a commit and, on disk, one system
//! call that either happened or did not (staging a new file aside is the
//! exception, and nothing reads a file being staged). So a process killed
//! at any instant leaves each step done or not done, and the identity of
//! what is at each path ([`Ident`]) tells which.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::io;

use super::writing::fs::{refusal, refused, Refusal};
use crate::paths::RelPath;

/// What is at a path. The last component is not followed if it is a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Nothing.
    Missing,
    /// A regular file.
    File {
        /// Its permission bits.
        mode: u32,
    },
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A device, a socket, a pipe.
    Other,
}

/// What identifies a file, link or directory without reading it: the same
/// object unchanged has the same identity; a file replaced, edited or
/// touched has another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ident {
    /// The file system.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
    /// The size in bytes.
    pub size: u64,
    /// The modification time (seconds, nanoseconds).
    pub mtime: (i64, u32),
    /// The type and permission bits (`st_mode`).
    pub mode: u32,
    /// The owner.
    pub uid: u32,
    /// The group.
    pub gid: u32,
    /// How many hard links it has.
    pub nlink: u64,
}

impl Ident {
    /// Whether `other` is the same object, unchanged since this was taken
    /// (ownership, permissions and link count aside).
    pub fn same(&self, other: &Ident) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.size == other.size
            && self.mtime == other.mtime
            && self.mode & 0o170_000 == other.mode & 0o170_000
    }

    /// The permission bits.
    pub fn perm(&self) -> u32 {
        self.mode & 0o7777
    }
}

/// The identity of a root directory, which keys its journal: a journal
/// written for one root is never read for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootId {
    /// The file system.
    pub dev: u64,
    /// The directory's inode.
    pub ino: u64,
    /// When the directory was made, where the file system records it (a
    /// reused inode then has another), else zero.
    pub born: (i64, u32),
}

/// What the journal store holds for this root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logged {
    /// No journal.
    Missing,
    /// A journal this user wrote, read whole.
    Found(Vec<u8>),
    /// Something at the journal's place that this tool cannot prove it
    /// wrote (another owner, other links, other permissions, not a file):
    /// why.
    Untrusted(String),
}

/// A tree of files: reads, the steps of a commit, and the journal that
/// makes those steps undoable, kept outside the tree.
pub trait FileTree {
    /// What is at `path`.
    fn entry(&self, path: &RelPath) -> io::Result<Entry>;
    /// The identity of what is at `path` (not followed), or `None`.
    fn ident(&self, path: &RelPath) -> io::Result<Option<Ident>>;
    /// The first directory on the way to `path` (not `path` itself) that is
    /// a symbolic link, with its target; `None` when there is none.
    fn link_on_path(&self, path: &RelPath) -> io::Result<Option<(RelPath, String)>> {
        first_link(self, path)
    }
    /// The bytes of the regular file at `path`. A file of `limit` bytes or
    /// more is refused without being read (a sparse file can claim any
    /// size); anything but a regular file is refused without being opened
    /// for reading.
    fn read(&self, path: &RelPath, limit: u64) -> io::Result<Vec<u8>>;
    /// [`FileTree::read`] as text: `lossless::decoded` of the bytes.
    fn read_text(&self, path: &RelPath, limit: u64) -> io::Result<crate::lossless::Decoded> {
        self.read(path, limit).map(crate::lossless::decoded)
    }
    /// A hint that [`FileTree::read_text`] of `path` with `limit` comes
    /// next: a tree may begin that read now, beside other work, and hand
    /// it over then, stamped as the file was when the read began, and
    /// split into lines there too (`Decoded::lines`). It is a guess, and
    /// costs only the read when wrong. By default, nothing.
    fn read_ahead(&self, _path: &RelPath, _limit: u64) {}
    /// Whether a read of `path` was begun ahead ([`FileTree::read_ahead`])
    /// and is not taken yet: work that needs no text is best done before
    /// [`FileTree::read_text`] waits for it. By default, never.
    fn reads_ahead(&self, _path: &RelPath) -> bool {
        false
    }
    /// The names in a directory, sorted.
    fn list(&self, dir: &RelPath) -> io::Result<Vec<String>>;
    /// The target of the symbolic link at `path`.
    fn read_link(&self, path: &RelPath) -> io::Result<String>;

    /// Creates a new file at `path` (failing if anything is there) holding
    /// the concatenation of `chunks`, with exactly the permission bits
    /// `mode` (or the default, the umask applied, for `None`) and, where
    /// allowed, `owner`; returns its identity. A failure removes what was
    /// made.
    fn stage(
        &mut self,
        path: &RelPath,
        chunks: &[&[u8]],
        mode: Option<u32>,
        owner: Option<(u32, u32)>,
    ) -> io::Result<Ident>;
    /// Swaps what is at `a` and `b`, atomically; `Unsupported` where the
    /// file system cannot.
    fn exchange(&mut self, a: &RelPath, b: &RelPath) -> io::Result<()>;
    /// Moves a file, link or directory; fails if anything exists at `to`.
    fn rename(&mut self, from: &RelPath, to: &RelPath) -> io::Result<()>;
    /// Removes a file or a link.
    fn remove(&mut self, path: &RelPath) -> io::Result<()>;
    /// Creates a directory; its parent must exist.
    fn create_dir(&mut self, path: &RelPath) -> io::Result<()>;
    /// Removes an empty directory; `DirectoryNotEmpty` if it is not empty.
    fn remove_dir(&mut self, path: &RelPath) -> io::Result<()>;
    /// Creates a symbolic link holding `target`; fails if anything exists
    /// at the path.
    fn symlink(&mut self, path: &RelPath, target: &str) -> io::Result<()>;

    /// The root's identity, written into its journal.
    fn root_id(&self) -> RootId;
    /// The journal of this root, if any.
    fn log_read(&self) -> io::Result<Logged>;
    /// Starts the journal with `header`; fails if one exists.
    fn log_begin(&mut self, header: &[u8]) -> io::Result<()>;
    /// Appends a record to the journal begun or read last.
    fn log_append(&mut self, record: &[u8]) -> io::Result<()>;
    /// Removes the journal: after this nothing is left to recover.
    fn log_end(&mut self) -> io::Result<()>;
    /// Moves an untrusted journal out of the way, unread and unchanged;
    /// returns where it went.
    fn log_set_aside(&mut self) -> io::Result<String>;
}

/// The first directory on the way to `path` that is a symbolic link, by
/// looking at each in turn (see [`FileTree::link_on_path`]).
pub fn first_link<T: FileTree + ?Sized>(
    tree: &T,
    path: &RelPath,
) -> io::Result<Option<(RelPath, String)>> {
    for dir in path.ancestors() {
        match tree.entry(&dir) {
            Ok(Entry::Dir) => {}
            Ok(Entry::Symlink) => {
                let target = tree.read_link(&dir)?;
                return Ok(Some((dir, target)));
            }
            Ok(_) => return Ok(None),
            Err(e) if refusal(&e) == Some(Refusal::Escapes) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// The mode bits of a symbolic link in [`MemTree`].
const S_IFLNK: u32 = 0o120_000;

fn is_link(mode: u32) -> bool {
    mode & 0o170_000 == S_IFLNK
}

/// A tree in memory: files with modes, and directories.
#[derive(Debug, Clone, Default)]
pub struct MemTree {
    /// Each file (or link, by its mode): its bytes and mode.
    pub files: BTreeMap<String, (Vec<u8>, u32)>,
    /// Each directory.
    pub dirs: BTreeSet<String>,
    /// The journal, as the disk keeps it outside the tree.
    pub log: Option<Vec<u8>>,
    /// Each path's inode number, given at first sight.
    inodes: RefCell<BTreeMap<String, u64>>,
    last_inode: Cell<u64>,
}

/// Two trees are equal when they hold the same files, directories and
/// journal; inode numbers are bookkeeping.
impl PartialEq for MemTree {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files && self.dirs == other.dirs && self.log == other.log
    }
}

impl Eq for MemTree {}

impl MemTree {
    /// The tree with a file (mode 644) holding `text`, and its directories.
    pub fn with_file(mut self, path: &str, text: &str) -> Self {
        let rel = RelPath::new(path).expect("valid test path");
        for dir in rel.ancestors() {
            self.dirs.insert(dir.to_string());
        }
        self.files
            .insert(rel.to_string(), (text.as_bytes().to_vec(), 0o644));
        self
    }

    /// Adds a regular file (mode 644) holding `bytes`, and its
    /// directories: for an apply in memory. Refused: a path that is not
    /// relative and beneath the tree (absolute, `..`, empty), or one whose
    /// place a file or directory already takes on the way.
    pub fn insert(&mut self, path: &str, bytes: Vec<u8>) -> Result<(), String> {
        let rel = RelPath::new(path)
            .filter(|r| !r.as_str().is_empty())
            .ok_or_else(|| format!("{path}: not a relative path beneath the tree"))?;
        let dirs: Vec<String> = rel.ancestors().iter().map(ToString::to_string).collect();
        if let Some(file) = dirs.iter().find(|d| self.files.contains_key(d.as_str())) {
            return Err(format!("{path}: {file} is a file"));
        }
        if self.dirs.contains(rel.as_str()) || self.files.contains_key(rel.as_str()) {
            return Err(format!("{path}: given twice, or also a directory"));
        }
        self.dirs.extend(dirs);
        self.files.insert(rel.to_string(), (bytes, 0o644));
        Ok(())
    }

    /// The text of the file at `path`, if there is one and it is UTF-8.
    pub fn text(&self, path: &str) -> Option<&str> {
        let (bytes, _) = self.files.get(path)?;
        std::str::from_utf8(bytes).ok()
    }

    fn parent_exists(&self, path: &RelPath) -> bool {
        path.ancestors()
            .last()
            .is_none_or(|p| self.dirs.contains(p.as_str()))
    }

    fn inode(&self, path: &str) -> u64 {
        *self
            .inodes
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| {
                self.last_inode.set(self.last_inode.get() + 1);
                self.last_inode.get()
            })
    }

    /// Moves `from`'s inode number to `to`.
    fn carry_inode(&self, from: &str, to: &str) {
        let ino = self.inode(from);
        let mut inodes = self.inodes.borrow_mut();
        inodes.remove(from);
        inodes.insert(to.to_string(), ino);
    }

    fn fresh_inode(&self, path: &str) {
        self.inodes.borrow_mut().remove(path);
        self.inode(path);
    }

    fn missing(&self, path: &RelPath) -> io::Result<()> {
        if self.entry(path)? != Entry::Missing {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{path}: exists"),
            ));
        }
        if !self.parent_exists(path) {
            return Err(not_found(path));
        }
        Ok(())
    }
}

fn not_found(path: &RelPath) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{path}: not found"))
}

impl FileTree for MemTree {
    fn entry(&self, path: &RelPath) -> io::Result<Entry> {
        Ok(if let Some((_, mode)) = self.files.get(path.as_str()) {
            if is_link(*mode) {
                Entry::Symlink
            } else {
                Entry::File { mode: *mode }
            }
        } else if self.dirs.contains(path.as_str()) {
            Entry::Dir
        } else {
            Entry::Missing
        })
    }

    fn ident(&self, path: &RelPath) -> io::Result<Option<Ident>> {
        let (size, version, mode) = match self.files.get(path.as_str()) {
            Some((bytes, mode)) => {
                // The content stands in for a modification time: a test
                // editing a file in place changes it.
                let mut h = std::collections::hash_map::DefaultHasher::new();
                bytes.hash(&mut h);
                let mode = if is_link(*mode) {
                    *mode
                } else {
                    0o100_000 | mode
                };
                (bytes.len() as u64, h.finish() as i64, mode)
            }
            None if self.dirs.contains(path.as_str()) => (0, 0, 0o040_755),
            None => return Ok(None),
        };
        Ok(Some(Ident {
            dev: 1,
            ino: self.inode(path.as_str()),
            size,
            mtime: (version, 0),
            mode,
            uid: 0,
            gid: 0,
            nlink: 1,
        }))
    }

    fn read(&self, path: &RelPath, limit: u64) -> io::Result<Vec<u8>> {
        match self.files.get(path.as_str()) {
            Some((_, mode)) if is_link(*mode) => Err(refused(Refusal::Special)),
            Some((b, _)) if b.len() as u64 >= limit => Err(refused(Refusal::TooLarge)),
            Some((b, _)) => Ok(b.clone()),
            None => Err(not_found(path)),
        }
    }

    fn stage(
        &mut self,
        path: &RelPath,
        chunks: &[&[u8]],
        mode: Option<u32>,
        _owner: Option<(u32, u32)>,
    ) -> io::Result<Ident> {
        self.missing(path)?;
        self.files
            .insert(path.to_string(), (chunks.concat(), mode.unwrap_or(0o644)));
        self.fresh_inode(path.as_str());
        Ok(self.ident(path)?.expect("just made"))
    }

    fn exchange(&mut self, a: &RelPath, b: &RelPath) -> io::Result<()> {
        let (Some(x), Some(y)) = (self.files.remove(a.as_str()), self.files.remove(b.as_str()))
        else {
            return Err(not_found(a));
        };
        let (ia, ib) = (self.inode(a.as_str()), self.inode(b.as_str()));
        self.files.insert(a.to_string(), y);
        self.files.insert(b.to_string(), x);
        let mut inodes = self.inodes.borrow_mut();
        inodes.insert(a.to_string(), ib);
        inodes.insert(b.to_string(), ia);
        Ok(())
    }

    fn remove(&mut self, path: &RelPath) -> io::Result<()> {
        self.inodes.borrow_mut().remove(path.as_str());
        self.files
            .remove(path.as_str())
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    fn create_dir(&mut self, path: &RelPath) -> io::Result<()> {
        self.missing(path)?;
        self.dirs.insert(path.to_string());
        Ok(())
    }

    fn remove_dir(&mut self, path: &RelPath) -> io::Result<()> {
        let prefix = format!("{path}/");
        let busy = self
            .files
            .keys()
            .chain(self.dirs.iter())
            .any(|k| k.starts_with(&prefix));
        if busy {
            return Err(io::Error::new(
                io::ErrorKind::DirectoryNotEmpty,
                format!("{path}: not empty"),
            ));
        }
        if !self.dirs.remove(path.as_str()) {
            return Err(not_found(path));
        }
        Ok(())
    }

    fn rename(&mut self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        self.missing(to)?;
        if let Some(file) = self.files.remove(from.as_str()) {
            self.files.insert(to.to_string(), file);
            self.carry_inode(from.as_str(), to.as_str());
            return Ok(());
        }
        if !self.dirs.remove(from.as_str()) {
            return Err(not_found(from));
        }
        let prefix = format!("{from}/");
        let moved = |k: &&String| k.starts_with(&prefix);
        let renamed = |k: &str| format!("{to}{}", &k[from.as_str().len()..]);
        let files: Vec<String> = self.files.keys().filter(moved).cloned().collect();
        for k in files {
            let v = self.files.remove(&k).expect("listed");
            self.files.insert(renamed(&k), v);
            self.carry_inode(&k, &renamed(&k));
        }
        let dirs: Vec<String> = self.dirs.iter().filter(moved).cloned().collect();
        for k in dirs {
            self.dirs.remove(&k);
            self.dirs.insert(renamed(&k));
        }
        self.dirs.insert(to.to_string());
        self.carry_inode(from.as_str(), to.as_str());
        Ok(())
    }

    fn symlink(&mut self, path: &RelPath, target: &str) -> io::Result<()> {
        self.missing(path)?;
        self.files.insert(
            path.to_string(),
            (target.as_bytes().to_vec(), S_IFLNK | 0o777),
        );
        self.fresh_inode(path.as_str());
        Ok(())
    }

    fn read_link(&self, path: &RelPath) -> io::Result<String> {
        match self.files.get(path.as_str()) {
            Some((b, mode)) if is_link(*mode) => Ok(String::from_utf8_lossy(b).into_owned()),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{path}: not a symbolic link"),
            )),
        }
    }

    fn list(&self, dir: &RelPath) -> io::Result<Vec<String>> {
        let prefix = format!("{dir}/");
        let mut names: Vec<String> = self
            .files
            .keys()
            .chain(self.dirs.iter())
            .filter_map(|k| k.strip_prefix(&prefix))
            .map(|rest| rest.split('/').next().unwrap_or(rest).to_string())
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn root_id(&self) -> RootId {
        RootId {
            dev: 1,
            ino: 1,
            born: (0, 0),
        }
    }

    fn log_read(&self) -> io::Result<Logged> {
        Ok(match &self.log {
            Some(bytes) => Logged::Found(bytes.clone()),
            None => Logged::Missing,
        })
    }

    fn log_begin(&mut self, header: &[u8]) -> io::Result<()> {
        if self.log.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a journal exists",
            ));
        }
        self.log = Some(header.to_vec());
        Ok(())
    }

    fn log_append(&mut self, record: &[u8]) -> io::Result<()> {
        self.log
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no journal"))?
            .extend_from_slice(record);
        Ok(())
    }

    fn log_end(&mut self) -> io::Result<()> {
        self.log = None;
        Ok(())
    }

    fn log_set_aside(&mut self) -> io::Result<String> {
        self.log = None;
        Ok("(memory)".into())
    }
}
