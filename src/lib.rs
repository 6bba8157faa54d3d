//! grammar-patch: parse, validate and apply the patch formats language
//! models write, with one grammar per format and one shared applier.
//!
//! A [`Request`] is what the command line, the MCP server and the Python
//! package make: a patch, a root, what to do.
//!
//! ```
//! use grammar_patch::{Format, MemTree, Mode};
//!
//! // A tree in memory, and a unified diff whose line numbers are wrong:
//! // the context decides where the hunk goes.
//! let mut tree = MemTree::default().with_file("greet.py", "def greet():\n    return 'hi'\n");
//! let patch = "--- a/greet.py\n+++ b/greet.py\n@@ -7,2 +7,2 @@\n def greet():\n-    return 'hi'\n+    return 'hello'\n";
//! let outcome = grammar_patch::run(patch, None, Mode::Apply { dry_run: false }, Some(&mut tree), None);
//! assert!(outcome.ok());
//! assert_eq!(outcome.format, Some(Format::Udiff));
//! assert_eq!(outcome.diagnostics[0].code.as_str(), "line_hint_drift");
//! assert_eq!(tree.text("greet.py"), Some("def greet():\n    return 'hello'\n"));
//! ```
//!
//! A refused patch writes nothing and says why, with a stable [`Code`]:
//!
//! ```
//! use grammar_patch::{Code, MemTree, Mode};
//!
//! let mut tree = MemTree::default().with_file("a.txt", "one\ntwo\n");
//! let stale = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-three\n+THREE\n";
//! let outcome = grammar_patch::run(stale, None, Mode::Apply { dry_run: false }, Some(&mut tree), None);
//! assert_eq!(outcome.exit_code(), 1);
//! assert_eq!(outcome.diagnostics[0].code, Code::ContextNotFound);
//! assert_eq!(tree.text("a.txt"), Some("one\ntwo\n"));
//! println!("{}", grammar_patch::report::to_json(&outcome));
//! ```
//!
//! Each format's grammar, as Lark for constrained decoding:
//!
//! ```
//! let lark = grammar_patch::Format::Codex.lark_grammar_for(None).unwrap();
//! assert!(lark.contains("start:"));
//! ```
//!
//! The pipeline, top to bottom ([`run`]): take off what surrounds the
//! patch (a markdown fence, CRLF, blank lines: each a warning); detect the
//! format; parse with the generated parser and lower into the shared model
//! with the format's policy (its differences as data); validate paths; plan
//! (read the tree, locate every edit, rewrite in memory); commit (all files
//! or none, through a journal). The tree is a [`FileTree`]: the disk
//! beneath a root ([`DiskTree`]) or memory ([`MemTree`]). [`diagnostics`]
//! renders problems like rustc; [`report`] gives the JSON result; [`agent`]
//! gives tool definitions and prompts.

#![deny(missing_docs)]

// pest_derive without `std` (see Cargo.toml) names `alloc` in what it generates.
extern crate alloc;

// The library's surface: the pipeline below, these modules, and the
// `pub use` block after them.
pub mod agent;
pub mod anthropic;
pub mod batch;
pub mod convert;
pub mod diagnostics;
pub mod error;
pub mod lossless;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod openai;
pub mod report;
pub mod summary;
pub mod timings;

// Modules the crate's own tests, fuzzers and attacks reach into: public
// (and hidden from the docs) only with the `internals` feature, which
// nothing but those turns on. No part of the API. Each is declared twice,
// not through a macro, so that `cargo fmt` reaches their files.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod apply;
#[cfg(not(feature = "internals"))]
mod apply;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod formats;
#[cfg(not(feature = "internals"))]
mod formats;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod ir;
#[cfg(not(feature = "internals"))]
mod ir;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod paths;
#[cfg(not(feature = "internals"))]
mod paths;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod payload;
#[cfg(not(feature = "internals"))]
mod payload;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod unwrap;
#[cfg(not(feature = "internals"))]
mod unwrap;

