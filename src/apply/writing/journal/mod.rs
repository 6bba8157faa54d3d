//! The rollback journal: how every step of a commit is taken back, written
//! before the step runs, so that a process killed at any instant leaves a
//! tree the next run (or `grammar-patch recover`) puts back exactly as it
//! was before the interrupted apply, or finishes.
//!
//! **Where it lives.** Outside every root, in the user's state directory
//! (`state.rs` finds it and checks it is the user's own), under a name made of
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
//!
//! `encoding.rs` writes and reads the bytes, `recovery.rs` undoes or
//! finishes; this file holds the records and the journal a commit writes.

mod encoding;
mod recovery;

use std::collections::HashSet;
use std::io;

use crate::apply::tree::{Entry, FileTree, Ident, Logged, RootId};
use crate::paths::{self, RelPath};
use encoding::{encode, header, parse, Parsed};
use recovery::{finish, kept_aside, undo_all, undone};
pub use recovery::{pending, recover};

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

/// The journal of one commit, as it is written. Records go to the log
/// only; a rollback reads them back from it, as recovery does, so a commit
/// of many files holds none of them in memory, only the originals it keeps
/// aside until the commit point.
pub struct Journal {
    nonce: u64,
    temps: u64,
    aside: Vec<(RelPath, Ident)>,
    /// Records logged so far: the next one's index.
    records: u32,
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
            records: 0,
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
        self.records += 1;
        if let Some((path, ident)) = kept_aside(&record) {
            self.aside.push((path.clone(), *ident));
        }
        Ok(())
    }

    /// Marks the record logged last as a step that never ran: it failed
    /// having changed nothing (a `mkdir` refused because something is
    /// there), so that no rollback undoes what the record names, which is
    /// not the apply's.
    pub fn never_ran(&mut self, tree: &mut dyn FileTree) -> io::Result<()> {
        let index = self.records.checked_sub(1).expect("a record was logged");
        tree.log_append(&encode(&Record::Undone { index }))?;
        self.records += 1;
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

#[cfg(test)]
mod tests {
    use super::encoding::decode;
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
