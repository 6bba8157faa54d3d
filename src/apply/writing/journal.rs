//! The rollback journal: how every step of a commit is taken back, written
//! before the step runs, so that a process killed at any instant leaves a
//! tree the next run (or `grammar-patch recover`) puts back exactly as it
//! was before the interrupted apply, or finishes.
//!
//! **Where it lives.** Outside every root, in the user's state directory
//! (`fs.rs` finds it and checks it is the user's own), under a name made of
//! the root's identity. So nothing in a tree (a cloned repository, a file
//! a patch wrote) is ever read as a journal, and a journal is never
//! replayed on a root it was not written for: its header carries the
//! root's device, inode and birth time, and each record is checksummed.
//!
//! **What a step is.** Each step is one system call that happened or did
//! not: a new file is staged under a temporary name beside its target
//! (`.grammar-patch-<nonce>-<n>`, a name no patch may use), then swapped
//! or renamed into place; a deleted file is renamed aside beside itself.
//! A record names the identity ([`Ident`]) of what each step moves, so
//! recovery undoes a step only where the tree shows that step's result,
//! skips it where the tree shows it never ran, and otherwise stops, naming
//! the path: a file changed since the crash is never thrown away, and
//! recovery never creates, writes or changes the mode of a file, it only
//! renames back, removes what the apply made, and removes its own temporary
//! names. An undo is marked done in the journal once made, so a recovery
//! killed half-way is taken up where it stopped.
//!
//! **The commit point** is the `Committed` record: before it, recovery
//! rolls the tree back; after it, recovery finishes the apply: it removes
//! the originals kept aside and the directories the patch emptied.

use std::collections::HashSet;
use std::io;

use crate::apply::tree::{Entry, FileTree, Ident, Logged, RootId};
use crate::paths::{self, RelPath};

/// The first part of every name the journal puts in a tree.
pub const TEMP_PREFIX: &str = ".grammar-patch-";

/// A step's record: how to take it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A new file is about to be made at `tmp`.
    Staged { tmp: RelPath },
    /// The file at `path` (`old`) and the staged one at `tmp` (`new`) swap.
    Swapped {
        path: RelPath,
        tmp: RelPath,
        old: Ident,
        new: Ident,
    },
    /// `ident` moves from `from` to `to`.
    Moved {
        from: RelPath,
        to: RelPath,
        ident: Ident,
    },
    /// A symbolic link is made at `path`.
    Linked { path: RelPath, target: String },
    /// A directory is made at `path`.
    MadeDir { path: RelPath },
    /// The commit point: every step is done; these directories are removed
    /// if the apply left them empty.
    Committed { dirs: Vec<RelPath> },
    /// The record at this index was undone.
    Undone { index: u32 },
}

/// A path whose state is neither what the interrupted apply left nor what
/// it found: someone changed it since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The path.
    pub path: RelPath,
    /// What is wrong with it.
    pub why: String,
}

/// What recovery could not do.
#[derive(Debug)]
pub enum Failed {
    /// A path changed since the crash; the journal stays.
    Conflict(Conflict),
    /// The file system refused an undo; the journal stays.
    Io(io::Error),
}

impl From<io::Error> for Failed {
    fn from(e: io::Error) -> Failed {
        Failed::Io(e)
    }
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// No journal: the last apply finished.
    Nothing,
    /// A journal whose apply had changed nothing: removed.
    NeverStarted,
    /// An interrupted apply's steps were undone (how many changed the tree).
    RolledBack(usize),
    /// An apply killed after its commit point was finished.
    Finished,
    /// A journal this tool cannot prove it wrote for this root: never
    /// replayed; why, and where it was set aside (when recovery may write).
    Untrusted { why: String, aside: Option<String> },
}

/// What is pending in a root, as a run that writes nothing sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// Nothing.
    Nothing,
    /// An interrupted apply, which `recover` would roll back or finish.
    Interrupted,
    /// A journal that would not be replayed, and why.
    Untrusted(String),
}

