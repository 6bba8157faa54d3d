//! A path that several blocks of one patch name (codex, ap, RepoPatch, as
//! Codex does): each block applies to what the blocks before it left, and
//! the commit gets one change per path, from the original to the end.
//!
//! [`Touched`] answers, while a later block plans, what earlier blocks left
//! at a path: a file (the text of the change planned for it), or nothing
//! because a block deleted it or moved it away, which a later block may not
//! name again (`duplicate_file_patch`). [`join`] turns two changes of one
//! path into one.

use std::collections::HashMap;

use super::plan::{Change, OpCx, Plan, Step};
use crate::apply::tree::Entry;
use crate::error::{Code, Diagnostic};
use crate::ir::{FileOp, PathRef, Span};
use crate::paths::RelPath;

/// What the blocks planned so far left at the paths they touched.
#[derive(Debug, Default)]
pub struct Touched(HashMap<RelPath, Left>);

#[derive(Debug, Clone, Copy)]
enum Left {
    /// The file that `changes[k]` leaves there, from the block at `span`
    /// (the last to change it).
    File(usize, Span),
    /// Nothing: the block at `span` deleted it, or moved it away.
    Gone { span: Span, moved: bool },
    /// A directory the block at `span` removed or moved, with all beneath it.
    Tree { span: Span },
    /// A directory a block created (ap `CREATE` without content): a later
    /// block finds it there.
    Dir,
}

impl OpCx<'_, '_> {
    /// What earlier blocks left at `rel`: `None` when no block touched it
    /// (the tree answers).
    pub fn touched(&mut self, path: &PathRef, rel: &RelPath) -> Step<Option<Entry>> {
        let Some(touched) = self.touched else {
            return Ok(None);
        };
        let own = touched.0.get(rel).map(|&l| (rel.clone(), l));
        let above = || {
            rel.ancestors()
                .into_iter()
                .find_map(|a| match touched.0.get(&a) {
                    Some(&l @ Left::Tree { .. }) => Some((a, l)),
                    _ => None,
                })
        };
        let Some((at, left)) = own.or_else(above) else {
            return Ok(None);
        };
        let (span, what) = match left {
            Left::File(k, _) => {
                return Ok(Some(Entry::File {
                    mode: mode(&self.changes[k]),
                }))
            }
            Left::Dir => return Ok(Some(Entry::Dir)),
            Left::Gone { span, moved: false } => (span, "deleted"),
            Left::Gone { span, moved: true } => (span, "moved away"),
            Left::Tree { span } => (span, "removed or moved"),
        };
        let message = if at == *rel {
            format!("`{rel}` was {what} by an earlier block of this patch")
        } else {
            format!("`{rel}` is in `{at}`, which an earlier block of this patch {what}")
        };
        self.fail(
            Diagnostic::new(Code::DuplicateFilePatch, message)
            .at(path.span, "named again here")
            .secondary(span, format!("`{at}` {what} here"))
            .path(rel.as_str())
            .note("blocks for one path apply in turn, each to what the ones before it left")
            .hint("edit the file before the block that deletes or moves it, or edit it at its new path"),
        )
    }

    /// The text an earlier block left at `rel`, if one touched it.
    pub fn touched_text(&self, rel: &RelPath) -> Option<String> {
        match self.touched?.0.get(rel)? {
            Left::File(k, _) => output(&self.changes[*k]).map(|o| o.to_text()),
            _ => None,
        }
    }

    /// Block `op` failed with the errors from `from` on: a miss in a file
    /// that an earlier block changed says so, since this block applies to
    /// what that one left.
    pub fn after_earlier_blocks(&mut self, op: &FileOp, from: usize) {
        let Some(rel) = RelPath::new(&op.path.text) else {
            return;
        };
        let Some(span) = self.changed_by(&rel) else {
            return;
        };
        for d in &mut self.errors[from..] {
            if matches!(d.code, Code::ContextNotFound | Code::AmbiguousContext) {
                let taken = std::mem::replace(d, Diagnostic::new(d.code, String::new()));
                *d = taken
                    .secondary(span, "an earlier block for this file")
                    .note(format!(
                        "blocks for one path apply in turn: this one applies to `{rel}` as the earlier block left it"
                    ));
            }
        }
    }

