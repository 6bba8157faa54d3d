//! The shared model every format lowers into, and the only thing the
//! validator and the applier see. It never depends on pest: a format module
//! turns its parse tree into these types and nothing else.
//!
//! A [`Patch`] is a list of [`FileOp`]s. A file op that edits text carries
//! [`Edit`]s; an edit is "this old block becomes this new block", located by
//! a [`Locator`] (line hint, anchor, end-of-file, matching policy, uniqueness
//! rule). Every piece carries a [`Span`] back into the patch text so that a
//! diagnostic can underline it.

use std::borrow::Cow;

/// A byte range in the (unwrapped) patch text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The line of `text` starting at `start`, without its `\n`.
    pub fn line_at(text: &str, start: usize) -> Span {
        Span::new(
            start,
            text[start..].find('\n').map_or(text.len(), |i| start + i),
        )
    }

    /// The line whose `\n` ends just before `end` (the first line when
    /// `end` is 0), without that `\n`.
    pub fn line_before(text: &str, end: usize) -> Span {
        let stop = end.saturating_sub(1);
        Span::new(text[..stop].rfind('\n').map_or(0, |i| i + 1), stop)
    }
}

/// A whole patch, in any format.
#[derive(Debug, Clone, Default)]
pub struct Patch<'a> {
    pub files: Vec<FileOp<'a>>,
    /// Metadata lines accepted and ignored (udiff `index`, modes), verbatim.
    pub ignored_metadata: Vec<String>,
    /// Whether a lone `\r` ends a line in the target files, as Codex reads
    /// them; udiff follows git, where only `\n` does.
    pub lone_cr_breaks: bool,
    /// How this format phrases the fixes the applier suggests.
    pub advice: Advice,
    /// Whether a file's edits apply one after the other, each located in
    /// the file as the previous ones left it (RepoPatch, ap), rather than
    /// all located in the original file (udiff, codex).
    pub sequential: bool,
    /// ap tolerant mode: a path whose first component is not in the root,
    /// while the rest is, is read without that component (3.2).
    pub strip_project_prefix: bool,
}

/// The fixes the applier suggests, in a format's own words.
#[derive(Debug, Clone, Copy)]
pub struct Advice {
    /// What the format calls an edit's old block.
    pub block: &'static str,
    /// How to make an ambiguous block match once.
    pub disambiguate: &'static str,
    /// How to create a file instead of editing it.
    pub create: &'static str,
    /// How to edit a file instead of creating it.
    pub update: &'static str,
}

impl Default for Advice {
    fn default() -> Self {
        Advice {
            block: "hunk context",
            disambiguate: "add context lines that occur only near the intended place",
            create: "create it as a new file instead",
            update: "edit the existing file instead of creating it",
        }
    }
}

/// A path exactly as the patch names it (after a format's own prefix rules,
/// such as udiff's `a/`/`b/`), not yet resolved against a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRef {
    pub text: String,
    pub span: Span,
}

/// What to do to one path.
#[derive(Debug, Clone)]
pub struct FileOp<'a> {
    pub path: PathRef,
    pub action: Action<'a>,
    pub span: Span,
    /// What git's mode lines say the file is: after an add or a modify
    /// (`new file mode`, `new mode`), or before a delete (`deleted file
    /// mode`). `None`: whatever it is (a new file is a plain file).
    pub mode: Option<GitMode>,
    /// What git says the file was (`old mode`, `deleted file mode`, the
    /// mode at the end of an `index` line), and that line: checked, and a
    /// warning where the file differs (as `git apply` does).
    pub old_mode: Option<(GitMode, Span)>,
}

/// A file's kind and executable bit, as git's modes (`100644`, `100755`,
/// `120000`) state them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitMode {
    File,
    Executable,
    Symlink,
}

