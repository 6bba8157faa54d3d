//! Matching: where each edit's block is in its file, the one engine every
//! format uses. Nothing here reads the disk or builds a plan.
//!
//! - `text.rs`: the one line splitter and the keys lines compare by.
//! - `index.rs`: the line index: a key to the lines that have it.
//! - `starts.rs`: where each line starts, in about two bytes a line.
//! - `beside.rs`: a large file's pass shared with a second thread, chunk by chunk.
//! - `find.rs`: the match levels: where a block occurs, and the nearest text.
//! - `locate.rs`: each edit's block, at the match levels, in order from a cursor.
//! - `anchor.rs`: an edit's anchor, and where its block's search starts.
//! - `extent.rs`: how far a found region reaches: range end, `scope_end`, blank lines.
//! - `place.rs`: where the new block goes around it, and whether it is there already.
//! - `indent/`: added lines re-indented as the file is, when a match ignored indentation.
//! - `explain.rs`: why an edit has no place, for the model.

pub(crate) mod anchor;
pub(crate) mod beside;
pub(crate) mod explain;
pub(crate) mod extent;
pub(crate) mod find;
pub(crate) mod indent;
pub(crate) mod index;
pub(crate) mod locate;
pub(crate) mod place;
pub(crate) mod starts;
pub(crate) mod text;