    /// Whether earlier blocks make the directory `rel`, which is then not
    /// on disk yet: they created it (ap `CREATE` without content), or a
    /// directory or file beneath it, whose parents the commit makes.
    pub fn made_dir(&self, rel: &RelPath) -> bool {
        let Some(touched) = self.touched else {
            return false;
        };
        matches!(touched.0.get(rel), Some(Left::Dir))
            || touched
                .beneath(rel)
                .any(|(_, left)| matches!(left, Left::Dir | Left::File(..)))
    }

    /// The block that last changed `rel`, if an earlier block did.
    pub fn changed_by(&self, rel: &RelPath) -> Option<Span> {
        match self.touched?.0.get(rel)? {
            Left::File(_, span) => Some(*span),
            _ => None,
        }
    }
}

fn mode(change: &Change) -> u32 {
    match change {
        Change::Write { mode, .. } | Change::Move { mode, .. } => *mode,
        Change::Create { mode, .. } => mode.unwrap_or(0o644),
        _ => 0o644,
    }
}

fn output<'c, 'p>(change: &'c Change<'p>) -> Option<&'c crate::apply::output::Output<'p>> {
    match change {
        Change::Write { output, .. }
        | Change::Create { output, .. }
        | Change::Move { output, .. } => Some(output),
        _ => None,
    }
}

impl<'p> Plan<'p> {
    /// Adds the change block `span` makes, joined to the change an earlier
    /// block made to the same path; `touched` learns what it leaves.
    pub fn add(
        &mut self,
        change: Change<'p>,
        touched: &mut Touched,
        span: Span,
    ) -> Result<(), Box<Diagnostic>> {
        let source = change.from().unwrap_or(change.path()).clone();
        if let Change::RemoveTree { path: dir, .. } | Change::MoveTree { from: dir, .. } = &change {
            if let Some((inner, _)) = touched.beneath(dir).next() {
                return Err(Box::new(Diagnostic::new(
                    Code::DuplicateFilePatch,
                    format!("`{dir}` holds `{inner}`, which an earlier block of this patch made or changed"),
                )
                .at(span, "the whole directory, after something inside it")
                .path(dir.as_str())
                .hint("remove or move the directory in its own patch, or leave out the edit of the file inside it")));
            }
        }
        let change = match touched.0.get(&source) {
            Some(&Left::File(k, _)) => match self.join_at(k, change, touched, &source, span)? {
                Some(change) => change,
                None => return Ok(()),
            },
            // A directory an earlier block created, which this one leaves
            // as it is (`CREATE` again): one change, the first.
            Some(Left::Dir) if matches!(change, Change::Unchanged { .. }) => return Ok(()),
            _ => change,
        };
        touched.record(&change, self.changes.len(), span);
        self.changes.push(change);
        Ok(())
    }

    /// `change` joined to the earlier change `k` to the same path, which
    /// leaves the plan; `None` when nothing is left to do.
    fn join_at(
        &mut self,
        k: usize,
        change: Change<'p>,
        touched: &mut Touched,
        source: &RelPath,
        span: Span,
    ) -> Result<Option<Change<'p>>, Box<Diagnostic>> {
        let first = std::mem::replace(
            &mut self.changes[k],
            Change::Unchanged {
                path: source.clone(),
            },
        );
        touched.0.remove(source);
        match join(first, change) {
            Ok(joined) => {
                self.changes.remove(k);
                for left in touched.0.values_mut() {
                    if let Left::File(j, _) = left {
                        if *j > k {
                            *j -= 1;
                        }
                    }
                }
                Ok(joined)
            }
            Err(pair) => {
                let (first, _) = *pair;
                self.changes[k] = first;
                touched.0.insert(source.clone(), Left::File(k, span));
                Err(Box::new(
                    Diagnostic::new(
                        Code::DuplicateFilePatch,
                        format!("`{source}` is changed twice in ways that cannot be combined"),
                    )
                    .at(span, "changed again here")
                    .path(source.as_str())
                    .hint("make all changes to this path in one block"),
                ))
            }
        }
    }
}

