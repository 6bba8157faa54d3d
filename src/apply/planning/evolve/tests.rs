//! The linked list against the obvious oracle: the text written out
//! after every edit, searched line by line.

use super::*;
use crate::apply::matching::find::{expect_keys, Keys};
use crate::ir::{Locator, New, Place, Span, Uniqueness};
use proptest::prelude::*;

fn edit(old: &[&'static str], new: Vec<NewLine<'static>>) -> Edit<'static> {
    Edit {
        old: Line::unplaced(old),
        new: {
            let mut new = new;
            NewLine::runs(&mut new);
            new.leak()
        },
        old_no_eol: false,
        new_no_eol: false,
        own_eol: false,
        place: Place::Replace,
        locator: Locator::plain(
            Uniqueness::UniqueInFile,
            crate::ir::Levels::of(&[Level::Exact]),
        ),
        span: Span::default(),
    }
}

fn add(text: &'static str) -> NewLine<'static> {
    NewLine::Add(Line::of(text))
}

/// Where `block` starts in `text`, by brute force.
fn brute(text: &str, block: &[&str]) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    (0..lines.len())
        .filter(|&s| s + block.len() <= lines.len() && lines[s..s + block.len()] == *block)
        .collect()
}

#[test]
fn edits_see_earlier_edits() {
    let text = "a\nb\nc\n";
    let file = FileText::new(text);
    let edits = [
        edit(&["b"], vec![add("x"), add("b")]),
        edit(&["x", "b"], vec![NewLine::keep(1)]),
        edit(
            &["a", "b"],
            vec![NewLine::keep(0), add("y"), NewLine::keep(1)],
        ),
    ];
    let mut ev = Evolving::new(file, "", &edits);
    for (i, e) in edits.iter().enumerate() {
        let found = ev.find_all(e.old, Level::Exact, usize::MAX);
        assert_eq!(found.len(), 1, "edit {i}");
        let run = ev.run(found[0], e.old.len());
        ev.splice(NIL, &run, e, i, None);
    }
    assert_eq!(ev.current().0, "a\ny\nb\nc\n");
    // `x` was added by edit 0 and removed by edit 1.
    assert!(ev
        .find_all(Line::unplaced(&["x"]), Level::Exact, usize::MAX)
        .is_empty());
}

#[test]
fn endings_and_the_final_newline_are_kept() {
    let file = FileText::new("\u{feff}a\r\nb");
    let mut ev = Evolving::new(file, "", &[]);
    let e = edit(&["b"], vec![NewLine::keep(0), add("c")]);
    let run = ev.run(ev.find_all(e.old, Level::Exact, usize::MAX)[0], 1);
    ev.splice(NIL, &run, &e, 0, None);
    assert_eq!(ev.current().0, "\u{feff}a\r\nb\r\nc");
    let e2 = edit(&[], vec![add("z")]);
    let tail = ev.tail();
    ev.splice(tail, &[], &e2, 1, None);
    assert_eq!(ev.current().0, "\u{feff}a\r\nb\r\nc\r\nz");
}

proptest! {
    /// Random replacements on a small alphabet (so blocks repeat, and
    /// match across earlier edits) agree with searching the text. With
    /// `told`, the file knows the edits' keys first (as the planner
    /// tells it), so lines an edit adds are filed only under those; a
    /// probe that may name a word no edit does (`e`) must still find
    /// every match. Each removed original line names its edit. A new
    /// block may keep old lines out of order or twice (values 5 to 7
    /// keep old line `v - 5`), which copies a line into a new node.
    #[test]
    fn find_all_agrees_with_the_written_text(
        start in proptest::collection::vec(0u8..5, 0..12),
        steps in proptest::collection::vec(
            (
                proptest::collection::vec(0u8..4, 1..3),
                proptest::collection::vec(0u8..8, 0..4),
                0usize..4,
                proptest::collection::vec(0u8..5, 1..3),
            ),
            1..12,
        ),
        told in proptest::bool::ANY,
    ) {
        const WORDS: [&str; 5] = ["a", "b", "c", "d", "e"];
        let text: String = start.iter().map(|&w| format!("{}\n", WORDS[w as usize])).collect();
        let file = FileText::new(&text);
        let n = file.len();
        let edits: Vec<Edit<'static>> = steps
            .iter()
            .map(|(old, new, _, _)| {
                let old: Vec<&'static str> = old.iter().map(|&w| WORDS[w as usize]).collect();
                let new = new
                    .iter()
                    .map(|&w| match w as usize {
                        k @ 5.. => NewLine::keep((k - 5) % old.len()),
                        w => add(WORDS[w]),
                    })
                    .collect();
                edit(&old, new)
            })
            .collect();
        if told {
            expect_keys(&file, Keys::of(&edits));
        }
        let mut ev = Evolving::new(file, "", &edits);
        let mut removed_by = vec![None; n];
        for (i, (e, (_, _, pick, probe))) in edits.iter().zip(&steps).enumerate() {
            let (now, order) = ev.current();
            let probe: Vec<&'static str> = probe.iter().map(|&w| WORDS[w as usize]).collect();
            for block in [e.old.iter().map(|l| l.text).collect::<Vec<_>>(), probe] {
                let expected = brute(&now, &block);
                let mut found: Vec<usize> = ev
                    .find_all(Line::unplaced(&block), Level::Exact, usize::MAX)
                    .into_iter()
                    .map(|id| order.iter().position(|&o| o == id).unwrap())
                    .collect();
                found.sort_unstable();
                prop_assert_eq!(&found, &expected, "{:?}", block);
            }
            let old: Vec<&str> = e.old.iter().map(|l| l.text).collect();
            let expected = brute(&now, &old);
            if let Some(&at) = expected.get(pick % expected.len().max(1)) {
                let run = ev.run(order[at], old.len());
                // Kept lines stay (the first keep of each, in order).
                let mut last = None;
                let kept: Vec<usize> = e
                    .new_lines()
                    .filter_map(|n| match n {
                        New::Keep(j) if last.is_none_or(|l| j > l) && j < run.len() => {
                            last = Some(j);
                            Some(j)
                        }
                        _ => None,
                    })
                    .collect();
                for (j, &id) in run.iter().enumerate() {
                    if (id as usize) < n && !kept.contains(&j) {
                        removed_by[id as usize] = Some(i);
                    }
                }
                ev.splice(NIL, &run, e, i, None);
                let mut lines: Vec<&str> = now.lines().collect();
                let new: Vec<&str> = e.new_lines().map(|n| match n {
                    New::Add(l) => l.text,
                    New::Keep(j) => old[j],
                }).collect();
                lines.splice(at..at + old.len(), new);
                let want: String = lines.iter().map(|l| format!("{l}\n")).collect();
                prop_assert_eq!(ev.current().0, want);
            }
            let now: Vec<Option<usize>> = (0..n).map(|l| ev.removed_by(l)).collect();
            prop_assert_eq!(&now, &removed_by);
        }
    }
}
