//! `convert` without a tree: a patch's own edits printed in another format
//! where the source states everything the target needs, and the target
//! places each edit no more loosely than the source did:
//!
//! | from \ to | udiff | codex | searchreplace |
//! |---|---|---|---|
//! | udiff | ✓ (its line numbers) | ✓ | ✓ |
//! | codex | | ✓ | ✓ |
//! | searchreplace | | ✓ | ✓ |
//!
//! A unified diff's hunk found in a file is the one place its lines occur
//! there once, so a codex hunk or a SEARCH block of the same lines, which
//! must occur once, is found at that place or refused; a SEARCH block
//! must occur once in the whole file, stricter than a codex hunk after its
//! cursor. What an edit carries that the target cannot state (a line
//! number, an anchor, the end of the file, a missing final newline, the
//! text of a deleted file, an insertion with no lines around it to find it
//! by) refuses the conversion and names it. ap and RepoPatch locate by
//! rules no other format shares (blank lines skipped, ranges, scopes), and
//! a target without a source's line numbers cannot say where a line-less
//! insertion goes: those need `--root`.
//!
//! The print is read back by the target's parser: it must lower to the
//! same edits, or the conversion is refused.

use crate::error::{Code, Diagnostic};
use crate::formats::Format;
use crate::ir::{Action, Edit, FileOp, GitMode, Hint, New, Patch, Place};

use super::print::{prefixed, searchreplace_block, searchreplace_path};

/// Whether `from` can be printed in `to` without the files.
pub fn supported(from: Format, to: Format) -> bool {
    use Format::*;
    matches!(
        (from, to),
        (Udiff, Udiff | Codex | Searchreplace) | (Codex | Searchreplace, Codex | Searchreplace)
    )
}

/// `patch` (read as `from`) printed in `to`, verified; or why it cannot be.
pub fn convert(patch: &Patch, from: Format, to: Format) -> Result<String, Box<Diagnostic>> {
    let refused = |why: String| {
        Box::new(
            Diagnostic::new(
                Code::UnsupportedGitPatchFeature,
                format!("cannot convert to {to} without the files: {why}"),
            )
            .hint(format!(
                "give the tree the patch applies to (--root): then the edits are found \
                 there and printed with the context {to} needs"
            )),
        )
    };
    if !supported(from, to) {
        return Err(refused(format!(
            "{from} does not state what {to} needs (see the table of pairs)"
        )));
    }
    let text = match to {
        Format::Udiff => udiff(patch),
        Format::Codex => codex(patch),
        _ => searchreplace(patch),
    }
    .map_err(refused)?;
    // Read back as any reader reads it: unwrapped first.
    let unwrapped = crate::unwrap::unwrap(text.clone());
    let store = bumpalo::Bump::new();
    let read = crate::formats::parse_to(
        to,
        &unwrapped.text,
        &store,
        unwrapped.body,
        crate::Options::default(),
        true,
    );
    match read {
        Ok((printed, _)) if edits(&printed, to) == edits(patch, to) => Ok(text),
        _ => Err(refused(format!(
            "the {to} patch printed does not read back as the same edits"
        ))),
    }
}

/// Each edit of `patch` as the lines it finds and leaves and what places
/// it (line numbers only where `to` states them), in order, one entry per
/// file operation or edit: the same for a patch and its faithful print.
fn edits(patch: &Patch, to: Format) -> Vec<String> {
    let mut out = vec![];
    let numbered = to == Format::Udiff;
    for op in &patch.files {
        let path = &op.path.text;
        // A plain file's mode goes without saying.
        let mode = op.mode.filter(|&m| numbered && m != GitMode::File);
        match &op.action {
            Action::Add { content, edits, .. } => {
                let lines: Vec<&str> = content.lines.iter().map(|l| l.text).collect();
                let final_newline = content.final_newline && !lines.is_empty();
                out.push(format!(
                    "add {path} {lines:?} {final_newline} {mode:?} {}",
                    edits.len()
                ));
            }
            Action::Delete { expect } => {
                out.push(format!("delete {path}"));
                for e in expect.iter().flatten().filter(|_| numbered) {
                    out.push(edit(path, e, numbered));
                }
            }
            Action::Modify { edits, move_to } => {
                if let Some(to) = move_to {
                    out.push(format!("move {path} {}", to.text));
                }
                if mode.is_some() {
                    out.push(format!("mode {path} {mode:?}"));
                }
                out.extend(edits.iter().map(|e| edit(path, e, numbered)));
            }
            other => out.push(format!("{other:?}")),
        }
    }
    out
}

