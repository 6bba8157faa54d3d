//! Tool-call payloads: the JSON object an agent runtime hands over when a
//! model calls a patch tool (`{"patch": "...", "format": "...", "dry_run":
//! true}`, and optionally `tolerant` and `diff`), accepted wherever patch
//! text is. No patch format starts with
//! `{`, so the two never collide.

use serde_json::{Map, Value};

/// The fields of a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The patch text.
    pub patch: String,
    /// `format`, if given.
    pub format: Option<String>,
    /// `dry_run`, if given.
    pub dry_run: Option<bool>,
    /// `tolerant` (ap's tolerant mode), if given.
    pub tolerant: Option<bool>,
    /// `diff` (each file's review diff in the result), if given.
    pub diff: Option<bool>,
}

/// `None` when `text` is patch text; otherwise the tool call it holds, or
/// why it is not a valid one. Unknown keys are refused: a misspelt
/// `dry_run` must not turn into a write.
pub fn tool_call(text: &str) -> Option<Result<ToolCall, String>> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    Some(parse(text))
}

/// Parsed from the bytes `text` stands for: JSON is Unicode text, whose
/// strings [`from_fields`] reads as such.
fn parse(text: &str) -> Result<ToolCall, String> {
    let value: Value = serde_json::from_slice(&crate::lossless::encode(text))
        .map_err(|e| format!("the JSON tool call does not parse: {e}"))?;
    let Value::Object(fields) = value else {
        return Err("a JSON tool call is an object".into());
    };
    from_fields(fields)
}

/// The tool call in a JSON object's fields (also an MCP tool's arguments).
/// The patch is Unicode text (`lossless::from_text`).
pub fn from_fields(fields: Map<String, Value>) -> Result<ToolCall, String> {
    let mut call = ToolCall {
        patch: String::new(),
        format: None,
        dry_run: None,
        tolerant: None,
        diff: None,
    };
    let mut has_patch = false;
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("patch", Value::String(s)) => {
                call.patch = crate::lossless::from_text(s);
                has_patch = true;
            }
            ("format", Value::String(s)) => call.format = Some(s),
            ("format" | "dry_run" | "tolerant" | "diff", Value::Null) => {}
            ("dry_run", Value::Bool(b)) => call.dry_run = Some(b),
            ("tolerant", Value::Bool(b)) => call.tolerant = Some(b),
            ("diff", Value::Bool(b)) => call.diff = Some(b),
            ("patch" | "format", _) => return Err(format!("`{key}` must be a string")),
            ("dry_run" | "tolerant" | "diff", _) => {
                return Err(format!("`{key}` must be true or false"))
            }
            (other, _) => {
                return Err(format!(
                    "unknown key `{other}` in the JSON tool call (expected `patch`, `format`, `dry_run`, `tolerant`, `diff`)"
                ))
            }
        }
    }
    if !has_patch {
        return Err("the JSON tool call has no `patch` string".into());
    }
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_recognised_and_checked() {
        assert_eq!(tool_call("--- a/x\n"), None);
        let call = tool_call(r#" {"patch": "PATCHSET\n", "format": "repopatch", "dry_run": true}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            call,
            ToolCall {
                patch: "PATCHSET\n".into(),
                format: Some("repopatch".into()),
                dry_run: Some(true),
                tolerant: None,
                diff: None,
            }
        );
        let call = tool_call(r#"{"patch": "x", "tolerant": true, "diff": false}"#)
            .unwrap()
            .unwrap();
        assert_eq!((call.tolerant, call.diff), (Some(true), Some(false)));
        let err = |t: &str| tool_call(t).unwrap().unwrap_err();
        assert!(err(r#"{"patch": "x", "dryrun": true}"#).contains("unknown key `dryrun`"));
        assert!(err(r#"{"format": "udiff"}"#).contains("no `patch`"));
        assert!(err(r#"{"patch": 3}"#).contains("must be a string"));
        assert!(err(r#"{"patch": "x", "dry_run": "yes"}"#).contains("true or false"));
        assert!(
            err(r#"{"patch": "x", "tolerant": 1}"#).contains("`tolerant` must be true or false")
        );
        assert!(err("{patch: x}").contains("does not parse"));
        assert_eq!(tool_call("[1]"), None);
    }
}
