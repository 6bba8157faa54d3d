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
/// after it, ending with a line end if it did. An operation that only adds
/// lines around its block, whose added lines are already there, is refused
/// (applied already, or meant to add them again: never guessed); and where
/// an operation changes lines an earlier one wrote, the patch is refused
/// when, taken back in reverse order, every operation finds its place: its
/// result is there already.
fn model(text: String, ops: &[Op]) -> Result<String, Code> {
    let (out, chained) = forward(text.clone(), ops)?;
    if chained && reverse(&text, ops) {
        return Err(Code::AmbiguousContext);
    }
    Ok(out)
}

/// Every operation taken back, in reverse order: its new block (as the
/// patch writes it) replaced by its old one. Whether all find their place.
fn reverse(text: &str, ops: &[Op]) -> bool {
    let mut back = vec![];
    for op in ops.iter().rev() {
        let written: Vec<&'static str> = match op.kind {
            0 => op.new.clone(),
            1 => return false,
            2 => op.new.iter().chain(&op.old).copied().collect(),
            _ => op.old.iter().chain(&op.new).copied().collect(),
        };
        if written.is_empty() {
            return false;
        }
        back.push(Op {
            kind: 0,
            old: written,
            new: op.old.clone(),
        });
    }
    forward(text.to_string(), &back).is_ok()
}

/// The operations in turn: the new text and whether one of them changed
/// lines an earlier one wrote.
fn forward(mut text: String, ops: &[Op]) -> Result<(String, bool), Code> {
    let mut written: Vec<bool> = text.lines().map(|_| false).collect();
    let mut chained = false;
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
        chained |= written[at..at + n].iter().any(|&w| w);
        let matched: Vec<String> = lines[at..at + n].to_vec();
        let added = op.new.iter().map(|s| s.to_string());
        // Lines the two blocks of a REPLACE share at either end keep the
        // file's text.
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
        // The lines an insertion adds before and after the block: a REPLACE
        // whose new block starts or ends with its old one (lines compared as
        // the block is matched, trailing whitespace aside) adds lines too.
        let alike = |a: &[&str], b: &[&str]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.trim_end() == y.trim_end())
        };
        // Where the REPLACE keeps old lines at either end, they say where
        // the old block sits in the new one; else the first place its text is.
        let m = op.new.len();
        let aligned = match (prefix, suffix) {
            _ if m <= n => None,
            (1.., _) => Some(0),
            (0, 1..) => Some(m - n),
            _ => (0..=m - n).find(|&k| alike(&op.new[k..k + n], &op.old)),
        }
        .filter(|&k| alike(&op.new[k..k + n], &op.old));
        let around: Option<(&[&str], &[&str])> = match op.kind {
            0 => aligned.map(|k| (&op.new[..k], &op.new[k + n..])),
            2 => Some((&op.new[..], &[])),
            3 => Some((&[], &op.new[..])),
            _ => None,
        };
        if let Some((before, after)) = around {
            let same = |at: Option<usize>, l: &str| {
                at.and_then(|i| lines.get(i))
                    .is_some_and(|f| f.trim_end() == l.trim_end())
            };
            let preceded = before
                .iter()
                .rev()
                .enumerate()
                .all(|(k, l)| same(at.checked_sub(k + 1), l));
            let followed = after
                .iter()
                .enumerate()
                .all(|(k, l)| same(Some(at + n + k), l));
            if preceded && followed {
                return Err(Code::AmbiguousContext);
            }
        }
        let (replacement, marks): (Vec<String>, Vec<bool>) = match op.kind {
            0 => (0..op.new.len())
                .map(|i| {
                    if i < prefix {
                        (matched[i].clone(), written[at + i])
                    } else if i >= op.new.len() - suffix {
                        let j = n - (op.new.len() - i);
                        (matched[j].clone(), written[at + j])
                    } else {
                        (op.new[i].to_string(), true)
                    }
                })
                .unzip(),
            1 => (vec![], vec![]),
            2 => added
                .map(|a| (a, true))
                .chain(
                    matched
                        .iter()
                        .cloned()
                        .zip(written[at..at + n].iter().copied()),
                )
                .unzip(),
            _ => matched
                .iter()
                .cloned()
                .zip(written[at..at + n].iter().copied())
                .chain(added.map(|a| (a, true)))
                .unzip(),
        };
        lines.splice(at..at + n, replacement);
        written.splice(at..at + n, marks);
        text = lines.join("\n");
        if final_newline && !lines.is_empty() {
            text.push('\n');
        }
    }
    Ok((text, chained))
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
