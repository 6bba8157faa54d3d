//! Recovery: each logged step undone where the tree shows its result,
//! skipped where the tree shows it never ran, refused otherwise; or, past
//! the commit point, the apply finished.

use super::*;

/// The original a record puts aside under a temporary name, if it does:
/// what the commit removes once it is final.
pub(super) fn kept_aside(record: &Record) -> Option<(&RelPath, &Ident)> {
    match record {
        Record::Swapped { tmp, old, .. } => Some((tmp, old)),
        Record::Moved { to, ident, .. } if is_temp_like(to) => Some((to, ident)),
        _ => None,
    }
}

/// The records marked undone.
pub(super) fn undone(records: &[Record]) -> HashSet<usize> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Undone { index } => Some(*index as usize),
            _ => None,
        })
        .collect()
}

pub(super) fn same(found: Option<Ident>, want: &Ident) -> bool {
    found.is_some_and(|f| f.same(want))
}

pub(super) fn conflict(path: &RelPath, why: &str) -> Failed {
    Failed::Conflict(Conflict {
        path: path.clone(),
        why: why.to_string(),
    })
}

/// Takes back one step, where the tree shows it was taken (`true`); does
/// nothing where the tree shows it was not (`false`).
pub(super) fn undo(record: &Record, tree: &mut dyn FileTree) -> Result<bool, Failed> {
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
pub(super) fn undo_all(
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
pub(super) fn finish<'r>(
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

pub(super) fn untrusted(tree: &mut dyn FileTree, why: String) -> Result<Recovered, Failed> {
    let aside = tree.log_set_aside().ok();
    Ok(Recovered::Untrusted { why, aside })
}
