//! RepoPatch's sequential semantics against a model written the obvious
//! way: the file as a list of lines, each operation applied in turn, its
//! block required to occur exactly once (exactly, or else ignoring trailing
//! whitespace) in the list as the operations before it left it. The applier
//! gets there through a linked list and a line index; the model rebuilds
//! the list every time. On random files over a tiny alphabet, so blocks
//! repeat and match text earlier operations wrote, the two must agree on
//! the result or on the error.

use grammar_patch::apply::MemTree;
use grammar_patch::error::Code;
use grammar_patch::formats::Format;
use grammar_patch::{run, Mode};
use proptest::prelude::*;

const WORDS: &[&str] = &["a", "b", "a ", "", "c"];

#[derive(Debug, Clone)]
struct Op {
    kind: usize,
    old: Vec<&'static str>,
    new: Vec<&'static str>,
}

fn op() -> impl Strategy<Value = Op> {
    let words = || proptest::sample::select(WORDS);
    (
        0..4usize,
        proptest::collection::vec(words(), 1..3),
        proptest::collection::vec(prop_oneof![words(), Just("n")], 0..3),
    )
        .prop_map(|(kind, old, mut new)| {
            if kind >= 2 && new.is_empty() {
                new.push("n"); // an insertion inserts something
            }
            Op { kind, old, new }
        })
}

fn render(ops: &[Op]) -> String {
    let mut out = String::from("PATCHSET\nPATCH f.txt\n");
    for op in ops {
        out.push_str(["REPLACE\n", "DELETE\n", "INSERT BEFORE\n", "INSERT AFTER\n"][op.kind]);
        for l in &op.old {
            out.push_str(&format!("- {l}\n"));
        }
        if op.kind != 1 {
            out.push_str("---\n");
            for l in &op.new {
                out.push_str(&format!(". {l}\n"));
            }
        }
    }
    out.push_str("ENDPATCH\nENDPATCHSET\n");
    out
}

/// The model: the new text, or the code of the first operation that fails.
/// The file is its text: split into lines before each operation, joined
/// after it, ending with a line end if it did.
fn model(mut text: String, ops: &[Op]) -> Result<String, Code> {
    for op in ops {
        let final_newline = text.ends_with('\n');
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let n = op.old.len();
        let find = |eq: &dyn Fn(&str, &str) -> bool| -> Vec<usize> {
            (0..lines.len())
                .filter(|&s| s + n <= lines.len() && (0..n).all(|j| eq(&lines[s + j], op.old[j])))
                .collect()
        };
        let mut found = find(&|a, b| a == b);
        if found.is_empty() {
            found = find(&|a, b| a.trim_end() == b.trim_end());
        }
        let at = match found.len() {
            0 => return Err(Code::ContextNotFound),
            1 => found[0],
            _ => return Err(Code::AmbiguousContext),
        };
        let matched: Vec<String> = lines[at..at + n].to_vec();
        let added = op.new.iter().map(|s| s.to_string());
        let replacement: Vec<String> = match op.kind {
            0 => {
                // Lines the two blocks share at either end keep the file's text.
                let prefix = op
                    .old
                    .iter()
                    .zip(&op.new)
                    .take_while(|(o, n)| o == n)
                    .count();
                let room = n.min(op.new.len()) - prefix;
                let suffix = op
                    .old
                    .iter()
                    .rev()
                    .zip(op.new.iter().rev())
                    .take(room)
                    .take_while(|(o, n)| o == n)
                    .count();
                (0..op.new.len())
                    .map(|i| {
                        if i < prefix {
                            matched[i].clone()
                        } else if i >= op.new.len() - suffix {
                            matched[n - (op.new.len() - i)].clone()
                        } else {
                            op.new[i].to_string()
                        }
                    })
                    .collect()
            }
            1 => vec![],
            2 => added.chain(matched.iter().cloned()).collect(),
            _ => matched.iter().cloned().chain(added).collect(),
        };
        lines.splice(at..at + n, replacement);
        text = lines.join("\n");
        if final_newline && !lines.is_empty() {
            text.push('\n');
        }
    }
    Ok(text)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn repopatch_applies_operations_in_order_like_the_model(
        file in proptest::collection::vec(proptest::sample::select(WORDS), 0..10),
        final_newline in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..6),
    ) {
        let mut text = file.join("\n");
        if final_newline && !file.is_empty() {
            text.push('\n');
        }
        let patch = render(&ops);
        let mut tree = MemTree::default().with_file("f.txt", &text);
        let outcome = run(patch.as_str(), Some(Format::Repopatch), Mode::Apply { dry_run: false }, Some(&mut tree), None);
        let got = String::from_utf8(tree.files["f.txt"].0.clone()).unwrap();
        match model(text.clone(), &ops) {
            Ok(want) => {
                prop_assert!(outcome.ok(), "{:?}\n{patch}", outcome.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>());
                prop_assert_eq!(got, want, "{}", patch);
            }
            Err(code) => {
                prop_assert!(!outcome.ok(), "the model fails with {code}, the applier succeeded\n{patch}");
                prop_assert_eq!(outcome.diagnostics[0].code, code, "{}", patch);
                prop_assert_eq!(got, text, "a rejected patch changed the file");
            }
        }
    }
}
