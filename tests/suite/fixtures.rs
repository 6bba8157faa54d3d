//! One runner for every fixture directory, in the layout of the shared peer
//! suites (`../shared/peer-suites/README.md`), so they drop in unchanged:
//!
//! ```text
//! tests/fixtures/<format>/<case>/
//!   before/             the tree before (absent: empty)
//!   patch               the patch, byte for byte; `{ROOT}` stands for the root's absolute path
//!   after/              the exact tree after (absent: empty) ...
//!   expect-error        ... or the code of the first error; the tree must not change
//!   expect-warnings     warning codes, one per line (absent: none)
//!   twice               apply the same patch again: it must succeed and change nothing
//!   args                extra arguments (`--format F`, `--tolerant`, `--strip N`, `--reverse`)
//!   before-empty-dirs, after-empty-dirs   empty directories git cannot store, one per line
//!   modes               `path octal-mode` lines: set before, checked after
//!   links               `path target` lines: symbolic links added to before/
//!   after-modes         `path octal-mode` lines: checked after, in place of `modes`
//!   after-links         `path target` lines: symbolic links expected in after/
//!   outside-grammar     why the parser accepts this patch although the Lark export
//!                       does not (a lenient reading, with or without a warning)
//!   inside-grammar      why a syntax error is still in the Lark language (a rule
//!                       the grammar cannot state, such as "this value is not empty")
//! ```
//!
//! "Exact tree" means the same files with the same bytes and the same
//! directories. Links are listed rather than committed because a link that
//! leaves the tree (the point of those cases) would send cargo's file scan
//! through it.
//!
//! Each case runs twice: on disk (a temporary copy, through `DiskTree`) and
//! in memory (`MemTree`), and both must agree with the expectation. The
//! rendered diagnostics are snapshotted with insta (from the memory run,
//! whose root path is stable).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use grammar_patch::apply::{DiskTree, FileTree, MemTree};
use grammar_patch::error::{Code, Severity};
use grammar_patch::formats::Format;
use grammar_patch::{diagnostics, run_with, Mode, Options, Outcome};

use super::support::{describe_difference, mode_of, Snapshot};

const MEM_ROOT: &str = "/mem/root";

struct Case {
    /// The suite's name: its format's, or `anthropic` for text-editor
    /// commands (JSON, which no grammar describes).
    suite: &'static str,
    name: String,
    dir: PathBuf,
    patch: String,
    /// `--format` from `args`; `None` detects.
    forced: Option<Format>,
    options: Options,
    before: Snapshot,
    after: Snapshot,
    error: Option<String>,
    warnings: Vec<String>,
    twice: bool,
    modes: BTreeMap<String, u32>,
    /// The modes checked after: `modes`, overridden by `after-modes`.
    after_modes: BTreeMap<String, u32>,
}

fn read_opt(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok()
}

pub fn cases(format: Format) -> Vec<(String, PathBuf)> {
    let mut all = suite(format.name());
    if format == Format::Ap {
        all.extend(suite(AP_32));
    }
    all
}

/// The 3.2 peer suite: its README says it follows the 3.2 defaults, which
/// is our `--tolerant`.
const AP_32: &str = "ap-3.2";

/// The cases of one directory under `tests/fixtures/`.
pub fn suite(dir: &str) -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    let mut out: Vec<(String, PathBuf)> = fs::read_dir(&root)
        .map(|rd| {
            rd.map(|e| e.unwrap().path())
                .filter(|p| p.is_dir())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_str().unwrap().to_string(), p))
        .collect();
    out.sort();
    out
}

