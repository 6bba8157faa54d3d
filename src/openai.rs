//! OpenAI's built-in `apply_patch` tool (Responses API, GPT-5.1 and
//! later): the `apply_patch_call` items of one reply — one item, a list of
//! them, or a bare `operation` — read as one codex patch, since a V4A
//! `diff` is the codex format's hunks without its envelope; and the
//! `apply_patch_call_output` items to send back. All operations of one
//! reply apply together, all or none, like the blocks of one patch.
//!
//! The envelope is built here, so nothing in an operation may stand for a
//! piece of it: a path with a line break, or a diff line that starts with
//! `*** ` (but `*** End of File`), would add an operation the model never
//! asked for, and is refused before anything is read.

use serde_json::{json, Map, Value};

use crate::Outcome;

/// One operation, and the call it came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The call's `call_id` (none for a bare operation).
    pub call_id: Option<String>,
    /// What it does.
    pub operation: Operation,
}

/// An `apply_patch` operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `create_file`: a new file, its lines given as a V4A diff of `+` lines.
    Create {
        /// The file to create.
        path: String,
        /// Its lines, each after a `+`.
        diff: String,
    },
    /// `update_file`: V4A hunks.
    Update {
        /// The file to update.
        path: String,
        /// The hunks.
        diff: String,
    },
    /// `delete_file`.
    Delete {
        /// The file to delete.
        path: String,
    },
}

impl Operation {
    /// The path it acts on.
    pub fn path(&self) -> &str {
        match self {
            Operation::Create { path, .. }
            | Operation::Update { path, .. }
            | Operation::Delete { path } => path,
        }
    }
}

/// The kinds of JSON object this module reads (`type`).
const TYPES: [&str; 4] = [
    "apply_patch_call",
    "create_file",
    "update_file",
    "delete_file",
];

/// `None` when `text` is no `apply_patch_call` JSON (patch text, or our own
/// tool-call object); otherwise its operations in order, or why they cannot
/// be applied.
pub fn calls(text: &str) -> Option<Result<Vec<Call>, String>> {
    let start = text.trim_start();
    if !(start.starts_with('{') || start.starts_with('[')) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let is_ours = |v: &Value| {
        v.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| TYPES.contains(&t))
    };
    let items = match value {
        Value::Array(items) if !items.is_empty() && items.iter().all(is_ours) => items,
        Value::Array(items) if items.iter().any(is_ours) => {
            return Some(Err(
                "a list of apply_patch_call items holds something else too".into(),
            ))
        }
        item if is_ours(&item) => vec![item],
        _ => return None,
    };
    Some(
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| call(i, item))
            .collect(),
    )
}

fn call(i: usize, item: Value) -> Result<Call, String> {
    let Value::Object(mut fields) = item else {
        return Err(format!("item {}: not an object", i + 1));
    };
    let what = |m: &str| format!("item {}: {m}", i + 1);
    let (call_id, op) = match fields.get("type").and_then(Value::as_str) {
        Some("apply_patch_call") => {
            let call_id = match fields.remove("call_id") {
                Some(Value::String(id)) => Some(id),
                None | Some(Value::Null) => None,
                Some(_) => return Err(what("`call_id` must be a string")),
            };
            match fields.remove("operation") {
                Some(Value::Object(op)) => (call_id, op),
                _ => return Err(what("an apply_patch_call needs its `operation` object")),
            }
        }
        _ => (None, fields),
    };
    Ok(Call {
        call_id,
        operation: operation(op).map_err(|m| what(&m))?,
    })
}

fn operation(mut op: Map<String, Value>) -> Result<Operation, String> {
    let mut text = |key: &str| match op.remove(key) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(format!("the operation needs a `{key}` string")),
    };
    let kind = text("type")?;
    let path = text("path")?;
    if path.contains(['\n', '\r']) {
        return Err(format!("the path {path:?} has a line break"));
    }
    let diff = match kind.as_str() {
        "create_file" | "update_file" => {
            let diff = text("diff")?;
            if let Some(line) = diff
                .lines()
                .find(|l| l.starts_with("*** ") && l.trim_end() != "*** End of File")
            {
                return Err(format!(
                    "the diff of `{path}` has the line `{line}`, which no V4A diff has \
                     (its lines start with ` `, `+`, `-` or `@@`)"
                ));
            }
            diff
        }
        "delete_file" => String::new(),
        other => return Err(format!("unknown operation type `{other}`")),
    };
    Ok(match kind.as_str() {
        "create_file" => Operation::Create { path, diff },
        "update_file" => Operation::Update { path, diff },
        _ => Operation::Delete { path },
    })
}

