//! Planning: every file op is read, located and rewritten in memory, and
//! every problem in every file is collected, before anything is written.
//!
//! - `plan.rs`: the plan's types, the loop over file ops, what every op needs.
//! - `op.rs`: one function per file operation (create, delete, modify, links, modes).
//! - `dirs.rs`: ap's whole-path operations (rename, delete, create a directory).
//! - `links.rs`: no path through a link; where a link a patch makes leads.
//! - `edit.rs`: a file's edits to its new text: in the original, or in order.
//! - `sequential.rs`: edits located in the file as the earlier ones left it.
//! - `evolve/`: that file, as a linked list of lines.
//! - `repeated.rs`: a path several blocks name, each applying to what the ones before it left.
//! - `textual.rs`: edits located as text (Anthropic's `str_replace`, `insert`).
//! - `assemble.rs`: the new text from the placed edits.

mod assemble;
mod dirs;
mod edit;
mod evolve;
mod links;
mod op;
#[doc(hidden)]
pub mod plan;
mod release;
mod repeated;
mod sequential;
mod textual;
