//! The shared model every format lowers into, and the only thing the
//! validator and the applier see. It never depends on pest: a format module
//! turns its parse tree into these types and nothing else.
//!
//! A [`Patch`] is a list of [`FileOp`]s. A file op that edits text carries
//! [`Edit`]s; an edit is "this old block becomes this new block", located by
//! a [`Locator`] (line hint, anchor, end-of-file, matching policy, uniqueness
//! rule). Every piece carries a [`Span`] back into the patch text so that a
//! diagnostic can underline it.
//!
//! `edit.rs` holds the edit and its lines, `locator.rs` where it applies;
//! this file the patch, its file ops and the format's policy.

mod edit;
mod locator;

pub use edit::{Edit, Eol, Line, New, NewLine, NewText, Place};
pub use locator::{line_hint, Hint, Level, Levels, Locator, RangeEnd, Reach, Uniqueness};

/// The size from which a file is not patched, nor a binary literal
/// inflated (4 GiB: line starts are `u32`s).
pub const TOO_LARGE: u64 = u32::MAX as u64;

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

    /// The byte range, for slicing the text.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    /// Whether it covers no byte.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The line of `text` starting at `start`, without its `\n`.
    pub fn line_at(text: &str, start: usize) -> Span {
        Span::new(
            start,
            crate::bytes::find(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i),
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
    /// The (unwrapped) patch text every span points into, and that lines
    /// borrow from.
    pub source: &'a str,
    pub files: Vec<FileOp<'a>>,
    /// Metadata lines accepted and ignored (udiff `index`, modes), verbatim.
    pub ignored_metadata: Vec<String>,
    /// How the format's edits are placed and its files written.
    pub policy: Policy,
}

/// Everything that differs between formats once they are lowered: data the
/// one applier reads, never a second engine. Every field is read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// How this format phrases the fixes the applier suggests.
    pub advice: Advice,
    /// Whether a lone `\r` ends a line in the target files, as Codex and ap
    /// read them; udiff and RepoPatch follow git, where only `\n` does.
    pub lone_cr_breaks: bool,
    /// Whether a file's edits apply one after the other, each located in
    /// the file as the previous ones left it (RepoPatch), rather than all
    /// located in the original file, in order from a cursor or anywhere
    /// (udiff, codex, ap).
    pub sequential: bool,
    /// ap tolerant mode: a path whose first component is not in the root,
    /// while the rest is, is read without that component (3.2).
    pub strip_project_prefix: bool,
    /// ap §3.1 idempotency: an edit whose result is already in place (or
    /// a deletion whose lines are gone) is skipped with `already_applied`,
    /// and so is a file creation that finds the same lines.
    pub skip_applied: bool,
    /// ap 3.2 §3.6: an insertion of a top-level declaration after a line
    /// that opens a block is refused, or with `Move`, moved past the block.
    pub nesting_guard: Option<NestingGuard>,
    /// ap §3.6: among several matches of an anchor, the one whose stretch
    /// (up to the next match) holds the block is taken, with a warning.
    pub anchor_by_block: bool,
    /// ap §3.6: a range end that is the block's own end, or the new
    /// content, is corrected to the block alone, with a warning.
    pub correct_ranges: bool,
    /// ap: content written at column 0 for an indented target, which opens
    /// no block of its own, is indented as the target is (a dropped
    /// indent), with a warning.
    pub reindent_dropped: bool,
    /// One edit that cannot be placed ends its file's locating: the later
    /// edits' places depend on where it would have left the cursor (ap).
    pub stop_at_miss: bool,
    /// An anchor that is not in the file is ignored, with a warning, when
    /// the block alone then matches exactly once in the whole file, after
    /// the cursor (codex: a `@@` header narrows the search, it never
    /// widens it; models abbreviate signatures there).
    pub unfound_anchor_ignored: bool,
    /// A path named by several blocks: each applies to what the blocks
    /// before it left (codex, ap, RepoPatch, as Codex does). udiff refuses
    /// it (`duplicate_file_patch`), as its RFC says.
    pub repeated_paths: bool,
    /// What happens to every line of a file an edit changed.
    pub finish: Finish,
}

/// What the written text of an edited file gets as a whole (ap).
#[derive(Debug, Clone, Copy, Default)]
pub struct Finish {
    /// Trailing spaces and tabs removed from every line (ap 3.1 §3.5).
    pub strip_trailing_whitespace: bool,
    /// The file always ends with a line end.
    pub final_newline: bool,
    /// A file whose brackets balanced before and not after gets a warning.
    pub bracket_check: bool,
}

/// What the nesting guard does to an insertion it catches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NestingGuard {
    Refuse,
    /// Tolerant mode: the insertion moves past the block, with a warning.
    Move,
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
    /// What the format calls the end of a range.
    pub range_end: &'static str,
    /// What the format calls an edit that replaces, deletes, inserts
    /// before and inserts after.
    pub ops: [&'static str; 4],
}

impl Advice {
    /// The name of an edit that goes at `place` (and deletes, when a
    /// replacement adds nothing).
    pub fn op_name(&self, place: Place, deletes: bool) -> &'static str {
        match (place, deletes) {
            (Place::Replace, false) => self.ops[0],
            (Place::Replace, true) => self.ops[1],
            (Place::Before, _) => self.ops[2],
            (Place::After, _) => self.ops[3],
        }
    }
}

