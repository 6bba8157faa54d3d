//! The file tree the applier reads and writes, as a trait, so that planning
//! and committing run the same code against the disk (`fs.rs`), memory
//! (tests), or a tree that fails on purpose (fault injection).

use std::collections::BTreeMap;
use std::io;

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

/// Every mutating call is one step of a commit; each either succeeds or
/// leaves the tree as it was (a failed `create` removes its partial file).
pub trait FileTree {
    /// What is at `path`.
    fn entry(&self, path: &RelPath) -> io::Result<Entry>;
    /// Where the path really leads if, through a symbolic link, it leaves
    /// the root; `None` while it stays inside.
    fn escapes(&self, path: &RelPath) -> io::Result<Option<String>>;
    /// The bytes of the regular file at `path`. A file of `limit` bytes or
    /// more is refused without being read ([`Refusal::TooLarge`]: a sparse
    /// file can claim any size).
    ///
    /// [`Refusal::TooLarge`]: super::fs::Refusal::TooLarge
    fn read(&self, path: &RelPath, limit: u64) -> io::Result<Vec<u8>>;
    /// Overwrites an existing regular file in place (keeping its inode,
    /// permissions and links) with the concatenation of `chunks`. Never
    /// follows a symbolic link.
    fn write(&mut self, path: &RelPath, chunks: &[&[u8]]) -> io::Result<()>;
    /// Creates a new file holding the concatenation of `chunks`; fails if
    /// anything exists at the path.
    fn create(&mut self, path: &RelPath, chunks: &[&[u8]], mode: Option<u32>) -> io::Result<()>;
    /// Removes a file or a link.
    fn remove(&mut self, path: &RelPath) -> io::Result<()>;
    /// Creates a directory; its parent must exist.
    fn create_dir(&mut self, path: &RelPath) -> io::Result<()>;
    /// Removes an empty directory; `DirectoryNotEmpty` if it is not empty.
    fn remove_dir(&mut self, path: &RelPath) -> io::Result<()>;
    /// The names in a directory, sorted.
    fn list(&self, dir: &RelPath) -> io::Result<Vec<String>>;
    /// Moves a file or directory; fails if anything exists at `to`.
    fn rename(&mut self, from: &RelPath, to: &RelPath) -> io::Result<()>;
    /// How many hard links the file at `path` has (1 for a file no other
    /// name shares). A file with more is never written in place.
    fn links(&self, path: &RelPath) -> io::Result<u64>;
    /// Appends `bytes` to a file, creating it if missing (the journal's log).
    fn append(&mut self, path: &RelPath, bytes: &[&[u8]]) -> io::Result<()>;
    /// Creates a symbolic link holding `target`; fails if anything exists
    /// at the path.
    fn symlink(&mut self, path: &RelPath, _target: &str) -> io::Result<()> {
        Err(unsupported(path, "symbolic links"))
    }
    /// The target of the symbolic link at `path`.
    fn read_link(&self, path: &RelPath) -> io::Result<String> {
        Err(unsupported(path, "symbolic links"))
    }
    /// Sets the permission bits of the regular file at `path` (never
    /// through a link).
    fn set_mode(&mut self, path: &RelPath, _mode: u32) -> io::Result<()> {
        Err(unsupported(path, "permissions"))
    }
}

fn unsupported(path: &RelPath, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{path}: this tree has no {what}"),
    )
}

/// The mode bits of a symbolic link in [`MemTree`].
const S_IFLNK: u32 = 0o120_000;

fn is_link(mode: u32) -> bool {
    mode & 0o170_000 == S_IFLNK
}

/// A tree in memory: files with modes, and directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemTree {
    /// Each file (or link, by its mode): its bytes and mode.
    pub files: BTreeMap<String, (Vec<u8>, u32)>,
    /// Each directory.
    pub dirs: std::collections::BTreeSet<String>,
}

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

    fn parent_exists(&self, path: &RelPath) -> bool {
        path.ancestors()
            .last()
            .is_none_or(|p| self.dirs.contains(p.as_str()))
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

    fn escapes(&self, _path: &RelPath) -> io::Result<Option<String>> {
        Ok(None)
    }

    fn read(&self, path: &RelPath, limit: u64) -> io::Result<Vec<u8>> {
        match self.files.get(path.as_str()) {
            Some((_, mode)) if is_link(*mode) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{path}: a symbolic link"),
            )),
            Some((b, _)) if b.len() as u64 >= limit => {
                Err(super::fs::refused(super::fs::Refusal::TooLarge))
            }
            Some((b, _)) => Ok(b.clone()),
            None => Err(not_found(path)),
        }
    }

    fn write(&mut self, path: &RelPath, chunks: &[&[u8]]) -> io::Result<()> {
        let file = self
            .files
            .get_mut(path.as_str())
            .ok_or_else(|| not_found(path))?;
        file.0 = chunks.concat();
        Ok(())
    }

    fn create(&mut self, path: &RelPath, chunks: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
        if self.entry(path)? != Entry::Missing {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{path}: exists"),
            ));
        }
        if !self.parent_exists(path) {
            return Err(not_found(path));
        }
        self.files
            .insert(path.to_string(), (chunks.concat(), mode.unwrap_or(0o644)));
        Ok(())
    }

    fn remove(&mut self, path: &RelPath) -> io::Result<()> {
        self.files
            .remove(path.as_str())
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    fn create_dir(&mut self, path: &RelPath) -> io::Result<()> {
        if self.entry(path)? != Entry::Missing || !self.parent_exists(path) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{path}: cannot create"),
            ));
        }
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
        if self.entry(to)? != Entry::Missing {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{to}: exists"),
            ));
        }
        if !self.parent_exists(to) {
            return Err(not_found(to));
        }
        if let Some(file) = self.files.remove(from.as_str()) {
            self.files.insert(to.to_string(), file);
            return Ok(());
        }
        if !self.dirs.remove(from.as_str()) {
            return Err(not_found(from));
        }
        let prefix = format!("{from}/");
        let moved = |k: &&String| k.starts_with(&prefix);
        let files: Vec<String> = self.files.keys().filter(moved).cloned().collect();
        for k in files {
            let v = self.files.remove(&k).expect("listed");
            self.files
                .insert(format!("{to}{}", &k[from.as_str().len()..]), v);
        }
        let dirs: Vec<String> = self.dirs.iter().filter(moved).cloned().collect();
        for k in dirs {
            self.dirs.remove(&k);
            self.dirs
                .insert(format!("{to}{}", &k[from.as_str().len()..]));
        }
        self.dirs.insert(to.to_string());
        Ok(())
    }

    fn links(&self, path: &RelPath) -> io::Result<u64> {
        self.files
            .get(path.as_str())
            .map(|_| 1)
            .ok_or_else(|| not_found(path))
    }

    fn append(&mut self, path: &RelPath, bytes: &[&[u8]]) -> io::Result<()> {
        if !self.files.contains_key(path.as_str()) {
            self.create(path, &[], None)?;
        }
        let file = self
            .files
            .get_mut(path.as_str())
            .ok_or_else(|| not_found(path))?;
        for b in bytes {
            file.0.extend_from_slice(b);
        }
        Ok(())
    }

    fn symlink(&mut self, path: &RelPath, target: &str) -> io::Result<()> {
        self.create(path, &[target.as_bytes()], Some(S_IFLNK | 0o777))
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

    fn set_mode(&mut self, path: &RelPath, mode: u32) -> io::Result<()> {
        match self.files.get_mut(path.as_str()) {
            Some((_, m)) if !is_link(*m) => {
                *m = mode;
                Ok(())
            }
            _ => Err(not_found(path)),
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
}