mod bytes;
mod caller;
mod newlines;
mod pages;
mod replies;
mod request;
mod review;
mod trim;
mod validate;

pub use apply::{DiskTree, FileTree, MemTree};
pub use caller::Caller;
pub use error::{Code, Diagnostic, Severity};
pub use formats::Format;
pub use request::{Refused, Request};
pub use summary::{parse, Parsed};

use std::path::Path;

/// What the caller wants done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Parse and validate; with a tree, also locate every edit. Writes nothing.
    Lint,
    /// Everything, and write (unless `dry_run`).
    Apply {
        /// Do everything but write.
        dry_run: bool,
    },
}

/// One file in a successful result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileResult {
    /// The path the change leaves behind (a move's destination).
    pub path: String,
    /// What happened to it.
    pub action: FileAction,
    /// A move's source.
    pub from: Option<String>,
    /// Lines added, as `git apply --numstat` counts them.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// With [`Options::diff`]: this file's section of the review diff, in
    /// git's format (text standing for bytes, see `lossless`).
    pub diff: Option<String>,
}

/// What a patch did (or would do) to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    /// Created (a file or a link).
    Added,
    /// Changed in place: text or mode.
    Modified,
    /// Removed (a file, or ap: a directory and all it held).
    Deleted,
    /// Moved, with or without edits; [`FileResult::from`] says from where.
    Renamed,
    /// A directory made (ap `CREATE` without content).
    DirCreated,
    /// Nothing to do: the patch was applied already.
    Unchanged,
}

impl FileAction {
    /// The contract's `action` word.
    pub fn word(self) -> &'static str {
        match self {
            FileAction::Added => "added",
            FileAction::Modified => "modified",
            FileAction::Deleted => "deleted",
            FileAction::Renamed => "renamed",
            FileAction::DirCreated => "dir_created",
            FileAction::Unchanged => "unchanged",
        }
    }
}

/// The result of [`run`]: what was (or would be) done, and every diagnostic.
#[derive(Debug)]
pub struct Outcome {
    /// The format read, once known.
    pub format: Option<Format>,
    /// What was asked.
    pub mode: Mode,
    /// The patch text the diagnostics' spans point into.
    pub text: String,
    /// Every path changed (or that would be); empty when anything failed.
    pub files: Vec<FileResult>,
    /// Errors first, then warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// Metadata lines accepted and ignored (udiff `index`, modes), verbatim.
    pub ignored_metadata: Vec<String>,
    /// The OpenAI `apply_patch_call` items the patch came as, to answer
    /// with [`openai::outputs`]; empty for patch text.
    pub calls: Vec<openai::Call>,
    /// The Anthropic text-editor commands the patch came as, to answer
    /// with [`anthropic::results`]; empty for patch text.
    pub commands: Vec<anthropic::Command>,
    /// With [`Options::convert`]: the patch printed in that format.
    pub converted: Option<String>,
}

impl Outcome {
    /// A run that failed before its patch was read (the root was busy).
    pub fn failed(format: Option<Format>, mode: Mode, error: Diagnostic) -> Outcome {
        Outcome {
            format,
            mode,
            text: String::new(),
            files: vec![],
            diagnostics: vec![error],
            ignored_metadata: vec![],
            calls: vec![],
            commands: vec![],
            converted: None,
        }
    }

    /// Adds warnings from outside the pipeline (recovery), in order.
    pub fn add_warnings(&mut self, mut warnings: Vec<Diagnostic>) {
        self.diagnostics.append(&mut warnings);
        error::sort(&mut self.diagnostics);
    }

