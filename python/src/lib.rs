//! `grammar_patch._native`: the PyO3 bindings. Every function returns what
//! the command line prints (JSON text, a grammar, a prompt) and raises
//! `UsageError` for what the command line exits 2 on; the Python package
//! (`pysrc/grammar_patch/__init__.py`) decodes the JSON into typed dicts.
//! Applying runs with the GIL released.

use std::borrow::Cow;
use std::path::PathBuf;

use grammar_patch::agent::{self, Provider};
use grammar_patch::Format;
use grammar_patch::{lossless, Caller, MemTree, Request};
use pyo3::create_exception;
use pyo3::prelude::*;

create_exception!(
    _native,
    UsageError,
    pyo3::exceptions::PyValueError,
    "The call itself is wrong (an unknown format, a root that cannot be opened); nothing was read or written."
);

fn usage(message: impl Into<String>) -> PyErr {
    UsageError::new_err(message.into())
}

fn format_named(name: &str) -> PyResult<Format> {
    match Format::from_arg(name).map_err(usage)? {
        Some(f) => Ok(f),
        None => Err(usage("name a format, not auto")),
    }
}

fn run(py: Python<'_>, request: Request<'static>, root: Option<PathBuf>) -> PyResult<String> {
    let request = match root {
        Some(root) => request.root(root),
        None => request,
    };
    let result = py.detach(move || request.run());
    match result {
        Ok(outcome) => Ok(grammar_patch::report::to_json(&outcome)),
        Err(d) => Err(usage(d.message)),
    }
}

/// A request for `patch` (Unicode text) in `format` (`None`: detect it).
fn request(patch: String, format: Option<String>, tolerant: bool, diff: bool) -> Request<'static> {
    let request = Request::new(lossless::from_text(patch))
        .caller(Caller::Python)
        .tolerant(tolerant)
        .diff(diff);
    match format {
        Some(f) => request.format(&f),
        None => request,
    }
}

/// Applies `patch` to the tree under `root`: every file or none. Returns
/// the JSON result; a refused patch is a result with `ok` false.
#[pyfunction]
#[pyo3(signature = (patch, root, *, format=None, dry_run=false, tolerant=false, diff=false))]
fn apply(
    py: Python<'_>,
    patch: String,
    root: PathBuf,
    format: Option<String>,
    dry_run: bool,
    tolerant: bool,
    diff: bool,
) -> PyResult<String> {
    let request = request(patch, format, tolerant, diff).dry_run(dry_run);
    run(py, request, Some(root))
}

/// Checks `patch`, and with `root` locates every edit in that tree;
/// writes nothing.
#[pyfunction]
#[pyo3(signature = (patch, root=None, *, format=None, tolerant=false, diff=false))]
fn lint(
    py: Python<'_>,
    patch: String,
    root: Option<PathBuf>,
    format: Option<String>,
    tolerant: bool,
    diff: bool,
) -> PyResult<String> {
    run(py, request(patch, format, tolerant, diff).lint(), root)
}

