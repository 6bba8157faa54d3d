//! Which files' originals planning may let go before the commit (see
//! [`Output::release`](crate::apply::output::Output::release)): those no
//! other block of the patch can read as an earlier block left them.

use crate::ir::{Action, FileOp};

/// For each op, whether it is the only one that can touch its file: no
/// other op names a path with the same last component (compared without
/// case, before the paths are resolved, so that no two spellings of one
/// file are taken for two files), and no op moves or removes what may be
/// a directory (ap `RENAME` and `DELETE`, whose files are not named).
pub fn alone(ops: &[FileOp<'_>]) -> Vec<bool> {
    if ops
        .iter()
        .any(|op| matches!(op.action, Action::Rename { .. } | Action::Remove))
    {
        return vec![false; ops.len()];
    }
    let names = |op: &FileOp<'_>| -> Vec<String> {
        op.paths()
            .map(|p| {
                let last = p.text.rsplit(['/', '\\']).next().unwrap_or("");
                last.trim().to_lowercase()
            })
            .collect()
    };
    let all: Vec<Vec<String>> = ops.iter().map(names).collect();
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for op in &all {
        // A name an op gives twice (a move within a directory to the
        // same name) counts once.
        let mut own: Vec<&str> = op.iter().map(String::as_str).collect();
        own.sort_unstable();
        own.dedup();
        for name in own {
            *seen.entry(name).or_default() += 1;
        }
    }
    all.iter()
        .map(|op| op.iter().all(|n| !n.is_empty() && seen[n.as_str()] == 1))
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
        op(path, Action::Modify { edits: vec![], move_to })
    }

    #[test]
    fn a_file_is_alone_unless_another_op_may_name_it() {
        let ops = [
            modify("src/a.py", None),
            modify("src/b.py", None),
            modify("lib/B.PY", None),
            modify("docs\\c.md", Some("docs/d.md")),
            modify("x/d.md", None),
            modify("e.txt", Some("f/e.txt")),
        ];
        // `b.py` and `B.PY` may be one file; `d.md` is both a destination
        // and another op's file; a move to its own name is one name.
        assert_eq!(alone(&ops), [true, false, false, false, false, true]);
    }

    #[test]
    fn nothing_is_alone_beside_a_rename_or_a_remove() {
        for other in [Action::Rename { to: PathRef { text: "y".into(), span: Span::new(0, 0) } }, Action::Remove] {
            let ops = [modify("src/a.py", None), op("src", other)];
            assert_eq!(alone(&ops), [false, false]);
        }
    }
}
