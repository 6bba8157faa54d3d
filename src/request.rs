//! One request to check or apply a patch, as every front end makes it: the
//! command line, the MCP server and the Python package each build a
//! [`Request`] and run it. The checks a call needs (the format's name, a
//! JSON tool call's fields, `--diff` without a root, where an ap patch read
//! from a file applies) are made here once, the patch is unwrapped and its
//! format detected once, and a run against a root opens it (the lock,
//! recovery of an interrupted apply) the same way for all.
//!
//! ```no_run
//! use grammar_patch::Request;
//!
//! let patch = "--- a/greet.py\n+++ b/greet.py\n@@ -1 +1 @@\n-hi\n+hello\n";
//! let outcome = Request::new(patch).root("path/to/repo").dry_run(true).run()?;
//! assert!(outcome.ok());
//! # Ok::<(), Box<grammar_patch::error::Diagnostic>>(())
//! ```

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::apply::{self, DiskTree, FileTree};
use crate::error::{Code, Diagnostic};
use crate::formats::{self, Format};
use crate::{payload, unwrap, Caller, Mode, Options, Outcome};

/// A patch and what to do with it. Built with its methods, then [`run`].
///
/// [`run`]: Request::run
pub struct Request<'a> {
    patch: String,
    /// The format's name as given (`auto` or none: detect it).
    format: Option<String>,
    mode: Mode,
    root: Option<PathBuf>,
    patch_file: Option<PathBuf>,
    options: Options,
    wait: Duration,
    fsync: bool,
    go_on: &'a (dyn Fn() -> bool + Sync),
    /// Who asks, for the words of hints that name an option.
    caller: Caller,
    /// A problem with the request found while it was built.
    refused: Option<String>,
    /// The OpenAI `apply_patch_call` items the patch came as.
    calls: Vec<crate::openai::Call>,
    commands: Vec<crate::anthropic::Command>,
}

/// Why a request could not be run: `usage_error` (the call itself is
/// wrong) or `io_error` (the root cannot be opened). Nothing was written.
pub type Refused = Box<Diagnostic>;

impl Request<'static> {
    /// A request to apply `patch` (text: see [`crate::lossless`] for bytes
    /// that are not UTF-8), detecting its format, in the current directory.
    pub fn new(patch: impl Into<String>) -> Self {
        Request {
            patch: patch.into(),
            format: None,
            mode: Mode::Apply { dry_run: false },
            root: None,
            patch_file: None,
            options: Options::default(),
            wait: apply::DEFAULT_WAIT,
            fsync: false,
            go_on: &|| true,
            caller: Caller::CommandLine,
            refused: None,
            calls: vec![],
            commands: vec![],
        }
    }

    /// A request from a JSON tool call's fields (`patch`, and optionally
    /// `format`, `dry_run`, `tolerant` and `diff`), as an MCP client sends
    /// them, speaking as a tool call ([`Caller::ToolCall`]); a field
    /// missing, unknown or of the wrong type is refused.
    pub fn from_fields(fields: serde_json::Map<String, serde_json::Value>) -> Result<Self, String> {
        let call = payload::from_fields(fields)?;
        let mut request = Request::new(call.patch).caller(Caller::ToolCall);
        request.format = call.format;
        if let Some(dry_run) = call.dry_run {
            request.mode = Mode::Apply { dry_run };
        }
        request.options.tolerant = call.tolerant.unwrap_or(false);
        request.options.diff = call.diff.unwrap_or(false);
        Ok(request)
    }
}

impl<'a> Request<'a> {
    /// Reads the patch as a JSON tool call (`{"patch": ..., "format": ...,
    /// "dry_run": ...}`) where it is one, as the command line takes it:
    /// the call's `format` must agree with one given, and its `dry_run`
    /// makes an apply a dry run. `source` names the patch in messages.
    pub fn unpacking_tool_call(mut self, source: &str) -> Self {
        // OpenAI's items and Anthropic's commands are read when the
        // request runs.
        if crate::openai::calls(&self.patch).is_some()
            || crate::anthropic::commands(&self.patch).is_some()
        {
            return self;
        }
        let Some(call) = payload::tool_call(&self.patch) else {
            return self;
        };
        let call = match call {
            Ok(call) => call,
            Err(e) => return self.refuse(format!("{source}: {e}")),
        };
        let given = self.format.clone().filter(|g| g != "auto");
        match (call.format, given) {
            (Some(f), Some(given)) if f != given => {
                let why =
                    format!("{source}: the tool call says format `{f}`, --format says `{given}`");
                return self.refuse(why);
            }
            (Some(f), _) => self.format = Some(f),
            _ => {}
        }
        if let (Some(true), Mode::Apply { .. }) = (call.dry_run, self.mode) {
            self.mode = Mode::Apply { dry_run: true };
        }
        self.options.tolerant |= call.tolerant == Some(true);
        self.options.diff |= call.diff == Some(true);
        self.patch = call.patch;
        self
    }

