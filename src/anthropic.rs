//! Anthropic's text-editor tool (`str_replace_based_edit_tool`, and the
//! many agents modelled on it): its commands, read from JSON — one
//! `input` object, a `tool_use` block, a list of them, or a whole
//! assistant message, whose text and thinking blocks are skipped — and the
//! `tool_result` blocks to send back.
//!
//! `str_replace`, `create` and `insert` apply, all commands of one reply
//! together, in order, each to the file as the ones before it left it
//! (`formats/commands.rs` lowers them). `view` and `undo_edit` are
//! refused: this tool applies edits, and it keeps no history to undo.

use serde_json::{json, Map, Value};

use crate::Outcome;

/// One command, and the `tool_use` block it came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The block's `id` (none for a bare `input` object).
    pub id: Option<String>,
    /// The file it acts on.
    pub path: String,
    /// What it does.
    pub kind: Kind,
}

/// A command that edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `str_replace`: `old_str`, which must occur exactly once, becomes
    /// `new_str`.
    StrReplace {
        /// `old_str`.
        old: String,
        /// `new_str` (none: the empty string).
        new: String,
    },
    /// `create`: a new file.
    Create {
        /// `file_text`.
        text: String,
    },
    /// `insert`: lines after a line.
    Insert {
        /// `insert_line`, 1-based (0: before the first line).
        line: u32,
        /// `new_str` (or `insert_text`), as lines.
        text: String,
    },
}

impl Command {
    /// The command's name, as the tool spells it.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::StrReplace { .. } => "str_replace",
            Kind::Create { .. } => "create",
            Kind::Insert { .. } => "insert",
        }
    }
}

/// The tool's commands; the two this tool refuses, and why.
const COMMANDS: [&str; 5] = ["str_replace", "create", "insert", "view", "undo_edit"];

/// `None` when `text` is no text-editor JSON (patch text, our own tool
/// call, OpenAI's items); otherwise its commands in order, or why they
/// cannot be applied.
pub fn commands(text: &str) -> Option<Result<Vec<Command>, String>> {
    let start = text.trim_start();
    if !(start.starts_with('{') || start.starts_with('[')) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let blocks = match value {
        // A whole assistant message (or the API's response): its content.
        Value::Object(mut m) if is_message(&m) => match m.remove("content") {
            Some(Value::Array(blocks)) => blocks,
            _ => return None,
        },
        Value::Array(blocks) => blocks,
        one => vec![one],
    };
    let ours: Vec<bool> = blocks.iter().map(is_command).collect();
    if !ours.contains(&true) {
        return None;
    }
    let mut read = vec![];
    for (i, block) in blocks.into_iter().enumerate() {
        let what = |m: String| format!("command {}: {m}", i + 1);
        match block {
            _ if ours[i] => read.push(command(block).map_err(what)),
            Value::Object(m) if is_skipped(&m) => {}
            _ => {
                return Some(Err(what(
                    "a list of text-editor commands holds something else too".into(),
                )))
            }
        }
    }
    Some(read.into_iter().collect())
}

fn is_message(m: &Map<String, Value>) -> bool {
    m.get("role").and_then(Value::as_str) == Some("assistant")
        || m.get("type").and_then(Value::as_str) == Some("message")
}

/// Blocks of an assistant message that are not tool calls.
fn is_skipped(m: &Map<String, Value>) -> bool {
    matches!(
        m.get("type").and_then(Value::as_str),
        Some("text" | "thinking" | "redacted_thinking")
    )
}

/// A `tool_use` block whose `input` names a command, or such an input.
fn is_command(v: &Value) -> bool {
    let input = match v.get("type").and_then(Value::as_str) {
        Some("tool_use") => v.get("input"),
        _ => Some(v),
    };
    input
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)
        .is_some_and(|c| COMMANDS.contains(&c))
}

fn command(block: Value) -> Result<Command, String> {
    let Value::Object(mut fields) = block else {
        return Err("not an object".into());
    };
    let (id, input) = match fields.get("type").and_then(Value::as_str) {
        Some("tool_use") => {
            let id = match fields.remove("id") {
                Some(Value::String(id)) => Some(id),
                None | Some(Value::Null) => None,
                Some(_) => return Err("a tool_use block's `id` must be a string".into()),
            };
            match fields.remove("input") {
                Some(Value::Object(input)) => (id, input),
                _ => return Err("a tool_use block needs its `input` object".into()),
            }
        }
        _ => (None, fields),
    };
    Ok(Command {
        id,
        ..input_command(input)?
    })
}

