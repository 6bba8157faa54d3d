//! Files large enough for the work the applier shares with a second thread
//! (`src/apply/matching/beside.rs`): the original's brackets counted while the
//! edits are placed, the edits' keys hashed while the file is split, the
//! keys counted and indexed in chunks. Each gives what the one-thread path
//! gives on the same edits in a small file.

use grammar_patch::apply::MemTree;
use grammar_patch::error::Code;
use grammar_patch::formats::Format;
use grammar_patch::{run, Mode};

/// `lines` numbered lines of code (over 1 MiB from 20,000 on), each
/// closing the bracket it opens.
fn code(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("    value_{i} = compute({i}, \"padding text for the line\")\n"))
        .collect()
}

/// Applies an ap patch that replaces the line `old` of `text` with
/// `new`: the new text and the codes of the warnings.
fn replace_line(text: &str, old: &str, new: &str) -> (String, Vec<Code>) {
    let patch = format!(
        "1a2b3c4d AP 3.2\n\n1a2b3c4d FILE\nf.py\n\n1a2b3c4d REPLACE\n1a2b3c4d snippet\n{old}\n1a2b3c4d content\n{new}\n1a2b3c4d END\n"
    );
    let mut tree = MemTree::default().with_file("f.py", text);
    let apply = Mode::Apply { dry_run: false };
    let outcome = run(
        patch.as_str(),
        Some(Format::Ap),
        apply,
        Some(&mut tree),
        None,
    );
    assert!(outcome.ok(), "{:?}", outcome.diagnostics);
    let got = String::from_utf8(tree.files["f.py"].0.clone()).unwrap();
    (got, outcome.diagnostics.iter().map(|d| d.code).collect())
}

/// A file whose brackets balanced, and no longer do, is warned about
/// whatever its size; one that never balanced is not.
#[test]
fn a_large_file_is_checked_for_brackets_as_a_small_one_is() {
    let old = "    value_7 = compute(7, \"padding text for the line\")";
    let new = "    value_7 = compute(7";
    for lines in [50, 40_000] {
        let text = code(lines);
        assert_eq!(text.len() > 1 << 20, lines > 20_000);
        let (got, codes) = replace_line(&text, old, new);
        assert_eq!(got, text.replacen(old, new, 1), "{lines} lines");
        assert_eq!(codes, [Code::UnbalancedBrackets], "{lines} lines");
        // One bracket short already: the edit's change is no news.
        let short = text.replacen("compute(0,", "compute0,", 1);
        let (_, codes) = replace_line(&short, old, new);
        assert_eq!(codes, [], "{lines} lines");
    }
}