    fn refuse(mut self, why: String) -> Self {
        self.refused.get_or_insert(why);
        self
    }

    /// The format by name (`auto`, `udiff`, `codex`, `repopatch`, `ap`);
    /// an unknown name is refused when the request runs.
    pub fn format(mut self, name: &str) -> Self {
        self.format = Some(name.to_string());
        self
    }

    /// What to do: lint, apply or a dry run.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Check only: parse, validate and, with a root, locate every edit.
    pub fn lint(self) -> Self {
        self.mode(Mode::Lint)
    }

    /// Apply, or with `dry_run` do everything but write.
    pub fn dry_run(self, dry_run: bool) -> Self {
        self.mode(Mode::Apply { dry_run })
    }

    /// The tree the patch applies to. An apply without one applies in the
    /// current directory (an ap patch read from a file: beside that file);
    /// a lint without one checks the patch alone.
    pub fn root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Some(root.into());
        self
    }

    /// The file the patch was read from: an ap patch applies, by its
    /// specification, beside it when no root is given.
    pub fn patch_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.patch_file = Some(path.into());
        self
    }

    /// ap's tolerant mode ([`Options::tolerant`]).
    pub fn tolerant(mut self, on: bool) -> Self {
        self.options.tolerant = on;
        self
    }

    /// `-p N`: leading components taken off every path ([`Options::strip`]).
    pub fn strip(mut self, n: Option<usize>) -> Self {
        self.options.strip = n;
        self
    }

    /// Print the located edits in another format ([`Options::convert`]):
    /// a lint against the tree, which writes nothing.
    pub fn convert(mut self, to: Format) -> Self {
        self.options.convert = Some(to);
        self.mode(Mode::Lint)
    }

    /// `-R`: apply the patch in reverse ([`Options::reverse`]).
    pub fn reverse(mut self, on: bool) -> Self {
        self.options.reverse = on;
        self
    }

    /// Leaves the files' line counts uncounted (`Options::uncounted`).
    pub fn uncounted(mut self, on: bool) -> Self {
        self.options.uncounted = on;
        self
    }

    /// Each file's review diff in the result ([`Options::diff`]); needs a root.
    pub fn diff(mut self, on: bool) -> Self {
        self.options.diff = on;
        self
    }

    /// How long to wait for another apply that holds the root.
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// `fsync` the journal and every file written: survive power loss too.
    pub fn fsync(mut self, on: bool) -> Self {
        self.fsync = on;
        self
    }

    /// Stops waiting for the root, and stops before writing, once `go_on`
    /// says so (a cancelled call): the outcome is then `cancelled`.
    pub fn until<'b>(self, go_on: &'b (dyn Fn() -> bool + Sync)) -> Request<'b>
    where
        'a: 'b,
    {
        Request { go_on, ..self }
    }

    /// Who asks: hints name options in that caller's words ([`Caller`]).
    pub fn caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// What the request says to do, as asked.
    pub fn asked(&self) -> Mode {
        self.mode
    }

    /// Runs the request. `Err` when the request itself is wrong
    /// (`usage_error`) or its root cannot be opened (`io_error`); a patch
    /// refused is an `Ok` outcome whose [`Outcome::ok`] is false.
    pub fn run(self) -> Result<Outcome, Refused> {
        self.finished(Request::run_as_asked)
    }

    /// `run` (after the JSON the patch may come as is read), with the
    /// calls it came in kept in the outcome and its words the caller's.
    fn finished(
        self,
        run: impl FnOnce(Self) -> Result<Outcome, Refused>,
    ) -> Result<Outcome, Refused> {
        let caller = self.caller;
        let result = self.opened().and_then(|this| {
            let calls = this.calls.clone();
            run(this).map(|o| Outcome { calls, ..o })
        });
        reworded(caller, result)
    }

    /// The request with OpenAI `apply_patch_call` items, where the patch is
    /// such JSON, read as the codex patch they make (`openai.rs`); and
    /// with Anthropic's text-editor commands read (`anthropic.rs`).
    fn opened(mut self) -> Result<Self, Refused> {
        let usage = |message: String| Box::new(Diagnostic::new(Code::UsageError, message));
        if let Some(commands) = crate::anthropic::commands(&self.patch) {
            self.commands = commands.map_err(|e| usage(format!("text-editor commands: {e}")))?;
            if let Some(other) = self.format.as_deref().filter(|f| *f != "auto") {
                return Err(usage(format!(
                    "Anthropic's text-editor commands are no patch in `{other}`: give no format (or `auto`)"
                )));
            }
            return Ok(self);
        }
        let Some(calls) = crate::openai::calls(&self.patch) else {
            return Ok(self);
        };
        let calls = calls.map_err(|e| usage(format!("apply_patch_call: {e}")))?;
        match self.format.as_deref() {
            None | Some("auto" | "codex") => {}
            Some(other) => {
                return Err(usage(format!(
                    "apply_patch_call items hold V4A diffs, read as codex, not `{other}`"
                )))
            }
        }
        self.patch = crate::openai::to_codex(&calls);
        self.format = Some("codex".into());
        self.calls = calls;
        Ok(self)
    }

    /// Runs the request against `tree` instead of a root: an apply (or a
    /// lint) in memory, with a [`crate::MemTree`]. No lock, no journal on
    /// disk: the tree is the caller's, changed only when every file
    /// applies. Errors as [`Request::run`].
    pub fn run_in(self, tree: &mut dyn FileTree) -> Result<Outcome, Refused> {
        self.finished(|this| {
            if this.root.is_some() && this.refused.is_none() {
                let why = "a request run in a given tree takes no root";
                return Err(Box::new(Diagnostic::new(Code::UsageError, why)));
            }
            let (mode, options, go_on) = (this.mode, this.options, this.go_on);
            let (unwrapped, format) = this.read()?;
            Ok(crate::run_unwrapped(
                unwrapped,
                format,
                mode,
                Some(tree),
                None,
                options,
                go_on,
            ))
        })
    }

    /// The patch unwrapped and its format, given or detected; refused when
    /// the request was wrong as built or names no format.
    fn read(self) -> Result<(unwrap::Unwrapped, Option<Format>), Refused> {
        let usage = |message: String| Box::new(Diagnostic::new(Code::UsageError, message));
        if let Some(why) = self.refused {
            return Err(usage(why));
        }
        if !self.commands.is_empty() {
            return Ok((unwrap::Unwrapped::commands(self.commands), None));
        }
        let format = Format::from_arg(self.format.as_deref().unwrap_or("auto")).map_err(usage)?;
        let unwrapped = unwrap::unwrap(self.patch);
        let format = format.or_else(|| formats::detect(unwrapped.body()));
        Ok((unwrapped, format))
    }

    /// [`Request::run`], in the command line's words.
    fn run_as_asked(mut self) -> Result<Outcome, Refused> {
        let usage = |message: String| Box::new(Diagnostic::new(Code::UsageError, message));
        let (given_root, patch_file) = (self.root.take(), self.patch_file.take());
        let (mode, options, wait, fsync, go_on) =
            (self.mode, self.options, self.wait, self.fsync, self.go_on);
        let (unwrapped, format) = self.read()?;
        let root = match (given_root, mode) {
            (Some(root), _) => Some(root),
            (None, Mode::Lint) => None,
            (None, Mode::Apply { .. }) => {
                Some(beside(patch_file.as_deref(), format).unwrap_or_else(|| PathBuf::from(".")))
            }
        };
        if options.diff && root.is_none() {
            return Err(usage("--diff shows changes to a tree: give --root".into()));
        }
        let Some(root) = root else {
            return Ok(crate::run_unwrapped(
                unwrapped, format, mode, None, None, options, go_on,
            ));
        };
        let write = mode == (Mode::Apply { dry_run: false });
        let (mut tree, recovered) = match apply::open_root_until(&root, write, wait, go_on) {
            Ok(opened) => opened,
            Err(_) if !go_on() => {
                let cancelled = Diagnostic::new(
                    Code::Cancelled,
                    "the call was cancelled while it waited for the root",
                );
                return Ok(Outcome::failed(format, mode, cancelled));
            }
            Err(d) if matches!(d.code, Code::RootBusy | Code::RecoveryConflict) => {
                let mut outcome = Outcome::failed(format, mode, *d);
                outcome.text = unwrapped.text;
                return Ok(outcome);
            }
            Err(d) => return Err(d),
        };
        tree.set_sync(fsync);
        crate::timings::mark("root opened and locked");
        let canonical = tree.root().to_path_buf();
        let mut outcome = guarded(&mut tree, |tree| {
            crate::run_unwrapped(
                unwrapped,
                format,
                mode,
                Some(tree),
                Some(&canonical),
                options,
                go_on,
            )
        })
        .unwrap_or_else(|d| Outcome::failed(format, mode, *d));
        outcome.add_warnings(recovered);
        Ok(outcome)
    }
}