/// The operations as one codex patch.
pub fn to_codex(calls: &[Call]) -> String {
    let mut out = String::from("*** Begin Patch\n");
    let mut body = |diff: &str| {
        out.push_str(diff);
        if !diff.is_empty() && !diff.ends_with('\n') {
            out.push('\n');
        }
    };
    for call in calls {
        match &call.operation {
            Operation::Create { path, diff } => {
                body(&format!("*** Add File: {path}\n"));
                body(diff);
            }
            Operation::Update { path, diff } => {
                body(&format!("*** Update File: {path}\n"));
                body(diff);
            }
            Operation::Delete { path } => body(&format!("*** Delete File: {path}\n")),
        }
    }
    out.push_str("*** End Patch\n");
    out
}

/// The `apply_patch_call_output` items to send back, one per call (by its
/// `call_id`; a bare operation has none to answer). `completed` with what
/// was done; `failed` with the error a model can act on for the call it
/// names, and for the others why they were not applied either.
pub fn outputs(calls: &[Call], outcome: &Outcome) -> Value {
    let asked: Vec<(Option<&str>, &str)> = calls
        .iter()
        .map(|c| (c.call_id.as_deref(), c.operation.path()))
        .collect();
    let items = crate::replies::answers(&asked, outcome, "operation")
        .into_iter()
        .map(|(call_id, answer)| {
            let (status, output) = match answer {
                Ok(done) => ("completed", done),
                Err(why) => ("failed", why),
            };
            json!({
                "type": "apply_patch_call_output",
                "call_id": call_id,
                "status": status,
                "output": output,
            })
        })
        .collect();
    Value::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_lists_and_bare_operations_are_read_in_order() {
        let one = r#"{"type": "apply_patch_call", "call_id": "c1", "status": "completed", "id": "apc_1",
                      "operation": {"type": "update_file", "path": "a.py", "diff": "@@\n-x\n+y"}}"#;
        let read = calls(one).unwrap().unwrap();
        assert_eq!(read[0].call_id.as_deref(), Some("c1"));
        assert_eq!(
            to_codex(&read),
            "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n"
        );
        let list = r#"[{"type": "apply_patch_call", "call_id": "c1", "operation": {"type": "create_file", "path": "n.txt", "diff": "+hi\n"}},
                       {"type": "apply_patch_call", "call_id": "c2", "operation": {"type": "delete_file", "path": "old.txt"}}]"#;
        let codex = to_codex(&calls(list).unwrap().unwrap());
        assert_eq!(
            codex,
            "*** Begin Patch\n*** Add File: n.txt\n+hi\n*** Delete File: old.txt\n*** End Patch\n"
        );
        let bare = r#"{"type": "delete_file", "path": "x"}"#;
        assert_eq!(calls(bare).unwrap().unwrap()[0].call_id, None);
        // Not ours: patch text, our own tool call, other JSON.
        assert_eq!(calls("--- a/x\n"), None);
        assert_eq!(calls(r#"{"patch": "x"}"#), None);
        assert_eq!(calls("[1, 2]"), None);
    }

    /// Nothing in an operation can stand for a piece of the envelope.
    #[test]
    fn an_operation_cannot_smuggle_in_another() {
        let err = |t: &str| calls(t).unwrap().unwrap_err();
        let smuggled =
            r#"{"type": "update_file", "path": "a", "diff": "@@\n-x\n+y\n*** Delete File: b\n"}"#;
        assert!(err(smuggled).contains("no V4A diff has"));
        let path = r#"{"type": "delete_file", "path": "a\n*** Delete File: b"}"#;
        assert!(err(path).contains("line break"));
        let eof =
            r#"{"type": "update_file", "path": "a", "diff": "@@\n-x\n+y\n*** End of File\n"}"#;
        assert!(calls(eof).unwrap().is_ok());
        assert!(err(r#"{"type": "update_file", "path": "a"}"#).contains("`diff`"));
        assert!(
            err(r#"{"type": "apply_patch_call", "call_id": 3, "operation": {}}"#)
                .contains("call_id")
        );
        assert!(
            err(r#"[{"type": "delete_file", "path": "a"}, {"patch": "x"}]"#)
                .contains("something else")
        );
        let renamed =
            r#"{"type": "apply_patch_call", "operation": {"type": "rename_file", "path": "a"}}"#;
        assert!(err(renamed).contains("unknown operation type `rename_file`"));
    }
}
