//! Opening a root for one run: the root's lock, held for the whole run,
//! and what an interrupted apply left.
//!
//! An apply takes the lock exclusively, so two applies on one root run one
//! after the other and the second plans against what the first wrote; it
//! first rolls back (or finishes) an apply that was interrupted, from the
//! journal this user's grammar-patch wrote for this root. Readers (`lint
//! --root`, dry runs) share the lock and write nothing, ever: they report
//! an interrupted apply and read the tree as it is. A journal that cannot
//! be proved ours, and the in-tree journal names of earlier versions, are
//! reported and never replayed.

use std::path::Path;
use std::time::Duration;

use super::fs::{DiskTree, Lock};
use super::journal::{self, Failed, Pending, Recovered};
use crate::apply::tree::{Entry, FileTree};
use crate::error::{Code, Diagnostic};
use crate::paths::RelPath;

/// How long a run waits for another apply on the same root, by default.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// Where earlier versions kept their journal, inside the root.
const OLD_NAMES: [&str; 2] = [".grammar-patch-journal", ".grammar-patch-stash"];

/// The tree under `root`, locked (exclusively when `write`); with `write`,
/// any interrupted apply rolled back. The warnings say what was found.
pub fn open_root(
    root: &Path,
    write: bool,
    wait: Duration,
) -> Result<(DiskTree, Vec<Diagnostic>), Box<Diagnostic>> {
    open_root_until(root, write, wait, &|| true)
}

/// [`open_root`], giving up the wait for the lock as soon as `go_on` says
/// so (a cancelled call), as `root_busy`.
pub fn open_root_until(
    root: &Path,
    write: bool,
    wait: Duration,
    go_on: &dyn Fn() -> bool,
) -> Result<(DiskTree, Vec<Diagnostic>), Box<Diagnostic>> {
    let mut tree = DiskTree::new(root).map_err(|e| {
        Box::new(
            Diagnostic::new(Code::IoError, format!("the root {}: {e}", root.display()))
                .hint("give an existing directory as the root"),
        )
    })?;
    let lock = if write { Lock::Exclusive } else { Lock::Shared };
    match tree.lock(lock, wait, go_on) {
        Ok(true) => {}
        Ok(false) => {
            return Err(Box::new(
                Diagnostic::new(
                    Code::RootBusy,
                    format!(
                        "another apply held `{}` for {} s",
                        tree.root().display(),
                        wait.as_secs_f64()
                    ),
                )
                .hint(
                    "nothing was changed; apply the patch again once the other apply has finished",
                ),
            ))
        }
        Err(e) => return Err(Box::new(io(&tree, "cannot lock", e))),
    }
    let mut warnings = old_journals(&tree);
    if write {
        warnings.extend(recover(&mut tree)?);
    } else {
        match journal::pending(&tree)
            .map_err(|e| Box::new(io(&tree, "cannot read the journal of", e)))?
        {
            Pending::Nothing => {}
            Pending::Interrupted => warnings.push(
                Diagnostic::new(
                    Code::InterruptedApply,
                    format!(
                        "an apply in `{}` was interrupted and not yet rolled back",
                        tree.root().display()
                    ),
                )
                .note("this run read the tree as the interrupted apply left it, and wrote nothing")
                .hint(format!(
                    "run `grammar-patch recover --root {}`",
                    tree.root().display()
                )),
            ),
            Pending::Untrusted(why) => warnings.push(untrusted(&tree, &why, None)),
        }
    }
    Ok((tree, warnings))
}

/// The journal names of earlier versions, inside the root: never read.
fn old_journals(tree: &DiskTree) -> Vec<Diagnostic> {
    OLD_NAMES
        .iter()
        .filter(|name| {
            let path = RelPath::new(name).expect("a valid name");
            tree.entry(&path).is_ok_and(|e| e != Entry::Missing)
        })
        .map(|name| {
            Diagnostic::new(
                Code::UntrustedJournal,
                format!("`{name}` in the root is not a journal grammar-patch keeps: it was ignored"),
            )
            .path(*name)
            .note("grammar-patch keeps its journals outside every tree; one inside a tree (from a clone, or an older version) is never replayed")
            .hint(format!("remove `{name}` if you do not know where it came from"))
        })
        .collect()
}

fn untrusted(tree: &DiskTree, why: &str, aside: Option<&str>) -> Diagnostic {
    let d = Diagnostic::new(
        Code::UntrustedJournal,
        format!(
            "the journal at {} cannot be proved grammar-patch's for this root: {why}; it was not replayed",
            tree.journal_path()
        ),
    );
    match aside {
        Some(aside) => d.note(format!("it was moved to {aside}, unchanged")),
        None => d.hint("inspect it, then remove it"),
    }
}

/// Rolls back (or finishes) an interrupted apply in a tree locked for
/// writing; the warnings say what was done. A path changed since the
/// crash stops recovery: `recovery_conflict`, the path kept as it is.
pub fn recover(tree: &mut DiskTree) -> Result<Vec<Diagnostic>, Box<Diagnostic>> {
    let root = tree.root().display().to_string();
    let recovered = |message: String| Diagnostic::new(Code::Recovered, message);
    match journal::recover(tree as &mut dyn FileTree) {
        Ok(Recovered::Nothing) | Ok(Recovered::NeverStarted) => Ok(vec![]),
        Ok(Recovered::RolledBack(steps)) => Ok(vec![recovered(format!(
            "an apply in `{root}` was interrupted; the {steps} steps it had taken were undone"
        ))
        .note("the tree is as it was before that apply")
        .hint("apply that patch again if it is still wanted")]),
        Ok(Recovered::Finished) => Ok(vec![recovered(format!(
            "an apply in `{root}` was interrupted after its commit point; it was finished"
        ))
        .note("that apply's changes are all in place")]),
        Ok(Recovered::Untrusted { why, aside }) => Ok(vec![untrusted(tree, &why, aside.as_deref())]),
        Err(Failed::Conflict(c)) => Err(Box::new(
            Diagnostic::new(
                Code::RecoveryConflict,
                format!(
                    "an apply in `{root}` was interrupted, and `{}` changed since: {}",
                    c.path, c.why
                ),
            )
            .path(c.path.as_str())
            .note("nothing was rolled back past it, and it was kept as it is")
            .hint(format!(
                "move your version of `{}` away and run `grammar-patch recover --root {root}` again; or keep the tree as it is by removing the journal {}",
                c.path,
                tree.journal_path()
            )),
        )),
        Err(Failed::Io(e)) => Err(Box::new(
            io(tree, "cannot roll back the interrupted apply in", e).hint(format!(
                "the journal stays at {}; fix the problem and run `grammar-patch recover`",
                tree.journal_path()
            )),
        )),
    }
}

fn io(tree: &DiskTree, what: &str, e: std::io::Error) -> Diagnostic {
    Diagnostic::new(
        Code::IoError,
        format!("{what} `{}`: {e}", tree.root().display()),
    )
}
