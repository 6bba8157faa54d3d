//! Writing: a finished plan carried out on disk, all or nothing.
//!
//! - `commit.rs`: carries out a plan, each step logged first.
//! - `journal/`: the rollback journal: undo records, their encoding, recovery.
//! - `state.rs`: where journals are kept: the user's state directory.
//! - `root.rs`: opening a root for a run: its lock, then recovery.
//! - `fs/`: the disk, and the only code here that touches it.
//! - `beneath.rs`: opening a path beneath the root's handle, at every component.

mod beneath;
#[doc(hidden)]
pub mod commit;
#[doc(hidden)]
pub mod fs;
#[doc(hidden)]
pub mod journal;
pub(crate) mod root;
mod state;
