//! What a patch says, read without a tree (`parse` in the library and in
//! Python, `lint --stat` without a root): each file, what happens to it,
//! its hunks and their lines, as the format's lowering gives them. What
//! the same patch does to a tree is the result's `files`, which counts the
//! lines actually written.

use serde::Serialize;

use crate::error::Diagnostic;
use crate::formats::{self, Format};
use crate::ir::{Action, Edit, FileOp, NewLine};
use crate::{unwrap, Options};

/// A patch as read: its format, its files, and what reading it found (the
/// errors that refuse it, or warnings).
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The format, given or detected; `None` when unknown.
    pub format: Option<Format>,
    /// Each file operation, in the patch's order; empty when it is refused.
    pub files: Vec<ParsedFile>,
    /// Warnings, and the errors that refuse the patch.
    pub diagnostics: Vec<Diagnostic>,
    /// The patch text the diagnostics' spans index into.
    pub text: String,
}

impl Parsed {
    /// Whether the patch reads without an error.
    pub fn ok(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParsedFile {
    /// The path it acts on (a move's source).
    pub path: String,
    /// `add`, `modify`, `delete`, `rename`, `create_dir` or `remove`.
    pub operation: &'static str,
    /// A move's destination.
    pub to: Option<String>,
    /// Lines the patch adds.
    pub added: usize,
    /// Lines the patch removes; `None` for a deletion that does not state
    /// the content it deletes (codex `*** Delete File`, ap `DELETE`).
    pub removed: Option<usize>,
    /// Each block of change, in order.
    pub hunks: Vec<ParsedHunk>,
}

/// One block of change: lines it removes, adds and keeps around them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ParsedHunk {
    /// The 1-based line of the patch it starts on.
    pub patch_line: usize,
    /// Lines removed.
    pub removed: usize,
    /// Lines added.
    pub added: usize,
    /// Lines kept (context).
    pub context: usize,
}

/// Reads `patch` in `format` (`None`: detect it), as a lint without a
/// tree does, and says what it holds.
pub fn parse(patch: impl Into<String>, format: Option<Format>, options: Options) -> Parsed {
    let unwrapped = unwrap::unwrap(patch.into());
    let Some(format) = format.or_else(|| formats::detect(unwrapped.body())) else {
        // Unknown: the pipeline's own refusal, with its notes.
        let outcome = crate::run_unwrapped(
            unwrapped,
            None,
            crate::Mode::Lint,
            None,
            None,
            options,
            &|| true,
        );
        return Parsed {
            format: None,
            files: vec![],
            diagnostics: outcome.diagnostics,
            text: outcome.text,
        };
    };
    let mut diagnostics = unwrapped.warnings.clone();
    let store = bumpalo::Bump::new();
    let text = &unwrapped.text;
    let files = match formats::parse_to(format, text, &store, unwrapped.body, options, false) {
        Ok((patch, mut warnings)) => {
            diagnostics.append(&mut warnings);
            let ends: Vec<usize> = crate::newlines::newlines(text.as_bytes()).collect();
            let line = |offset: usize| ends.partition_point(|&e| e < offset) + 1;
            patch.files.iter().map(|op| file(op, &line)).collect()
        }
        Err(mut errors) => {
            diagnostics.append(&mut errors);
            vec![]
        }
    };
    crate::error::sort(&mut diagnostics);
    Parsed {
        format: Some(format),
        files,
        diagnostics,
        text: unwrapped.text,
    }
}

fn file(op: &FileOp, line: &dyn Fn(usize) -> usize) -> ParsedFile {
    let hunks = |edits: &[Edit]| edits.iter().map(|e| hunk(e, line)).collect::<Vec<_>>();
    let (operation, to, hunks, content, removed_all) = match &op.action {
        Action::Add { content, edits, .. } => {
            ("add", None, hunks(edits), content.lines.len(), false)
        }
        Action::Delete {
            expect: Some(edits),
        } => ("delete", None, hunks(edits), 0, false),
        Action::Delete { expect: None } | Action::Remove => {
            let operation = if matches!(op.action, Action::Remove) {
                "remove"
            } else {
                "delete"
            };
            (operation, None, vec![], 0, true)
        }
        Action::Modify { edits, move_to } => {
            let operation = if move_to.is_some() {
                "rename"
            } else {
                "modify"
            };
            (operation, move_to.as_ref(), hunks(edits), 0, false)
        }
        Action::CreateDir => ("create_dir", None, vec![], 0, false),
        Action::Rename { to } => ("rename", Some(to), vec![], 0, false),
    };
    let added = content + hunks.iter().map(|h| h.added).sum::<usize>();
    let removed = (!removed_all).then(|| hunks.iter().map(|h| h.removed).sum());
    ParsedFile {
        path: op.path.text.clone(),
        operation,
        to: to.map(|t| t.text.clone()),
        added,
        removed,
        hunks,
    }
}

fn hunk(edit: &Edit, line: &dyn Fn(usize) -> usize) -> ParsedHunk {
    let (mut added, mut context) = (0, 0);
    for n in edit.new {
        match *n {
            NewLine::Keep(_, count) => context += count as usize,
            NewLine::Add(_) => added += 1,
        }
    }
    ParsedHunk {
        patch_line: line(edit.span.start),
        removed: edit.old.len().saturating_sub(context),
        added,
        context,
    }
}

/// The JSON of a [`Parsed`]: `ok`, `format`, `error` (when refused, as in
/// a result), `files` and `diagnostics`.
pub fn to_value(parsed: &Parsed) -> serde_json::Value {
    let outcome = crate::Outcome {
        format: parsed.format,
        mode: crate::Mode::Lint,
        text: parsed.text.clone(),
        files: vec![],
        diagnostics: parsed.diagnostics.clone(),
        ignored_metadata: vec![],
        calls: vec![],
        commands: vec![],
        converted: None,
    };
    let mut value = crate::report::to_value(&outcome);
    if let Some(map) = value.as_object_mut() {
        map.remove("dry_run");
        map.remove("ignored_metadata");
        map.insert("files".into(), serde_json::json!(parsed.files));
    }
    value
}
