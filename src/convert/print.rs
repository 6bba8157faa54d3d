//! A printer for every format: files' changes (their text before and
//! after) written as that format's canonical patch, the form its Lark
//! export teaches, with `context` lines around each change (more when
//! `convert` finds a block no longer unique). What a format cannot state
//! is an `Err` naming it.

use similar::TextDiff;

use super::FileChange;

/// A format's printer: the patch, or what it cannot state.
pub type Printer = fn(&[FileChange], usize) -> Result<String, String>;

/// One block of change: the lines it finds and the lines it leaves (each
/// with its `\n`, where the text has one), and whether it reaches the old
/// text's end.
struct Hunk<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    at_end: bool,
}

/// The blocks that turn `before` into `after`, each with up to `context`
/// unchanged lines around it.
fn hunks<'a>(before: &'a str, after: &'a str, context: usize) -> Vec<Hunk<'a>> {
    let (old, new) = (whole(before), whole(after));
    let diff = TextDiff::configure()
        .newline_terminated(true)
        .diff_slices(&old, &new);
    let context = context.min(old.len().max(new.len()));
    let mut out = vec![];
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (
            first.old_range().start..last.old_range().end,
            first.new_range().start..last.new_range().end,
        );
        out.push(Hunk {
            at_end: o.end == old.len(),
            old: old[o].to_vec(),
            new: new[n].to_vec(),
        });
    }
    out
}

/// A text's lines, each with its `\n` (a last line may have none).
fn whole(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Each line after `mark`, ending in one `\n`: a last line without a
/// newline is written as a line, and the format's own reading of it (most
/// keep the file's missing newline) is what `convert` verifies.
pub(super) fn prefixed(mark: &str, lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| format!("{mark}{}\n", l.strip_suffix('\n').unwrap_or(l)))
        .collect()
}

/// Where a file gains or loses its final newline, which only udiff (and
/// ap, which ends every file it writes with one) can state.
fn final_newline(c: &FileChange, format: &str) -> Result<(), String> {
    let ends = |t: &Option<String>| t.as_deref().map(|t| t.is_empty() || t.ends_with('\n'));
    match (ends(&c.before), ends(&c.after)) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "`{}` {} its final newline, which {format} cannot state",
            c.path,
            if b { "gains" } else { "loses" }
        )),
        (None, Some(false)) => Err(format!(
            "`{}` is new and has no final newline, which {format} cannot state",
            c.path
        )),
        _ => Ok(()),
    }
}

/// The unified diff git writes (`review.rs`), with `context` lines.
pub fn udiff(changes: &[FileChange], context: usize) -> Result<String, String> {
    Ok(changes
        .iter()
        .map(|c| {
            crate::review::file_section(
                c.from.as_deref().unwrap_or(&c.path),
                &c.path,
                c.before.as_deref(),
                c.after.as_deref(),
                context,
            )
        })
        .collect())
}

/// `*** Begin Patch` … `*** End Patch`.
pub fn codex(changes: &[FileChange], context: usize) -> Result<String, String> {
    let mut out = String::from("*** Begin Patch\n");
    for c in changes {
        final_newline(c, "codex")?;
        let source = c.from.as_deref().unwrap_or(&c.path);
        match (&c.before, &c.after) {
            (None, Some(after)) => {
                out += &format!("*** Add File: {}\n{}", c.path, prefixed("+", &whole(after)));
            }
            (Some(_), None) => out += &format!("*** Delete File: {}\n", c.path),
            (Some(before), Some(after)) => {
                out += &format!("*** Update File: {source}\n");
                if c.from.is_some() {
                    out += &format!("*** Move to: {}\n", c.path);
                }
                for h in hunks(before, after, context) {
                    out += "@@\n";
                    out += &marked(&h);
                    if h.at_end {
                        out += "*** End of File\n";
                    }
                }
            }
            (None, None) => {}
        }
    }
    Ok(out + "*** End Patch\n")
}

/// A hunk's lines with their prefixes, as a diff lists them: context,
/// then removed and added lines where they differ.
fn marked(h: &Hunk) -> String {
    let diff = TextDiff::configure().diff_slices(&h.old, &h.new);
    diff.iter_all_changes()
        .map(|change| {
            let mark = match change.tag() {
                similar::ChangeTag::Equal => " ",
                similar::ChangeTag::Delete => "-",
                similar::ChangeTag::Insert => "+",
            };
            prefixed(mark, &[change.value()])
        })
        .collect()
}

/// A file's path and its SEARCH/REPLACE blocks.
pub fn searchreplace(changes: &[FileChange], context: usize) -> Result<String, String> {
    let mut out = String::new();
    for c in changes {
        final_newline(c, "SEARCH/REPLACE")?;
        searchreplace_path(&c.path)?;
        let block = searchreplace_block;
        match (&c.before, &c.after) {
            _ if c.from.is_some() => {
                return Err(format!(
                    "`{}` moves, which SEARCH/REPLACE cannot state",
                    c.path
                ))
            }
            (None, Some(after)) if after.is_empty() => {
                return Err(format!(
                    "`{}` is a new empty file, which SEARCH/REPLACE cannot state",
                    c.path
                ))
            }
            (None, Some(after)) => out += &format!("{}\n{}", c.path, block(&[], &whole(after))?),
            (Some(_), None) => {
                return Err(format!(
                    "`{}` is deleted, which SEARCH/REPLACE cannot state",
                    c.path
                ))
            }
            (Some(before), Some(after)) => {
                out += &format!("{}\n", c.path);
                for h in hunks(before, after, context) {
                    if h.old.is_empty() {
                        return Err(format!(
                            "`{}` was empty, so no text finds the change",
                            c.path
                        ));
                    }
                    out += &block(&h.old, &h.new)?;
                }
            }
            (None, None) => {}
        }
    }
    Ok(out)
}