const MAGIC: &[u8; 8] = b"GPJRNL01";
/// Magic, root device, inode, birth time (seconds, nanoseconds), nonce,
/// checksum.
const HEADER: usize = 8 + 8 + 8 + 8 + 4 + 8 + 8;

/// FNV-1a: a torn or corrupted record from a whole one.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn header(root: RootId, nonce: u64) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend(root.dev.to_le_bytes());
    h.extend(root.ino.to_le_bytes());
    h.extend(root.born.0.to_le_bytes());
    h.extend(root.born.1.to_le_bytes());
    h.extend(nonce.to_le_bytes());
    let sum = checksum(&h);
    h.extend(sum.to_le_bytes());
    h
}

/// The record's bytes: kind, body length, body, checksum of those.
fn encode(record: &Record) -> Vec<u8> {
    let mut body = Body::default();
    let kind = match record {
        Record::Staged { tmp } => {
            body.path(tmp);
            1
        }
        Record::Swapped {
            path,
            tmp,
            old,
            new,
        } => {
            body.path(path);
            body.path(tmp);
            body.ident(old);
            body.ident(new);
            2
        }
        Record::Moved { from, to, ident } => {
            body.path(from);
            body.path(to);
            body.ident(ident);
            3
        }
        Record::Linked { path, target } => {
            body.path(path);
            body.text(target);
            4
        }
        Record::MadeDir { path } => {
            body.path(path);
            5
        }
        Record::Committed { dirs } => {
            body.u32(dirs.len() as u32);
            for d in dirs {
                body.path(d);
            }
            6
        }
        Record::Undone { index } => {
            body.u32(*index);
            7
        }
    };
    let mut out = vec![kind];
    out.extend((body.0.len() as u32).to_le_bytes());
    out.extend(&body.0);
    let sum = checksum(&out);
    out.extend(sum.to_le_bytes());
    out
}

#[derive(Default)]
struct Body(Vec<u8>);

impl Body {
    fn u32(&mut self, n: u32) {
        self.0.extend(n.to_le_bytes());
    }
    fn text(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend(s.as_bytes());
    }
    fn path(&mut self, p: &RelPath) {
        self.text(p.as_str());
    }
    fn ident(&mut self, i: &Ident) {
        for n in [i.dev, i.ino, i.size, i.mtime.0 as u64] {
            self.0.extend(n.to_le_bytes());
        }
        self.u32(i.mtime.1);
        self.u32(i.mode);
    }
}

/// Reads a record's body; every read is checked against what is left, so
/// no length, however large, reads past the end or allocates.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn text(&mut self) -> Option<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
    /// A path exactly as `RelPath` writes it.
    fn path(&mut self) -> Option<RelPath> {
        let s = self.text()?;
        RelPath::new(s).filter(|p| p.as_str() == s)
    }
    fn ident(&mut self) -> Option<Ident> {
        let (dev, ino, size, secs) = (self.u64()?, self.u64()?, self.u64()?, self.u64()?);
        let (nanos, mode) = (self.u32()?, self.u32()?);
        Some(Ident {
            dev,
            ino,
            size,
            mtime: (secs as i64, nanos),
            mode,
            uid: 0,
            gid: 0,
            nlink: 0,
        })
    }
}

fn decode(kind: u8, body: &[u8]) -> Option<Record> {
    let mut r = Reader(body);
    let record = match kind {
        1 => Record::Staged { tmp: r.path()? },
        2 => Record::Swapped {
            path: r.path()?,
            tmp: r.path()?,
            old: r.ident()?,
            new: r.ident()?,
        },
        3 => Record::Moved {
            from: r.path()?,
            to: r.path()?,
            ident: r.ident()?,
        },
        4 => Record::Linked {
            path: r.path()?,
            target: r.text()?.to_string(),
        },
        5 => Record::MadeDir { path: r.path()? },
        6 => {
            let n = r.u32()?;
            let mut dirs = vec![];
            for _ in 0..n {
                dirs.push(r.path()?);
            }
            Record::Committed { dirs }
        }
        7 => Record::Undone { index: r.u32()? },
        _ => return None,
    };
    r.0.is_empty().then_some(record)
}

