//! The `grammar-patch` command line: argument handling and output only; the
//! work is the library's `run`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use grammar_patch::error::Code;
use grammar_patch::Format;
use grammar_patch::{diagnostics, report, FileAction, Mode, Outcome, Request};

#[derive(Parser)]
#[command(
    name = "grammar-patch",
    version,
    about = "Parse, validate and apply the patch formats language models write"
)]
#[command(after_long_help = codes_help())]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When diagnostics on stderr are in colour: auto (on a terminal,
    /// unless NO_COLOR is set), always, or never.
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    color: ColorArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

impl From<ColorArg> for diagnostics::Color {
    fn from(c: ColorArg) -> Self {
        match c {
            ColorArg::Auto => diagnostics::Color::Auto,
            ColorArg::Always => diagnostics::Color::Always,
            ColorArg::Never => diagnostics::Color::Never,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Parse, validate and apply a patch to the tree under --root; all files or none.
    Apply {
        #[command(flatten)]
        input: Input,
        /// Do everything but write.
        #[arg(long)]
        dry_run: bool,
        /// Also survive power loss: fsync the journal before each step, and
        /// every file and directory written (a kill is survived without it).
        #[arg(long)]
        fsync: bool,
    },
    /// Parse and validate a patch; with --root, also locate every edit. Writes nothing.
    Lint {
        #[command(flatten)]
        input: Input,
    },
    /// Print a patch's edits, located in the tree under --root, in another
    /// format (verified: applied in memory, it gives the same files); without
    /// --root, the patch's own edits, where its format states enough (udiff
    /// to udiff, codex or searchreplace; codex and searchreplace to each
    /// other). Writes nothing.
    Convert {
        /// The format to print.
        #[arg(long, value_name = "F")]
        to: String,
        #[command(flatten)]
        input: Input,
    },
    /// Roll back an apply that was interrupted (killed, power loss) from its
    /// journal; exit 0 whether or not there was anything to recover.
    Recover {
        /// The tree [default: the current directory].
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Seconds to wait for another apply that holds the root.
        #[arg(long, value_name = "SECS", default_value_t = 30.0)]
        wait: f64,
    },
    /// Print a format's grammar (Lark, for an OpenAI custom tool, or its grammar file: pest, or LALRPOP for ap).
    Grammar {
        format: String,
        #[arg(long, value_enum, default_value_t = Syntax::Lark)]
        syntax: Syntax,
        /// ap only: specialise the grammar to one patch ID.
        #[arg(long, value_name = "HEX8")]
        id: Option<String>,
    },
    /// Print a tool definition (JSON) that teaches a model the format.
    Tool {
        format: String,
        /// Whose API the definition is for.
        #[arg(long, value_enum)]
        provider: ProviderArg,
        /// ap only: specialise the grammar to one patch ID.
        #[arg(long, value_name = "HEX8")]
        id: Option<String>,
        /// The tool's name (OpenAI's built-in tool type is also called
        /// `apply_patch`; this custom tool is another tool).
        #[arg(long, value_name = "N", default_value = grammar_patch::agent::DEFAULT_TOOL_NAME)]
        name: String,
    },
    /// Print instructions and a worked example for a model's system prompt.
    Prompt { format: String },
    /// Serve the Model Context Protocol on stdin/stdout (tools apply_patch, lint_patch).
    Mcp {
        /// The tree the tools patch [default: the current directory].
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// List the formats.
    Formats,
    /// Print a shell's completion script (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// Print the manual page (roff): `grammar-patch man > grammar-patch.1`.
    Man,
    /// Print the format of a patch, or fail.
    Detect {
        /// The patch file; absent or `-` reads standard input.
        patch: Option<PathBuf>,
    },
}

#[derive(Args)]
struct Input {
    /// The patch file, or a JSON tool call `{"patch": ..., "format": ..., "dry_run": ...}`;
    /// absent or `-` reads standard input.
    patch: Option<PathBuf>,
    /// The tree the patch applies to [default: the current directory].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The patch format, or auto to detect it.
    #[arg(long, default_value = "auto", value_name = "F")]
    format: String,
    /// Print one JSON object on stdout instead of rendered diagnostics.
    #[arg(long)]
    json: bool,
    /// ap: forgive a missing header, `#` comments between directives, an
    /// `anchor` without `snippet`, a redundant project prefix on a path and
    /// a top-level insertion inside a block (each a warning).
    #[arg(long)]
    tolerant: bool,
    /// Take N leading directories off every path, as `patch -pN` does (a
    /// unified diff's `a/` and `b/` count as one; without -p they are
    /// taken off when both sides carry them).
    #[arg(short = 'p', long = "strip", value_name = "N")]
    strip: Option<usize>,
    /// Apply the patch in reverse, undoing it, as `patch -R` does (a
    /// deletion must state what it deletes).
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Seconds to wait for another apply that holds the root.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    wait: f64,
    /// Print what was (or would be) written as a git diff, resolved
    /// against the tree (with --json: a `diff` per file). Needs a root.
    #[arg(long)]
    diff: bool,
    /// Print a diffstat of what was (or would be) written, as `git apply
    /// --stat` does, instead of the list of files.
    #[arg(long, conflicts_with_all = ["diff", "numstat"])]
    stat: bool,
    /// Print lines added and removed per file, tab-separated, as `git
    /// apply --numstat` does, instead of the list of files.
    #[arg(long, conflicts_with = "diff")]
    numstat: bool,
    /// Print, instead of the result, the items to send back to the
    /// provider: for OpenAI `apply_patch_call` items, one
    /// `apply_patch_call_output` per call (`completed` or `failed`, with
    /// what to fix); for Anthropic's text-editor commands, one
    /// `tool_result` per `tool_use`.
    #[arg(long, value_enum, value_name = "P", conflicts_with_all = ["json", "diff", "stat", "numstat"])]
    provider_output: Option<ProviderOutput>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProviderOutput {
    /// `apply_patch_call_output` items for OpenAI's `apply_patch` tool.
    Openai,
    /// `tool_result` blocks for Anthropic's text-editor tool.
    Anthropic,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProviderArg {
    /// An OpenAI Responses custom tool with the Lark grammar.
    Openai,
    /// The same custom tool in Chat Completions' shape.
    OpenaiChat,
    /// An Anthropic tool with a `patch` string in its input schema.
    Anthropic,
}

#[derive(Clone, Copy, ValueEnum)]
enum Syntax {
    Lark,
    /// The grammar file of udiff, codex and RepoPatch.
    Pest,
    /// The grammar file of ap (an LR grammar over a line lexer).
    Lalrpop,
}

fn codes_help() -> String {
    let mut s = String::from("Error codes (stable; warnings never reject a patch):\n");
    for code in Code::ALL {
        let kind = if code.severity() == grammar_patch::error::Severity::Error {
            "error"
        } else {
            "warning"
        };
        s.push_str(&format!("  {:<32} {kind}\n", code.as_str()));
    }
    s.push_str("\nExit status: 0 applied (or nothing to do), 1 rejected and nothing written, 2 usage or I/O error.");
    s
}

/// A failure outside the patch's control: message on stderr, exit 2.
fn usage_error(message: impl std::fmt::Display) -> i32 {
    eprintln!("grammar-patch: {message}");
    2
}

fn read_patch(path: Option<&Path>) -> Result<(String, String), String> {
    // Bytes that are not UTF-8 are carried along (see `lossless`): a
    // patch may add a Latin-1 line to a Latin-1 file.
    let (name, text) = match path {
        None => ("<stdin>".to_string(), read_stdin()?),
        Some(p) if p == Path::new("-") => ("<stdin>".to_string(), read_stdin()?),
        Some(p) => (
            p.display().to_string(),
            read_file(p).map_err(|e| format!("{}: {e}", p.display()))?,
        ),
    };
    Ok((name, text))
}

/// A patch file as text, decoded as it is read.
fn read_file(path: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    Ok(grammar_patch::lossless::read(file, size)?.text)
}

fn read_stdin() -> Result<String, String> {
    let mut bytes = vec![];
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("<stdin>: {e}"))?;
    Ok(grammar_patch::lossless::decode(bytes))
}

fn main() -> std::process::ExitCode {
    grammar_patch::timings::start();
    let code = run_cli();
    let _ = std::io::stdout().flush();
    grammar_patch::timings::mark("output written");
    if let Some(report) = grammar_patch::timings::report() {
        eprint!("{report}");
    }
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// Writes to standard output. A reader that went away (`grammar-patch
/// grammar udiff | head`) is not an error: the rest is not wanted.
fn out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn run_cli() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return arguments_refused(e),
    };
    grammar_patch::timings::mark("arguments read");
    let color = diagnostics::Color::from(cli.color);
    match cli.command {
        Command::Apply {
            input,
            dry_run,
            fsync,
        } => patch_command(input, Mode::Apply { dry_run }, fsync, color),
        Command::Lint { input } => patch_command(input, Mode::Lint, false, color),
        Command::Convert { to, input } => convert_command(&to, input, color),
        Command::Grammar { format, syntax, id } => grammar_command(&format, syntax, id.as_deref()),
        Command::Tool {
            format,
            provider,
            id,
            name,
        } => tool_command(&format, provider, id.as_deref(), &name),
        Command::Prompt { format } => match named(&format) {
            Ok(f) => {
                out(&grammar_patch::agent::prompt(f));
                0
            }
            Err(e) => usage_error(e),
        },
        Command::Recover { root, wait } => recover_command(root, wait, color),
        Command::Completions { shell } => {
            let mut script = vec![];
            clap_complete::generate(shell, &mut Cli::command(), "grammar-patch", &mut script);
            out(&String::from_utf8_lossy(&script));
            0
        }
        Command::Man => {
            let mut page = vec![];
            match clap_mangen::Man::new(Cli::command()).render(&mut page) {
                Ok(()) => {
                    out(&String::from_utf8_lossy(&page));
                    0
                }
                Err(e) => usage_error(e),
            }
        }
        Command::Mcp { root } => {
            let root = root.unwrap_or_else(|| PathBuf::from("."));
            match grammar_patch::mcp::serve(&root) {
                Ok(()) => 0,
                Err(e) => usage_error(e),
            }
        }
        Command::Formats => {
            let list: String = Format::ALL
                .iter()
                .map(|f| format!("{:<10} {}\n", f.name(), f.describe()))
                .collect();
            out(&list);
            0
        }
        Command::Detect { patch } => {
            let (_, text) = match read_patch(patch.as_deref()) {
                Ok(p) => p,
                Err(e) => return usage_error(e),
            };
            match grammar_patch::detect(&text) {
                Some(f) => {
                    out(&format!("{f}\n"));
                    0
                }
                None => {
                    eprintln!(
                        "grammar-patch: unknown_format: cannot tell which patch format this is"
                    );
                    1
                }
            }
        }
    }
}

/// `recover`: exit 0 whether or not there was anything to recover, 1 when
/// a journal was not replayed, 2 when recovery could not run.
fn recover_command(root: Option<PathBuf>, wait: f64, color: diagnostics::Color) -> i32 {
    let root = root.unwrap_or_else(|| PathBuf::from("."));
    let Some(wait) = seconds(wait) else {
        return usage_error("--wait takes a number of seconds");
    };
    match grammar_patch::recover(&root, wait) {
        Ok(warnings) if warnings.is_empty() => {
            out("nothing to recover\n");
            0
        }
        Ok(warnings) => {
            diagnostics::emit_stderr(&warnings, "<recover>", "", color);
            // A journal that was not replayed: recovery did not do what it
            // was asked.
            let untrusted = warnings.iter().any(|w| w.code == Code::UntrustedJournal);
            i32::from(untrusted)
        }
        Err(d) => {
            diagnostics::emit_stderr(&[*d], "<recover>", "", color);
            2
        }
    }
}

/// A format, by name (`auto` is no format here: the command prints one).
fn named(name: &str) -> Result<Format, String> {
    if name == "auto" {
        return Err("name a format, not auto".into());
    }
    Format::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("unknown format `{name}` (expected {})", names.join(", "))
    })
}

/// `--id` is for ap only, and must be a patch ID.
fn check_id(format: Format, id: Option<&str>) -> Result<(), String> {
    match id {
        Some(_) if format != Format::Ap => Err("--id applies to the ap format only".into()),
        Some(id) if !grammar_patch::agent::is_patch_id(id) => {
            Err(format!("--id {id}: a patch ID is 8 hex digits"))
        }
        _ => Ok(()),
    }
}

fn tool_command(format: &str, provider: ProviderArg, id: Option<&str>, name: &str) -> i32 {
    if !grammar_patch::agent::is_tool_name(name) {
        return usage_error(format!(
            "--name {name}: a tool name is 1 to 64 letters, digits, `_` or `-`"
        ));
    }
    let format = match named(format) {
        Ok(f) => f,
        Err(e) => return usage_error(e),
    };
    if let Err(e) = check_id(format, id) {
        return usage_error(e);
    }
    let provider = match provider {
        ProviderArg::Openai => grammar_patch::agent::Provider::OpenAi,
        ProviderArg::OpenaiChat => grammar_patch::agent::Provider::OpenAiChat,
        ProviderArg::Anthropic => grammar_patch::agent::Provider::Anthropic,
    };
    let id = match (format, id) {
        (Format::Ap, None) => Some(grammar_patch::agent::random_id()),
        (_, id) => id.map(str::to_string),
    };
    match grammar_patch::agent::tool(format, provider, id.as_deref(), name) {
        Ok(tool) => {
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&tool).unwrap_or_default()
            ));
            0
        }
        Err(e) => usage_error(e),
    }
}

