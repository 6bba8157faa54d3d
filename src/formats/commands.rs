//! Anthropic's text-editor commands (`anthropic.rs` reads them) lowered
//! into the shared model, from the text `anthropic::render` made of them:
//! each command one file op, so that each applies to what the ones before
//! it left. `str_replace` is an edit whose old block is text
//! ([`Hint::Text`]), `insert` one that goes after a line
//! ([`Hint::AfterLine`]), `create` a new file; the applier does the rest.

use crate::anthropic::{Command, Kind, Rendered};
use crate::error::Diagnostic;
use crate::ir::{
    Action, Advice, Edit, FileOp, Hint, Levels, Line, Locator, NewText, Patch, PathRef, Policy,
    Uniqueness,
};

use super::lowering::{keep_shared_ends, Lowering};

/// The commands, rendered as `text` with their parts `at`.
pub fn lower<'t>(
    text: &'t str,
    store: &'t bumpalo::Bump,
    commands: &[Command],
    at: &[Rendered],
) -> (Patch<'t>, Vec<Diagnostic>) {
    let mut lower = Lowering::new(text, store, 0, ());
    lower.patch.policy = Policy {
        repeated_paths: true,
        advice: Advice {
            block: "`old_str`",
            disambiguate: "include more of the lines around the text to change in `old_str`, \
                           so that it occurs exactly once",
            create: "create it with the `create` command",
            update: "the file exists: change it with `str_replace` or `insert`",
            ..Advice::default()
        },
        ..Policy::default()
    };
    for (c, at) in commands.iter().zip(at) {
        let path = PathRef {
            text: c.path.clone(),
            span: at.path,
        };
        let (new, new_no_eol) = lines(&text[at.new.range()]);
        let locator = |hint| Locator {
            hint: Some(hint),
            ..Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER)
        };
        let action = match c.kind {
            Kind::Create { .. } => Action::add(NewText {
                lines: lower.keep(&new),
                final_newline: !new_no_eol,
            }),
            Kind::StrReplace { .. } => {
                let old_span = at.old.unwrap_or(at.header);
                let (old, old_no_eol) = lines(&text[old_span.range()]);
                let mut kept = keep_shared_ends(&old, new);
                let edit = Edit {
                    old_no_eol,
                    new_no_eol,
                    ..Edit::replace(
                        lower.keep(&old),
                        lower.keep_new(&mut kept),
                        locator(Hint::Text),
                        old_span,
                    )
                };
                modify(edit)
            }
            Kind::Insert { line, .. } => {
                let mut added: Vec<_> = new.into_iter().map(crate::ir::NewLine::Add).collect();
                let span = if at.new.is_empty() { at.header } else { at.new };
                let edit = Edit {
                    new_no_eol,
                    ..Edit::replace(
                        &[],
                        lower.keep_new(&mut added),
                        locator(Hint::AfterLine(line)),
                        span,
                    )
                };
                modify(edit)
            }
        };
        lower.patch.files.push(FileOp::new(path, action, at.header));
    }
    (lower.patch, lower.diags)
}

fn modify(edit: Edit) -> Action {
    Action::Modify {
        edits: vec![edit],
        move_to: None,
    }
}

/// A string's lines, and whether its last line lacks a line end (`x\n` is
/// one line that has one; the empty string is no line).
fn lines(s: &str) -> (Vec<Line<'_>>, bool) {
    if s.is_empty() {
        return (vec![], false);
    }
    let (body, no_eol) = match s.strip_suffix('\n') {
        Some(body) => (body, false),
        None => (s, true),
    };
    (body.split('\n').map(Line::of).collect(), no_eol)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_s_lines_and_its_last_line_end() {
        let texts = |s| {
            let (l, no_eol) = lines(s);
            (l.iter().map(|l| l.text).collect::<Vec<_>>(), no_eol)
        };
        assert_eq!(texts(""), (vec![], false));
        assert_eq!(texts("x"), (vec!["x"], true));
        assert_eq!(texts("x\n"), (vec!["x"], false));
        assert_eq!(texts("\n"), (vec![""], false));
        assert_eq!(texts("a\r\nb"), (vec!["a\r", "b"], true));
    }
}