/// A journal read back: its records, up to a torn tail.
#[derive(Debug)]
struct Read {
    records: Vec<Record>,
}

/// What a journal's bytes hold, or why it is not one to replay here.
enum Parsed {
    /// The header itself is torn: killed as the journal was begun.
    NeverStarted,
    Journal(Read),
}

fn parse(bytes: &[u8], root: RootId) -> Result<Parsed, String> {
    if bytes.len() < HEADER {
        return if MAGIC.starts_with(&bytes[..bytes.len().min(MAGIC.len())]) {
            Ok(Parsed::NeverStarted)
        } else {
            Err("it is not a grammar-patch journal".into())
        };
    }
    let (head, mut rest) = bytes.split_at(HEADER);
    let sum = u64::from_le_bytes(head[HEADER - 8..].try_into().expect("8 bytes"));
    if &head[..8] != MAGIC || checksum(&head[..HEADER - 8]) != sum {
        return Err("it is not a grammar-patch journal".into());
    }
    let nonce = u64::from_le_bytes(head[36..44].try_into().expect("8 bytes"));
    if head[..36] != header(root, nonce)[..36] {
        return Err("it was written for another directory".into());
    }
    let mut records = vec![];
    while rest.len() >= 5 {
        let kind = rest[0];
        let len = u32::from_le_bytes(rest[1..5].try_into().expect("4 bytes")) as usize;
        let Some(total) = len.checked_add(5 + 8).filter(|&t| t <= rest.len()) else {
            break; // torn: its step never ran
        };
        let sum = u64::from_le_bytes(rest[5 + len..total].try_into().expect("8 bytes"));
        if checksum(&rest[..5 + len]) != sum {
            break;
        }
        let record = decode(kind, &rest[5..5 + len])
            .ok_or_else(|| format!("record {} is not one grammar-patch writes", records.len()))?;
        check(&record, nonce, records.len())?;
        records.push(record);
        rest = &rest[total..];
    }
    Ok(Parsed::Journal(Read { records }))
}

/// The temporary name `n` beside `path`, for a journal's nonce.
fn temp_name(nonce: u64, n: u64) -> String {
    format!("{TEMP_PREFIX}{nonce:016x}-{n}")
}

/// Whether `path` is one of this journal's temporary names.
fn is_temp(path: &RelPath, nonce: u64) -> bool {
    let (dir, name) = match path.as_str().rsplit_once('/') {
        Some((dir, name)) => (Some(dir), name),
        None => (None, path.as_str()),
    };
    let ours = name
        .strip_prefix(&temp_name(nonce, 0)[..TEMP_PREFIX.len() + 17])
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    ours && dir.is_none_or(paths::is_plain)
}

/// Whether `path`'s last component is a temporary name of some journal.
fn is_temp_like(path: &RelPath) -> bool {
    let name = path.as_str().rsplit('/').next().unwrap_or("");
    name.starts_with(TEMP_PREFIX)
}

/// A record this tool could have written: temporary names only where a
/// step puts one, and no other path naming `.git` or a journal's name.
/// Anything else means the journal is not ours, and nothing in it is done.
fn check(record: &Record, nonce: u64, at: usize) -> Result<(), String> {
    let plain = |p: &RelPath| paths::is_plain(p.as_str());
    let temp = |p: &RelPath| is_temp(p, nonce);
    let ok = match record {
        Record::Staged { tmp } => temp(tmp),
        Record::Swapped { path, tmp, .. } => plain(path) && temp(tmp),
        Record::Moved { from, to, .. } => {
            (plain(from) || temp(from)) && (plain(to) || temp(to)) && !(temp(from) && temp(to))
        }
        Record::Linked { path, .. } | Record::MadeDir { path } => plain(path),
        Record::Committed { dirs } => dirs.iter().all(plain),
        Record::Undone { index } => (*index as usize) < at,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "record {at} names a path grammar-patch never writes"
        ))
    }
}

