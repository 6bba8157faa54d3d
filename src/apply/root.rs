//! Opening a root for one run: the root's lock, held for the whole run,
//! and the rollback of an apply that was interrupted before it.
//!
//! An apply takes the lock exclusively, so two applies on one root run one
//! after the other and the second plans against what the first wrote.
//! Readers (`lint --root`, dry runs) share it. Whoever opens a root with a
//! journal in it holds the lock exclusively while rolling the journal back;
//! a live apply holds the lock, so a journal found then is a dead one's.

use std::path::Path;
use std::time::Duration;

use super::fs::{DiskTree, Lock};
use super::journal::{self, Recovered};
use super::tree::FileTree;
use crate::error::{Code, Diagnostic};

/// How long a run waits for another apply on the same root, by default.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// The tree under `root`, locked (exclusively when `write`), with any
/// interrupted apply rolled back; the warnings say what recovery did.
pub fn open_root(
    root: &Path,
    write: bool,
    wait: Duration,
) -> Result<(DiskTree, Vec<Diagnostic>), Box<Diagnostic>> {
    let mut tree = DiskTree::new(root).map_err(|e| {
        Box::new(
            Diagnostic::new(Code::IoError, format!("--root {}: {e}", root.display()))
                .hint("pass an existing directory as --root"),
        )
    })?;
    let lock = |tree: &DiskTree, lock: Lock| match tree.lock(lock, wait) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Box::new(
            Diagnostic::new(
                Code::RootBusy,
                format!(
                    "another apply held `{}` for {} s",
                    tree.root().display(),
                    wait.as_secs_f64()
                ),
            )
            .hint("nothing was changed; apply the patch again once the other apply has finished"),
        )),
        Err(e) => Err(Box::new(io(tree, "cannot lock", e))),
    };
    lock(&tree, if write { Lock::Exclusive } else { Lock::Shared })?;
    let mut warnings = vec![];
    if journal::present(&tree).map_err(|e| Box::new(io(&tree, "cannot read", e)))? {
        if !write {
            lock(&tree, Lock::Exclusive)?;
        }
        if let Some(w) = recover(&mut tree)? {
            warnings.push(w);
        }
        if !write {
            lock(&tree, Lock::Shared)?;
        }
    }
    Ok((tree, warnings))
}

/// Rolls back an interrupted apply in a locked tree; the warning says so.
pub fn recover(tree: &mut DiskTree) -> Result<Option<Diagnostic>, Box<Diagnostic>> {
    let root = tree.root().display().to_string();
    match journal::recover(tree as &mut dyn FileTree) {
        Ok(Recovered::Nothing) => Ok(None),
        Ok(Recovered::RolledBack(steps)) => Ok(Some(
            Diagnostic::new(
                Code::Recovered,
                format!("an apply in `{root}` was interrupted; its {steps} logged steps were rolled back"),
            )
            .note("the tree is exactly as it was before that apply")
            .hint("apply that patch again if it is still wanted"),
        )),
        Ok(Recovered::Cleaned) => Ok(Some(
            Diagnostic::new(
                Code::Recovered,
                format!("an apply in `{root}` was interrupted after it had written everything; its journal was removed"),
            )
            .note("that apply's changes are all in place"),
        )),
        Err(e) => Err(Box::new(io(tree, "cannot roll back the interrupted apply in", e)
            .hint(format!("the journal stays in `{}`; fix the problem and run `grammar-patch recover`", journal::LOG)))),
    }
}

fn io(tree: &DiskTree, what: &str, e: std::io::Error) -> Diagnostic {
    Diagnostic::new(
        Code::IoError,
        format!("{what} `{}`: {e}", tree.root().display()),
    )
}
