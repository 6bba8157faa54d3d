//! Symbolic links: no patch path passes through one, and a link a patch
//! creates leads to a place inside the root, through no link.
//!
//! A path is refused when a directory on its way is a link, in the tree or
//! made by the same patch (as `git apply` refuses a path "beyond a symbolic
//! link"): so every directory a patch reaches is a real one, and a link's
//! target can be resolved lexically from its directory exactly as the
//! kernel will. A target is refused when it climbs out of the root, names
//! the root or a directory the link is in (a loop a tool walking the tree
//! would follow), names `.git` or a journal's name, or passes through a
//! link, in the tree or made by the patch, whatever the order the patch
//! makes them in.

use super::plan::{Change, OpCx, Plan, Step, LINK_MODE};
use crate::apply::tree::{Entry, FileTree};
use crate::error::{Code, Diagnostic};
use crate::ir::{Edit, FileOp, NewText, PathRef};
use crate::paths::{self, RelPath};

impl OpCx<'_, '_> {
    /// Refuses `rel` when a directory on its way is a link, in the tree or
    /// made earlier by this patch.
    pub fn through_no_link(&mut self, path: &PathRef, rel: &RelPath) -> Step<()> {
        let made = match self.made_links.is_empty() {
            true => None,
            false => rel
                .ancestors()
                .into_iter()
                .find(|dir| self.made_links.contains(dir)),
        };
        if let Some(link) = made {
            return self.fail(
                Diagnostic::new(
                    Code::PathEscape,
                    format!("`{rel}` passes through `{link}`, a symbolic link this patch makes"),
                )
                .at(path.span, "beyond a symbolic link")
                .path(rel.as_str())
                .hint("patch files by their real path; a patch never writes through a link"),
            );
        }
        match self.tree.link_on_path(rel) {
            Ok(None) => Ok(()),
            Ok(Some((link, target))) => {
                let d = beyond_link(rel, &link, &target, self.root)
                    .at(path.span, "beyond a symbolic link");
                self.fail(d)
            }
            Err(e) => self.io_error(path, e),
        }
    }

    /// `new file mode 120000`: a symbolic link, whose target is the file's
    /// one line and must lead to a place inside the root.
    pub fn add_link<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        entry: Entry,
        content: &NewText<'_>,
    ) -> Step<Change<'p>> {
        let [line] = content.lines else {
            return self.fail(
                Diagnostic::new(
                    Code::InvalidHunkBody,
                    format!("the symbolic link `{rel}` needs one line: its target"),
                )
                .at(op.span, "mode 120000 is a symbolic link")
                .path(rel.as_str())
                .hint("give the link's target as the file's only line, with `\\ No newline at end of file`"),
            );
        };
        let target = line.text.to_string();
        if entry == Entry::Symlink
            && self.tree.read_link(&rel).ok().as_deref() == Some(target.as_str())
        {
            return Ok(Change::Unchanged { path: rel });
        }
        if entry != Entry::Missing {
            let hint = self.policy.advice.update;
            return self.exists(
                &op.path,
                &rel,
                format!("`{rel}` already exists"),
                "a symbolic link would be created here",
                Some(hint),
            );
        }
        let made: Vec<&RelPath> = self.made_links.iter().collect();
        if let Err(why) = leads_inside(&rel, &target, self.root, self.tree, &made) {
            return self.fail(
                Diagnostic::new(
                    Code::PathEscape,
                    format!("the symbolic link `{rel}` would lead to `{target}`: {why}"),
                )
                .at(line.span(self.source), "this target is refused")
                .path(rel.as_str())
                .hint("a link may only point at a place inside the root, through no other link, and not at a directory it is in"),
            );
        }
        self.creatable(&op.path, &rel)?;
        Ok(Change::Symlink { path: rel, target })
    }

    /// Deleting a symbolic link: its target must be what the patch says.
    pub fn delete_link<'p>(
        &mut self,
        op: &FileOp<'_>,
        rel: RelPath,
        expect: Option<&[Edit<'_>]>,
    ) -> Step<Change<'p>> {
        let target = match self.tree.read_link(&rel) {
            Ok(t) => t,
            Err(e) => return self.io_error(&op.path, e),
        };
        let said: Vec<&str> = expect
            .unwrap_or_default()
            .iter()
            .flat_map(|e| e.old.iter().map(|l| l.text))
            .collect();
        if expect.is_some() && said != [target.as_str()] {
            return self.fail(
                Diagnostic::new(
                    Code::ContextNotFound,
                    format!(
                        "the symbolic link `{rel}` leads to `{target}`, not where the patch says"
                    ),
                )
                .at(op.span, "this deletion names another target")
                .path(rel.as_str())
                .hint("re-read the link before deleting it"),
            );
        }
        Ok(Change::Delete {
            path: rel,
            original: target,
            mode: LINK_MODE,
        })
    }
}