/// The journal of one commit, as it is written. Records go to the log
/// only; a rollback reads them back from it, as recovery does, so a commit
/// of many files holds none of them in memory, only the originals it keeps
/// aside until the commit point.
pub struct Journal {
    nonce: u64,
    temps: u64,
    aside: Vec<(RelPath, Ident)>,
}

impl Journal {
    /// Begins the journal.
    pub fn begin(tree: &mut dyn FileTree) -> io::Result<Journal> {
        let nonce = random_nonce();
        tree.log_begin(&header(tree.root_id(), nonce))?;
        Ok(Journal {
            nonce,
            temps: 0,
            aside: vec![],
        })
    }

    /// A fresh temporary name in the directory of `path`.
    pub fn temp_beside(&mut self, path: &RelPath) -> RelPath {
        self.temps += 1;
        let name = temp_name(self.nonce, self.temps);
        let joined = match path.as_str().rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{name}"),
            None => name,
        };
        RelPath::new(&joined).expect("a temporary name beside a valid path")
    }

    /// Records how to undo the step about to run, before it runs.
    pub fn log(&mut self, tree: &mut dyn FileTree, record: Record) -> io::Result<()> {
        tree.log_append(&encode(&record))?;
        if let Some((path, ident)) = kept_aside(&record) {
            self.aside.push((path.clone(), *ident));
        }
        Ok(())
    }

    /// Makes the commit final: the `Committed` record (the commit point),
    /// then the originals kept aside and the emptied `dirs` go, then the
    /// journal (which stays for the next run when something could not go).
    /// Only a failure to write the commit point fails.
    pub fn commit(
        mut self,
        tree: &mut dyn FileTree,
        dirs: Vec<RelPath>,
    ) -> Result<(), (Journal, io::Error)> {
        let record = Record::Committed { dirs };
        if let Err(e) = tree.log_append(&encode(&record)) {
            return Err((self, e));
        }
        let Record::Committed { dirs } = record else {
            unreachable!("made above")
        };
        // What cannot be cleaned now, the next run's recovery cleans.
        let aside = std::mem::take(&mut self.aside);
        if finish(aside.iter().map(|(p, i)| (p, i)), dirs.iter(), tree).is_ok() {
            let _ = tree.log_end();
        }
        Ok(())
    }

    /// Undoes every step, newest first, from the log read back, then ends
    /// the journal; on a conflict or a failed undo the journal stays, for
    /// `recover`.
    pub fn rollback(self, tree: &mut dyn FileTree) -> Result<(), Failed> {
        let read = match tree.log_read()? {
            Logged::Found(bytes) => match parse(&bytes, tree.root_id()) {
                Ok(Parsed::Journal(read)) => read,
                Ok(Parsed::NeverStarted) => return Ok(tree.log_end()?),
                Err(why) => return Err(Failed::Io(io::Error::other(why))),
            },
            Logged::Missing => return Ok(()),
            Logged::Untrusted(why) => return Err(Failed::Io(io::Error::other(why))),
        };
        undo_all(&read.records, &undone(&read.records), tree)?;
        tree.log_end()?;
        Ok(())
    }
}

/// The original a record puts aside under a temporary name, if it does:
/// what the commit removes once it is final.
fn kept_aside(record: &Record) -> Option<(&RelPath, &Ident)> {
    match record {
        Record::Swapped { tmp, old, .. } => Some((tmp, old)),
        Record::Moved { to, ident, .. } if is_temp_like(to) => Some((to, ident)),
        _ => None,
    }
}

/// The records marked undone.
fn undone(records: &[Record]) -> HashSet<usize> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Undone { index } => Some(*index as usize),
            _ => None,
        })
        .collect()
}

/// A number no other apply picks: names its temporary files.
fn random_nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

fn same(found: Option<Ident>, want: &Ident) -> bool {
    found.is_some_and(|f| f.same(want))
}

fn conflict(path: &RelPath, why: &str) -> Failed {
    Failed::Conflict(Conflict {
        path: path.clone(),
        why: why.to_string(),
    })
}