/// The success fixtures of `format` that a tree in memory holds as they
/// are: no arguments, links, modes, empty directories, or `{ROOT}` in the
/// patch. Each: its name, before-tree, after-tree and patch.
pub fn plain_successes(format: Format) -> Vec<(String, Snapshot, Snapshot, String)> {
    const SPECIAL: [&str; 8] = [
        "expect-error",
        "args",
        "links",
        "modes",
        "after-links",
        "after-modes",
        "before-empty-dirs",
        "after-empty-dirs",
    ];
    cases(format)
        .into_iter()
        .filter(|(_, dir)| SPECIAL.iter().all(|f| !dir.join(f).exists()))
        .filter_map(|(name, dir)| {
            let patch = grammar_patch::lossless::decode(fs::read(dir.join("patch")).ok()?);
            (!patch.contains("{ROOT}")).then(|| {
                let before = Snapshot::load(&dir.join("before"));
                (name, before, Snapshot::load(&dir.join("after")), patch)
            })
        })
        .collect()
}

/// Lines of an optional file.
fn lines_of(path: &Path) -> Vec<String> {
    read_opt(path)
        .map(|s| {
            s.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A tree directory plus the empty directories listed beside it.
fn tree(dir: &Path, name: &str) -> Snapshot {
    let mut snap = Snapshot::load(&dir.join(name));
    for empty in lines_of(&dir.join(format!("{name}-empty-dirs"))) {
        let path = empty.trim_end_matches('/');
        for (i, _) in path.match_indices('/') {
            snap.dirs.insert(path[..i].to_string());
        }
        snap.dirs.insert(path.to_string());
    }
    snap
}

fn load(suite: &'static str, name: String, dir: PathBuf) -> Case {
    let patch = fs::read(dir.join("patch")).expect("patch file");
    let mut warnings = lines_of(&dir.join("expect-warnings"));
    warnings.sort();
    let modes_in = |name: &str| -> BTreeMap<String, u32> {
        lines_of(&dir.join(name))
            .iter()
            .filter_map(|l| l.split_once(' '))
            .map(|(p, m)| (p.to_string(), u32::from_str_radix(m.trim(), 8).unwrap()))
            .collect()
    };
    let modes = modes_in("modes");
    let mut after_modes = modes.clone();
    after_modes.extend(modes_in("after-modes"));
    let mut after = tree(&dir, "after");
    for line in lines_of(&dir.join("after-links")) {
        if let Some((path, target)) = line.split_once(' ') {
            after.links.insert(path.to_string(), target.to_string());
        }
    }
    let mut before = tree(&dir, "before");
    for line in lines_of(&dir.join("links")) {
        if let Some((path, target)) = line.split_once(' ') {
            before.links.insert(path.to_string(), target.to_string());
        }
    }
    let args = read_opt(&dir.join("args")).unwrap_or_default();
    let mut words = args.split_whitespace();
    let mut forced = None;
    let mut options = Options {
        tolerant: dir.parent().is_some_and(|p| p.ends_with(AP_32)),
        // Every run also builds the review diff, which `git apply` must
        // turn the before-tree into the after-tree with (`review_diff`).
        diff: true,
        ..Options::default()
    };
    while let Some(word) = words.next() {
        match word {
            "--format" => forced = words.next().and_then(Format::from_name),
            "--tolerant" => options.tolerant = true,
            "--strip" => options.strip = words.next().and_then(|n| n.parse().ok()),
            "--reverse" => options.reverse = true,
            other => panic!("{}: unsupported argument {other}", dir.display()),
        }
    }
    Case {
        suite,
        patch: grammar_patch::lossless::decode(patch),
        forced,
        options,
        before,
        after,
        error: read_opt(&dir.join("expect-error")).map(|s| s.trim().to_string()),
        warnings,
        twice: dir.join("twice").exists(),
        modes,
        after_modes,
        name,
        dir,
    }
}

fn warning_codes(outcome: &Outcome) -> Vec<String> {
    let mut codes: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.code.as_str().to_string())
        .collect();
    codes.sort();
    codes
}

/// Checks one run's outcome and resulting tree; returns the problems found.
fn check(case: &Case, how: &str, outcome: &Outcome, tree_after: &Snapshot) -> Vec<String> {
    super::support::assert_valid_result(&grammar_patch::report::to_value(outcome));
    let mut problems = vec![];
    let first_error = outcome.diagnostics.iter().find(|d| d.is_error());
    match (&case.error, first_error) {
        (Some(want), Some(got)) => {
            if got.code.as_str() != want {
                problems.push(format!(
                    "{how}: expected error {want}, got {} ({})",
                    got.code, got.message
                ));
            }
            if tree_after != &case.before {
                problems.push(format!(
                    "{how}: the tree changed although the patch was rejected:\n{}",
                    describe_difference(&case.before, tree_after)
                ));
            }
        }
        (Some(want), None) => problems.push(format!(
            "{how}: expected error {want}, but the patch applied"
        )),
        (None, Some(got)) => problems.push(format!(
            "{how}: unexpected error {}: {}",
            got.code, got.message
        )),
        (None, None) => {
            if tree_after != &case.after {
                problems.push(format!(
                    "{how}: wrong result:\n{}",
                    describe_difference(&case.after, tree_after)
                ));
            }
            if warning_codes(outcome) != case.warnings {
                problems.push(format!(
                    "{how}: warnings {:?}, expected {:?}",
                    warning_codes(outcome),
                    case.warnings
                ));
            }
        }
    }
    problems
}

/// Applies the case's patch to `tree` for real.
fn apply(case: &Case, patch: &str, tree: &mut dyn FileTree, root: &Path) -> Outcome {
    run_with(
        patch,
        case.forced,
        Mode::Apply { dry_run: false },
        Some(tree),
        Some(root),
        case.options,
    )
}

/// The review diff of a successful apply, applied by `git apply` to the
/// before-tree, must give the after-tree: the same files, links and modes
/// (directories aside: git keeps none).
fn review_diff(case: &Case, outcome: &Outcome) -> Vec<String> {
    let diff: String = outcome
        .files
        .iter()
        .map(|f| f.diff.as_deref().expect("asked for"))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    case.before.write(tmp.path(), &case.modes);
    let patch = tmp.path().join(".review.diff");
    fs::write(&patch, grammar_patch::lossless::encode(&diff)).unwrap();
    let out = std::process::Command::new("git")
        .args(["apply", "--unsafe-paths", "--allow-empty", ".review.diff"])
        .current_dir(tmp.path())
        .output()
        .expect("git is installed");
    fs::remove_file(&patch).unwrap();
    if !out.status.success() {
        return vec![format!(
            "review diff: git apply refused it: {}\n{diff}",
            String::from_utf8_lossy(&out.stderr)
        )];
    }
    let mut got = Snapshot::load(tmp.path());
    let mut want = case.after.clone();
    got.dirs.clear();
    want.dirs.clear();
    let mut problems = vec![];
    if got != want {
        problems.push(format!(
            "review diff: git apply gave another tree:\n{}\n{diff}",
            describe_difference(&want, &got)
        ));
    }
    for (path, mode) in &case.after_modes {
        let have = mode_of(&tmp.path().join(path));
        if have != *mode {
            problems.push(format!(
                "review diff: {path} has mode {have:o}, expected {mode:o}"
            ));
        }
    }
    problems
}

/// With `twice`: the same patch again must succeed and leave the tree as it is.
fn again(case: &Case, how: &str, outcome: Outcome, after: &Snapshot) -> Vec<String> {
    let first_error = outcome.diagnostics.iter().find(|d| d.is_error());
    match first_error {
        None if after == &case.after => vec![],
        None => vec![format!(
            "{how}, second run: the tree changed:\n{}",
            describe_difference(&case.after, after)
        )],
        Some(e) => vec![format!("{how}, second run: {} ({})", e.code, e.message)],
    }
}

fn run_on_disk(case: &Case) -> (Outcome, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    case.before.write(tmp.path(), &case.modes);
    let mut tree = DiskTree::new(tmp.path()).unwrap();
    let root = tree.root().to_path_buf();
    let patch = case.patch.replace("{ROOT}", root.to_str().unwrap());
    let outcome = apply(case, &patch, &mut tree, &root);
    let after = Snapshot::load(tmp.path());
    let mut problems = check(case, "disk", &outcome, &after);
    if outcome.ok() && problems.is_empty() {
        problems.extend(review_diff(case, &outcome));
    }
    if case.twice && problems.is_empty() {
        let second = apply(case, &patch, &mut tree, &root);
        problems.extend(again(case, "disk", second, &Snapshot::load(tmp.path())));
    }
    if case.error.is_none() {
        for (path, mode) in &case.after_modes {
            let got = mode_of(&tmp.path().join(path));
            if got != *mode {
                problems.push(format!("disk: {path} has mode {got:o}, expected {mode:o}"));
            }
        }
    }
    (outcome, problems)
}

fn run_in_memory(case: &Case) -> Option<(Outcome, Vec<String>)> {
    if !case.before.links.is_empty() {
        return None; // the memory tree has no symbolic links
    }
    let mut tree: MemTree = case.before.to_mem(&case.modes);
    let patch = case.patch.replace("{ROOT}", MEM_ROOT);
    let root = Path::new(MEM_ROOT);
    let outcome = apply(case, &patch, &mut tree, root);
    let mut problems = check(case, "memory", &outcome, &Snapshot::from_mem(&tree));
    if case.error.is_none() {
        for (path, mode) in &case.after_modes {
            let got = tree.files.get(path).map_or(0, |f| f.1 & 0o777);
            if got != *mode {
                problems.push(format!(
                    "memory: {path} has mode {got:o}, expected {mode:o}"
                ));
            }
        }
    }
    if case.twice && problems.is_empty() {
        let second = apply(case, &patch, &mut tree, root);
        problems.extend(again(case, "memory", second, &Snapshot::from_mem(&tree)));
    } else if case.error.is_none() && problems.is_empty() {
        // Re-application never changes the tree: the second run is
        // skipped as done already, or refused, and writes nothing.
        let after = tree.clone();
        let second = apply(case, &patch, &mut tree, root);
        if tree != after {
            problems.push(format!(
                "memory: applied a second time, the patch changed the tree again ({:?})",
                second
                    .diagnostics
                    .iter()
                    .map(|d| d.code.as_str())
                    .collect::<Vec<_>>()
            ));
        }
    }
    Some((outcome, problems))
}

fn run_format(format: Format) {
    run_suite(format.name(), cases(format));
}

fn run_suite(suite: &'static str, cases: Vec<(String, PathBuf)>) {
    let mut failures = vec![];
    assert!(!cases.is_empty(), "no fixtures for {suite}");
    for (name, dir) in cases {
        let case = load(suite, name, dir);
        let (disk_outcome, mut problems) = run_on_disk(&case);
        let shown = match run_in_memory(&case) {
            Some((outcome, more)) => {
                problems.extend(more);
                outcome
            }
            None => disk_outcome,
        };
        if problems.is_empty() && !shown.diagnostics.is_empty() {
            let rendered = diagnostics::render_plain(&shown.diagnostics, "patch", &shown.text);
            insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false, description => case.dir.display().to_string().split("tests/").last().unwrap_or_default().to_string() }, {
                insta::assert_snapshot!(format!("{}__{}", case.suite, case.name), rendered);
            });
        }
        failures.extend(
            problems
                .into_iter()
                .map(|p| format!("{suite}/{}: {p}", case.name)),
        );
    }
    assert!(
        failures.is_empty(),
        "{} fixture problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn udiff_fixtures() {
    run_format(Format::Udiff);
}

/// `tests/fixtures/codex/` holds Codex's own `apply_patch` scenarios (the
/// shared peer suite, copied unchanged, numbered `NNN_`) and ours (`c_*`).
#[test]
fn codex_fixtures() {
    run_format(Format::Codex);
}

/// `tests/fixtures/repopatch/`: every operation, the sequential semantics,
/// text fidelity, and each "Must Never Do" lint rule of the spec.
#[test]
fn repopatch_fixtures() {
    run_format(Format::Repopatch);
}

/// `tests/fixtures/ap/`: the ap peer suite (3.1, strict), copied unchanged,
/// and ours (`g_*`); `tests/fixtures/ap-3.2/`: the 3.2 peer suite, in
/// tolerant mode as its README asks.
#[test]
fn ap_fixtures() {
    run_format(Format::Ap);
}

/// `tests/fixtures/searchreplace/`: ours, and Aider's own edit-block tests
/// translated to data (`aider_*`, each with its `origin`; a `deviation`
/// file says where and why the expectation differs from Aider's).
#[test]
fn searchreplace_fixtures() {
    run_format(Format::Searchreplace);
}

/// `tests/fixtures/anthropic/`: Anthropic's text-editor commands (JSON:
/// one `input`, `tool_use` blocks, an assistant message), which no grammar
/// describes; they apply through the same applier.
#[test]
fn anthropic_fixtures() {
    run_suite("anthropic", suite("anthropic"));
}

/// Every error a text-editor command can meet has a fixture: a text that
/// occurs nowhere or several times, a line past the end, a file to create
/// that exists, a file to edit that does not, a path out of the root.
/// (A command the tool refuses, `view` or `undo_edit`, is a usage error:
/// see anthropic.rs.)
#[test]
fn anthropic_fixtures_cover_its_error_codes() {
    let codes = [
        Code::ContextNotFound,
        Code::AmbiguousContext,
        Code::FileExists,
        Code::FileNotFound,
        Code::PathEscape,
    ];
    assert_suite_covers("anthropic", suite("anthropic"), &codes);
}

/// Asserts that some fixture of `format` expects each of `codes`.
fn assert_covered(format: Format, codes: &[Code]) {
    assert_suite_covers(format.name(), cases(format), codes);
}

fn assert_suite_covers(suite: &str, cases: Vec<(String, PathBuf)>, codes: &[Code]) {
    let format = suite;
    let covered: Vec<String> = cases
        .iter()
        .filter_map(|(_, dir)| read_opt(&dir.join("expect-error")))
        .map(|s| s.trim().to_string())
        .collect();
    for code in codes {
        assert!(
            covered.iter().any(|c| c == code.as_str()),
            "no {format} fixture raises {code}"
        );
    }
}

/// Every error code a udiff patch can raise has a fixture that raises it.
/// (`io_error` comes from the file system, not a patch: see atomic.rs;
/// `target_changed` and `root_busy` from other processes: see trust.rs;
/// `recovery_conflict` from an interrupted apply and `cancelled` from an
/// MCP client: see hostile.rs;
/// `usage_error` from the command line: see cli.rs; `id_mismatch` belongs
/// to ap.)
#[test]
fn udiff_fixtures_cover_every_udiff_error_code() {
    let not_from_udiff = [
        Code::IoError,
        Code::TargetChanged,
        Code::RootBusy,
        Code::UsageError,
        Code::IdMismatch,
        Code::RecoveryConflict,
        Code::Cancelled,
    ];
    let codes: Vec<Code> = Code::ALL
        .iter()
        .copied()
        .filter(|c| c.severity() == Severity::Error && !not_from_udiff.contains(c))
        .collect();
    assert_covered(Format::Udiff, &codes);
}

/// The error codes every format raises from a patch (`io_error` comes from
/// the file system: see atomic.rs).
const EVERY_FORMAT: [Code; 8] = [
    Code::SyntaxError,
    Code::PathEscape,
    Code::DuplicateFilePatch,
    Code::FileNotFound,
    Code::FileExists,
    Code::ContextNotFound,
    Code::AmbiguousContext,
    Code::UnsupportedFile,
];

/// Every error code a codex patch can raise has a fixture that raises it.
#[test]
fn codex_fixtures_cover_every_codex_error_code() {
    assert_covered(Format::Codex, &EVERY_FORMAT);
    assert_covered(Format::Codex, &[Code::InvalidHunkBody]);
}

/// Every error code a RepoPatch patch can raise has a fixture that raises it.
#[test]
fn repopatch_fixtures_cover_every_repopatch_error_code() {
    assert_covered(Format::Repopatch, &EVERY_FORMAT);
}

/// Every error code a SEARCH/REPLACE message can raise has a fixture that
/// raises it (`duplicate_file_patch` cannot arise: blocks of one path
/// apply in turn, and no block deletes or moves a file).
#[test]
fn searchreplace_fixtures_cover_every_searchreplace_error_code() {
    let codes: Vec<Code> = EVERY_FORMAT
        .iter()
        .copied()
        .filter(|&c| c != Code::DuplicateFilePatch)
        .chain([Code::MissingFileHeader])
        .collect();
    assert_covered(Format::Searchreplace, &codes);
}

/// Every error code an ap patch can raise has a fixture that raises it.
#[test]
fn ap_fixtures_cover_every_ap_error_code() {
    assert_covered(Format::Ap, &EVERY_FORMAT);
    assert_covered(Format::Ap, &[Code::IdMismatch]);
}

/// A line of a block that is found (`in_locator`), to spoil and remember;
/// a line elsewhere that repeats one, spoiled alike; or `None`. Only the
/// blank ones when `blank`, else the others.
fn block_line<'a>(
    body: &'a str,
    in_locator: bool,
    blank: bool,
    found: &mut Vec<&'a str>,
) -> Option<&'a str> {
    if body.trim().is_empty() != blank {
        None
    } else if in_locator {
        found.push(body);
        Some(body)
    } else if !blank && found.contains(&body) {
        Some(body)
    } else {
        None
    }
}