fn input_command(mut input: Map<String, Value>) -> Result<Command, String> {
    let name = match input.remove("command") {
        Some(Value::String(c)) => c,
        _ => return Err("the input needs a `command` string".into()),
    };
    let keys: &[&str] = match name.as_str() {
        "str_replace" => &["path", "old_str", "new_str"],
        "create" => &["path", "file_text"],
        "insert" => &["path", "insert_line", "new_str", "insert_text"],
        "view" | "undo_edit" => {
            return Err(format!(
                "`{name}` is not an edit: this tool applies edits (`str_replace`, `create`, \
                 `insert`) and keeps no history; read files, and undo, in your own runtime"
            ))
        }
        other => return Err(format!("unknown command `{other}`")),
    };
    if let Some(key) = input.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(format!(
            "`{name}` takes `{}`, not `{key}`",
            keys.join("`, `")
        ));
    }
    let insert_line = input.remove("insert_line");
    let mut text = |key: &str| match input.remove(key) {
        Some(Value::String(s)) => Ok(Some(s)),
        None | Some(Value::Null) => Ok(None),
        Some(_) => Err(format!("`{key}` must be a string")),
    };
    let path = text("path")?.ok_or("the command needs a `path`")?;
    if path.contains(['\n', '\r']) {
        return Err(format!("the path {path:?} has a line break"));
    }
    let kind = match name.as_str() {
        "str_replace" => {
            let old = text("old_str")?.ok_or("`str_replace` needs `old_str`")?;
            if old.is_empty() {
                return Err(
                    "`old_str` is empty: it occurs everywhere; give the text to replace".into(),
                );
            }
            // No `new_str`: the text is deleted, as the tool does.
            let new = text("new_str")?.unwrap_or_default();
            Kind::StrReplace { old, new }
        }
        "create" => Kind::Create {
            text: text("file_text")?.ok_or("`create` needs `file_text`")?,
        },
        _ => {
            let line = match insert_line {
                Some(Value::Number(n)) => n
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| format!("`insert_line` {n} is no line number"))?,
                _ => return Err("`insert` needs `insert_line`, a number".into()),
            };
            let text = match (text("new_str")?, text("insert_text")?) {
                (Some(t), None) | (None, Some(t)) => t,
                _ => {
                    return Err(
                        "`insert` takes its text as `new_str` (or `insert_text`), once".into(),
                    )
                }
            };
            Kind::Insert { line, text }
        }
    };
    Ok(Command {
        id: None,
        path,
        kind,
    })
}

/// The commands as the text diagnostics show: each its name and path,
/// then its strings under their names, verbatim. Returns the text and,
/// for each command, where its strings lie in it.
pub fn render(commands: &[Command]) -> (String, Vec<Rendered>) {
    let mut out = String::new();
    let mut at = vec![];
    let field = |out: &mut String, name: &str, value: &str| {
        out.push_str(name);
        out.push_str(":\n");
        let start = out.len();
        out.push_str(value);
        let span = crate::ir::Span::new(start, out.len());
        out.push('\n');
        span
    };
    for c in commands {
        let start = out.len();
        out.push_str(&format!("{} {}\n", c.name(), c.path));
        let header = crate::ir::Span::new(start, out.len() - 1);
        let path = crate::ir::Span::new(start + c.name().len() + 1, out.len() - 1);
        let (old, new) = match &c.kind {
            Kind::StrReplace { old, new } => {
                let old = field(&mut out, "old_str", old);
                (Some(old), field(&mut out, "new_str", new))
            }
            Kind::Create { text } => (None, field(&mut out, "file_text", text)),
            Kind::Insert { line, text } => {
                out.push_str(&format!("insert_line: {line}\n"));
                (None, field(&mut out, "new_str", text))
            }
        };
        at.push(Rendered {
            header,
            path,
            old,
            new,
        });
    }
    (out, at)
}

/// Where one command's parts lie in the rendered text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendered {
    /// Its first line: name and path.
    pub header: crate::ir::Span,
    /// The path in it.
    pub path: crate::ir::Span,
    /// `old_str`.
    pub old: Option<crate::ir::Span>,
    /// `new_str` or `file_text`.
    pub new: crate::ir::Span,
}