#[derive(Debug, Clone)]
pub enum Action<'a> {
    /// Create a file with this content. Creating a file that exists with the
    /// same content is a no-op; with other content it is `file_exists`.
    Add { content: NewText<'a> },
    /// Delete a file. With `expect`, the edits state what is deleted:
    /// applied to the file they must leave it empty (udiff). Without, the
    /// file goes whatever it holds (codex `*** Delete File:`).
    Delete { expect: Option<Vec<Edit<'a>>> },
    /// Edit a file in place, then optionally move it.
    Modify {
        edits: Vec<Edit<'a>>,
        move_to: Option<PathRef>,
    },
    /// Create a directory (and its parents).
    CreateDir,
    /// ap: rewrite a file by modifications found with ap's normalised
    /// search, one after the other (see `apply/locate.rs`).
    Rewrite(Box<Rewrite<'a>>),
    /// ap `RENAME`: move a file or a directory. Done already (the source
    /// is gone and the destination exists) is `unchanged`.
    Rename { to: PathRef },
    /// ap file-level `DELETE`: remove a file or a directory with all it
    /// holds. Already gone is `unchanged`.
    Remove,
}

/// An ap file block: where its text starts, and the modifications.
#[derive(Debug, Clone)]
pub struct Rewrite<'a> {
    pub base: Base<'a>,
    pub mods: Vec<Modification<'a>>,
    /// The `FILE` newline option: every line of the written file gets it.
    pub eol: Option<Eol>,
    /// 3.1 §3.5 strips trailing whitespace from every line of a written
    /// file; 3.2 only from the inserted content (which lowering strips).
    pub strip_whole_file: bool,
    /// 3.2 §3.6: a top-level declaration inserted after a line that opens
    /// a block is refused (or, tolerant, moved past the block). 3.1 has no
    /// such rule and inserts where the snippet is.
    pub nesting_guard: bool,
    /// Tolerant mode (`--tolerant`): the nesting guard moves an insertion
    /// instead of refusing it.
    pub tolerant: bool,
}

/// The text an ap file block's modifications start from.
#[derive(Debug, Clone)]
pub enum Base<'a> {
    /// The file as it is on disk.
    Existing,
    /// `CREATE` with `content`: a new file (or an identical existing one).
    Create(Vec<Line<'a>>),
    /// `RECREATE`: this text, whatever the file held (created if missing).
    Recreate(Vec<Line<'a>>),
}

/// A line ending the patch asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    Crlf,
    Cr,
}

impl Eol {
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::Crlf => "\r\n",
            Eol::Cr => "\r",
        }
    }
}

/// What an ap modification does at the place it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModKind {
    Replace,
    InsertBefore,
    InsertAfter,
    Delete,
}

impl ModKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ModKind::Replace => "REPLACE",
            ModKind::InsertBefore => "INSERT_BEFORE",
            ModKind::InsertAfter => "INSERT_AFTER",
            ModKind::Delete => "DELETE",
        }
    }
}

/// An ap locator value: lines to find, or a file boundary (3.2 `^`, `$`).
#[derive(Debug, Clone)]
pub enum Target<'a> {
    Lines(Vec<Line<'a>>),
    Start,
    End,
}

/// One ap modification, as the patch states it.
#[derive(Debug, Clone)]
pub struct Modification<'a> {
    pub kind: ModKind,
    pub anchor: Option<Vec<Line<'a>>>,
    pub snippet: Target<'a>,
    /// `snippet_tail`: the region runs to the end of its first match after the snippet.
    pub tail: Option<Target<'a>>,
    /// Trailing whitespace already stripped.
    pub content: Vec<Line<'a>>,
    pub leading_blank: usize,
    pub trailing_blank: usize,
    pub scope_end: bool,
    /// The action directive, for diagnostics.
    pub span: Span,
}

/// The text of a new file.
#[derive(Debug, Clone, Default)]
pub struct NewText<'a> {
    pub lines: Vec<Line<'a>>,
    /// Whether the last line ends with a newline.
    pub final_newline: bool,
}

/// One line of patch content, without its line end. Borrowed from the
/// patch text unless lowering had to change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    pub text: Cow<'a, str>,
    pub span: Span,
}