impl Default for Advice {
    fn default() -> Self {
        Advice {
            block: "hunk context",
            disambiguate: "add context lines that occur only near the intended place",
            create: "create it as a new file instead",
            update: "edit the existing file instead of creating it",
            range_end: "range end",
            ops: ["hunk"; 4],
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
    /// The line end every line of the written file gets (ap's `FILE`
    /// option); `None`: each line keeps its own, added lines take the
    /// file's.
    pub eol: Option<Eol>,
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
    /// Create a file with this content, then apply `edits` to it. An
    /// existing file with the same content is `unchanged` (the policy's
    /// `skip_applied`: the same lines; then `edits` apply to the file);
    /// with other content it is `file_exists`, unless `overwrite` (ap
    /// `RECREATE`), which writes the content whatever the file held.
    Add {
        content: NewText<'a>,
        edits: Vec<Edit<'a>>,
        overwrite: bool,
    },
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
    /// ap `RENAME`: move a file or a directory. Done already (the source
    /// is gone and the destination exists) is `unchanged`.
    Rename { to: PathRef },
    /// ap file-level `DELETE`: remove a file or a directory with all it
    /// holds. Already gone is `unchanged`.
    Remove,
}

impl<'a> Action<'a> {
    /// A new file with this content, and nothing more.
    pub fn add(content: NewText<'a>) -> Self {
        Action::Add {
            content,
            edits: vec![],
            overwrite: false,
        }
    }
}

impl<'a> FileOp<'a> {
    /// `action` on `path`, with no mode and the file's own line ends.
    pub fn new(path: PathRef, action: Action<'a>, span: Span) -> Self {
        FileOp {
            path,
            action,
            span,
            mode: None,
            old_mode: None,
            eol: None,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A large patch holds every hunk's lines until it is written: a line
    /// is a slice alone, and a kept line is no larger than an added one.
    #[test]
    fn lines_are_their_text_alone() {
        assert_eq!(std::mem::size_of::<Line>(), 16);
        assert_eq!(std::mem::size_of::<NewLine>(), 16);
    }

    /// An edit keeps its locator's rarer parts boxed: every edit of a
    /// large patch is held until the patch is written.
    #[test]
    fn an_edit_boxes_what_most_edits_lack() {
        assert_eq!(std::mem::size_of::<Option<Box<Reach>>>(), 8);
        assert!(
            std::mem::size_of::<Edit>() <= 80,
            "{}",
            std::mem::size_of::<Edit>()
        );
    }

    #[test]
    fn kept_lines_are_runs_read_out_line_by_line() {
        let add = NewLine::Add(Line::of("x"));
        let mut runs = vec![
            NewLine::keep(0),
            NewLine::keep(1),
            add,
            NewLine::keep(2),
            NewLine::keep(4),
            NewLine::keep(5),
        ];
        NewLine::runs(&mut runs);
        assert_eq!(
            runs,
            [
                NewLine::Keep(0, 2),
                add,
                NewLine::Keep(2, 1),
                NewLine::Keep(4, 2)
            ]
        );
        let mut e = Edit::replace(
            &[],
            &[],
            Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER),
            Span::default(),
        );
        e.new = runs.leak();
        let want = [
            New::Keep(0),
            New::Keep(1),
            New::Add(Line::of("x")),
            New::Keep(2),
            New::Keep(4),
            New::Keep(5),
        ];
        assert!(e.new_lines().eq(want));
        assert!(e.new_lines().rev().eq(want.into_iter().rev()));
    }

    #[test]
    fn a_set_of_levels_lists_them_in_order() {
        assert!(Levels::LADDER.iter().eq(Level::LADDER.iter().copied()));
        let ap = [Level::BlankLinesIgnored, Level::SoftStart];
        assert!(Levels::of(&ap).iter().eq(ap));
        assert_eq!(Levels::of(&[Level::Trimmed]).first(), Some(Level::Trimmed));
        assert_eq!(Levels::of(&[]).first(), None);
        let unordered = std::panic::catch_unwind(|| Levels::of(&[Level::Trimmed, Level::Exact]));
        assert!(unordered.is_err());
    }

    #[test]
    fn a_line_finds_its_text_in_the_patch() {
        let source = "@@ -1 +1,2 @@\n-old\n+\n+new";
        let old = Line::of(&source[15..18]);
        assert_eq!(old.span(source), Span::new(15, 18));
        assert_eq!(old.whole_line(source), Span::new(14, 18));
        let empty = Line::of(&source[20..20]);
        assert_eq!(empty.span(source), Span::new(20, 20));
        assert_eq!(empty.whole_line(source), Span::new(19, 20));
        let elsewhere = Line::of("old");
        assert_eq!(elsewhere.span(source), Span::default());
        let made = String::from("old");
        assert_eq!(Line::of(&made).span(source), Span::default());
    }

    #[test]
    fn a_line_takes_its_ending_only_as_the_patch_writes_it() {
        let source = "-old\r\n+new\n+last";
        let new = Line::of(&source[7..10]);
        assert_eq!(new.with_eol(source, "\n"), Some("new\n"));
        // The output wants CRLF; the patch ends the line with LF.
        assert_eq!(new.with_eol(source, "\r\n"), None);
        let old = Line::of(&source[1..4]);
        assert_eq!(old.with_eol(source, "\r\n"), Some("old\r\n"));
        assert_eq!(old.with_eol(source, "\n"), None);
        // The patch's last line has no ending to take.
        let last = Line::of(&source[12..]);
        assert_eq!(last.with_eol(source, "\n"), None);
        // Trimmed of trailing whitespace the patch has: not its ending.
        let spaced = "+x  \n";
        assert_eq!(Line::of(&spaced[1..2]).with_eol(spaced, "\n"), None);
        let elsewhere = Line::of("new");
        assert_eq!(elsewhere.with_eol(source, "\n"), None);
        let made = String::from("new");
        assert_eq!(Line::of(&made).with_eol(source, "\n"), None);
    }
}