    /// Whether no diagnostic is an error.
    pub fn ok(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The contract's exit status: 0 done, 1 rejected, 2 I/O outside the patch.
    pub fn exit_code(&self) -> i32 {
        if self.ok() {
            0
        } else if self.diagnostics.iter().any(|d| {
            matches!(
                d.code,
                Code::IoError | Code::RootBusy | Code::UsageError | Code::RecoveryConflict
            )
        }) {
            2
        } else {
            1
        }
    }
}

/// How forgiving to be, beyond what every format forgives, and what to
/// report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// ap's tolerant mode (the 3.2 reference's default): a missing header,
    /// `#` comments between directives, an `anchor` standing in for a
    /// missing `snippet`, and the nesting guard moving an insertion, each
    /// with a warning. Off, they are errors.
    pub tolerant: bool,
    /// Each file's section of the review diff (`review.rs`) in its result.
    pub diff: bool,
    /// `-p N`: leading components taken off every path, as GNU `patch`
    /// counts them on the path the patch writes (a unified diff's git
    /// `a/`, `b/`, which are taken off by themselves, count as the first);
    /// `None`: each format's own reading.
    pub strip: Option<usize>,
    /// `-R`: apply the patch in reverse, undoing it (`formats/reverse.rs`
    /// says which operations can be).
    pub reverse: bool,
    /// `convert --to F`: the located edits printed in format `F`
    /// ([`Outcome::converted`]); needs a tree, writes nothing.
    pub convert: Option<Format>,
    /// The files' lines added and removed are not counted, and read 0
    /// ([`FileResult::added`]): for a caller that shows no counts (the
    /// command line's list of files). Counting visits every changed
    /// region again, long after the planning left it: 3% of the samples
    /// in a perf profile of a dry run of 5,000 hunks on 200,000 lines.
    pub uncounted: bool,
}

/// Runs the whole pipeline on `raw`. `tree` and `root` (canonical) are the
/// tree to check against; `Lint` without a tree checks the patch alone.
pub fn run(
    raw: impl Into<String>,
    format: Option<Format>,
    mode: Mode,
    tree: Option<&mut dyn FileTree>,
    root: Option<&Path>,
) -> Outcome {
    run_with(raw, format, mode, tree, root, Options::default())
}

/// [`run`] with [`Options`].
pub fn run_with(
    raw: impl Into<String>,
    format: Option<Format>,
    mode: Mode,
    tree: Option<&mut dyn FileTree>,
    root: Option<&Path>,
    options: Options,
) -> Outcome {
    let raw = raw.into();
    let unwrapped = match anthropic::commands(&raw) {
        Some(Ok(commands)) => unwrap::Unwrapped::commands(commands),
        Some(Err(e)) => {
            let d = Diagnostic::new(Code::UsageError, format!("text-editor commands: {e}"));
            return Outcome::failed(None, mode, d);
        }
        None => unwrap::unwrap(raw),
    };
    let format = format.or_else(|| formats::detect(unwrapped.body()));
    run_unwrapped(unwrapped, format, mode, tree, root, options, &|| true)
}

/// The pipeline on a patch already unwrapped, whose format is given or was
/// detected (`None`: unknown); stops before anything is written once
/// `go_on` says so (a cancelled call), with the outcome `cancelled`.
pub(crate) fn run_unwrapped(
    mut unwrapped: unwrap::Unwrapped,
    format: Option<Format>,
    mode: Mode,
    tree: Option<&mut dyn FileTree>,
    root: Option<&Path>,
    options: Options,
    go_on: &dyn Fn() -> bool,
) -> Outcome {
    let mut outcome = Outcome {
        format,
        mode,
        text: String::new(),
        files: vec![],
        diagnostics: unwrapped.warnings.clone(),
        ignored_metadata: vec![],
        calls: vec![],
        commands: unwrapped.commands.clone(),
        converted: None,
    };
    if options.tolerant && format == Some(Format::Ap) {
        let body = unwrapped.body;
        let mut fixed = formats::correct_drifted_ids(&mut unwrapped.text, body);
        outcome.diagnostics.append(&mut fixed);
    }
    let result = pipeline(&unwrapped, &mut outcome, tree, root, options, go_on);
    if let Err(mut errors) = result {
        outcome.files.clear();
        outcome.diagnostics.append(&mut errors);
    }
    outcome.text = unwrapped.text;
    error::sort(&mut outcome.diagnostics);
    outcome
}