fn edit(path: &str, e: &Edit, numbered: bool) -> String {
    let old: Vec<&str> = e.old.iter().map(|l| l.text).collect();
    let new: Vec<&str> = new_texts(e);
    let anchor: Option<Vec<&str>> = e
        .locator
        .anchor()
        .map(|a| a.iter().map(|l| l.text).collect());
    let hint = if numbered { e.locator.hint } else { None };
    format!(
        "edit {path} {old:?} {new:?} {} {} {} {} {anchor:?} {hint:?} {:?}",
        e.old_no_eol, e.new_no_eol, e.own_eol, e.locator.at_eof, e.place
    )
}

fn new_texts<'a>(e: &Edit<'a>) -> Vec<&'a str> {
    e.new_lines()
        .map(|n| match n {
            New::Keep(j) => e.old[j].text,
            New::Add(l) => l.text,
        })
        .collect()
}

/// What no target here can state, whatever it is.
fn plain(path: &str, e: &Edit) -> Result<(), String> {
    if e.place != Place::Replace
        || matches!(
            e.locator.hint,
            Some(Hint::Whole | Hint::Text | Hint::AfterLine(_))
        )
    {
        return Err(format!("an edit of `{path}` is not a replacement of lines"));
    }
    if e.locator.range_end().is_some() || e.locator.scope_end() || e.locator.widen() != (0, 0) {
        return Err(format!("an edit of `{path}` reaches past its lines"));
    }
    if e.own_eol {
        // Which of the old lines ended with `\r` is the file's to say.
        return Err(format!("an edit of `{path}` writes its own line ends"));
    }
    Ok(())
}

/// The lines of an edit as a hunk lists them: context, then each change's
/// removed lines before its added ones.
fn marked<'a>(e: &Edit<'a>) -> Vec<(char, &'a str)> {
    let mut out = vec![];
    let (mut next_old, mut added) = (0, vec![]);
    let change =
        |out: &mut Vec<(char, &'a str)>, from: usize, upto: usize, added: &mut Vec<&'a str>| {
            out.extend(e.old[from..upto].iter().map(|l| ('-', l.text)));
            out.extend(added.drain(..).map(|t| ('+', t)));
        };
    for n in e.new {
        match *n {
            crate::ir::NewLine::Keep(from, count) => {
                let (from, count) = (from as usize, count as usize);
                change(&mut out, next_old, from, &mut added);
                out.extend(e.old[from..from + count].iter().map(|l| (' ', l.text)));
                next_old = from + count;
            }
            crate::ir::NewLine::Add(l) => added.push(l.text),
        }
    }
    change(&mut out, next_old, e.old.len(), &mut added);
    out
}

/// A hunk's body: its marked lines, with `\ No newline at end of file`
/// after the last line of each side that has none.
fn body(e: &Edit) -> String {
    let lines = marked(e);
    let last_of = |side: char| lines.iter().rposition(|(m, _)| *m == side || *m == ' ');
    let (old_end, new_end) = (last_of('-'), last_of('+'));
    let mut out = String::new();
    for (i, &(mark, text)) in lines.iter().enumerate() {
        out.push(mark);
        out.push_str(text);
        out.push('\n');
        let missing = (e.old_no_eol && old_end == Some(i)) || (e.new_no_eol && new_end == Some(i));
        if missing {
            out.push_str("\\ No newline at end of file\n");
        }
    }
    out
}

fn git_mode(mode: Option<GitMode>) -> &'static str {
    match mode {
        Some(GitMode::Executable) => "100755",
        Some(GitMode::Symlink) => "120000",
        _ => "100644",
    }
}

