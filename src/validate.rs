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

/// Every problem with `patch` that can be seen without reading the tree.
/// `root` is the canonical root, if known (absolute paths need it).
pub fn validate(patch: &Patch, root: Option<&Path>) -> Vec<Diagnostic> {
    let mut diags = vec![];
    let mut seen: HashMap<RelPath, Span> = HashMap::new();
    for op in &patch.files {
        for path in op.paths() {
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
        PathProblem::Reserved => "grammar-patch's own journal",
        _ => "this path is not inside the root",
    })
    .path(path.text.as_str())
    .hint(match problem {
        PathProblem::Unusable => "name the file with components of at most 255 bytes and no NUL byte",
        PathProblem::NotUtf8 => "rename the file to a UTF-8 name, or patch it with git",
        PathProblem::Reserved => "patch the project's own files; grammar-patch keeps its rollback journal in `.grammar-patch-journal` and `.grammar-patch-stash` while it applies",
        _ => "use a path relative to the repository root, without `..`",
    })
}
