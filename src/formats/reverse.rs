//! `-R` (`--reverse`): a lowered patch turned around, so that applying it
//! undoes what the patch does, as `patch -R` and `git apply -R` do. Each
//! edit's old and new blocks trade places; an added file becomes a
//! deletion that states its content, a deleted file that states its
//! content is added back, a move goes back, a mode change is undone.
//!
//! What the patch does not state cannot be undone, and is refused with the
//! reason: a deletion without its content (codex `*** Delete File`, ap
//! `DELETE`), an insertion beside a region or a range to the end of a
//! block or a file (ap), a file created then edited in one block (ap), a
//! directory made, a binary literal, a symbolic link, a conversion of line
//! ends (ap's newline mode), and a block deleted
//! with no line kept around it (undone, nothing would place it).

use crate::error::{Code, Diagnostic};
use crate::ir::{
    Action, Edit, FileOp, Hint, Level, Levels, Line, Locator, NewLine, NewText, Patch, Place,
    Uniqueness,
};

/// `patch`, reversed; or why it cannot be, at each operation that cannot.
pub fn reverse<'t>(
    patch: &mut Patch<'t>,
    text: &'t str,
    store: &'t bumpalo::Bump,
) -> Result<(), Vec<Diagnostic>> {
    let mut errors = vec![];
    let sequential = patch.policy.sequential;
    for op in &mut patch.files {
        if let Err(why) = reverse_op(op, sequential, text, store) {
            errors.push(
                Diagnostic::new(
                    Code::UnsupportedGitPatchFeature,
                    format!("`{}` cannot be reversed: {why}", op.path.text),
                )
                .at(op.span, "this operation has no inverse the patch states")
                .path(&op.path.text)
                .hint(
                    "apply the patch forward, or reverse it by hand: write the edit that undoes it",
                ),
            );
        }
    }
    // Blocks that name one path again apply in turn (codex, RepoPatch,
    // ap), so they are undone last first.
    patch.files.reverse();
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors),
    }
}

fn reverse_op<'t>(
    op: &mut FileOp<'t>,
    sequential: bool,
    text: &'t str,
    store: &'t bumpalo::Bump,
) -> Result<(), &'static str> {
    if op.mode == Some(crate::ir::GitMode::Symlink)
        || matches!(op.old_mode, Some((crate::ir::GitMode::Symlink, _)))
    {
        return Err("a symbolic link's change is not reversed");
    }
    if op.eol.is_some() {
        return Err("its line ends are converted, and the patch does not state what they were");
    }
    let action = std::mem::replace(&mut op.action, Action::CreateDir);
    op.action = match action {
        Action::Add {
            content,
            edits,
            overwrite: false,
        } if edits.is_empty() => {
            let expect = vec![whole_file(content, op.span, store)];
            Action::Delete {
                expect: Some(expect),
            }
        }
        Action::Add { .. } => return Err("a file created over another, or created then edited"),
        Action::Delete {
            expect: Some(edits),
        } => {
            let [edit] = &edits[..] else {
                return Err("the deletion states its content in pieces");
            };
            if !edit.new.is_empty() || edit.place != Place::Replace {
                return Err("the deletion adds lines");
            }
            Action::add(NewText {
                lines: edit.old,
                final_newline: !edit.old_no_eol,
            })
        }
        Action::Delete { expect: None } | Action::Remove => {
            return Err("the deletion does not state the content it deletes")
        }
        Action::Modify { edits, move_to } => {
            let mut edits = reversed_edits(&edits, text, store)?;
            if sequential {
                // Each edit applied to what the one before it left: undone
                // last first.
                edits.reverse();
            }
            match move_to {
                Some(to) => Action::Modify {
                    edits,
                    move_to: Some(std::mem::replace(&mut op.path, to)),
                },
                None => Action::Modify {
                    edits,
                    move_to: None,
                },
            }
        }
        Action::Rename { to } => Action::Rename {
            to: std::mem::replace(&mut op.path, to),
        },
        Action::CreateDir => return Err("a directory made is not removed"),
    };
    let old = op.old_mode.map(|(m, _)| m);
    op.old_mode = op.mode.map(|m| (m, op.span));
    op.mode = old;
    Ok(())
}

