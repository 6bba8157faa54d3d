//! Diagnostics as data: a stable [`Code`], a severity, a span into the patch
//! text, and the help a model needs to repair the patch. Rendering them is
//! `diagnostics.rs`'s job; this file knows nothing about terminals or JSON.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::ir::Span;

/// A stable diagnostic code. Codes are never renamed or reused; a retired
/// code stays here marked **DEPRECATED**.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Code {
    // ---- errors ----
    /// Occurs when the text does not match the format's grammar.
    SyntaxError,
    /// Occurs when `--format auto` cannot tell which format a patch is in.
    UnknownFormat,
    /// Occurs when a udiff hunk has no `---`/`+++` pair in front of it.
    MissingFileHeader,
    /// Occurs when a udiff line starting with `@@` is not `@@ -l[,s] +l[,s] @@`.
    InvalidHunkHeader,
    /// Occurs when a hunk's body cannot do what its file operation needs
    /// (a new file with context lines, a hunk with no lines).
    InvalidHunkBody,
    /// Occurs for binary deltas, `Binary files differ`, copies and submodules.
    UnsupportedGitPatchFeature,
    /// Occurs when a path resolves outside the root.
    PathEscape,
    /// Occurs when the same normalised path is patched twice in one patch.
    DuplicateFilePatch,
    /// Occurs when `rename from`/`rename to` disagree with `---`/`+++`, or the
    /// two header paths of a plain diff differ.
    RenamePathMismatch,
    /// Occurs when a file to update, delete or rename is missing.
    FileNotFound,
    /// Occurs when a file to create already exists with different content.
    FileExists,
    /// Occurs when an old block, anchor or hunk body has no match.
    ContextNotFound,
    /// Occurs when an old block has several matches and the format forbids guessing.
    AmbiguousContext,
    /// Occurs when two hunks of one file claim overlapping lines.
    OverlappingHunks,
    /// Occurs when an ap directive carries another patch ID.
    IdMismatch,
    /// Occurs when a target is not a regular file, is 4 GiB or larger, or
    /// has a name that is not UTF-8.
    UnsupportedFile,
    /// Occurs when reading or writing the tree fails.
    IoError,
    /// Occurs when another process changed a target between our reading and
    /// writing it; the apply was rolled back.
    TargetChanged,
    /// Occurs when another apply held the root's lock for longer than the wait.
    RootBusy,
    /// Occurs when the command itself is wrong: an unknown option or
    /// format, an unreadable patch file, a malformed JSON tool call.
    UsageError,
    /// Occurs when recovering an interrupted apply finds a path changed
    /// since the crash: recovery stops there and keeps it.
    RecoveryConflict,
    /// Occurs when the caller cancelled the call (MCP's
    /// `notifications/cancelled`) before it wrote anything.
    Cancelled,
    // ---- warnings ----
    /// Occurs when a hunk header's counts disagree with its body.
    HunkCountMismatch,
    /// Occurs when a hunk matched away from the line its header names.
    LineHintDrift,
    /// Occurs when a block matched only with whitespace relaxed.
    WhitespaceFuzz,
    /// Occurs when a markdown code fence around the patch was removed.
    MarkdownFenceStripped,
    /// Occurs when git metadata (index, modes) was accepted and ignored.
    IgnoredMetadata,
    /// Occurs when a CRLF patch text was read as LF.
    CrlfPatchNormalized,
    /// Occurs when blank lines before or after the patch were removed.
    BlankLinesStripped,
    /// Occurs when empty lines after a hunk, beyond its header's count, were
    /// read as a separator rather than as blank context.
    TrailingBlankContextDropped,
    /// Occurs when a RepoPatch blank line is written without its block's
    /// prefix (`-`, `.`, an empty line, or the other block's prefix) and is
    /// read as a blank line of the block it stands in.
    BlankLinePrefix,
    /// Occurs when prose before the patch, or after its closing fence, was removed.
    SurroundingTextStripped,
    /// Occurs when an edit or a file operation found its result already in
    /// place (ap §3.1) and was skipped.
    AlreadyApplied,
    /// Occurs when a block's first line matched only after a prefix in the
    /// file: numbering, a bullet, a comment marker (ap §3.6 soft start).
    SoftStartMatch,
    /// Occurs when an ap `snippet_tail` that is the snippet's own end, or
    /// the new content, was read as the snippet alone.
    RangeAutoCorrected,
    /// Occurs when an ap anchor matched several places and the one followed
    /// by the snippet was taken.
    AnchorDisambiguated,
    /// Occurs when an ap file block with only `content` was read as `CREATE`.
    ImplicitCreate,
    /// Occurs when an ap 3.2 `REPLACE` with empty `content` was read as `DELETE`.
    EmptyContentAsDelete,
    /// Occurs when ap's `scope_end` was ignored because the region's last
    /// line opens no block.
    ScopeEndIgnored,
    /// Occurs when tolerant mode moved an insertion of a top-level
    /// declaration past the block its snippet opens (ap 3.2 nesting guard).
    NestingGuardMoved,
    /// Occurs when a file's brackets balanced before the patch and not after.
    UnbalancedBrackets,
    /// Occurs when a slip in the patch's form was forgiven: in ap's tolerant
    /// mode a drifted ID, a comment, a missing header, a project prefix on a
    /// path; ap 3.2 content with its indentation dropped, indented as its
    /// target; in codex a unified diff's hunk header read as a line hint.
    ToleratedFormatSlip,
    /// Occurs when a codex `@@` header is not in the file and the hunk,
    /// matching exactly once in the whole file without it, is placed there.
    AnchorIgnored,
    /// Occurs when an interrupted apply was found in the root and rolled back
    /// before this run.
    Recovered,
    /// Occurs when a journal cannot be proved to be one this tool wrote for
    /// this root (a journal inside a tree, another owner, other links):
    /// it is never replayed.
    UntrustedJournal,
    /// Occurs when a run that writes nothing (lint, a dry run) finds an
    /// interrupted apply: it reads the tree as it is and does not recover.
    InterruptedApply,
}

