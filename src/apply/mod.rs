//! The shared applier: one place for matching, safety and writing, used by
//! every format.
//!
//! Planning (pure; nothing is written):
//! - `plan.rs`: the plan's types, the loop over file ops, what every op needs.
//! - `op.rs`: one function per file operation (create, delete, modify, links, modes).
//! - `dirs.rs`: ap's whole-path operations (rename, delete, create a directory).
//! - `links.rs`: no path through a link; where a link a patch makes leads.
//! - `edit.rs`: a file's edits to its new text: in the original, or in order.
//! - `text.rs`: the one line splitter, the keys lines compare by, the line index.
//! - `beside.rs`: a large file's pass shared with a second thread, chunk by chunk.
//! - `starts.rs`: where each line starts, in about two bytes a line.
//! - `find.rs`: the match levels: where a block occurs, and the nearest text.
//! - `locate.rs`: the one engine: each edit's anchor and block, at the match levels.
//! - `extent.rs`: how far a found region reaches: range end, `scope_end`, blank lines.
//! - `place.rs`: where the new block goes around it, and whether it is there already.
//! - `explain.rs`: why an edit has no place, for the model.
//! - `sequential.rs`: edits located in the file as the earlier ones left it.
//! - `repeated.rs`: a path several blocks name, each applying to what the ones before it left.
//! - `evolve.rs`: that file, as a linked list of lines.
//! - `indent.rs`: added lines re-indented as the file is, when a match ignored indentation.
//! - `assemble.rs`: the new text from the placed edits.
//! - `output.rs`: new file contents as pieces of the original and of the patch.
//!
//! Writing:
//! - `commit.rs`: carries out a plan, all or nothing, each step logged first.
//! - `journal.rs`: the rollback journal: undo records, their encoding, recovery.
//! - `state.rs`: where journals are kept: the user's state directory.
//! - `root.rs`: opening a root for a run: its lock, then recovery.
//! - `tree.rs`: the [`FileTree`] trait and an in-memory tree.
//! - `fs.rs`: the disk, and the only code here that touches it.
//! - `beneath.rs`: opening a path beneath the root's handle, at every component.

mod assemble;
mod beneath;
mod beside;
// Public only for the trust tests, which plan and commit in two steps, fault
// a tree, and forge journals; no part of the API.
#[doc(hidden)]
pub mod commit;
mod dirs;
mod edit;
#[cfg(test)]
mod engine_tests;
mod evolve;
mod explain;
mod extent;
mod find;
#[doc(hidden)]
pub mod fs;
mod indent;
#[doc(hidden)]
pub mod journal;
mod links;
mod locate;
mod op;
#[doc(hidden)]
pub mod output;
mod place;
#[doc(hidden)]
pub mod plan;
mod repeated;
mod root;
mod sequential;
mod starts;
mod state;
mod text;
pub mod tree;

#[doc(hidden)]
pub use commit::commit;
pub use fs::DiskTree;
#[cfg(feature = "internals")]
pub use fs::Lock;
#[doc(hidden)]
pub use plan::{plan, Change, Plan, LINK_MODE};
pub use root::{open_root, open_root_until, recover, DEFAULT_WAIT};
pub use tree::{FileTree, MemTree};
#[cfg(feature = "internals")]
pub use tree::{Entry, Ident, Logged, RootId};