fn grammar_command(name: &str, syntax: Syntax, id: Option<&str>) -> i32 {
    let format = match named(name) {
        Ok(f) => f,
        Err(e) => return usage_error(e),
    };
    if let Err(e) = check_id(format, id) {
        return usage_error(e);
    }
    let text = match syntax {
        Syntax::Lark => format.lark_grammar_for(id),
        _ if id.is_some() => return usage_error("--id specialises the Lark export only"),
        Syntax::Pest => format.pest_grammar().map(Into::into).ok_or_else(|| {
            format!("{format}'s grammar is written in LALRPOP: use --syntax lalrpop")
        }),
        Syntax::Lalrpop => format
            .lalrpop_grammar()
            .map(Into::into)
            .ok_or_else(|| format!("{format}'s grammar is written in pest: use --syntax pest")),
    };
    match text {
        Ok(text) => {
            out(&text);
            0
        }
        Err(e) => usage_error(e),
    }
}

fn patch_command(input: Input, mode: Mode, fsync: bool, color: diagnostics::Color) -> i32 {
    let (json, dry_run) = (input.json, mode != (Mode::Apply { dry_run: false }));
    let (name, text) = match read_patch(input.patch.as_deref()) {
        Ok(p) => p,
        Err(e) => return failed_command(Code::UsageError, e, json, dry_run),
    };
    grammar_patch::timings::mark("patch read");
    let Some(wait) = seconds(input.wait) else {
        let e = "--wait takes a number of seconds".to_string();
        return failed_command(Code::UsageError, e, json, dry_run);
    };
    let answerable = match input.provider_output {
        None => true,
        Some(ProviderOutput::Openai) => grammar_patch::openai::calls(&text).is_some(),
        Some(ProviderOutput::Anthropic) => grammar_patch::anthropic::commands(&text).is_some(),
    };
    if !answerable {
        let e = match input.provider_output {
            Some(ProviderOutput::Openai) => {
                "--provider-output openai answers apply_patch_call items; this patch is not one"
            }
            _ => "--provider-output anthropic answers text-editor commands; this patch is not one",
        };
        return failed_command(Code::UsageError, e.into(), json, dry_run);
    }
    // Only JSON, `--stat`, `--numstat` and a provider's reply show the
    // files' line counts; the list of files does not.
    let shown = input.json || input.stat || input.numstat || input.provider_output.is_some();
    let mut request = read_as_asked(&input, text, &name, wait, mode)
        .fsync(fsync)
        .uncounted(!shown);
    if let Some(root) = &input.root {
        request = request.root(root);
    }
    let dry_run = request.asked() != (Mode::Apply { dry_run: false });
    let counted = input.stat || input.numstat;
    match request.run() {
        Ok(mut outcome) if counted && input.root.is_none() && mode == Mode::Lint => {
            // No tree: the counts the patch itself states.
            if outcome.ok() {
                let options = grammar_patch::Options {
                    strip: input.strip,
                    reverse: input.reverse,
                    ..Default::default()
                };
                let parsed = grammar_patch::parse(outcome.text.as_str(), outcome.format, options);
                outcome.files = parsed.files.iter().map(stated).collect();
            }
            let shown = if input.stat {
                Shown::Stat
            } else {
                Shown::Numstat
            };
            print_outcome(&outcome, &name, input.json, shown, color);
            outcome.exit_code()
        }
        Ok(outcome) if input.provider_output.is_some() => {
            diagnostics::emit_stderr(&outcome.diagnostics, &name, &outcome.text, color);
            let reply = match input.provider_output {
                Some(ProviderOutput::Openai) => {
                    grammar_patch::openai::outputs(&outcome.calls, &outcome)
                }
                _ => grammar_patch::anthropic::results(&outcome.commands, &outcome),
            };
            out(&format!("{reply}\n"));
            outcome.exit_code()
        }
        Ok(outcome) => {
            let shown = match (input.stat, input.numstat) {
                (true, _) => Shown::Stat,
                (_, true) => Shown::Numstat,
                _ if input.diff || outcome.files.iter().any(|f| f.diff.is_some()) => Shown::Diff,
                _ => Shown::Files,
            };
            print_outcome(&outcome, &name, input.json, shown, color);
            outcome.exit_code()
        }
        Err(d) => failed_command(d.code, d.message, json, dry_run),
    }
}