fn pipeline(
    unwrapped: &unwrap::Unwrapped,
    outcome: &mut Outcome,
    tree: Option<&mut dyn FileTree>,
    root: Option<&Path>,
    options: Options,
    go_on: &dyn Fn() -> bool,
) -> Result<(), Vec<Diagnostic>> {
    let store = bumpalo::Bump::new();
    let contents = tree.is_some();
    if let (Some(tree), Some(format)) = (tree.as_deref(), outcome.format) {
        read_ahead(tree, format, unwrapped, options);
    }
    let (patch, mut warnings) = match outcome.format {
        _ if !unwrapped.commands.is_empty() && (options.reverse || options.strip.is_some()) => {
            let why = "Anthropic's text-editor commands name their paths whole and cannot be \
                       undone from themselves: they take neither -R nor -p";
            return Err(vec![Diagnostic::new(Code::UsageError, why)]);
        }
        _ if !unwrapped.commands.is_empty() => formats::commands::lower(
            &unwrapped.text,
            &store,
            &unwrapped.commands,
            &unwrapped.rendered,
        ),
        Some(format) => formats::parse_to(
            format,
            &unwrapped.text,
            &store,
            unwrapped.body,
            options,
            contents,
        )?,
        None => {
            let d = Diagnostic::new(Code::UnknownFormat, "cannot tell which patch format this is")
                .note("looked for `diff --git`/`--- ` (udiff), `*** Begin Patch` (codex), `PATCHSET` (repopatch), `<8 hex> AP 3.x` (ap)")
                .hint("start the patch with `--- a/PATH` and `+++ b/PATH`, or pass --format");
            let first = unwrapped.body().lines().next().unwrap_or("");
            let span = ir::Span::new(unwrapped.body.start, unwrapped.body.start + first.len());
            return Err(vec![if first.is_empty() {
                d.note("the patch is empty")
            } else {
                d.at(span, "not the start of any known format")
            }]);
        }
    };
    timings::mark("parsed");
    outcome.diagnostics.append(&mut warnings);
    outcome.ignored_metadata = patch.ignored_metadata.clone();
    let (errors, mut warnings): (Vec<_>, Vec<_>) = validate::validate(&patch, root)
        .into_iter()
        .partition(Diagnostic::is_error);
    outcome.diagnostics.append(&mut warnings);
    if !errors.is_empty() {
        return Err(errors);
    }
    timings::mark("validated");
    let Some(tree) = tree else {
        // No tree: a conversion prints the patch's own edits, where it can.
        if let (Some(to), Some(from)) = (options.convert, outcome.format) {
            outcome.converted =
                Some(convert::rootless::convert(&patch, from, to).map_err(|d| vec![*d])?);
        } else if options.convert.is_some() {
            let why = "Anthropic's commands replace text, not lines: converting them needs the files (give the root)";
            return Err(vec![Diagnostic::new(Code::UnsupportedGitPatchFeature, why)]);
        }
        return Ok(());
    };
    // A review and a conversion show the originals; otherwise each file's
    // original goes once the next file is planned, and the commit reads it
    // again (a patch of many files holds one file's text at a time).
    let originals = match options.diff || options.convert.is_some() {
        true => apply::Originals::Keep,
        false => apply::Originals::Release,
    };
    let mut plan = apply::plan_with(&patch, &*tree, root, originals)?;
    timings::mark("planned");
    outcome.diagnostics.append(&mut plan.warnings);
    if let Some(to) = options.convert {
        outcome.converted = Some(convert::convert(&plan, to).map_err(|d| vec![*d])?);
    }
    let results = || file_results(&plan, options);
    if outcome.mode != (Mode::Apply { dry_run: false }) {
        outcome.files = results();
        timings::mark("counted");
        return Ok(());
    }
    if !go_on() {
        return Err(vec![Diagnostic::new(
            Code::Cancelled,
            "the call was cancelled before anything was written",
        )]);
    }
    // The results read the plan alone: where they count many changed
    // regions' lines (in text the planning left long ago), on the other
    // core while the commit writes.
    let mut commit = || {
        let committed = apply::commit(&plan, tree);
        timings::mark("written");
        committed
    };
    outcome.files = if !options.uncounted && plan.pieces_to_count() >= RESULTS_BESIDE {
        let (committed, files) = apply::beside::overlap(results, commit);
        committed.map_err(|d| vec![*d])?;
        files
    } else {
        commit().map_err(|d| vec![*d])?;
        results()
    };
    timings::mark("counted");
    Ok(())
}