/// Git's unified diff, with the source's own line numbers.
fn udiff(patch: &Patch) -> Result<String, String> {
    let mut out = String::new();
    for op in &patch.files {
        let path = &op.path.text;
        match &op.action {
            Action::Add { content, edits, .. } if edits.is_empty() => {
                out += &format!(
                    "diff --git a/{path} b/{path}\nnew file mode {}\n",
                    git_mode(op.mode)
                );
                if !content.lines.is_empty() {
                    let n = content.lines.len();
                    out += &format!("--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{n} @@\n");
                    let lines: Vec<&str> = content.lines.iter().map(|l| l.text).collect();
                    out += &prefixed("+", &lines);
                    if !content.final_newline {
                        out += "\\ No newline at end of file\n";
                    }
                }
            }
            Action::Delete {
                expect: Some(edits),
            } => {
                out += &format!(
                    "diff --git a/{path} b/{path}\ndeleted file mode {}\n",
                    git_mode(op.mode)
                );
                if edits.iter().any(|e| !e.old.is_empty()) {
                    out += &format!("--- a/{path}\n+++ /dev/null\n");
                    out += &hunks(path, edits)?;
                }
            }
            Action::Delete { expect: None } => {
                return Err(format!(
                    "the text of the deleted `{path}` is not in the patch"
                ))
            }
            Action::Modify { edits, move_to } => {
                let to = move_to.as_ref().map_or(path, |t| &t.text);
                out += &format!("diff --git a/{path} b/{to}\n");
                if let (Some((old, _)), Some(new)) = (op.old_mode, op.mode) {
                    out += &format!(
                        "old mode {}\nnew mode {}\n",
                        git_mode(Some(old)),
                        git_mode(Some(new))
                    );
                }
                if move_to.is_some() {
                    out += &format!("rename from {path}\nrename to {to}\n");
                }
                if !edits.is_empty() {
                    out += &format!("--- a/{path}\n+++ b/{to}\n");
                    out += &hunks(path, edits)?;
                }
            }
            _ => {
                return Err(format!(
                    "`{path}`: an operation a unified diff cannot state"
                ))
            }
        }
    }
    Ok(out)
}

/// A file's hunks under their headers, numbered from the edits' line
/// hints, the new side's shifted by the earlier hunks.
fn hunks(path: &str, edits: &[Edit]) -> Result<String, String> {
    let mut out = String::new();
    let mut drift: i64 = 0;
    for e in edits {
        plain(path, e)?;
        let Some(Hint::Near(h)) = e.locator.hint else {
            return Err(format!("a hunk of `{path}` has no line number"));
        };
        let (c, d) = (e.old.len() as i64, new_texts(e).len() as i64);
        // `-l,0` inserts after line l: the hint is the line after it.
        let s = if c == 0 {
            i64::from(h)
        } else {
            i64::from(h) + 1
        };
        let t = match (c, d) {
            (0, _) => s + 1 + drift,
            (_, 0) => s - 1 + drift,
            _ => s + drift,
        };
        out += &format!("@@ -{s},{c} +{},{d} @@\n", t.max(0));
        out += &body(e);
        drift += d - c;
    }
    Ok(out)
}

/// What a context-located target cannot state about an edit.
fn located_by_lines(path: &str, e: &Edit, format: &str) -> Result<(), String> {
    plain(path, e)?;
    if e.old_no_eol || e.new_no_eol {
        return Err(format!("an edit of `{path}` involves a last line without a newline, which {format} cannot state"));
    }
    if matches!(e.locator.hint, Some(Hint::From(_))) {
        return Err(format!(
            "a hunk of `{path}` starts its search at a line number"
        ));
    }
    Ok(())
}