/// A request to do `mode` with the patch `text` (read from `name`) as
/// `apply`, `lint` and `convert` all read it: its format, a JSON tool call
/// (which may make it a dry run or ask for the review diff), ap's tolerance, `-p`, `-R`, the wait for
/// the root, the file it came from.
fn read_as_asked(
    input: &Input,
    text: String,
    name: &str,
    wait: std::time::Duration,
    mode: Mode,
) -> Request<'static> {
    // The flags first: a tool call's own `tolerant` and `diff` add to them.
    let request = Request::new(text)
        .mode(mode)
        .format(&input.format)
        .tolerant(input.tolerant)
        .diff(input.diff)
        .unpacking_tool_call(name)
        .strip(input.strip)
        .reverse(input.reverse)
        .wait(wait);
    match &input.patch {
        Some(file) => request.patch_file(file),
        None => request,
    }
}

/// `convert`: the converted patch alone on stdout (byte for byte), the
/// diagnostics on stderr; exit as `lint` does.
fn convert_command(to: &str, input: Input, color: diagnostics::Color) -> i32 {
    let to = match named(to) {
        Ok(f) => f,
        Err(e) => return usage_error(format!("--to: {e}")),
    };
    if input.json || input.diff || input.stat || input.numstat || input.provider_output.is_some() {
        return usage_error("convert prints the converted patch: it takes no output option");
    }
    let (name, text) = match read_patch(input.patch.as_deref()) {
        Ok(p) => p,
        Err(e) => return usage_error(e),
    };
    let Some(wait) = seconds(input.wait) else {
        return usage_error("--wait takes a number of seconds");
    };
    // Without a root, the patch's own edits, where they say enough.
    let apply = Mode::Apply { dry_run: false };
    let mut request = read_as_asked(&input, text, &name, wait, apply).convert(to);
    if let Some(root) = &input.root {
        request = request.root(root);
    }
    match request.run() {
        Ok(outcome) => {
            diagnostics::emit_stderr(&outcome.diagnostics, &name, &outcome.text, color);
            if let Some(text) = &outcome.converted {
                let _ = std::io::stdout()
                    .lock()
                    .write_all(&grammar_patch::lossless::encode(text));
            }
            outcome.exit_code()
        }
        Err(d) => usage_error(d.message),
    }
}