/// The links a plan makes, with their targets.
fn made_links<'a>(changes: &'a [Change<'_>]) -> impl Iterator<Item = (&'a RelPath, &'a str)> {
    changes.iter().filter_map(|c| match c {
        Change::Symlink { path, target } => Some((path, target.as_str())),
        _ => None,
    })
}

/// Why a link at `link` with `target` may not be made, if it may not.
fn leads_inside(
    link: &RelPath,
    target: &str,
    root: Option<&std::path::Path>,
    tree: &dyn FileTree,
    made: &[&RelPath],
) -> Result<(), String> {
    let Some((to, passed)) = paths::link_target(link, target, root) else {
        return Err("that is outside the root, or the root itself".into());
    };
    if *link == to || link.as_str().starts_with(&format!("{to}/")) {
        return Err(format!("`{to}` holds the link itself: a loop"));
    }
    if !paths::is_plain(to.as_str()) {
        return Err("that is git's metadata or grammar-patch's own name".into());
    }
    for dir in passed.iter().chain(to.ancestors().iter()) {
        if made.contains(&dir) || tree.entry(dir).is_ok_and(|e| e == Entry::Symlink) {
            return Err(format!("it passes through `{dir}`, a symbolic link"));
        }
    }
    Ok(())
}

/// `path_escape` for `rel`, beyond the link `link` (to `target`): where
/// the link stays inside the root, the hint names the real path.
fn beyond_link(
    rel: &RelPath,
    link: &RelPath,
    target: &str,
    root: Option<&std::path::Path>,
) -> Diagnostic {
    let rest = &rel.as_str()[link.as_str().len()..];
    let real = paths::link_target(link, target, root)
        .and_then(|(to, _)| RelPath::new(&format!("{to}{rest}")));
    let d = Diagnostic::new(
        Code::PathEscape,
        format!("`{rel}` is beyond a symbolic link: `{link}` leads to `{target}`"),
    )
    .path(rel.as_str());
    match real {
        Some(real) => d.hint(format!(
            "patch the file by its real path, `{real}`; a patch never writes through a link"
        )),
        None => d.hint("that link leads outside the root; patch files inside the root only"),
    }
}

/// The checks that need the whole plan: no change passes through a link
/// the patch makes later, and no link made earlier passes through one
/// made later.
pub fn check_made_links(
    plan: &Plan<'_>,
    tree: &dyn FileTree,
    root: Option<&std::path::Path>,
) -> Vec<Diagnostic> {
    let made: Vec<&RelPath> = made_links(&plan.changes).map(|(l, _)| l).collect();
    if made.is_empty() {
        return vec![];
    }
    let mut errors = vec![];
    for change in &plan.changes {
        let mut paths = vec![change.path()];
        paths.extend(change.from());
        for path in paths {
            if let Some(link) = path.ancestors().into_iter().find(|d| made.contains(&d)) {
                errors.push(
                    Diagnostic::new(
                        Code::PathEscape,
                        format!(
                            "`{path}` passes through `{link}`, a symbolic link this patch makes"
                        ),
                    )
                    .path(path.as_str())
                    .hint("patch files by their real path; a patch never writes through a link"),
                );
            }
        }
        if let Change::Symlink { path, target } = change {
            if let Err(why) = leads_inside(path, target, root, tree, &made) {
                errors.push(
                    Diagnostic::new(
                        Code::PathEscape,
                        format!("the symbolic link `{path}` would lead to `{target}`: {why}"),
                    )
                    .path(path.as_str())
                    .hint(
                        "a link may only point at a place inside the root, through no other link",
                    ),
                );
            }
        }
    }
    errors
}
