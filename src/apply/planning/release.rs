//! Which files' originals planning may let go before the commit (see
//! [`Output::release`](crate::apply::output::Output::release)): those no
//! other block of the patch can read as an earlier block left them.

use std::collections::HashMap;
use std::path::Path;

use crate::ir::{Action, FileOp};

/// For each op, whether it is the only one that can touch its file: no
/// other op names the same path (resolved as the planner resolves it, and
/// compared without case, so that two spellings of one file on a file
/// system that ignores case are one), and no op moves or removes what may
/// be a directory (ap `RENAME` and `DELETE`, whose files are not named).
/// A path that does not resolve makes its op no file's only one.
pub fn alone(ops: &[FileOp<'_>], root: Option<&Path>) -> Vec<bool> {
    if ops
        .iter()
        .any(|op| matches!(op.action, Action::Rename { .. } | Action::Remove))
    {
        return vec![false; ops.len()];
    }
    let paths = |op: &FileOp<'_>| -> Option<Vec<String>> {
        let mut own = op
            .paths()
            .map(|p| crate::validate::check_path(p, root).ok())
            .map(|rel| rel.map(|r| r.as_str().to_lowercase()))
            .collect::<Option<Vec<String>>>()?;
        // A move to its own path names it once.
        own.sort_unstable();
        own.dedup();
        Some(own)
    };
    let all: Vec<Option<Vec<String>>> = ops.iter().map(paths).collect();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for path in all.iter().flatten().flatten() {
        *seen.entry(path.as_str()).or_default() += 1;
    }
    all.iter()
        .map(|own| {
            own.as_ref()
                .is_some_and(|own| own.iter().all(|p| seen[p.as_str()] == 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{PathRef, Span};

    fn op(path: &str, action: Action<'static>) -> FileOp<'static> {
        let path = PathRef {
            text: path.into(),
            span: Span::new(0, 0),
        };
        FileOp::new(path, action, Span::new(0, 0))
    }

    fn modify(path: &str, to: Option<&str>) -> FileOp<'static> {
        let move_to = to.map(|t| PathRef {
            text: t.into(),
            span: Span::new(0, 0),
        });
        op(
            path,
            Action::Modify {
                edits: vec![],
                move_to,
            },
        )
    }

    #[test]
    fn a_file_is_alone_unless_another_op_may_name_it() {
        let ops = [
            modify("src/a.py", None),
            modify("src/b.py", None),
            modify("./SRC/B.py", None),
            modify("docs/c.md", Some("docs/d.md")),
            modify("docs//d.md", None),
            modify("e.txt", Some("e.txt")),
            modify("lib/a.py", None),
            modify("../up.txt", None),
        ];
        // `src/b.py` and `./SRC/B.py` may be one file; `docs/d.md` is a
        // destination and another op's file; a move to its own path is one
        // path; a path that does not resolve is no file's only op.
        let want = [true, false, false, false, false, true, true, false];
        assert_eq!(alone(&ops, None), want);
    }

    #[test]
    fn nothing_is_alone_beside_a_rename_or_a_remove() {
        for other in [
            Action::Rename {
                to: PathRef {
                    text: "y".into(),
                    span: Span::new(0, 0),
                },
            },
            Action::Remove,
        ] {
            let ops = [modify("src/a.py", None), op("src", other)];
            assert_eq!(alone(&ops, None), [false, false]);
        }
    }
}
