//! Anthropic's text-editor commands on the command line: the `tool_result`
//! blocks to send back, the commands this tool refuses, and a property:
//! on random files and commands, every result is the one the tool's own
//! definition gives (the text replaced where it occurs exactly once), or a
//! refusal that writes nothing, never another text.

use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_grammar-patch"))
}

fn run(args: &[&str], root: &std::path::Path, stdin: &str) -> Output {
    let mut child = bin()
        .args(args)
        .arg("--root")
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn tool_use(id: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": "str_replace_based_edit_tool", "input": input})
}

/// Each `tool_use` gets its `tool_result`: done, the error, or why it was
/// not applied with the others.
#[test]
fn every_tool_use_is_answered() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.py"), "x = 1\ny = 2\n").unwrap();
    let message = json!({"role": "assistant", "content": [
        {"type": "text", "text": "Two edits."},
        tool_use("toolu_a", json!({"command": "str_replace", "path": "a.py", "old_str": "x = 1", "new_str": "x = 10"})),
        tool_use("toolu_b", json!({"command": "insert", "path": "a.py", "insert_line": 2, "new_str": "z = 3"})),
    ]});
    let out = run(
        &["apply", "--provider-output", "anthropic"],
        tmp.path(),
        &message.to_string(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let blocks: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(blocks.as_array().unwrap().len(), 2);
    for (block, id) in blocks
        .as_array()
        .unwrap()
        .iter()
        .zip(["toolu_a", "toolu_b"])
    {
        assert_eq!(block["type"], "tool_result");
        assert_eq!(block["tool_use_id"], id);
        assert_eq!(block["is_error"], false);
        assert!(
            block["content"]
                .as_str()
                .unwrap()
                .starts_with("applied: modified a.py"),
            "{block}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("a.py")).unwrap(),
        "x = 10\ny = 2\nz = 3\n"
    );

    // The same again: `x = 1` now lies inside `x = 10`, the result: it may
    // have been applied, and is refused; the second was not applied either,
    // and nothing changed.
    let out = run(
        &["apply", "--provider-output", "anthropic"],
        tmp.path(),
        &message.to_string(),
    );
    assert_eq!(out.status.code(), Some(1));
    let blocks: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(blocks[0]["is_error"], true);
    let error = blocks[0]["content"].as_str().unwrap();
    assert!(
        error.starts_with("error[ambiguous_context]: `old_str` occurs once"),
        "{error}"
    );
    assert!(error.contains("may have been applied already"), "{error}");
    assert!(error.contains("hint: "), "{error}");
    let other = blocks[1]["content"].as_str().unwrap();
    assert!(
        other.starts_with("not applied: `toolu_a` failed"),
        "{other}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("a.py")).unwrap(),
        "x = 10\ny = 2\nz = 3\n"
    );
}

/// `view` and `undo_edit` are refused with the reason, as is a reply
/// answered in the other provider's shape; nothing is written.
#[test]
fn what_this_tool_does_not_do_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.py"), "x = 1\n").unwrap();
    for command in ["view", "undo_edit"] {
        let call = json!([
            {"command": "str_replace", "path": "a.py", "old_str": "x", "new_str": "y"},
            {"command": command, "path": "a.py"},
        ]);
        let out = run(&["apply", "--json"], tmp.path(), &call.to_string());
        assert_eq!(out.status.code(), Some(2), "{command}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["error"]["code"], "usage_error");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("this tool applies edits"),
            "{v}"
        );
    }
    let call = json!({"command": "str_replace", "path": "a.py", "old_str": "x", "new_str": "y"});
    let out = run(
        &["apply", "--provider-output", "openai"],
        tmp.path(),
        &call.to_string(),
    );
    assert_eq!(out.status.code(), Some(2));
    // -R and -p would be silently ignored; they are refused.
    for flag in [&["-R"][..], &["-p", "1"][..]] {
        let args = [&["apply"][..], flag].concat();
        let out = run(&args, tmp.path(), &call.to_string());
        assert_eq!(out.status.code(), Some(2), "{flag:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("neither -R nor -p"));
    }
    // Converting them needs the files: without a root it is refused.
    let out = bin()
        .args(["convert", "--to", "udiff", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(call.to_string().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("converting them needs the files"));
    let out = run(
        &["apply", "--format", "udiff"],
        tmp.path(),
        &call.to_string(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give no format"));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("a.py")).unwrap(),
        "x = 1\n"
    );
}

/// A small deterministic generator (no dependency for one test).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The tool's definition of `str_replace`: the text replaced where it
/// occurs exactly once (occurrences that overlap counted apart); `None`
/// where it occurs nowhere or more than once.
fn by_definition(file: &str, old: &str, new: &str) -> Option<String> {
    let starts: Vec<usize> = (0..file.len())
        .filter(|&i| file.is_char_boundary(i) && file[i..].starts_with(old))
        .collect();
    match starts.as_slice() {
        [at] => Some(format!("{}{new}{}", &file[..*at], &file[at + old.len()..])),
        _ => None,
    }
}

/// Random files of short lines over a small alphabet (so that texts
/// repeat, overlap and straddle lines) and random `str_replace` commands
/// cut from them or made up: applied, the result is the definition's
/// whenever the text occurs exactly once; where it occurs several times it
/// is refused; where it occurs nowhere it is refused or found as whole
/// lines on the ladder, never anything else.
#[test]
fn str_replace_gives_the_definition_s_result_or_refuses() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let words = ["a", "b", "ab", " ", "  x", "é", "(1)", "\t"];
    let (mut defined, mut refused, mut ladder) = (0, 0, 0);
    let tmp = tempfile::tempdir().unwrap();
    let mut calls = vec![];
    for _ in 0..300 {
        let lines: Vec<String> = (0..1 + rng.below(6))
            .map(|_| {
                (0..1 + rng.below(4))
                    .map(|_| words[rng.below(words.len())])
                    .collect()
            })
            .collect();
        let file = lines.join("\n") + if rng.below(4) == 0 { "" } else { "\n" };
        let old = if rng.below(5) == 0 {
            words[rng.below(words.len())].to_string() + "zz"
        } else {
            let chars: Vec<(usize, char)> = file.char_indices().collect();
            let s = rng.below(chars.len());
            let e = (s + 1 + rng.below(8)).min(chars.len());
            let end = chars.get(e).map_or(file.len(), |c| c.0);
            file[chars[s].0..end].to_string()
        };
        let new: String = (0..rng.below(3))
            .map(|_| words[rng.below(words.len())])
            .collect::<String>()
            + if rng.below(2) == 0 { "\n" } else { "" };
        calls.push((file, old, new));
    }
    // One process for all: each call in its own tree, in memory through
    // the library, as the command line runs it.
    for (file, old, new) in &calls {
        let path = tmp.path().join("f.txt");
        std::fs::write(&path, file).unwrap();
        let call =
            json!({"command": "str_replace", "path": "f.txt", "old_str": old, "new_str": new});
        let outcome = grammar_patch::Request::new(call.to_string())
            .root(tmp.path())
            .run()
            .unwrap();
        let got = std::fs::read_to_string(&path).unwrap();
        let occurs = (0..file.len())
            .filter(|&i| file.is_char_boundary(i) && file[i..].starts_with(old.as_str()))
            .count();
        match (by_definition(file, old, new), outcome.ok()) {
            (Some(want), true) => {
                assert_eq!(got, want, "{file:?} {old:?} -> {new:?}");
                defined += 1;
            }
            (Some(_), false) => {
                // Only a result that may be in place already is refused.
                assert!(
                    new.contains(old.as_str()),
                    "{file:?} {old:?} -> {new:?}: {:?}",
                    outcome.diagnostics
                );
                assert_eq!(&got, file);
                refused += 1;
            }
            (None, false) => {
                assert_eq!(&got, file, "a refusal wrote");
                refused += 1;
            }
            (None, true) => {
                // Nowhere verbatim, found on the ladder as whole lines;
                // several occurrences are never applied.
                assert_eq!(
                    occurs, 0,
                    "{file:?} {old:?} -> {new:?} applied though ambiguous"
                );
                let warned = outcome
                    .diagnostics
                    .iter()
                    .any(|d| d.code.as_str() == "whitespace_fuzz");
                assert!(
                    warned || got == *file,
                    "{file:?} {old:?} -> {new:?}: {got:?}"
                );
                ladder += 1;
            }
        }
    }
    eprintln!("{defined} as defined, {refused} refused, {ladder} by the ladder");
    assert!(
        defined > 80 && refused > 50,
        "{defined} defined, {refused} refused, {ladder} by the ladder"
    );
}
