//! The shared applier: one place for matching, safety and writing, used by
//! every format.
//!
//! - `seek.rs`: pure line search (exact, then the locator's relaxations).
//! - `evolve.rs`: a file as earlier edits left it, for sequential formats.
//! - `plan.rs`: pure planning: read, locate, describe the new text, collect errors.
//! - `output.rs`: new file contents as pieces of the original and of the patch.
//! - `commit.rs`: carries out a plan, all or nothing, each step logged first.
//! - `journal.rs`: the rollback journal: undo records, the log on disk, recovery.
//! - `root.rs`: opening a root for a run: its lock, then recovery.
//! - `tree.rs`: the [`FileTree`] trait and an in-memory tree.
//! - `fs.rs`: the disk, and the only code here that touches it.
//! - `beneath.rs`: opening a path beneath the root's handle, at every component.

pub mod beneath;
pub mod commit;
pub mod evolve;
pub mod fs;
pub mod journal;
pub mod locate;
pub mod output;
pub mod plan;
pub mod root;
pub mod seek;
pub mod tree;

pub use commit::commit;
pub use fs::{DiskTree, Lock};
pub use plan::{plan, Change, Plan, LINK_MODE};
pub use root::{open_root, DEFAULT_WAIT};
pub use tree::{Entry, FileTree, MemTree};