/// A command that failed before a patch could be applied: the message on
/// stderr, or with `--json` the result object on stdout; exit 2.
fn failed_command(code: Code, message: String, json: bool, dry_run: bool) -> i32 {
    if json {
        out(&format!(
            "{}\n",
            report::failure(code, &message, None, dry_run)
        ));
        return 2;
    }
    eprintln!("grammar-patch: {message}");
    2
}

/// Arguments clap refused: its own message, or with `--json` on `apply`
/// or `lint` the result object instead (an agent reads only stdout).
fn arguments_refused(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    // `args()` would panic on an argument that is not UTF-8.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let patching = matches!(args.first().map(String::as_str), Some("apply" | "lint"));
    let shown = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if patching && !shown && args.iter().any(|a| a == "--json") {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("invalid arguments");
        let message = first.trim_start_matches("error: ").to_string();
        let dry_run = args[0] == "lint" || args.iter().any(|a| a == "--dry-run");
        out(&format!(
            "{}\n",
            report::failure(Code::UsageError, &message, None, dry_run)
        ));
        return 2;
    }
    let _ = e.print();
    if shown {
        0
    } else {
        2
    }
}

/// A wait in seconds, if it is one.
fn seconds(secs: f64) -> Option<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(secs).ok()
}

/// A file as the patch states it, for a diffstat without a tree: a
/// deletion that does not state its content counts no lines.
fn stated(f: &grammar_patch::summary::ParsedFile) -> grammar_patch::FileResult {
    let (path, from) = match &f.to {
        Some(to) => (to.clone(), Some(f.path.clone())),
        None => (f.path.clone(), None),
    };
    let action = match f.operation {
        "add" => FileAction::Added,
        "delete" | "remove" => FileAction::Deleted,
        "rename" => FileAction::Renamed,
        "create_dir" => FileAction::DirCreated,
        _ => FileAction::Modified,
    };
    grammar_patch::FileResult {
        path,
        action,
        from,
        added: f.added,
        removed: f.removed.unwrap_or(0),
        diff: None,
    }
}

