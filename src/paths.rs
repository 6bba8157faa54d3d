//! Turning a path as a patch writes it into a path relative to the root,
//! lexically: no `..`, no absolute path outside the root. Symbolic links are
//! the file tree's business (`apply::tree`), since only it can see them.

use std::fmt;
use std::path::{Component, Path};

/// A normalised path below the root: components joined by `/`, never empty,
/// never `.` or `..`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(String);

impl RelPath {
    /// The path, `/`-separated.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The ancestors, outermost first (`a`, `a/b` for `a/b/c`).
    pub fn ancestors(&self) -> Vec<RelPath> {
        let mut out = vec![];
        for (i, b) in self.0.bytes().enumerate() {
            if b == b'/' {
                out.push(RelPath(self.0[..i].to_string()));
            }
        }
        out
    }

    /// A relative path the applier itself builds (a directory's children,
    /// a renamed directory's files, a path without its project prefix, the
    /// journal's entries): like [`resolve`] without a root, the journal's
    /// own name allowed.
    pub fn new(path: &str) -> Option<RelPath> {
        normalise(path, None, true).ok()
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a path cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathProblem {
    /// No path at all.
    Empty,
    /// A `..` that would climb out.
    ParentComponent,
    /// An absolute path outside the root.
    OutsideRoot,
    /// An absolute path, and no root to judge it by.
    AbsoluteWithoutRoot,
    /// A NUL byte, or a component longer than any file system allows.
    Unusable,
    /// Bytes that are not UTF-8 (see `lossless`): refused rather than
    /// written under another name.
    NotUtf8,
    /// A name of grammar-patch's own (its journal's temporary names).
    Reserved,
    /// Inside git's metadata (`.git`), which no patch may write.
    GitDir,
    /// A path ending in `/` or `/.`: a directory, not a file.
    NamesDirectory,
}

impl PathProblem {
    /// The problem in words.
    pub fn explain(&self) -> &'static str {
        match self {
            PathProblem::Empty => "the path is empty",
            PathProblem::ParentComponent => "the path contains `..`",
            PathProblem::OutsideRoot => "the absolute path is outside the root",
            PathProblem::AbsoluteWithoutRoot => "an absolute path needs a root to be checked",
            PathProblem::Unusable => "the path has a NUL byte or a component longer than 255 bytes",
            PathProblem::NotUtf8 => "the path has bytes that are not UTF-8, which grammar-patch does not write",
            PathProblem::Reserved => {
                "names starting with `.grammar-patch-` are grammar-patch's own, at any depth and in any case"
            }
            PathProblem::GitDir => "the path is inside git's metadata (`.git`), which no patch may write",
            PathProblem::NamesDirectory => "the path ends in `/` or `/.`: it names a directory, not a file",
        }
    }
}

/// The longest file name a Linux file system takes, in bytes.
const NAME_MAX: usize = 255;

/// Resolves `text` lexically against `root` (the canonical root directory).
/// Absolute paths are accepted when they lie inside the root.
pub fn resolve(text: &str, root: Option<&Path>) -> Result<RelPath, PathProblem> {
    normalise(text, root, false)
}

/// Where a symbolic link at `link` with this target leads, lexically, if
/// that is inside the root, and every directory the kernel passes through
/// on the way (a `..` after a name passes through that name first):
/// `None` when it climbs above the root or is an absolute path outside it.
/// The root itself is `None` too (a link to the root is a loop a tool
/// walking the tree would follow). Exact only where `link`'s own directory
/// is reached through no link, which the planner makes sure of.
pub fn link_target(
    link: &RelPath,
    target: &str,
    root: Option<&Path>,
) -> Option<(RelPath, Vec<RelPath>)> {
    if target.is_empty() || target.contains('\0') || crate::lossless::has_escapes(target) {
        return None;
    }
    if Path::new(target).is_absolute() {
        let rest = Path::new(target).strip_prefix(root?).ok()?.to_str()?;
        return link_target(&RelPath(String::new()), rest, None).filter(|_| !rest.is_empty());
    }
    let mut parts: Vec<&str> = link.as_str().split('/').collect();
    parts.pop();
    parts.retain(|p| !p.is_empty());
    let mut passed = vec![];
    let steps: Vec<&str> = target
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    for (i, part) in steps.iter().enumerate() {
        match *part {
            ".." => {
                parts.pop()?;
            }
            name => {
                parts.push(name);
                if i + 1 < steps.len() {
                    passed.push(RelPath(parts.join("/")));
                }
            }
        }
    }
    Some((RelPath::new(&parts.join("/"))?, passed))
}

/// Whether a path as written ends in `/` or `/.`: it names a directory,
/// so a file operation on it is refused rather than read as its parent.
pub fn names_directory(text: &str) -> bool {
    text.ends_with('/') || text.ends_with("/.") || text == "."
}

/// Whether a path component is one of grammar-patch's own names (any
/// case): the journal's temporary names, and the in-tree journal and stash
/// of earlier versions.
pub fn is_reserved(component: &str) -> bool {
    let prefix = crate::apply::writing::journal::TEMP_PREFIX;
    // Compared as bytes: a component's first bytes may end inside a character.
    component
        .as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Whether a path component names git's metadata directory: `.git` in any
/// case, and the spellings file systems fold to it (trailing dots and
/// spaces on Windows, its 8.3 short name `git~1`), as `git apply` refuses.
pub fn is_git(component: &str) -> bool {
    let trimmed = component.trim_end_matches(['.', ' ']);
    trimmed.eq_ignore_ascii_case(".git") || component.eq_ignore_ascii_case("git~1")
}

/// Whether no component of a `/`-separated path is reserved or `.git`: a
/// path a patch may name.
pub fn is_plain(path: &str) -> bool {
    path.split('/').all(|c| !is_reserved(c) && !is_git(c))
}

fn normalise(text: &str, root: Option<&Path>, internal: bool) -> Result<RelPath, PathProblem> {
    if text.contains('\0') {
        return Err(PathProblem::Unusable);
    }
    if crate::lossless::has_escapes(text) {
        return Err(PathProblem::NotUtf8);
    }
    let path = Path::new(text);
    let rel: &Path = if path.is_absolute() {
        let root = root.ok_or(PathProblem::AbsoluteWithoutRoot)?;
        path.strip_prefix(root)
            .map_err(|_| PathProblem::OutsideRoot)?
    } else {
        path
    };
    let mut parts = vec![];
    for c in rel.components() {
        match c {
            Component::Normal(s) => {
                let s = s.to_str().ok_or(PathProblem::Empty)?;
                if s.len() > NAME_MAX {
                    return Err(PathProblem::Unusable);
                }
                if !internal && is_reserved(s) {
                    return Err(PathProblem::Reserved);
                }
                if !internal && is_git(s) {
                    return Err(PathProblem::GitDir);
                }
                parts.push(s.to_string());
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(PathProblem::ParentComponent),
            Component::RootDir | Component::Prefix(_) => return Err(PathProblem::OutsideRoot),
        }
    }
    if parts.is_empty() {
        return Err(PathProblem::Empty);
    }
    Ok(RelPath(parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name whose first bytes end inside a character (found by the
    /// property tests of ap patches: a panic, slicing the name as text).
    #[test]
    fn a_name_is_compared_with_the_reserved_prefix_as_bytes() {
        assert!(!is_reserved("T\u{110C2}\u{1F21}R&\u{170D}\u{09DC}"));
        assert!(is_reserved(".Grammar-Patch-x"));
        assert!(!is_reserved(".grammar"));
    }

    #[test]
    fn link_targets_stay_inside_the_root() {
        let link = RelPath::new("docs/guide/link").unwrap();
        let root = Some(Path::new("/work/repo"));
        let to = |t: &str| link_target(&link, t, root).map(|r| r.0.to_string());
        assert_eq!(to("intro.md").as_deref(), Some("docs/guide/intro.md"));
        assert_eq!(to("../../src/./lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(to("/work/repo/src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(to("../../../etc/passwd"), None);
        assert_eq!(to("../../.."), None);
        assert_eq!(to("/etc/passwd"), None);
        assert_eq!(to("/work/repo"), None);
        assert_eq!(to("/work/repo/../x"), None);
        assert_eq!(to(""), None);
        assert_eq!(link_target(&link, "/work/repo/x", None), None);
        let passed = |t: &str| link_target(&link, t, root).unwrap().1;
        let rel = |s: &str| RelPath::new(s).unwrap();
        assert_eq!(passed("../../a/../b/c"), vec![rel("a"), rel("b")]);
        assert_eq!(passed("x"), vec![]);
    }

    #[test]
    fn lexical_resolution() {
        let root = Path::new("/work/repo");
        let ok = |t: &str| resolve(t, Some(root)).map(|p| p.to_string());
        assert_eq!(ok("src/./main.rs"), Ok("src/main.rs".into()));
        assert_eq!(ok("/work/repo/src/x"), Ok("src/x".into()));
        assert_eq!(ok("/work/other/x"), Err(PathProblem::OutsideRoot));
        assert_eq!(ok("/work/repo2/x"), Err(PathProblem::OutsideRoot));
        assert_eq!(ok("../x"), Err(PathProblem::ParentComponent));
        assert_eq!(ok("a/../b"), Err(PathProblem::ParentComponent));
        assert_eq!(ok("./"), Err(PathProblem::Empty));
        assert!(names_directory("a/.") && names_directory("a/") && !names_directory("a/b"));
        assert_eq!(ok("a/.git/config"), Err(PathProblem::GitDir));
        assert_eq!(ok(".GIT/x"), Err(PathProblem::GitDir));
        assert_eq!(ok("a/.git. /x"), Err(PathProblem::GitDir));
        assert_eq!(ok("GIT~1/x"), Err(PathProblem::GitDir));
        assert_eq!(ok(".gitignore"), Ok(".gitignore".into()));
        assert_eq!(ok("sub/.Grammar-Patch-Journal"), Err(PathProblem::Reserved));
        assert_eq!(ok("a/.grammar-patch-stash/1"), Err(PathProblem::Reserved));
        assert_eq!(ok("a/x.grammar-patch-y"), Ok("a/x.grammar-patch-y".into()));
        assert_eq!(resolve("/x", None), Err(PathProblem::AbsoluteWithoutRoot));
        assert_eq!(
            RelPath::new("a/b/c").unwrap().ancestors(),
            vec![RelPath::new("a").unwrap(), RelPath::new("a/b").unwrap()]
        );
    }
}