/// A run's outcome or refusal, its hints in `caller`'s words.
fn reworded(caller: Caller, result: Result<Outcome, Refused>) -> Result<Outcome, Refused> {
    match result {
        Ok(mut outcome) => {
            outcome
                .diagnostics
                .iter_mut()
                .for_each(|d| caller.reword(d));
            Ok(outcome)
        }
        Err(mut d) => {
            caller.reword(&mut d);
            Err(d)
        }
    }
}

/// Where an ap patch read from `file` applies without a root: the file's
/// own directory.
fn beside(file: Option<&Path>, format: Option<Format>) -> Option<PathBuf> {
    let file = file.filter(|p| *p != Path::new("-"))?;
    (format == Some(Format::Ap)).then(|| match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    })
}

/// Runs one call so that a panic (a bug) fails that call only: the tree is
/// rolled back from its journal, and a server goes on.
fn guarded(
    tree: &mut DiskTree,
    call: impl FnOnce(&mut dyn FileTree) -> Outcome,
) -> Result<Outcome, Box<Diagnostic>> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| call(&mut *tree))) {
        Ok(outcome) => Ok(outcome),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let rolled_back = apply::recover(tree).is_ok();
            Err(Box::new(
                Diagnostic::new(
                    Code::IoError,
                    format!("grammar-patch failed on this patch: {what}"),
                )
                .note(if rolled_back {
                    "this is a bug in grammar-patch; the tree was rolled back"
                } else {
                    "this is a bug in grammar-patch; the rollback failed, run `grammar-patch recover`"
                })
                .hint("report the patch that caused it; try the edit as a smaller patch"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::{open_root, DEFAULT_WAIT};
    use crate::run;

    #[test]
    fn a_panic_in_a_call_fails_that_call_and_rolls_the_tree_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let (mut tree, _) = open_root(dir.path(), true, DEFAULT_WAIT).unwrap();
        let result = guarded(&mut tree, |tree| {
            // Half a commit (the file renamed aside), then a bug.
            use crate::apply::writing::journal::{Journal, Record};
            let mut j = Journal::begin(tree).unwrap();
            let path = crate::paths::RelPath::new("a.txt").unwrap();
            let aside = j.temp_beside(&path);
            let ident = tree.ident(&path).unwrap().unwrap();
            let record = Record::Moved {
                from: path.clone(),
                to: aside.clone(),
                ident,
            };
            j.log(tree, record).unwrap();
            tree.rename(&path, &aside).unwrap();
            panic!("a bug");
        });
        let d = result.expect_err("the panic is an error");
        assert!(d.message.contains("a bug"), "{}", d.message);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one\n"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "only a.txt"
        );
        // The same tree serves the next call.
        let ok = guarded(&mut tree, |tree| {
            run(
                "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n",
                None,
                Mode::Apply { dry_run: false },
                Some(tree),
                None,
            )
        })
        .unwrap();
        assert!(ok.ok(), "{:?}", ok.diagnostics);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "two\n"
        );
    }
}
