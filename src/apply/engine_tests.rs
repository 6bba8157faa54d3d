//! The locator features no udiff fixture reaches: anchors, range ends,
//! the cursor rule and the normalised pass, on hand-built edits.
use crate::apply::{plan, Change, MemTree};
use crate::error::Code;
use crate::ir::{
    Action, Edit, FileOp, Level, Levels, Line, Locator, NewLine, Patch, PathRef, Place, RangeEnd,
    Span, Uniqueness,
};

fn lines(texts: &[&'static str]) -> &'static [Line<'static>] {
    Line::unplaced(texts)
}

fn edit(old: &[&'static str], add: &[&'static str], locator: Locator<'static>) -> Edit<'static> {
    Edit {
        old: lines(old),
        new: lines(add)
            .iter()
            .map(|&l| NewLine::Add(l))
            .collect::<Vec<_>>()
            .leak(),
        old_no_eol: false,
        new_no_eol: false,
        own_eol: false,
        place: Place::Replace,
        locator,
        span: Span::default(),
    }
}

fn locator(uniqueness: Uniqueness) -> Locator<'static> {
    Locator::plain(uniqueness, Levels::of(&[Level::Exact]))
}

/// Applies `edits` to `f.txt` holding `text`: the new text, or the codes.
fn check(text: &str, edits: Vec<Edit<'static>>) -> Result<String, Vec<(Code, String)>> {
    let tree = MemTree::default().with_file("f.txt", text);
    let path = PathRef {
        text: "f.txt".into(),
        span: Span::default(),
    };
    let op = FileOp {
        path,
        action: Action::Modify {
            edits,
            move_to: None,
        },
        span: Span::default(),
        mode: None,
        old_mode: None,
        eol: None,
    };
    let patch = Patch {
        files: vec![op],
        ..Patch::default()
    };
    let plan = plan(&patch, &tree, None).map_err(|ds| {
        ds.into_iter()
            .map(|d| (d.code, d.message))
            .collect::<Vec<_>>()
    })?;
    Ok(match &plan.changes[0] {
        Change::Write { output, .. } => output.to_text(),
        other => format!("{other:?}"),
    })
}

#[test]
fn anchor_scopes_the_block() {
    let text = "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n";
    let mut loc = locator(Uniqueness::UniqueInFile);
    assert_eq!(
        check(
            text,
            vec![edit(&["    x = 1;"], &["    x = 2;"], loc.clone())]
        )
        .unwrap_err()[0]
            .0,
        Code::AmbiguousContext
    );
    loc.reach_mut().anchor = Some(lines(&["fn b() {"]));
    assert_eq!(
        check(
            text,
            vec![edit(&["    x = 1;"], &["    x = 2;"], loc.clone())]
        )
        .unwrap(),
        text.replace("fn b() {\n    x = 1;", "fn b() {\n    x = 2;")
    );
    // A pure insertion goes right after the anchor.
    assert_eq!(
        check(text, vec![edit(&[], &["    y = 0;"], loc.clone())]).unwrap(),
        text.replace("fn b() {\n", "fn b() {\n    y = 0;\n")
    );
    loc.reach_mut().anchor = Some(lines(&["fn c() {"]));
    let errs = check(text, vec![edit(&["    x = 1;"], &[], loc.clone())]).unwrap_err();
    assert_eq!(errs[0].0, Code::ContextNotFound);
    assert!(errs[0].1.starts_with("anchor not found"), "{}", errs[0].1);
    loc.reach_mut().anchor = Some(lines(&["}"]));
    let errs = check(text, vec![edit(&["    x = 1;"], &[], loc)]).unwrap_err();
    assert_eq!(errs[0].0, Code::AmbiguousContext);
    assert!(
        errs[0].1.starts_with("anchor matches 2 places"),
        "{}",
        errs[0].1
    );
}

#[test]
fn range_end_extends_the_region() {
    let mut loc = locator(Uniqueness::UniqueInFile);
    loc.reach_mut().range_end = Some(RangeEnd::Lines(lines(&["end"])));
    let text = "start\na\nb\nend\nafter\n";
    assert_eq!(
        check(text, vec![edit(&["start"], &["X"], loc.clone())]).unwrap(),
        "X\nafter\n"
    );
    let errs = check("start\na\n", vec![edit(&["start"], &["X"], loc)]).unwrap_err();
    assert!(
        errs[0].1.starts_with("range end not found"),
        "{}",
        errs[0].1
    );
}

#[test]
fn cursor_rule_takes_the_first_match_after_the_previous_edit() {
    let loc = locator(Uniqueness::FirstAfterCursor);
    let edits = vec![
        edit(&["x"], &["one"], loc.clone()),
        edit(&["x"], &["two"], loc),
    ];
    assert_eq!(check("x\nx\nx\n", edits).unwrap(), "one\ntwo\nx\n");
}

#[test]
fn normalised_pass_folds_typographic_punctuation_and_keeps_file_text() {
    let mut loc = locator(Uniqueness::UniqueInFile);
    loc.levels = Levels::of(&[Level::Exact, Level::Trimmed, Level::Normalized]);
    let mut e = edit(&["say(\"hi\") - ok", "next"], &["added"], loc);
    e.new = vec![NewLine::keep(0), NewLine::Add(Line::of("added"))].leak();
    let text = "  say(\u{201C}hi\u{201D}) \u{2014} ok\nnext\n";
    assert_eq!(
        check(text, vec![e]).unwrap(),
        // The added line takes the place of `next`, at column 0 in the
        // file as in the patch: it stays as written (the first line's
        // indentation differing says nothing about it).
        "  say(\u{201C}hi\u{201D}) \u{2014} ok\nadded\n"
    );
}