/// The `tool_result` blocks to send back, one per `tool_use` (by its
/// `id`; a bare input has none to answer): what was done, or the error a
/// model can act on for the command it names, and for the others why
/// they were not applied either.
pub fn results(commands: &[Command], outcome: &Outcome) -> Value {
    let asked: Vec<(Option<&str>, &str)> = commands
        .iter()
        .map(|c| (c.id.as_deref(), c.path.as_str()))
        .collect();
    let blocks = crate::replies::answers(&asked, outcome, "command")
        .into_iter()
        .map(|(id, answer)| {
            json!({
                "type": "tool_result",
                "tool_use_id": id,
                "is_error": answer.is_err(),
                "content": answer.unwrap_or_else(|why| why),
            })
        })
        .collect();
    Value::Array(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_blocks_lists_and_messages_are_read_in_order() {
        let bare = r#"{"command": "str_replace", "path": "a.py", "old_str": "x", "new_str": "y"}"#;
        let read = commands(bare).unwrap().unwrap();
        assert_eq!(read[0].id, None);
        assert_eq!(
            read[0].kind,
            Kind::StrReplace {
                old: "x".into(),
                new: "y".into()
            }
        );
        let message = r#"{"role": "assistant", "content": [
            {"type": "text", "text": "I'll add it."},
            {"type": "tool_use", "id": "toolu_1", "name": "str_replace_based_edit_tool",
             "input": {"command": "insert", "path": "a.py", "insert_line": 2, "new_str": "z"}},
            {"type": "tool_use", "id": "toolu_2", "name": "str_replace_based_edit_tool",
             "input": {"command": "create", "path": "n.txt", "file_text": "hi\n"}}]}"#;
        let read = commands(message).unwrap().unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].id.as_deref(), Some("toolu_1"));
        assert_eq!(
            read[0].kind,
            Kind::Insert {
                line: 2,
                text: "z".into()
            }
        );
        assert_eq!(read[1].name(), "create");
        // Not ours: patch text, our own tool call, OpenAI's items, other JSON.
        assert_eq!(commands("--- a/x\n"), None);
        assert_eq!(commands(r#"{"patch": "x"}"#), None);
        assert_eq!(
            commands(r#"{"type": "apply_patch_call", "operation": {}}"#),
            None
        );
        assert_eq!(commands(r#"[{"type": "text", "text": "hi"}]"#), None);
    }

    #[test]
    fn what_is_not_an_edit_or_is_misspelt_is_refused() {
        let err = |t: &str| commands(t).unwrap().unwrap_err();
        assert!(err(r#"{"command": "view", "path": "a"}"#).contains("not an edit"));
        assert!(err(r#"{"command": "undo_edit", "path": "a"}"#).contains("no history"));
        assert!(
            err(r#"{"command": "str_replace", "path": "a", "old_string": "x"}"#)
                .contains("not `old_string`")
        );
        assert!(err(r#"{"command": "str_replace", "path": "a", "old_str": ""}"#).contains("empty"));
        assert!(
            err(r#"{"command": "insert", "path": "a", "insert_line": -1, "new_str": "x"}"#)
                .contains("no line number")
        );
        assert!(
            err(r#"{"command": "create", "path": "a\n*** Delete File: b", "file_text": ""}"#)
                .contains("line break")
        );
        assert!(
            err(r#"[{"command": "create", "path": "a", "file_text": ""}, {"patch": "x"}]"#)
                .contains("something else")
        );
        // Every other shape a command can get wrong.
        let tool_use = |fields: &str| format!(r#"{{"type": "tool_use", {fields}}}"#);
        let input = r#""input": {"command": "create", "path": "a", "file_text": ""}"#;
        assert!(err(&tool_use(&format!(r#""id": 7, {input}"#))).contains("`id` must be a string"));
        assert!(err(&tool_use(
            r#""id": "t", "input": {"command": "create"}, "name": "x""#
        ))
        .contains("needs a `path`"));
        assert!(err(r#"{"command": "create", "path": 3, "file_text": ""}"#)
            .contains("must be a string"));
        assert!(err(r#"{"command": "insert", "path": "a", "new_str": "x"}"#)
            .contains("needs `insert_line`"));
        assert!(
            err(r#"{"command": "insert", "path": "a", "insert_line": 1, "new_str": "x", "insert_text": "y"}"#)
                .contains("once")
        );
        assert!(err(r#"{"command": "str_replace", "path": "a"}"#).contains("needs `old_str`"));
        assert!(err(r#"{"command": "create", "path": "a"}"#).contains("needs `file_text`"));
    }

    #[test]
    fn rendering_keeps_each_string_verbatim_where_it_says() {
        let read = commands(
            r#"[{"command": "str_replace", "path": "a.py", "old_str": "x\n", "new_str": ""},
                {"command": "insert", "path": "b", "insert_line": 0, "new_str": "q"}]"#,
        )
        .unwrap()
        .unwrap();
        let (text, at) = render(&read);
        assert_eq!(
            text,
            "str_replace a.py\nold_str:\nx\n\nnew_str:\n\ninsert b\ninsert_line: 0\nnew_str:\nq\n"
        );
        assert_eq!(&text[at[0].old.unwrap().range()], "x\n");
        assert_eq!(&text[at[0].new.range()], "");
        assert_eq!(&text[at[0].path.range()], "a.py");
        assert_eq!(&text[at[1].new.range()], "q");
        assert_eq!(&text[at[1].header.range()], "insert b");
    }
}