/// The lines of `patch` an applier must find, not write: udiff's and
/// codex's context lines, RepoPatch's old blocks, ap's `snippet`, `anchor`
/// and `snippet_tail` values. Each spoiled by `spoil`: the blank ones when
/// `blank`, else the others; `None` when the patch has none.
fn spoil_found_lines(
    format: Format,
    patch: &str,
    blank: bool,
    spoil: fn(&str) -> String,
) -> Option<String> {
    let mut out = String::new();
    let mut spoiled = false;
    let mut in_locator = false;
    let id = patch
        .lines()
        .find_map(|l| l.strip_suffix(" AP 3.1").or(l.strip_suffix(" AP 3.2")));
    // The lines found: a block that writes them again in the same
    // operation (RepoPatch's new block, ap's content) writes them spoiled
    // alike, as a model would. Not blank ones: which blank line written is
    // the copy of which found is not known.
    let mut found: Vec<&str> = vec![];
    for line in patch.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let (body, cr) = match body.strip_suffix('\r') {
            Some(b) => (b, "\r"),
            None => (body, ""),
        };
        let (prefix, text) = match format {
            Format::Udiff | Format::Codex => match body.strip_prefix(' ') {
                Some(text) if text.trim().is_empty() == blank => (" ", Some(text)),
                _ => ("", None),
            },
            Format::Repopatch => {
                if ["REPLACE", "DELETE", "INSERT BEFORE", "INSERT AFTER"].contains(&body.trim()) {
                    found.clear();
                }
                if let Some(text) = body.strip_prefix("- ") {
                    found.push(text);
                }
                match body.strip_prefix("- ").or_else(|| {
                    body.strip_prefix(". ")
                        .filter(|t| !blank && found.contains(t))
                }) {
                    Some(text) if text.trim().is_empty() == blank => (&body[..2], Some(text)),
                    _ => ("", None),
                }
            }
            Format::Searchreplace => {
                let marker = ["<<<<<<<", "=======", ">>>>>>>"]
                    .iter()
                    .any(|m| body.starts_with(m));
                if body.starts_with("<<<<<<<") {
                    in_locator = true;
                    found.clear();
                } else if body.starts_with("=======") {
                    in_locator = false;
                }
                match marker {
                    true => ("", None),
                    false => ("", block_line(body, in_locator, blank, &mut found)),
                }
            }
            Format::Ap => {
                let directive = id.and_then(|id| body.strip_prefix(id)).map(str::trim);
                if let Some(word) = directive {
                    in_locator = matches!(word, "snippet" | "anchor" | "snippet_tail");
                    if ["REPLACE", "DELETE", "INSERT_AFTER", "INSERT_BEFORE", "FILE"]
                        .contains(&word)
                    {
                        found.clear();
                    }
                    ("", None)
                } else {
                    ("", block_line(body, in_locator, blank, &mut found))
                }
            }
        };
        match text {
            Some(text) => {
                // A blank line emptied loses its marker's space as well.
                let text = spoil(text);
                out.push_str(match text.is_empty() {
                    true => prefix.trim_end(),
                    false => prefix,
                });
                out.push_str(&text);
                out.push_str(cr);
                out.push('\n');
                spoiled = true;
            }
            None => out.push_str(line),
        }
    }
    spoiled.then_some(out)
}

