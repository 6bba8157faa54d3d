//! No panics on any input: arbitrary bytes through the whole pipeline, and
//! arbitrary (mostly well-formed) patches against an arbitrary tree.

use grammar_patch::apply::MemTree;
use grammar_patch::formats::Format;
use grammar_patch::{run, Mode};
use proptest::prelude::*;

/// A header number: mostly small (so hunks land in the tiny files), but
/// also the edges of every integer type and absurd digit strings.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[0-9]{1,2}",
        1 => "[0-9]{1,25}",
        1 => Just("4294967295".to_string()),
        1 => Just("4294967296".to_string()),
        1 => Just("18446744073709551615".to_string()),
        1 => Just("18446744073709551616".to_string()),
    ]
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("diff --git a/f b/f".to_string()),
        Just("diff --git a/f b/g".to_string()),
        Just("rename from f".to_string()),
        Just("rename to g".to_string()),
        Just("new file mode 100644".to_string()),
        Just("deleted file mode 100644".to_string()),
        Just("old mode 100644".to_string()),
        Just("new mode 160000".to_string()),
        Just("--- a/f".to_string()),
        Just("+++ b/f".to_string()),
        Just("--- /dev/null".to_string()),
        Just("+++ /dev/null".to_string()),
        Just("--- \"a/\\303\\251\\".to_string()),
        Just("GIT binary patch".to_string()),
        Just("\\ No newline at end of file".to_string()),
        Just(String::new()),
        (
            number(),
            proptest::option::of(number()),
            number(),
            proptest::option::of(number())
        )
            .prop_map(|(a, b, c, d)| {
                let r = |s: String, n: Option<String>| n.map_or(s.clone(), |n| format!("{s},{n}"));
                format!("@@ -{} +{} @@", r(a, b), r(c, d))
            }),
        "[ +-][a-c ]{0,3}",
        "\\PC{0,12}",
    ]
}

fn codex_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("*** Add File: f".to_string()),
        Just("*** Add File: g".to_string()),
        Just("*** Delete File: f".to_string()),
        Just("*** Update File: f".to_string()),
        Just("*** Move to: g".to_string()),
        Just("*** End of File".to_string()),
        Just("@@".to_string()),
        "@@ [a-c ]{1,3}",
        number().prop_map(|n| format!("@@ :{n}")),
        "[ +-][a-c ]{0,3}",
        Just(String::new()),
        "\\PC{0,8}",
    ]
}

fn repopatch_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("PATCH f".to_string()),
        Just("PATCH g".to_string()),
        Just("PATCH ../x".to_string()),
        Just("ENDPATCH".to_string()),
        Just("ENDPATCHSET".to_string()),
        Just("REPLACE".to_string()),
        Just("INSERT BEFORE".to_string()),
        Just("INSERT AFTER".to_string()),
        Just("DELETE".to_string()),
        Just("CREATEFILE".to_string()),
        Just("DELETEFILE".to_string()),
        Just("---".to_string()),
        "[-.][ ]?[a-c ]{0,3}",
        "[A-Z ]{0,14}[0-9]?",
        Just(String::new()),
        "\\PC{0,8}",
    ]
}

/// Lines ap patches are made of (after the header), valid and not.
fn ap_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a1b2c3d4 FILE".to_string()),
        Just("a1b2c3d4 FILE CRLF f".to_string()),
        Just("f".to_string()),
        Just("g/h".to_string()),
        Just("../x".to_string()),
        "a1b2c3d4 (REPLACE|INSERT_AFTER|INSERT_BEFORE|DELETE|CREATE|RECREATE|RENAME|END)",
        "a1b2c3d4 (snippet|snippet_tail|anchor|content)",
        "a1b2c3d4 (include_leading_blank_lines|include_trailing_blank_lines|scope_end)( [0-9]{1,2})?",
        number().prop_map(|n| format!("a1b2c3d4 include_trailing_blank_lines {n}")),
        Just("0badf00d REPLACE".to_string()),
        "[\\^$]",
        "[a-c {}():]{0,5}",
        Just(String::new()),
        "\\PC{0,8}",
    ]
}