/// `*** Begin Patch` … `*** End Patch`.
fn codex(patch: &Patch) -> Result<String, String> {
    let mut out = String::from("*** Begin Patch\n");
    for op in &patch.files {
        let path = &op.path.text;
        no_mode(op, "codex")?;
        match &op.action {
            Action::Add { content, edits, .. } if edits.is_empty() => {
                if !content.final_newline && !content.lines.is_empty() {
                    return Err(format!(
                        "`{path}` is new and has no final newline, which codex cannot state"
                    ));
                }
                let lines: Vec<&str> = content.lines.iter().map(|l| l.text).collect();
                out += &format!("*** Add File: {path}\n{}", prefixed("+", &lines));
            }
            Action::Delete { .. } => out += &format!("*** Delete File: {path}\n"),
            Action::Modify { edits, move_to } => {
                out += &format!("*** Update File: {path}\n");
                if let Some(to) = move_to {
                    out += &format!("*** Move to: {}\n", to.text);
                }
                for e in edits {
                    located_by_lines(path, e, "codex")?;
                    let found_by =
                        e.locator.anchor().is_some() || !e.old.is_empty() || e.locator.at_eof;
                    if !found_by {
                        return Err(format!("an insertion into `{path}` has no lines around it to find its place by"));
                    }
                    match e.locator.anchor() {
                        None => out += "@@\n",
                        Some([line]) => out += &format!("@@ {}\n", line.text),
                        Some(_) => {
                            return Err(format!(
                                "a hunk of `{path}` has an anchor of several lines"
                            ))
                        }
                    }
                    out += &body(e);
                    if e.locator.at_eof {
                        out += "*** End of File\n";
                    }
                }
            }
            _ => return Err(format!("`{path}`: an operation codex cannot state")),
        }
    }
    Ok(out + "*** End Patch\n")
}

/// A plain file's mode (git's `100644`) goes without saying; another
/// mode, or a change of mode, only a unified diff states.
fn no_mode(op: &FileOp, format: &str) -> Result<(), String> {
    let plain = |m: Option<GitMode>| matches!(m, None | Some(GitMode::File));
    match plain(op.mode) && plain(op.old_mode.map(|(m, _)| m)) {
        true => Ok(()),
        false => Err(format!(
            "`{}` has a file mode, which {format} cannot state",
            op.path.text
        )),
    }
}

/// A file's path, then its SEARCH/REPLACE blocks.
fn searchreplace(patch: &Patch) -> Result<String, String> {
    let mut out = String::new();
    for op in &patch.files {
        let path = &op.path.text;
        no_mode(op, "SEARCH/REPLACE")?;
        searchreplace_path(path)?;
        let lines = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<Vec<_>>();
        match &op.action {
            Action::Add { content, edits, .. } if edits.is_empty() => {
                if content.lines.is_empty() || !content.final_newline {
                    return Err(format!("`{path}` is new and empty or without a final newline, which SEARCH/REPLACE cannot state"));
                }
                let new: Vec<&str> = content.lines.iter().map(|l| l.text).collect();
                let new = lines(&new);
                let new: Vec<&str> = new.iter().map(String::as_str).collect();
                out += &format!("{path}\n{}", searchreplace_block(&[], &new)?);
            }
            Action::Modify {
                edits,
                move_to: None,
            } => {
                out += &format!("{path}\n");
                for (k, e) in edits.iter().enumerate() {
                    located_by_lines(path, e, "SEARCH/REPLACE")?;
                    if e.old.is_empty() || e.locator.anchor().is_some() || e.locator.at_eof {
                        return Err(format!(
                            "an edit of `{path}` is placed by more than its own lines (an anchor, the end of the file, or no lines at all)"
                        ));
                    }
                    // Blocks apply in turn: one must not find its lines in
                    // what an earlier one wrote.
                    let old: Vec<&str> = e.old.iter().map(|l| l.text).collect();
                    if edits[..k].iter().any(|p| holds(&new_texts(p), &old)) {
                        return Err(format!("a block of `{path}` would find its lines in what an earlier block writes"));
                    }
                    let (old, new) = (lines(&old), lines(&new_texts(e)));
                    let old: Vec<&str> = old.iter().map(String::as_str).collect();
                    let new: Vec<&str> = new.iter().map(String::as_str).collect();
                    out += &searchreplace_block(&old, &new)?;
                }
            }
            _ => {
                return Err(format!(
                    "`{path}` is deleted or moved, which SEARCH/REPLACE cannot state"
                ))
            }
        }
    }
    Ok(out)
}

/// Whether `lines` occur in `within`, one after another.
fn holds(within: &[&str], lines: &[&str]) -> bool {
    !lines.is_empty() && within.windows(lines.len()).any(|w| w == lines)
}
