//! The shared applier: one place for matching, safety and writing, used by
//! every format. Three stages, each a directory, each using only the ones
//! before it:
//!
//! - `matching/`: where each edit's block is in its file, at the match
//!   levels, and why an edit has no place.
//! - `planning/`: every file op read, located and rewritten in memory; every
//!   problem collected before anything is written (pure: nothing is written).
//! - `writing/`: carrying out a plan on disk, all or nothing, each step
//!   journaled first; the root, its lock and the state directory.
//!
//! Beside them, what all three speak of: `tree.rs` (the [`FileTree`] trait
//! and an in-memory tree) and `output.rs` (new file contents as pieces of
//! the original and of the patch).

#[cfg(test)]
mod engine_tests;
mod matching;
// Public only for the trust tests, which plan and commit in two steps, fault
// a tree, and forge journals; no part of the API.
#[doc(hidden)]
pub mod output;
#[doc(hidden)]
pub mod planning;
pub mod tree;
#[doc(hidden)]
pub mod writing;

pub(crate) use matching::beside;
pub(crate) use matching::text::Split;
#[cfg(any(test, feature = "internals"))]
pub use planning::plan::plan;
#[doc(hidden)]
pub use planning::plan::{plan_with, Change, Originals, Plan, LINK_MODE};
#[cfg(feature = "internals")]
pub use tree::{Entry, Ident, Logged, RootId};
pub use tree::{FileTree, MemTree};
#[doc(hidden)]
pub use writing::commit::commit;
pub use writing::fs::DiskTree;
#[cfg(feature = "internals")]
pub use writing::fs::Lock;
pub use writing::root::{open_root, open_root_until, recover, DEFAULT_WAIT};