/// Takes back one step, where the tree shows it was taken (`true`); does
/// nothing where the tree shows it was not (`false`).
fn undo(record: &Record, tree: &mut dyn FileTree) -> Result<bool, Failed> {
    match record {
        Record::Staged { tmp } => {
            if tree.entry(tmp)? == Entry::Missing {
                return Ok(false);
            }
            tree.remove(tmp)?;
        }
        Record::Swapped {
            path,
            tmp,
            old,
            new,
        } => {
            // Only this apply uses `tmp`: it tells whether the swap ran.
            let (at_tmp, at_path) = (tree.ident(tmp)?, tree.ident(path)?);
            if same(at_tmp, new) || (at_tmp.is_none() && !same(at_path, new)) {
                return Ok(false);
            }
            if !same(at_tmp, old) || !same(at_path, new) {
                return Err(conflict(
                    path,
                    "it changed after the interrupted apply wrote it",
                ));
            }
            tree.exchange(tmp, path)?;
        }
        Record::Moved { from, to, ident } => {
            // A step moves to a free name: nothing there, it never ran.
            let Some(at_to) = tree.ident(to)? else {
                return Ok(false);
            };
            if !at_to.same(ident) {
                return Err(conflict(
                    to,
                    "it changed after the interrupted apply moved it there",
                ));
            }
            if tree.ident(from)?.is_some() {
                return Err(conflict(
                    from,
                    "something new is where the interrupted apply moved a file from",
                ));
            }
            tree.rename(to, from)?;
        }
        Record::Linked { path, target } => match tree.entry(path)? {
            Entry::Missing => return Ok(false),
            Entry::Symlink if tree.read_link(path)? == *target => tree.remove(path)?,
            _ => {
                return Err(conflict(
                    path,
                    "it changed after the interrupted apply made a link there",
                ))
            }
        },
        Record::MadeDir { path } => match tree.entry(path)? {
            Entry::Missing => return Ok(false),
            Entry::Dir if tree.list(path)?.is_empty() => tree.remove_dir(path)?,
            _ => {
                return Err(conflict(
                    path,
                    "the directory the interrupted apply made now holds other files",
                ))
            }
        },
        Record::Committed { .. } | Record::Undone { .. } => return Ok(false),
    }
    Ok(true)
}

/// Undoes `records` newest first, skipping those marked `undone`, and
/// marks each as it is undone; returns how many changed the tree.
fn undo_all(
    records: &[Record],
    undone: &HashSet<usize>,
    tree: &mut dyn FileTree,
) -> Result<usize, Failed> {
    let mut acted = 0;
    for (i, record) in records.iter().enumerate().rev() {
        if undone.contains(&i) || matches!(record, Record::Undone { .. }) {
            continue;
        }
        acted += usize::from(undo(record, tree)?);
        tree.log_append(&encode(&Record::Undone { index: i as u32 }))?;
    }
    Ok(acted)
}

/// After the commit point: the originals kept aside go (where they are
/// still what was put aside), then the directories the apply emptied,
/// deepest first (one that is not empty stays). Fails on the first step
/// the file system refuses; the journal then stays, and the next run
/// finishes.
fn finish<'r>(
    aside: impl Iterator<Item = (&'r RelPath, &'r Ident)>,
    dirs: impl Iterator<Item = &'r RelPath>,
    tree: &mut dyn FileTree,
) -> io::Result<()> {
    for (path, ident) in aside {
        if same(tree.ident(path)?, ident) {
            tree.remove(path)?;
        }
    }
    let mut dirs: Vec<&RelPath> = dirs.collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.as_str().matches('/').count()));
    dirs.dedup();
    for dir in dirs {
        if tree.entry(dir)? == Entry::Dir {
            match tree.remove_dir(dir) {
                Err(e) if e.kind() != io::ErrorKind::DirectoryNotEmpty => return Err(e),
                _ => {}
            }
        }
    }
    Ok(())
}

