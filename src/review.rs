//! The review diff (`--diff`): what a plan writes, as the unified diff git
//! would print for it, one section per file, so a person or a UI reviews a
//! codex, RepoPatch or ap patch as a plain diff, and `git apply` of the
//! diff reproduces the result. Text that stands for bytes (see `lossless`)
//! is written back as those bytes by the caller.

use similar::TextDiff;

use crate::apply::{Change, Plan, LINK_MODE};
use crate::paths::RelPath;

/// The unchanged lines git shows around each change.
const GIT: usize = 3;

/// Each file's section of the diff, by the path the change leaves behind.
pub fn sections(plan: &Plan) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![];
    for (i, change) in plan.changes.iter().enumerate() {
        // A permission change after a write or a move of the same file
        // joins that file's section.
        let after = |c: &Change| match plan.changes.get(i + 1) {
            Some(Change::Chmod { path, from, to }) if path == c.path() => Some((*from, *to)),
            _ => None,
        };
        let text = match change {
            Change::Create { path, output, mode } => {
                let mode = git_mode(mode.unwrap_or(0o644));
                added(path, &mode, &output.to_text(), GIT)
            }
            Change::Symlink { path, target } => added(path, "120000", target, GIT),
            Change::Write { path, output, .. } => {
                let head = header(path, path) + &modes(after(change));
                head + &hunks(path, path, &output.original, &output.to_text(), GIT)
            }
            Change::Chmod { path, from, to } => {
                let joined = i > 0 && plan.changes[i - 1].path() == path;
                if joined {
                    continue;
                }
                header(path, path) + &modes(Some((*from, *to)))
            }
            Change::Delete {
                path,
                original,
                mode,
            } => deleted(path, *mode, original, GIT),
            Change::Move {
                from, to, output, ..
            } => {
                let head = header(from, to)
                    + &modes(after(change))
                    + &format!("rename from {}\nrename to {}\n", quoted(from), quoted(to));
                head + &hunks(from, to, &output.original, &output.to_text(), GIT)
            }
            Change::RemoveTree { files, .. } => files
                .iter()
                .map(|(path, text, mode)| deleted(path, *mode, text, GIT))
                .collect(),
            Change::MoveTree { files, .. } => files
                .iter()
                .map(|(from, to, _, _)| {
                    header(from, to)
                        + &format!("rename from {}\nrename to {}\n", quoted(from), quoted(to))
                })
                .collect(),
            Change::CreateDir { .. } | Change::Unchanged { .. } => continue,
        };
        out.push((change.path().to_string(), text));
    }
    out
}

/// One file's change as git writes it, from its text before and after
/// (`None`: absent), with `radius` unchanged lines around each change
/// (`convert --to udiff`).
pub(crate) fn file_section(
    from: &str,
    to: &str,
    before: Option<&str>,
    after: Option<&str>,
    radius: usize,
) -> String {
    let (Some(a), Some(b)) = (RelPath::new(from), RelPath::new(to)) else {
        return String::new();
    };
    match (before, after) {
        (None, Some(text)) => added(&b, "100644", text, radius),
        (Some(text), None) => deleted(&a, 0o644, text, radius),
        (Some(old), Some(new)) if a != b => {
            header(&a, &b)
                + &format!("rename from {}\nrename to {}\n", quoted(&a), quoted(&b))
                + &hunks(&a, &b, old, new, radius)
        }
        (Some(old), Some(new)) if old != new => header(&a, &b) + &hunks(&a, &b, old, new, radius),
        _ => String::new(),
    }
}

/// `100755` for a file with an executable bit, else `100644`.
fn git_mode(mode: u32) -> String {
    if mode & 0o170_000 == LINK_MODE {
        "120000".into()
    } else if mode & 0o111 != 0 {
        "100755".into()
    } else {
        "100644".into()
    }
}

fn modes(change: Option<(u32, u32)>) -> String {
    match change {
        Some((from, to)) if git_mode(from) != git_mode(to) => {
            format!("old mode {}\nnew mode {}\n", git_mode(from), git_mode(to))
        }
        _ => String::new(),
    }
}

fn header(a: &RelPath, b: &RelPath) -> String {
    format!("diff --git {} {}\n", prefixed("a/", a), prefixed("b/", b))
}

fn added(path: &RelPath, mode: &str, text: &str, radius: usize) -> String {
    let head = header(path, path) + &format!("new file mode {mode}\n");
    if text.is_empty() {
        return head;
    }
    head + &format!("--- /dev/null\n+++ {}\n", prefixed("b/", path)) + &body("", text, radius)
}

fn deleted(path: &RelPath, mode: u32, text: &str, radius: usize) -> String {
    let head = header(path, path) + &format!("deleted file mode {}\n", git_mode(mode));
    if text.is_empty() {
        return head;
    }
    head + &format!("--- {}\n+++ /dev/null\n", prefixed("a/", path)) + &body(text, "", radius)
}

/// The `---`/`+++` pair and hunks, when the text changed.
fn hunks(a: &RelPath, b: &RelPath, old: &str, new: &str, radius: usize) -> String {
    if old == new {
        return String::new();
    }
    format!("--- {}\n+++ {}\n", prefixed("a/", a), prefixed("b/", b)) + &body(old, new, radius)
}

/// The hunks of `old` → `new`, with `radius` unchanged lines around each
/// change.
fn body(old: &str, new: &str, radius: usize) -> String {
    // Lines end at `\n` only, as git reads them: a lone `\r` is text.
    let (old, new) = (lines(old), lines(new));
    let diff = TextDiff::configure()
        .newline_terminated(true)
        .diff_slices(&old, &new);
    let mut unified = diff.unified_diff();
    unified.context_radius(radius.min(old.len().max(new.len())));
    let mut out = String::new();
    for hunk in unified.iter_hunks() {
        out.push_str(&format!("{}\n", hunk.header()));
        for change in hunk.iter_changes() {
            let line: &str = change.value();
            out.push_str(&format!("{}{line}", change.tag()));
            // Only `\n` ends a line (a last line ending in `\r` has none).
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// `text` split after each `\n`, the line ends kept.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// A path with its prefix, C-quoted as git quotes unusual names.
fn prefixed(prefix: &str, path: &RelPath) -> String {
    quote(&format!("{prefix}{path}"))
}

fn quoted(path: &RelPath) -> String {
    quote(path.as_str())
}

fn quote(text: &str) -> String {
    let plain = !text
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control());
    if plain {
        return text.to_string();
    }
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