/// Files given in memory: (path, bytes) pairs.
type Files = Vec<(String, Vec<u8>)>;
/// A result's JSON and the tree after it (every file, as bytes).
type InMemory = (String, Vec<(String, Cow<'static, [u8]>)>);

fn tree_of(files: Files) -> PyResult<MemTree> {
    let mut tree = MemTree::default();
    for (path, bytes) in files {
        tree.insert(&path, bytes).map_err(usage)?;
    }
    Ok(tree)
}

fn in_memory(
    result: Result<grammar_patch::Outcome, grammar_patch::Refused>,
    tree: MemTree,
) -> PyResult<InMemory> {
    let outcome = result.map_err(|d| usage(d.message))?;
    let files = tree
        .files
        .into_iter()
        .map(|(path, (bytes, _))| (path, Cow::Owned(bytes)))
        .collect();
    Ok((grammar_patch::report::to_json(&outcome), files))
}

/// Applies `patch` to files held in memory: every file or none. Returns
/// the JSON result and the files after it.
#[pyfunction]
#[pyo3(signature = (files, patch, *, format=None, tolerant=false, diff=false))]
fn apply_to(
    py: Python<'_>,
    files: Files,
    patch: String,
    format: Option<String>,
    tolerant: bool,
    diff: bool,
) -> PyResult<InMemory> {
    let mut tree = tree_of(files)?;
    let request = request(patch, format, tolerant, diff);
    let result = py.detach(|| request.run_in(&mut tree));
    in_memory(result, tree)
}

/// [`apply_to`] for many independent (files, patch) pairs, on `threads`
/// threads (0: one per core), the GIL released.
#[pyfunction]
#[pyo3(signature = (jobs, *, format=None, tolerant=false, diff=false, threads=0))]
fn apply_batch(
    py: Python<'_>,
    jobs: Vec<(Files, String)>,
    format: Option<String>,
    tolerant: bool,
    diff: bool,
    threads: usize,
) -> PyResult<Vec<InMemory>> {
    let jobs = jobs
        .into_iter()
        .map(|(files, patch)| {
            Ok((
                request(patch, format.clone(), tolerant, diff),
                tree_of(files)?,
            ))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let done = py.detach(|| grammar_patch::batch::run_all(jobs, threads));
    done.into_iter()
        .map(|(r, tree)| in_memory(r, tree))
        .collect()
}

/// OpenAI `apply_patch_call` items (JSON text) applied to the tree under
/// `root`, all or none: the `apply_patch_call_output` items to send back
/// (JSON text).
#[pyfunction]
#[pyo3(signature = (items, root, *, dry_run=false))]
fn apply_openai(py: Python<'_>, items: String, root: PathBuf, dry_run: bool) -> PyResult<String> {
    if grammar_patch::openai::calls(&items).is_none() {
        return Err(usage("not apply_patch_call items (or bare operations)"));
    }
    replied(py, items, root, dry_run, |o| {
        grammar_patch::openai::outputs(&o.calls, o)
    })
}

/// A provider's reply applied under `root`, and the answer `answer` makes
/// of the outcome (JSON text).
fn replied(
    py: Python<'_>,
    reply: String,
    root: PathBuf,
    dry_run: bool,
    answer: fn(&grammar_patch::Outcome) -> serde_json::Value,
) -> PyResult<String> {
    let request = Request::new(reply)
        .caller(Caller::Python)
        .dry_run(dry_run)
        .root(root);
    let outcome = py
        .detach(move || request.run())
        .map_err(|d| usage(d.message))?;
    Ok(answer(&outcome).to_string())
}

/// Anthropic text-editor commands (JSON text) applied to the tree under
/// `root`, all or none: the `tool_result` blocks to send back (JSON text).
#[pyfunction]
#[pyo3(signature = (commands, root, *, dry_run=false))]
fn apply_anthropic(
    py: Python<'_>,
    commands: String,
    root: PathBuf,
    dry_run: bool,
) -> PyResult<String> {
    match grammar_patch::anthropic::commands(&commands) {
        None => {
            return Err(usage(
                "not text-editor commands (`str_replace`, `create`, `insert`)",
            ))
        }
        Some(Err(e)) => return Err(usage(format!("text-editor commands: {e}"))),
        Some(Ok(_)) => {}
    }
    replied(py, commands, root, dry_run, |o| {
        grammar_patch::anthropic::results(&o.commands, o)
    })
}

/// `patch`'s edits, located in the tree under `root`, printed in format
/// `to` (verified): the JSON result and the printed patch (`None` when
/// refused). Writes nothing.
#[pyfunction]
#[pyo3(signature = (patch, root, to, *, format=None, tolerant=false))]
fn convert(
    py: Python<'_>,
    patch: String,
    root: Option<PathBuf>,
    to: &str,
    format: Option<String>,
    tolerant: bool,
) -> PyResult<(String, Option<String>)> {
    let to = format_named(to)?;
    let mut request = request(patch, format, tolerant, false).convert(to);
    if let Some(root) = root {
        request = request.root(root);
    }
    let outcome = py
        .detach(move || request.run())
        .map_err(|d| usage(d.message))?;
    Ok((grammar_patch::report::to_json(&outcome), outcome.converted))
}

/// What `patch` holds, read without a tree: JSON with `files` (each with
/// its operation, hunks and line counts) and `diagnostics`.
#[pyfunction]
#[pyo3(signature = (patch, *, format=None, tolerant=false))]
fn parse(
    py: Python<'_>,
    patch: String,
    format: Option<String>,
    tolerant: bool,
) -> PyResult<String> {
    let format = match format {
        Some(name) => Format::from_arg(&name).map_err(usage)?,
        None => None,
    };
    let options = grammar_patch::Options {
        tolerant,
        ..Default::default()
    };
    let patch = lossless::from_text(patch);
    let parsed = py.detach(|| grammar_patch::parse(patch, format, options));
    Ok(grammar_patch::summary::to_value(&parsed).to_string())
}

fn checked_id(format: Format, id: Option<&str>) -> PyResult<()> {
    match id {
        Some(_) if format != Format::Ap => Err(usage("id applies to the ap format only")),
        Some(id) if !agent::is_patch_id(id) => {
            Err(usage(format!("id {id}: a patch ID is 8 hex digits")))
        }
        _ => Ok(()),
    }
}

/// The format's Lark grammar (ap: bound to `id` if given).
#[pyfunction]
#[pyo3(signature = (format, id=None))]
fn grammar(format: &str, id: Option<&str>) -> PyResult<String> {
    let format = format_named(format)?;
    checked_id(format, id)?;
    format
        .lark_grammar_for(id)
        .map(|g| g.into_owned())
        .map_err(usage)
}

/// A tool definition (JSON) for `provider`: `openai`, `openai-chat` or
/// `anthropic`.
#[pyfunction]
#[pyo3(signature = (format, provider, id=None, name="apply_patch"))]
fn tool(format: &str, provider: &str, id: Option<&str>, name: &str) -> PyResult<String> {
    let format = format_named(format)?;
    checked_id(format, id)?;
    let provider = match provider {
        "openai" => Provider::OpenAi,
        "openai-chat" => Provider::OpenAiChat,
        "anthropic" => Provider::Anthropic,
        other => {
            return Err(usage(format!(
                "unknown provider `{other}` (openai, openai-chat, anthropic)"
            )))
        }
    };
    if !agent::is_tool_name(name) {
        return Err(usage(format!(
            "name {name}: 1 to 64 letters, digits, `_` or `-`"
        )));
    }
    let id = match (format, id) {
        (Format::Ap, None) => Some(agent::random_id()),
        (_, id) => id.map(str::to_string),
    };
    agent::tool(format, provider, id.as_deref(), name)
        .map(|v| v.to_string())
        .map_err(usage)
}

/// Instructions and a worked example for a model's system prompt.
#[pyfunction]
fn prompt(format: &str) -> PyResult<String> {
    let format = format_named(format)?;
    Ok(agent::prompt(format))
}

/// The patch's format, or `None`.
#[pyfunction]
fn detect(patch: String) -> Option<String> {
    grammar_patch::detect(&patch).map(|f| f.name().to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("UsageError", m.py().get_type::<UsageError>())?;
    m.add_function(wrap_pyfunction!(apply, m)?)?;
    m.add_function(wrap_pyfunction!(lint, m)?)?;
    m.add_function(wrap_pyfunction!(grammar, m)?)?;
    m.add_function(wrap_pyfunction!(tool, m)?)?;
    m.add_function(wrap_pyfunction!(prompt, m)?)?;
    m.add_function(wrap_pyfunction!(detect, m)?)?;
    m.add_function(wrap_pyfunction!(apply_to, m)?)?;
    m.add_function(wrap_pyfunction!(apply_batch, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(apply_openai, m)?)?;
    m.add_function(wrap_pyfunction!(apply_anthropic, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