/// What a run that writes nothing sees of a root's journal.
pub fn pending(tree: &dyn FileTree) -> io::Result<Pending> {
    Ok(match tree.log_read()? {
        Logged::Missing => Pending::Nothing,
        Logged::Untrusted(why) => Pending::Untrusted(why),
        Logged::Found(bytes) => match parse(&bytes, tree.root_id()) {
            Ok(Parsed::NeverStarted) => Pending::Nothing,
            Ok(Parsed::Journal(_)) => Pending::Interrupted,
            Err(why) => Pending::Untrusted(why),
        },
    })
}

/// Rolls back (or, past its commit point, finishes) an interrupted apply,
/// if the root has one. Run with the root locked, so no live commit owns
/// the journal. A journal this tool cannot prove it wrote for this root is
/// set aside, unread and unchanged.
pub fn recover(tree: &mut dyn FileTree) -> Result<Recovered, Failed> {
    let bytes = match tree.log_read()? {
        Logged::Missing => return Ok(Recovered::Nothing),
        Logged::Untrusted(why) => return untrusted(tree, why),
        Logged::Found(bytes) => bytes,
    };
    let read = match parse(&bytes, tree.root_id()) {
        Ok(Parsed::NeverStarted) => {
            tree.log_end()?;
            return Ok(Recovered::NeverStarted);
        }
        Ok(Parsed::Journal(read)) => read,
        Err(why) => return untrusted(tree, why),
    };
    let dirs = read.records.iter().find_map(|r| match r {
        Record::Committed { dirs } => Some(dirs),
        _ => None,
    });
    if let Some(dirs) = dirs {
        let aside = read.records.iter().filter_map(kept_aside);
        finish(aside, dirs.iter(), tree)?;
        tree.log_end()?;
        return Ok(Recovered::Finished);
    }
    let acted = undo_all(&read.records, &undone(&read.records), tree)?;
    tree.log_end()?;
    // A journal whose steps had all failed or not yet run changed nothing.
    Ok(match acted {
        0 => Recovered::NeverStarted,
        n => Recovered::RolledBack(n),
    })
}