/// A path SEARCH/REPLACE can name on a line of its own.
pub(super) fn searchreplace_path(path: &str) -> Result<(), String> {
    match path.contains([' ', '\t', '`', '*', ':', '<', '>']) {
        true => Err(format!(
            "the path `{path}` is not one SEARCH/REPLACE can name"
        )),
        false => Ok(()),
    }
}

/// One block: its SEARCH and REPLACE lines (each with its `\n`).
pub(super) fn searchreplace_block(old: &[&str], new: &[&str]) -> Result<String, String> {
    if old.iter().any(|l| l.starts_with("=======")) || new.iter().any(|l| l.starts_with(">>>>>>>"))
    {
        return Err("a line that reads as a block's marker".to_string());
    }
    Ok(format!(
        "<<<<<<< SEARCH\n{}=======\n{}>>>>>>> REPLACE\n",
        prefixed("", old),
        prefixed("", new)
    ))
}

/// `PATCHSET` … `ENDPATCHSET`.
pub fn repopatch(changes: &[FileChange], context: usize) -> Result<String, String> {
    let mut out = String::from("PATCHSET\n");
    for c in changes {
        final_newline(c, "RepoPatch")?;
        if c.from.is_some() {
            return Err(format!("`{}` moves, which RepoPatch cannot state", c.path));
        }
        out += &format!("PATCH {}\n", c.path);
        match (&c.before, &c.after) {
            (None, Some(after)) => out += &format!("CREATEFILE\n{}", prefixed(". ", &whole(after))),
            (Some(_), None) => out += "DELETEFILE\n",
            (Some(before), Some(after)) => {
                for h in hunks(before, after, context) {
                    if h.old.is_empty() {
                        return Err(format!(
                            "`{}` was empty, so no old block finds the change",
                            c.path
                        ));
                    }
                    out += &match h.new.is_empty() {
                        true => format!("DELETE\n{}", prefixed("- ", &h.old)),
                        false => format!(
                            "REPLACE\n{}---\n{}",
                            prefixed("- ", &h.old),
                            prefixed(". ", &h.new)
                        ),
                    };
                }
            }
            (None, None) => {}
        }
        out += "ENDPATCH\n";
    }
    Ok(out + "ENDPATCHSET\n")
}

/// An ap 3.1 patch under a fresh ID that starts no line of any text.
pub fn ap(changes: &[FileChange], context: usize) -> Result<String, String> {
    let texts = || {
        changes
            .iter()
            .flat_map(|c| c.before.iter().chain(c.after.iter()))
    };
    let id = loop {
        let id = crate::agent::random_id();
        if !texts().any(|t| t.lines().any(|l| l.starts_with(&id))) {
            break id;
        }
    };
    let value = |key: &str, lines: &[&str]| -> Result<String, String> {
        if lines.iter().all(|l| l.trim().is_empty()) {
            return Err(format!(
                "a `{key}` of blank lines only, which ap cannot state"
            ));
        }
        Ok(format!("{id} {key}\n{}", prefixed("", lines)))
    };
    let mut out = format!("{id} AP 3.1\n");
    for c in changes {
        // ap ends every file it writes with a newline.
        if c.after
            .as_deref()
            .is_some_and(|t| !t.is_empty() && !t.ends_with('\n'))
        {
            return Err(format!(
                "`{}` ends without a newline, which ap cannot leave",
                c.path
            ));
        }
        let source = c.from.as_deref().unwrap_or(&c.path);
        match (&c.before, &c.after) {
            (None, Some(after)) if after.is_empty() => {
                out += &format!("{id} FILE\n{}\n{id} CREATE\n", c.path)
            }
            (None, Some(after)) => {
                out += &format!(
                    "{id} FILE\n{}\n{id} CREATE\n{}",
                    c.path,
                    value("content", &whole(after))?
                )
            }
            (Some(_), None) => out += &format!("{id} FILE\n{}\n{id} DELETE\n", c.path),
            (Some(before), Some(after)) => {
                let blocks = hunks(before, after, context);
                if !blocks.is_empty() {
                    out += &format!("{id} FILE\n{source}\n");
                }
                for h in blocks {
                    out += &match h.new.is_empty() {
                        true => format!("{id} DELETE\n{}", value("snippet", &h.old)?),
                        false => format!(
                            "{id} REPLACE\n{}{}",
                            value("snippet", &h.old)?,
                            value("content", &h.new)?
                        ),
                    };
                }
                if c.from.is_some() {
                    out += &format!("{id} FILE\n{source}\n{id} RENAME\n{}\n", c.path);
                }
            }
            (None, None) => {}
        }
    }
    Ok(out + &format!("{id} END\n"))
}