impl Code {
    /// Every code, in the order of the README table.
    pub const ALL: &'static [Code] = &[
        Code::SyntaxError,
        Code::UnknownFormat,
        Code::MissingFileHeader,
        Code::InvalidHunkHeader,
        Code::InvalidHunkBody,
        Code::UnsupportedGitPatchFeature,
        Code::PathEscape,
        Code::DuplicateFilePatch,
        Code::RenamePathMismatch,
        Code::FileNotFound,
        Code::FileExists,
        Code::ContextNotFound,
        Code::AmbiguousContext,
        Code::OverlappingHunks,
        Code::IdMismatch,
        Code::UnsupportedFile,
        Code::IoError,
        Code::TargetChanged,
        Code::RootBusy,
        Code::UsageError,
        Code::RecoveryConflict,
        Code::Cancelled,
        Code::HunkCountMismatch,
        Code::LineHintDrift,
        Code::WhitespaceFuzz,
        Code::MarkdownFenceStripped,
        Code::IgnoredMetadata,
        Code::CrlfPatchNormalized,
        Code::BlankLinesStripped,
        Code::TrailingBlankContextDropped,
        Code::BlankLinePrefix,
        Code::SurroundingTextStripped,
        Code::AlreadyApplied,
        Code::SoftStartMatch,
        Code::RangeAutoCorrected,
        Code::AnchorDisambiguated,
        Code::ImplicitCreate,
        Code::EmptyContentAsDelete,
        Code::ScopeEndIgnored,
        Code::NestingGuardMoved,
        Code::UnbalancedBrackets,
        Code::ToleratedFormatSlip,
        Code::AnchorIgnored,
        Code::Recovered,
        Code::UntrustedJournal,
        Code::InterruptedApply,
    ];

    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::SyntaxError => "syntax_error",
            Code::UnknownFormat => "unknown_format",
            Code::MissingFileHeader => "missing_file_header",
            Code::InvalidHunkHeader => "invalid_hunk_header",
            Code::InvalidHunkBody => "invalid_hunk_body",
            Code::UnsupportedGitPatchFeature => "unsupported_git_patch_feature",
            Code::PathEscape => "path_escape",
            Code::DuplicateFilePatch => "duplicate_file_patch",
            Code::RenamePathMismatch => "rename_path_mismatch",
            Code::FileNotFound => "file_not_found",
            Code::FileExists => "file_exists",
            Code::ContextNotFound => "context_not_found",
            Code::AmbiguousContext => "ambiguous_context",
            Code::OverlappingHunks => "overlapping_hunks",
            Code::IdMismatch => "id_mismatch",
            Code::UnsupportedFile => "unsupported_file",
            Code::IoError => "io_error",
            Code::TargetChanged => "target_changed",
            Code::RootBusy => "root_busy",
            Code::UsageError => "usage_error",
            Code::HunkCountMismatch => "hunk_count_mismatch",
            Code::LineHintDrift => "line_hint_drift",
            Code::WhitespaceFuzz => "whitespace_fuzz",
            Code::MarkdownFenceStripped => "markdown_fence_stripped",
            Code::IgnoredMetadata => "ignored_metadata",
            Code::CrlfPatchNormalized => "crlf_patch_normalized",
            Code::BlankLinesStripped => "blank_lines_stripped",
            Code::TrailingBlankContextDropped => "trailing_blank_context_dropped",
            Code::BlankLinePrefix => "blank_line_prefix",
            Code::SurroundingTextStripped => "surrounding_text_stripped",
            Code::AlreadyApplied => "already_applied",
            Code::SoftStartMatch => "soft_start_match",
            Code::RangeAutoCorrected => "range_auto_corrected",
            Code::AnchorDisambiguated => "anchor_disambiguated",
            Code::ImplicitCreate => "implicit_create",
            Code::EmptyContentAsDelete => "empty_content_as_delete",
            Code::ScopeEndIgnored => "scope_end_ignored",
            Code::NestingGuardMoved => "nesting_guard_moved",
            Code::UnbalancedBrackets => "unbalanced_brackets",
            Code::ToleratedFormatSlip => "tolerated_format_slip",
            Code::AnchorIgnored => "anchor_ignored",
            Code::Recovered => "recovered",
            Code::UntrustedJournal => "untrusted_journal",
            Code::InterruptedApply => "interrupted_apply",
            Code::RecoveryConflict => "recovery_conflict",
            Code::Cancelled => "cancelled",
        }
    }

    /// Warnings never stop a patch; every other code rejects it.
    pub fn severity(self) -> Severity {
        match self {
            Code::HunkCountMismatch
            | Code::LineHintDrift
            | Code::WhitespaceFuzz
            | Code::MarkdownFenceStripped
            | Code::IgnoredMetadata
            | Code::CrlfPatchNormalized
            | Code::BlankLinesStripped
            | Code::TrailingBlankContextDropped
            | Code::BlankLinePrefix
            | Code::SurroundingTextStripped
            | Code::AlreadyApplied
            | Code::SoftStartMatch
            | Code::RangeAutoCorrected
            | Code::AnchorDisambiguated
            | Code::ImplicitCreate
            | Code::EmptyContentAsDelete
            | Code::ScopeEndIgnored
            | Code::NestingGuardMoved
            | Code::UnbalancedBrackets
            | Code::ToleratedFormatSlip
            | Code::AnchorIgnored
            | Code::Recovered
            | Code::UntrustedJournal
            | Code::InterruptedApply => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure already reported as a diagnostic: the value of a step that
/// could not be taken (`Result<T, Reported>`). Nothing else signals one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported;

/// Whether a diagnostic stops the patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The patch applies; this is worth knowing.
    Warning,
    /// The patch is refused.
    Error,
}

/// A span in a target file (not the patch), shown beside the patch span:
/// "the nearest text in src/main.rs is here".
#[derive(Debug, Clone)]
pub struct TargetLabel {
    /// The target file.
    pub path: String,
    /// The whole target text, shared between the diagnostics that point into it.
    pub text: TargetText,
    /// Where in `text`.
    pub span: Span,
    /// What the place is.
    pub message: String,
}

/// A target file's whole text, shared by the labels that point into it.
/// Labels are made while the search borrows the text; its owner then hands
/// the text itself over ([`TargetText::hand_over`]), so a failure on a
/// large file does not copy it. Until then it reads as empty.
#[derive(Debug, Clone, Default)]
pub struct TargetText(Arc<OnceLock<String>>);

impl TargetText {
    /// The text; empty before it was handed over.
    pub fn as_str(&self) -> &str {
        self.0.get().map_or("", String::as_str)
    }

    /// One identity per text, for grouping the labels that share it.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Whether a label holds this text (a clone of it is alive).
    fn is_held(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }

    /// Gives the labels `text`, the text they point into, where one
    /// holds it; else lets it go.
    pub fn hand_over(&self, text: String) {
        if self.is_held() {
            let _ = self.0.set(text);
        }
    }

    /// Gives the labels a copy of `text`, which its owner keeps (a
    /// warning's labels, when the edit goes on), where one holds it.
    pub fn copy(&self, text: &str) {
        if self.is_held() {
            let _ = self.0.set(text.to_owned());
        }
    }
}

/// One problem (or warning) with everything needed to render it.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// The code's severity.
    pub severity: Severity,
    /// One line on what is wrong.
    pub message: String,
    /// Where in the patch text; `None` for problems with no place in it.
    pub span: Option<Span>,
    /// The label under the primary span.
    pub label: String,
    /// Other places in the patch ("first patched here").
    pub secondary: Vec<(Span, String)>,
    /// Places in target files.
    pub targets: Vec<TargetLabel>,
    /// The target file path this is about, if any.
    pub path: Option<String>,
    /// Further facts: candidates, the differing line.
    pub notes: Vec<String>,
    /// What would be valid, said so a model can act on it.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with `code` and `message`, nowhere yet.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            span: None,
            label: String::new(),
            secondary: vec![],
            targets: vec![],
            path: None,
            notes: vec![],
            hint: None,
        }
    }

    /// Places it at `span` of the patch, labelled.
    pub fn at(mut self, span: Span, label: impl Into<String>) -> Self {
        self.span = Some(span);
        self.label = label.into();
        self
    }

    /// Adds another labelled place in the patch.
    pub fn secondary(mut self, span: Span, label: impl Into<String>) -> Self {
        self.secondary.push((span, label.into()));
        self
    }

    /// Adds a labelled place in a target file.
    pub fn target(mut self, target: TargetLabel) -> Self {
        self.targets.push(target);
        self
    }

    /// Names the target file it is about.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Sets the hint: what to do.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Whether it stops the patch.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Errors first (by position), then warnings (by position).
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| (std::cmp::Reverse(d.severity), d.span.map(|s| s.start)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A label made before the text is handed over reads that very text
    /// (the same bytes, not a copy) once it is; a text no label holds is
    /// let go; a copy leaves the owner its text.
    #[test]
    fn labels_take_the_text_handed_over_without_a_copy() {
        let owner = TargetText::default();
        let label = owner.clone();
        assert_eq!(label.as_str(), "");
        let text = "fn main() {}\n".repeat(100);
        let bytes = text.as_ptr();
        owner.hand_over(text);
        assert_eq!(label.as_str().as_ptr(), bytes);
        assert_eq!(label.id(), owner.id());

        let unheld = TargetText::default();
        unheld.hand_over("nobody points here".to_string());
        assert_eq!(unheld.as_str(), "");

        let owner = TargetText::default();
        let label = owner.clone();
        let kept = String::from("kept\n");
        owner.copy(&kept);
        assert_eq!(label.as_str(), kept);
        assert_ne!(label.as_str().as_ptr(), kept.as_ptr());
    }
}