/// The metamorphic property over every success fixture: the lines the
/// applier must find, spoiled the way models spoil them (quoted a level
/// deeper, with trailing spaces), give exactly the fixture's result, or a
/// refusal that writes nothing; never another tree.
#[test]
fn spoiled_success_fixtures_give_their_result_or_a_refusal() {
    // (what, whether it spoils the blank lines, how)
    type Spoiler = (&'static str, bool, fn(&str) -> String);
    let spoilers: [Spoiler; 5] = [
        ("one level deeper", false, |l| format!("    {l}")),
        ("trailing spaces", false, |l| format!("{l}  ")),
        ("tabs for four spaces", false, |l| {
            let n = l.len() - l.trim_start_matches(' ').len();
            format!("{}{}{}", "\t".repeat(n / 4), " ".repeat(n % 4), &l[n..])
        }),
        ("blank lines padded", true, |l| format!("{l}    ")),
        ("blank lines emptied", true, |_| String::new()),
    ];
    let (mut right, mut refused, mut problems) = (0, 0, vec![]);
    for format in [Format::Udiff, Format::Codex, Format::Repopatch, Format::Ap] {
        for (name, dir) in cases(format) {
            let case = load(format.name(), name, dir);
            // Patches already spoiled (their warnings say so) are left out:
            // a second spoiling may undo the first (make the context exact
            // again), and then the added lines are rightly left as written.
            let spoiled_already = case.warnings.iter().any(|w| w == "whitespace_fuzz");
            if case.error.is_some()
                || !case.before.links.is_empty()
                || case.patch.contains("{ROOT}")
                || spoiled_already
            {
                continue;
            }
            for (what, blank, spoil) in spoilers {
                let Some(patch) = spoil_found_lines(format, &case.patch, blank, spoil) else {
                    continue;
                };
                let mut tree: MemTree = case.before.to_mem(&case.modes);
                let outcome = apply(&case, &patch, &mut tree, Path::new(MEM_ROOT));
                let got = Snapshot::from_mem(&tree);
                if outcome.ok() && got == case.after {
                    right += 1;
                } else if !outcome.ok() && got == case.before {
                    refused += 1;
                } else {
                    problems.push(format!(
                        "{format}/{}: {what}: {}\n{patch}",
                        case.name,
                        super::support::describe_difference(&case.after, &got)
                    ));
                }
            }
        }
    }
    eprintln!(
        "spoiled success fixtures: {right} right, {refused} refused, {} wrong",
        problems.len()
    );
    assert!(
        problems.is_empty(),
        "{} wrong:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
