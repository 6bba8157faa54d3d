//! `convert`: the edits a patch makes to a tree, located, printed in
//! another format (a codex or ap patch becomes a unified diff `git apply`
//! takes; a unified diff becomes SEARCH/REPLACE blocks or ap). Each
//! format's printer (`print.rs`, named in the registry) writes each file's
//! change as that format states it; the printed patch is then applied in
//! memory to the files it touches, and kept only if it gives exactly the
//! same files. Where it does not (a block that is no longer unique, say),
//! it is printed again with more context, up to the whole file; where a
//! format cannot state a change at all (SEARCH/REPLACE has no deletion),
//! the conversion is refused and says why.

pub(crate) mod print;
pub(crate) mod rootless;

pub use print::Printer;
pub use rootless::supported as rootless_pair;

use crate::apply::{Change, MemTree, Plan};
use crate::error::{Code, Diagnostic};
use crate::formats::Format;
use crate::{Mode, Options};

/// One file's change: its text before and after (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path it has after the change.
    pub path: String,
    /// Where it was before, when it moved.
    pub from: Option<String>,
    /// Its text before (`None`: a new file).
    pub before: Option<String>,
    /// Its text after (`None`: deleted).
    pub after: Option<String>,
}

/// The context sizes tried, in turn, the last the whole file: from none
/// (the changed lines alone, where they are unique), but for a unified
/// diff, which starts from git's 3 so that `git apply` takes it as it is.
const CONTEXTS: [usize; 7] = [0, 1, 3, 8, 24, 96, usize::MAX];

/// The plan's changes printed in `to`, verified; or why they cannot be.
pub fn convert(plan: &Plan, to: Format) -> Result<String, Box<Diagnostic>> {
    let changes = changes(plan).map_err(|why| refusal(to, why))?;
    if changes.is_empty() {
        // Nothing changes: nothing to print (an empty patch).
        return Ok(String::new());
    }
    let print = to.printer();
    let first = if to == Format::Udiff { 2 } else { 0 };
    let mut last = String::new();
    for &context in &CONTEXTS[first..] {
        match print(&changes, context) {
            Ok(text) => match verify(&text, to, &changes) {
                Ok(()) => return Ok(text),
                Err(why) => {
                    last = format!("the {to} patch printed does not give the same files ({why})")
                }
            },
            Err(why) => last = why,
        }
    }
    Err(refusal(to, last))
}

fn refusal(to: Format, why: impl Into<String>) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::new(
            Code::UnsupportedGitPatchFeature,
            format!("cannot convert to {to}: {}", why.into()),
        )
        .hint(format!(
            "convert to a format that states this change (udiff states every one), \
             or write the {to} patch by hand for the rest"
        )),
    )
}

/// Each file's text before and after, from a plan. A permission change
/// is left out (only udiff states one: it is in the review diff), links
/// and directories are refused.
fn changes(plan: &Plan) -> Result<Vec<FileChange>, String> {
    let mut out = vec![];
    for change in &plan.changes {
        let (path, from, before, after) = match change {
            Change::Create { path, output, .. } => (path, None, None, Some(output.to_text())),
            Change::Write { path, output, .. } => (
                path,
                None,
                Some(output.original.clone()),
                Some(output.to_text()),
            ),
            Change::Delete {
                path,
                original,
                mode,
            } => {
                if mode & 0o170_000 == crate::apply::LINK_MODE {
                    return Err(format!("`{path}` is a symbolic link"));
                }
                (path, None, Some(original.clone()), None)
            }
            Change::Move {
                from, to, output, ..
            } => (
                to,
                Some(from.to_string()),
                Some(output.original.clone()),
                Some(output.to_text()),
            ),
            Change::Chmod { .. } | Change::Unchanged { .. } => continue,
            Change::Symlink { path, .. } => return Err(format!("`{path}` is a symbolic link")),
            Change::CreateDir { path } => return Err(format!("`{path}/` is a directory")),
            Change::RemoveTree { path, .. } | Change::MoveTree { from: path, .. } => {
                return Err(format!("`{path}` is a directory"))
            }
        };
        out.push(FileChange {
            path: path.to_string(),
            from,
            before,
            after,
        });
    }
    Ok(out)
}

/// Whether `text`, applied as `format` to the files before, gives the files
/// after: the first difference, or the patch's first error.
fn verify(text: &str, format: Format, changes: &[FileChange]) -> Result<(), String> {
    let mut tree = MemTree::default();
    for c in changes {
        if let Some(before) = &c.before {
            let at = c.from.as_deref().unwrap_or(&c.path);
            tree.insert(at, crate::lossless::encode(before).into_owned())?;
        }
    }
    let options = Options::default();
    let outcome = crate::run_with(
        text,
        Some(format),
        Mode::Apply { dry_run: false },
        Some(&mut tree),
        None,
        options,
    );
    if let Some(e) = outcome.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!("{}: {}", e.code.as_str(), e.message));
    }
    for c in changes {
        let got = tree.files.get(&c.path).map(|(bytes, _)| bytes.as_slice());
        let want = c.after.as_deref().map(crate::lossless::encode);
        if got != want.as_deref() {
            return Err(format!("`{}` comes out otherwise", c.path));
        }
        if let Some(from) = &c.from {
            if tree.files.contains_key(from) {
                return Err(format!("`{from}` stays"));
            }
        }
    }
    Ok(())
}