impl<'a> Line<'a> {
    /// Lines with no place in a patch, for tests that build edits by hand.
    #[cfg(test)]
    pub(crate) fn unplaced(texts: &[&'a str]) -> Vec<Line<'a>> {
        texts
            .iter()
            .map(|t| Line {
                text: (*t).into(),
                span: Span::default(),
            })
            .collect()
    }
}

/// A line of an edit's new block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewLine<'a> {
    /// Keep old line `i` of the same edit, with the file's own text (which,
    /// after a relaxed match, may differ from the patch's in whitespace).
    Keep(usize),
    /// A line the patch adds.
    Add(Line<'a>),
}

/// "This old block becomes this new block", somewhere the locator finds.
#[derive(Debug, Clone)]
pub struct Edit<'a> {
    pub old: Vec<Line<'a>>,
    pub new: Vec<NewLine<'a>>,
    /// The old block's last line has no newline (udiff `\ No newline`).
    pub old_no_eol: bool,
    /// The new block's last line has no newline.
    pub new_no_eol: bool,
    /// Added lines carry their own line end: a `\r` kept at the end of
    /// their text, and `\n` after it. A diff made by a tool shows the
    /// file's `\r`s, and what it adds is written byte for byte; without
    /// this, added lines get the file's dominant line end (a model writes
    /// LF lines into a CRLF file).
    pub own_eol: bool,
    pub locator: Locator<'a>,
    pub span: Span,
}

/// Where an edit's old block may match, and how strictly.
#[derive(Debug, Clone)]
pub struct Locator<'a> {
    pub hint: Option<Hint>,
    /// Lines that must be found first; the old block is sought after them.
    pub anchor: Option<Vec<Line<'a>>>,
    /// The end of a range (ap `snippet_tail`): the edit covers everything
    /// from the old block's start to the end of the first match of these
    /// lines after it.
    pub range_end: Option<Vec<Line<'a>>>,
    /// The old block must end at the end of the file.
    pub at_eof: bool,
    /// The relaxations tried, in order, after an exact match failed.
    pub relax: &'static [Relax],
    pub uniqueness: Uniqueness,
}

impl Locator<'_> {
    /// A block alone: no hint, anchor, range end or end-of-file rule.
    pub fn plain(uniqueness: Uniqueness, relax: &'static [Relax]) -> Self {
        Locator {
            hint: None,
            anchor: None,
            range_end: None,
            at_eof: false,
            relax,
            uniqueness,
        }
    }
}

/// A line-number hint, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// udiff: an exact match starting at this line wins outright; the line
    /// is shifted by the drift of the file's earlier edits.
    Near(usize),
    /// codex `@@ :N`: search starts at this line.
    From(usize),
    /// The old block is the whole file, and matches only as such (git's
    /// binary literals, which state a file's old and new bytes).
    Whole,
}

/// Matching passes beyond the exact one, each reported as a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relax {
    /// Lines equal once trailing whitespace is removed.
    TrailingWhitespace,
    /// Lines equal once surrounding whitespace is removed.
    Trimmed,
    /// Lines equal once trimmed and with typographic dashes, quotes and
    /// spaces folded to ASCII.
    Normalized,
}

impl Relax {
    pub fn describe(self) -> &'static str {
        match self {
            Relax::TrailingWhitespace => "ignoring trailing whitespace",
            Relax::Trimmed => "ignoring leading and trailing whitespace",
            Relax::Normalized => "ignoring whitespace and typographic punctuation",
        }
    }
}

/// Which of several matches is acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uniqueness {
    /// Exactly one match in the file (after the hint had its chance).
    UniqueInFile,
    /// The first match after the previous edit (or the anchor).
    FirstAfterCursor,
    /// Exactly one match between the end of the previous edit and the end
    /// of the file (codex hunks without `@@ context` or `@@ :N`).
    UniqueAfterCursor,
}

impl FileOp<'_> {
    /// Paths this op reads or writes, for duplicate detection.
    pub fn paths(&self) -> impl Iterator<Item = &PathRef> {
        let dest = match &self.action {
            Action::Modify {
                move_to: Some(to), ..
            }
            | Action::Rename { to } => Some(to),
            _ => None,
        };
        std::iter::once(&self.path).chain(dest)
    }
}