/// Starts reading the file a large patch edits first, as its first lines
/// name it (`Format::first_path`), beside the parse: the planner's read
/// of that path takes it (`FileTree::read_ahead`). A patch whose paths
/// `-p` or `-R` change is not guessed at, nor one too small to take as
/// long to parse as a thread takes to start.
fn read_ahead(
    tree: &dyn FileTree,
    format: Format,
    unwrapped: &unwrap::Unwrapped,
    options: Options,
) {
    let body = unwrapped.body();
    if body.len() < READ_AHEAD || options.strip.is_some() || options.reverse {
        return;
    }
    if let Some(path) = format.first_path(body).and_then(paths::RelPath::new) {
        tree.read_ahead(&path, ir::TOO_LARGE);
    }
}

/// How long a patch is (in bytes) before its first file is read beside
/// its parse ([`read_ahead`]). A patch of 1 MiB takes several
/// milliseconds to parse.
const READ_AHEAD: usize = 1 << 20;

/// How many pieces the results walk ([`apply::Plan::pieces_to_count`])
/// before they are made beside the commit. Below this the thread gains
/// nothing measurable and costs memory: at 10,000 pieces (a file edited in
/// 5,000 places) the count takes about a millisecond, and the thread's own
/// allocations, beside the commit's, raised the peak by 0.2 to 0.4 MiB; at
/// 100,000 it took a twentieth of the apply. A patch of many files whose
/// originals were let go keeps its results after the commit too.
const RESULTS_BESIDE: usize = 1 << 15;

/// What was (or, for lint and a dry run, would be) done, file by file. A
/// permission change after a write or a move is part of that file's entry;
/// alone (a mode-only change) it is `modified`.
fn file_results(plan: &apply::Plan, options: Options) -> Vec<FileResult> {
    let changes = plan.changes.iter().enumerate().filter(|&(i, c)| {
        !matches!(c, apply::Change::Chmod { .. })
            || i == 0
            || plan.changes[i - 1].path() != c.path()
    });
    let mut sections = match options.diff {
        true => review::sections(plan),
        false => vec![],
    }
    .into_iter()
    .peekable();
    changes
        .map(|(_, c)| {
            let path = c.path().to_string();
            let diff = sections.next_if(|(p, _)| *p == path).map(|(_, d)| d);
            let (added, removed) = match options.uncounted {
                true => (0, 0),
                false => c.counts(),
            };
            FileResult {
                path,
                action: c.action(),
                from: c.from().map(ToString::to_string),
                added,
                removed,
                diff: diff.or_else(|| options.diff.then(String::new)),
            }
        })
        .collect()
}

/// The format of `patch` (what surrounds it, such as a markdown fence,
/// taken off first), or `None` when it is none of them.
pub fn detect(patch: &str) -> Option<Format> {
    let unwrapped = unwrap::unwrap(patch.to_string());
    formats::detect(unwrapped.body())
}

/// Rolls back (or, past its commit point, finishes) an apply under `root`
/// that was interrupted, waiting up to `wait` for the root's lock. The
/// warnings say what was found: `recovered`, or `untrusted_journal` for a
/// journal that was not replayed; none when there was nothing to do.
pub fn recover(root: &Path, wait: std::time::Duration) -> Result<Vec<Diagnostic>, Box<Diagnostic>> {
    apply::open_root(root, true, wait).map(|(_, warnings)| warnings)
}