/// The edit that deletes a file holding exactly `content` (its lines
/// without a `\r` the patch shows, as old lines are read).
fn whole_file<'t>(
    content: NewText<'t>,
    span: crate::ir::Span,
    store: &'t bumpalo::Bump,
) -> Edit<'t> {
    let lines = store.alloc_slice_fill_iter(
        content
            .lines
            .iter()
            .map(|l| Line::of(l.text.strip_suffix('\r').unwrap_or(l.text))),
    );
    let locator = Locator {
        hint: Some(Hint::Whole),
        ..Locator::plain(Uniqueness::UniqueInFile, Levels::of(&[Level::Exact]))
    };
    Edit {
        old_no_eol: !content.final_newline,
        ..Edit::replace(lines, &[], locator, span)
    }
}

/// Each edit reversed, its line hint moved to where the edits before it
/// left its block.
fn reversed_edits<'t>(
    edits: &[Edit<'t>],
    text: &'t str,
    store: &'t bumpalo::Bump,
) -> Result<Vec<Edit<'t>>, &'static str> {
    let mut drift: i64 = 0;
    let mut out = Vec::with_capacity(edits.len());
    for edit in edits {
        let reach = edit.locator.reach.as_deref();
        if edit.place != Place::Replace {
            return Err("an insertion beside a region");
        }
        if reach.is_some_and(|r| r.range_end.is_some() || r.scope_end || r.widen != (0, 0)) {
            return Err("an edit of a range whose end the patch does not state");
        }
        if matches!(edit.locator.hint, Some(Hint::Whole)) {
            return Err("a binary literal");
        }
        if edit.new.is_empty() {
            // Undone, it would be an insertion with nothing to find it by.
            return Err("a block deleted without a line around it to place it back by");
        }
        let mut reversed = reversed(edit, text, store);
        let added = reversed.old.len() as i64;
        let removed = edit.old.len() as i64;
        if let Some(Hint::Near(line)) = edit.locator.hint {
            let moved = (i64::from(line) + drift).clamp(0, i64::from(u32::MAX));
            reversed.locator.hint = Some(Hint::Near(moved as u32));
        }
        drift += added - removed;
        out.push(reversed);
    }
    Ok(out)
}

/// `edit` with its blocks traded: the new block (kept lines read out) is
/// the old one, and the old block's lines are kept where the new block
/// kept them, added back where it dropped them. Where added lines carry
/// their own line ends (a byte-exact diff, `Edit::own_eol`), an added line
/// that becomes old loses its `\r`, as old lines are read, and an old line
/// that becomes added takes back the `\r` the patch shows after it.
fn reversed<'t>(edit: &Edit<'t>, text: &'t str, store: &'t bumpalo::Bump) -> Edit<'t> {
    let as_old = |line: Line<'t>| match (edit.own_eol, line.text.strip_suffix('\r')) {
        (true, Some(bare)) => Line::of(bare),
        _ => line,
    };
    let as_added = |line: Line<'t>| match edit.own_eol {
        true => line.with_eol(text, "\r").map_or(line, Line::of),
        false => line,
    };
    let mut old: Vec<Line<'t>> = Vec::with_capacity(edit.new.len());
    // Where each old line stands in the new block, when it was kept.
    let mut kept_at: Vec<Option<u32>> = vec![None; edit.old.len()];
    for n in edit.new {
        match *n {
            NewLine::Keep(from, count) => {
                for j in from..from + count {
                    kept_at[j as usize] = Some(old.len() as u32);
                    old.push(edit.old[j as usize]);
                }
            }
            NewLine::Add(line) => old.push(as_old(line)),
        }
    }
    let mut new: Vec<NewLine<'t>> = edit
        .old
        .iter()
        .zip(&kept_at)
        .map(|(line, at)| match at {
            Some(i) => NewLine::Keep(*i, 1),
            None => NewLine::Add(as_added(*line)),
        })
        .collect();
    NewLine::runs(&mut new);
    Edit {
        old: store.alloc_slice_copy(&old),
        new: store.alloc_slice_copy(&new),
        old_no_eol: edit.new_no_eol,
        new_no_eol: edit.old_no_eol,
        own_eol: edit.own_eol,
        place: Place::Replace,
        locator: edit.locator.clone(),
        span: edit.span,
    }
}