impl Touched {
    /// The paths touched beneath the directory `dir`, with what was left there.
    fn beneath<'t>(&'t self, dir: &RelPath) -> impl Iterator<Item = (&'t RelPath, &'t Left)> {
        let prefix = format!("{dir}/");
        self.0
            .iter()
            .filter(move |(p, _)| p.as_str().starts_with(&prefix))
    }

    /// What `change`, the plan's change `k`, leaves at each path it names.
    fn record(&mut self, change: &Change, k: usize, span: Span) {
        let gone = |moved| Left::Gone { span, moved };
        match change {
            Change::Write { path, .. } | Change::Create { path, .. } => {
                self.0.insert(path.clone(), Left::File(k, span));
            }
            Change::Move { from, to, .. } => {
                self.0.insert(from.clone(), gone(true));
                self.0.insert(to.clone(), Left::File(k, span));
            }
            Change::Delete { path, .. }
            | Change::Symlink { path, .. }
            | Change::Chmod { path, .. } => {
                self.0.insert(path.clone(), gone(false));
            }
            Change::RemoveTree { path, .. } => {
                self.0.insert(path.clone(), Left::Tree { span });
            }
            Change::MoveTree { from, to, .. } => {
                self.0.insert(from.clone(), Left::Tree { span });
                self.0.insert(to.clone(), Left::Tree { span });
            }
            Change::CreateDir { path } => {
                self.0.insert(path.clone(), Left::Dir);
            }
            Change::Unchanged { .. } => {}
        }
    }
}

/// One change for a path from `first` and the change `then` made to what
/// `first` left; `None` when nothing is left to do (created, then deleted).
/// Err: the two, when they cannot be one.
pub fn join<'p>(
    first: Change<'p>,
    then: Change<'p>,
) -> Result<Option<Change<'p>>, Box<(Change<'p>, Change<'p>)>> {
    use Change::*;
    Ok(Some(match (first, then) {
        (first, Unchanged { .. }) => first,
        (Unchanged { .. }, then) => then,
        (
            Write {
                path,
                output: o1,
                mode,
            },
            Write { output, .. },
        ) => Write {
            path,
            output: output.after(o1),
            mode,
        },
        (
            Write {
                output: o1, mode, ..
            },
            Move {
                from, to, output, ..
            },
        ) => Move {
            from,
            to,
            output: output.after(o1),
            mode,
        },
        (Write { path, output, mode }, Delete { .. }) => Delete {
            path,
            original: output.original,
            mode,
        },
        (
            Create {
                path,
                output: o1,
                mode,
            },
            Write { output, .. },
        ) => Create {
            path,
            output: output.after(o1),
            mode,
        },
        (
            Create {
                output: o1, mode, ..
            },
            Move { to, output, .. },
        ) => Create {
            path: to,
            output: output.after(o1),
            mode,
        },
        (Create { .. }, Delete { .. }) => return Ok(None),
        (
            Move {
                from,
                to,
                output: o1,
                mode,
            },
            Write { output, .. },
        ) => Move {
            from,
            to,
            output: output.after(o1),
            mode,
        },
        (
            Move {
                from,
                output: o1,
                mode,
                ..
            },
            Move { to, output, .. },
        ) => {
            let output = output.after(o1);
            // Moved back where it was: an edit in place.
            if to == from {
                Write {
                    path: from,
                    output,
                    mode,
                }
            } else {
                Move {
                    from,
                    to,
                    output,
                    mode,
                }
            }
        }
        (
            Move {
                from, output, mode, ..
            },
            Delete { .. },
        ) => Delete {
            path: from,
            original: output.original,
            mode,
        },
        pair => return Err(Box::new(pair)),
    }))
}