/// What a successful run prints on stdout without `--json`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// A line a file: `M path`, `A path`, `R from -> to`.
    Files,
    /// The review diff.
    Diff,
    /// `git apply --stat`.
    Stat,
    /// `git apply --numstat`.
    Numstat,
}

fn print_outcome(
    outcome: &Outcome,
    name: &str,
    json: bool,
    shown: Shown,
    color: diagnostics::Color,
) {
    let mut stdout = std::io::stdout().lock();
    if json {
        let _ = writeln!(stdout, "{}", report::to_json(outcome));
        return;
    }
    diagnostics::emit_stderr(&outcome.diagnostics, name, &outcome.text, color);
    if !outcome.ok() {
        return;
    }
    if matches!(shown, Shown::Stat | Shown::Numstat) {
        let text = match shown {
            Shown::Stat => report::diffstat(&outcome.files),
            _ => report::numstat(&outcome.files),
        };
        let _ = stdout.write_all(text.as_bytes());
        if outcome.mode == (Mode::Apply { dry_run: true }) {
            eprintln!("dry run: nothing was written");
        }
        return;
    }
    if shown == Shown::Diff {
        // The review diff alone on stdout, byte for byte, for `git apply`.
        for f in &outcome.files {
            let text = f.diff.as_deref().unwrap_or("");
            let _ = stdout.write_all(&grammar_patch::lossless::encode(text));
        }
        return;
    }
    for f in &outcome.files {
        let line = match (f.action, &f.from) {
            (FileAction::Added, _) => format!("A {}", f.path),
            (FileAction::Modified, _) => format!("M {}", f.path),
            (FileAction::Deleted, _) => format!("D {}", f.path),
            (FileAction::Renamed, Some(from)) => format!("R {from} -> {}", f.path),
            (FileAction::DirCreated, _) => format!("A {}/", f.path),
            _ => format!("= {}", f.path),
        };
        let _ = writeln!(stdout, "{line}");
    }
    match outcome.mode {
        Mode::Apply { dry_run: true } => eprintln!("dry run: nothing was written"),
        Mode::Lint => {
            let _ = writeln!(stdout, "ok: the patch is valid");
        }
        Mode::Apply { dry_run: false } => {}
    }
}
