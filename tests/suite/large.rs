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

/// A patch that changes a file in tens of thousands of places (32,768
/// pieces of its new text or more) has its results (each file's lines
/// added and removed) made on a second thread while the commit writes:
/// they are the lines its hunks change, the ones that leave a line as it
/// was not counted, as its dry run (one thread, nothing written) counts
/// them. (Made in line, the test's results fail it.)
#[test]
fn a_large_patch_counts_its_lines_beside_the_commit_as_its_dry_run_does() {
    let lines = 80_000;
    let text = code(lines);
    // The edited file last: an earlier file's counts are taken when its
    // text is let go, before the next file is planned.
    let mut patch =
        String::from("--- /dev/null\n+++ b/g.txt\n@@ -0,0 +1,3 @@\n+one\n+two\n+three\n");
    patch += "--- a/f.py\n+++ b/f.py\n";
    let (mut hunks, mut same) = (0, 0);
    for i in (0..lines).step_by(2) {
        let old = format!("    value_{i} = compute({i}, \"padding text for the line\")");
        // Every tenth hunk writes its line back as it was.
        let new = match hunks % 10 {
            0 => old.clone(),
            _ => format!("    value_{i} = recompute({i}, \"padding text for the line\")"),
        };
        same += usize::from(hunks % 10 == 0);
        hunks += 1;
        patch += &format!("@@ -{n},1 +{n},1 @@\n-{old}\n+{new}\n", n = i + 1);
    }
    let results = |dry_run| {
        let mut tree = MemTree::default().with_file("f.py", &text);
        let outcome = run(
            patch.as_str(),
            Some(Format::Udiff),
            Mode::Apply { dry_run },
            Some(&mut tree),
            None,
        );
        assert!(outcome.ok(), "{:?}", outcome.diagnostics);
        let files: Vec<_> = (outcome.files.iter())
            .map(|f| (f.path.clone(), f.added, f.removed))
            .collect();
        (files, tree.files.contains_key("g.txt"))
    };
    let changed = hunks - same;
    let want = vec![
        ("g.txt".to_string(), 3, 0),
        ("f.py".to_string(), changed, changed),
    ];
    assert_eq!(results(false), (want.clone(), true));
    assert_eq!(results(true), (want, false));

    // Left uncounted (as the command line's list of files leaves them),
    // the same apply, the same files, each counted 0.
    let mut tree = MemTree::default().with_file("f.py", &text);
    let options = grammar_patch::Options {
        uncounted: true,
        ..Default::default()
    };
    let apply = Mode::Apply { dry_run: false };
    let outcome = grammar_patch::run_with(
        patch.as_str(),
        Some(Format::Udiff),
        apply,
        Some(&mut tree),
        None,
        options,
    );
    assert!(outcome.ok(), "{:?}", outcome.diagnostics);
    let files: Vec<_> = (outcome.files.iter())
        .map(|f| (f.path.as_str(), f.added, f.removed))
        .collect();
    assert_eq!(files, [("g.txt", 0, 0), ("f.py", 0, 0)]);
    let mut counted = MemTree::default().with_file("f.py", &text);
    run(
        patch.as_str(),
        Some(Format::Udiff),
        apply,
        Some(&mut counted),
        None,
    );
    assert_eq!(tree.files, counted.files);
}

/// A file read whole, and one of over 16 MiB (read a piece at a time,
/// each piece checked as it comes in: `lossless::read`), each UTF-8 but
/// for one Latin-1 byte near its end and edited near its start by a patch
/// of plain text, are written back byte for byte on disk: the byte met
/// late is not written as the text that stands for it. The same files
/// without that byte, found plain as they are read, are written as read.
#[test]
fn a_large_file_with_a_late_byte_that_is_not_utf8_is_written_back_byte_for_byte() {
    let old = "    value_1 = compute(1, \"padding text for the line\")\n";
    let new = "    value_1 = 1\n";
    let patch = format!("--- a/f.py\n+++ b/f.py\n@@ -2 +2 @@\n-{old}+{new}");
    for lines in [40_000, 320_000] {
        for tail in [&b"# caf\xe9 \xff\n"[..], b"# plain\n"] {
            let tmp = tempfile::tempdir().unwrap();
            let mut before = code(lines).into_bytes();
            before.extend_from_slice(tail);
            assert_eq!(before.len() > 16 << 20, lines > 40_000);
            std::fs::write(tmp.path().join("f.py"), &before).unwrap();
            let patch_path = tmp.path().join("p.diff");
            std::fs::write(&patch_path, &patch).unwrap();
            let root = tmp.path().join(".");
            let status = std::process::Command::new(env!("CARGO_BIN_EXE_grammar-patch"))
                .args(["apply", "--root"])
                .arg(&root)
                .arg(&patch_path)
                .output()
                .unwrap();
            assert!(status.status.success(), "{status:?}");
            let at = before
                .windows(old.len())
                .position(|w| w == old.as_bytes())
                .unwrap();
            let mut want = before[..at].to_vec();
            want.extend_from_slice(new.as_bytes());
            want.extend_from_slice(&before[at + old.len()..]);
            let got = std::fs::read(tmp.path().join("f.py")).unwrap();
            assert!(got == want, "{lines} lines, {tail:?}");
        }
    }
}