fn untrusted(tree: &mut dyn FileTree, why: String) -> Result<Recovered, Failed> {
    let aside = tree.log_set_aside().ok();
    Ok(Recovered::Untrusted { why, aside })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::MemTree;

    fn p(s: &str) -> RelPath {
        RelPath::new(s).unwrap()
    }

    fn ident(ino: u64) -> Ident {
        Ident {
            dev: 7,
            ino,
            size: 3,
            mtime: (1, 2),
            mode: 0o100_644,
            uid: 0,
            gid: 0,
            nlink: 0,
        }
    }

    const ROOT: RootId = RootId {
        dev: 1,
        ino: 1,
        born: (0, 0),
    };

    fn log_of(nonce: u64, records: &[Record]) -> Vec<u8> {
        let mut log = header(ROOT, nonce);
        for r in records {
            log.extend(encode(r));
        }
        log
    }

    #[test]
    fn records_read_back_and_a_torn_tail_is_ignored() {
        let nonce = 0xabc;
        let tmp = p(&format!("a/{}", temp_name(nonce, 1)));
        let records = vec![
            Record::Staged { tmp: tmp.clone() },
            Record::Swapped {
                path: p("a/b.txt"),
                tmp: tmp.clone(),
                old: ident(1),
                new: ident(2),
            },
            Record::Moved {
                from: p("x"),
                to: p(&temp_name(nonce, 2)),
                ident: ident(3),
            },
            Record::Linked {
                path: p("l"),
                target: "../x".into(),
            },
            Record::MadeDir { path: p("d") },
            Record::Undone { index: 4 },
            Record::Committed {
                dirs: vec![p("d"), p("e/f")],
            },
        ];
        let log = log_of(nonce, &records);
        let read = |bytes: &[u8]| match parse(bytes, ROOT) {
            Ok(Parsed::Journal(r)) => Some(r.records),
            Ok(Parsed::NeverStarted) => None,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(read(&log).unwrap(), records);
        for cut in 0..log.len() {
            let got = read(&log[..cut]).unwrap_or_default();
            assert!(got.len() < records.len(), "cut at {cut}");
            assert_eq!(got[..], records[..got.len()], "cut at {cut}");
        }
    }

    /// Huge lengths, flipped bits and garbage read as a torn tail or an
    /// untrusted journal, never a panic or an allocation of their size.
    #[test]
    fn any_bytes_parse_without_panic() {
        let mut log = header(ROOT, 5);
        log.push(3);
        log.extend(u32::MAX.to_le_bytes());
        log.extend([0u8; 64]);
        assert!(matches!(parse(&log, ROOT), Ok(Parsed::Journal(r)) if r.records.is_empty()));
        let mut body = vec![];
        body.extend(u32::MAX.to_le_bytes());
        assert_eq!(decode(3, &body), None);
        assert_eq!(decode(6, &u32::MAX.to_le_bytes()), None);
        let good = log_of(5, &[Record::MadeDir { path: p("d") }]);
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut bad = good.clone();
                bad[i] ^= 1 << bit;
                let _ = parse(&bad, ROOT);
            }
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let len = (state % 200) as usize;
            let mut bytes = header(ROOT, 5);
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                bytes.push(state as u8);
            }
            let _ = parse(&bytes, ROOT);
        }
    }

    /// A journal for another root, one with a path into `.git`, one with a
    /// temporary name of another nonce: never replayed.
    #[test]
    fn a_journal_not_written_here_is_refused() {
        let other = RootId { ino: 2, ..ROOT };
        let mut log = header(other, 5);
        log.extend(encode(&Record::MadeDir { path: p("d") }));
        assert!(parse(&log, ROOT).is_err());
        for record in [
            Record::MadeDir {
                path: p(".git/hooks"),
            },
            Record::MadeDir { path: p("a/.GIT") },
            Record::Staged { tmp: p("x") },
            Record::Staged {
                tmp: p(&temp_name(6, 1)),
            },
            Record::Moved {
                from: p(".grammar-patch-journal"),
                to: p("x"),
                ident: ident(1),
            },
            Record::Undone { index: 0 },
        ] {
            assert!(
                parse(&log_of(5, std::slice::from_ref(&record)), ROOT).is_err(),
                "{record:?}"
            );
        }
    }

    #[test]
    fn recovery_undoes_the_logged_steps_and_leaves_nothing() {
        let before = MemTree::default()
            .with_file("a.txt", "one\n")
            .with_file("gone.txt", "bye\n");
        let mut tree = before.clone();
        let mut j = Journal::begin(&mut tree).unwrap();
        let a = p("a.txt");
        let tmp = j.temp_beside(&a);
        j.log(&mut tree, Record::Staged { tmp: tmp.clone() })
            .unwrap();
        let new = tree.stage(&tmp, &[b"ONE\n"], Some(0o644), None).unwrap();
        let old = tree.ident(&a).unwrap().unwrap();
        j.log(
            &mut tree,
            Record::Swapped {
                path: a.clone(),
                tmp: tmp.clone(),
                old,
                new,
            },
        )
        .unwrap();
        tree.exchange(&tmp, &a).unwrap();
        let gone = p("gone.txt");
        let aside = j.temp_beside(&gone);
        let ident = tree.ident(&gone).unwrap().unwrap();
        j.log(
            &mut tree,
            Record::Moved {
                from: gone.clone(),
                to: aside.clone(),
                ident,
            },
        )
        .unwrap();
        tree.rename(&gone, &aside).unwrap();
        j.log(&mut tree, Record::MadeDir { path: p("new") })
            .unwrap();
        // Killed here, before the directory was made: undoing it is a no-op.
        std::mem::forget(j);
        assert_eq!(recover(&mut tree).unwrap(), Recovered::RolledBack(3));
        assert_eq!(tree, before);
        assert_eq!(recover(&mut tree).unwrap(), Recovered::Nothing);
    }
}
