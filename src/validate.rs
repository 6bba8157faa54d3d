//! Semantic checks over the shared model that need no file tree: every
//! path resolves inside the root (lexically), and no path is patched twice
//! where the format says so (udiff; the others apply repeated blocks in
//! turn, which the planner checks).
//! All problems are collected, not just the first. Checks against the tree
//! (missing files, context) happen while the applier plans.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Code, Diagnostic};
use crate::ir::{Patch, PathRef, Span};
use crate::paths::{self, PathProblem, RelPath};

/// Every problem with `patch` that can be seen without reading the tree,
/// and the warnings (a slip forgiven in a path).
/// `root` is the canonical root, if known (absolute paths need it).
pub fn validate(patch: &Patch, root: Option<&Path>) -> Vec<Diagnostic> {
    let mut diags = vec![];
    let mut seen: HashMap<RelPath, Span> = HashMap::new();
    for op in &patch.files {
        let on_files = !matches!(
            op.action,
            crate::ir::Action::CreateDir
                | crate::ir::Action::Remove
                | crate::ir::Action::Rename { .. }
        );
        for path in op.paths() {
            if let Some(w) = trailing_space(patch.source, path) {
                diags.push(w);
            }
            if on_files && paths::names_directory(&path.text) {
                diags.push(escape(path, &PathProblem::NamesDirectory));
                continue;
            }
            match check_path(path, root) {
                Err(d) => diags.push(*d),
                Ok(_) if patch.policy.repeated_paths => {}
                Ok(rel) => {
                    if let Some(&first) = seen.get(&rel) {
                        diags.push(
                            Diagnostic::new(Code::DuplicateFilePatch, format!("`{rel}` is patched more than once"))
                                .at(path.span, "patched again here")
                                .secondary(first, "first patched here")
                                .path(rel.as_str())
                                .hint("merge all hunks for this file into a single file patch, in file order"),
                        );
                    } else {
                        seen.insert(rel, path.span);
                    }
                }
            }
        }
    }
    diags
}

/// A warning when the line naming `path` ends in spaces or tabs after it:
/// they are taken for a slip, not part of the name, and it says so.
fn trailing_space(source: &str, path: &PathRef) -> Option<Diagnostic> {
    let rest = source.get(path.span.end..)?;
    let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let rest = rest.strip_suffix('\r').unwrap_or(rest);
    if rest.is_empty() || !rest.bytes().all(|b| b == b' ' || b == b'\t') || path.span.is_empty() {
        return None;
    }
    Some(
        Diagnostic::new(
            Code::ToleratedFormatSlip,
            format!("the path `{}` is followed by whitespace, which was taken off", path.text),
        )
        .at(Span::new(path.span.end, path.span.end + rest.len()), "not part of the name")
        .path(path.text.as_str())
        .hint("end a path line right after the name; a name that really ends in a space cannot be patched"),
    )
}

/// Resolves one path, or explains why it leaves the root.
pub fn check_path(path: &PathRef, root: Option<&Path>) -> Result<RelPath, Box<Diagnostic>> {
    match paths::resolve(&path.text, root) {
        Ok(rel) => Ok(rel),
        Err(PathProblem::AbsoluteWithoutRoot) if root.is_none() => {
            // `lint` without --root cannot judge an absolute path; `apply` always has a root.
            paths::resolve(path.text.trim_start_matches('/'), None)
                .map_err(|p| Box::new(escape(path, &p)))
        }
        Err(problem) => Err(Box::new(escape(path, &problem))),
    }
}

fn escape(path: &PathRef, problem: &PathProblem) -> Diagnostic {
    let code = match problem {
        PathProblem::NotUtf8 => Code::UnsupportedFile,
        _ => Code::PathEscape,
    };
    Diagnostic::new(code, format!("`{}`: {}", path.text, problem.explain()))
    .at(path.span, match problem {
        PathProblem::Unusable => "no file system can name this",
        PathProblem::NotUtf8 => "a name that is not UTF-8",
        PathProblem::Reserved => "a name grammar-patch keeps for itself",
        PathProblem::GitDir => "git's own metadata",
        PathProblem::NamesDirectory => "a directory, not a file",
        _ => "this path is not inside the root",
    })
    .path(path.text.as_str())
    .hint(match problem {
        PathProblem::Unusable => "name the file with components of at most 255 bytes and no NUL byte",
        PathProblem::NotUtf8 => "rename the file to a UTF-8 name, or patch it with git",
        PathProblem::Reserved => "patch the project's own files; grammar-patch names its temporary files `.grammar-patch-*` while it applies",
        PathProblem::GitDir => "patch the working tree only; change git's configuration and hooks with git itself",
        PathProblem::NamesDirectory => "name the file itself, without a trailing `/` or `/.`",
        _ => "use a path relative to the repository root, without `..`",
    })
}