/// Lines a SEARCH/REPLACE message is made of, and the slips around them.
fn searchreplace_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("f".to_string()),
        Just("g/h".to_string()),
        Just("`f`".to_string()),
        Just("**f**:".to_string()),
        Just("<<<<<<< SEARCH".to_string()),
        Just("<<<<< SEARCH>".to_string()),
        Just("=======".to_string()),
        Just("=========".to_string()),
        Just(">>>>>>> REPLACE".to_string()),
        Just(">>>>>>>>> REPLACE ".to_string()),
        Just("```python".to_string()),
        Just("```".to_string()),
        Just(String::new()),
        "[a-c ]{0,4}",
        "(Here|Done)[ .:]{0,2}",
    ]
}

/// OpenAI `apply_patch_call` items, with diffs of arbitrary lines.
fn openai_items() -> impl Strategy<Value = String> {
    let op = (
        0..3usize,
        "(f|g/h|\\.\\./x|a\\nb)",
        proptest::collection::vec(codex_line(), 0..8),
    );
    proptest::collection::vec(op, 1..4).prop_map(|ops| {
        let items: Vec<serde_json::Value> = ops
            .into_iter()
            .enumerate()
            .map(|(i, (kind, path, lines))| {
                let diff: String = lines.iter().map(|l| format!("{l}\n")).collect();
                let operation = match kind {
                    0 => serde_json::json!({"type": "create_file", "path": path, "diff": diff}),
                    1 => serde_json::json!({"type": "update_file", "path": path, "diff": diff}),
                    _ => serde_json::json!({"type": "delete_file", "path": path}),
                };
                serde_json::json!({"type": "apply_patch_call", "call_id": format!("c{i}"), "operation": operation})
            })
            .collect();
        serde_json::Value::Array(items).to_string()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_searchreplace_messages_never_panic(
        lines in proptest::collection::vec(searchreplace_line(), 0..24),
        f in proptest::option::of("[a-c \t]{0,3}(\n[a-c ]{0,3}){0,8}\n?"),
    ) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut tree = MemTree::default();
        if let Some(f) = &f {
            tree = tree.with_file("f", f);
        }
        let before = tree.clone();
        let outcome = run(text.as_str(), Some(Format::Searchreplace), Mode::Apply { dry_run: false }, Some(&mut tree), None);
        if !outcome.ok() {
            prop_assert_eq!(tree, before, "a rejected patch changed the tree");
        }
        let _ = grammar_patch::report::to_json(&outcome);
        let _ = grammar_patch::diagnostics::render_plain(&outcome.diagnostics, "p", &outcome.text);
    }

    /// A reply's operations apply together or not at all, touch only the
    /// paths they name, and are always answered.
    #[test]
    fn arbitrary_openai_items_apply_together_or_not_at_all(
        items in openai_items(),
        f in proptest::option::of("[a-c \t]{0,3}(\n[a-c ]{0,3}){0,8}\n?"),
    ) {
        let mut tree = MemTree::default().with_file("outside", "keep\n");
        if let Some(f) = &f {
            tree = tree.with_file("f", f);
        }
        let before = tree.clone();
        let Ok(outcome) = grammar_patch::Request::new(items.as_str()).run_in(&mut tree) else {
            prop_assert_eq!(&tree, &before, "a refused request changed the tree");
            return Ok(());
        };
        if !outcome.ok() {
            prop_assert_eq!(&tree, &before, "a rejected reply changed the tree");
        }
        prop_assert_eq!(tree.text("outside"), Some("keep\n"));
        let answers = grammar_patch::openai::outputs(&outcome.calls, &outcome);
        prop_assert_eq!(answers.as_array().map(Vec::len), Some(outcome.calls.len()));
    }

    #[test]
    fn arbitrary_codex_patches_never_panic(
        lines in proptest::collection::vec(codex_line(), 0..20),
        f in proptest::option::of("[a-c \t]{0,3}(\n[a-c ]{0,3}){0,8}\n?"),
    ) {
        let text = format!("*** Begin Patch\n{}*** End Patch\n", lines.iter().map(|l| format!("{l}\n")).collect::<String>());
        let mut tree = MemTree::default();
        if let Some(f) = &f {
            tree = tree.with_file("f", f);
        }
        let before = tree.clone();
        let outcome = run(text.as_str(), Some(Format::Codex), Mode::Apply { dry_run: false }, Some(&mut tree), None);
        if !outcome.ok() {
            prop_assert_eq!(tree, before, "a rejected patch changed the tree");
        }
        let _ = grammar_patch::diagnostics::render_plain(&outcome.diagnostics, "p", &outcome.text);
    }

    #[test]
    fn arbitrary_repopatch_patches_never_panic(
        lines in proptest::collection::vec(repopatch_line(), 0..24),
        f in proptest::option::of("[a-c \t]{0,3}(\n[a-c ]{0,3}){0,8}\n?"),
    ) {
        let text = format!("PATCHSET\n{}ENDPATCHSET\n", lines.iter().map(|l| format!("{l}\n")).collect::<String>());
        let mut tree = MemTree::default();
        if let Some(f) = &f {
            tree = tree.with_file("f", f);
        }
        let before = tree.clone();
        let outcome = run(text.as_str(), Some(Format::Repopatch), Mode::Apply { dry_run: false }, Some(&mut tree), None);
        if !outcome.ok() {
            prop_assert_eq!(tree, before, "a rejected patch changed the tree");
        }
        let _ = grammar_patch::report::to_json(&outcome);
        let _ = grammar_patch::diagnostics::render_plain(&outcome.diagnostics, "p", &outcome.text);
    }

    #[test]
    fn arbitrary_ap_patches_never_panic(
        lines in proptest::collection::vec(ap_line(), 0..24),
        f in proptest::option::of("[a-c {}:\t]{0,3}(\n[a-c {}]{0,3}){0,8}\n?"),
        tolerant in any::<bool>(),
    ) {
        let text = format!("a1b2c3d4 AP 3.2\n{}", lines.iter().map(|l| format!("{l}\n")).collect::<String>());
        let mut tree = MemTree::default();
        if let Some(f) = &f {
            tree = tree.with_file("f", f).with_file("g/h", f);
        }
        let before = tree.clone();
        let outcome = grammar_patch::run_with(text.as_str(), Some(Format::Ap), Mode::Apply { dry_run: false }, Some(&mut tree), None, grammar_patch::Options { tolerant, ..Default::default() });
        if !outcome.ok() {
            prop_assert_eq!(tree, before, "a rejected patch changed the tree");
        }
        let _ = grammar_patch::report::to_json(&outcome);
        let _ = grammar_patch::diagnostics::render_plain(&outcome.diagnostics, "p", &outcome.text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = run(text.as_str(), None, Mode::Lint, None, None);
        for &format in Format::ALL {
            let _ = run(text.as_str(), Some(format), Mode::Lint, None, None);
        }
    }

    #[test]
    fn arbitrary_patches_never_panic(
        lines in proptest::collection::vec(line(), 0..24),
        f in proptest::option::of("[a-c \\t]{0,3}(\n[a-c ]{0,3}){0,8}\n?"),
        g in proptest::option::of("[a-c]{0,2}\r\n[a-c]{0,2}"),
    ) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut tree = MemTree::default();
        if let Some(f) = &f {
            tree = tree.with_file("f", f);
        }
        if let Some(g) = &g {
            tree = tree.with_file("g", g);
        }
        let before = tree.clone();
        let outcome = run(&text, Some(Format::Udiff), Mode::Apply { dry_run: false }, Some(&mut tree), None);
        if !outcome.ok() {
            prop_assert_eq!(tree, before, "a rejected patch changed the tree");
        }
        let _ = grammar_patch::report::to_json(&outcome);
        let _ = grammar_patch::diagnostics::render_plain(&outcome.diagnostics, "p", &outcome.text);
    }
}
