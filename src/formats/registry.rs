//! The registry: one row per format, everything the toolkit knows of it
//! that is data — its name and description, its grammar file, the Lark
//! export `build.rs` made from that file (`grammars.rs` is the list both
//! read), the line that starts it, and the function that parses and
//! lowers it, and the printer `convert` writes it with. Adding a format is a row here, a grammar, a lowering, and
//! its worked example in `agent.rs` (docs/architecture.md, "Adding a
//! format").

use super::{ap, codex, repopatch, searchreplace, udiff, Format};
use crate::agent::is_patch_id;
use crate::convert::print;
use crate::error::Diagnostic;
use crate::ir::{Patch, Span};
use crate::Options;

/// The single source of a format's syntax.
pub enum Grammar {
    /// A pest grammar (a PEG over characters).
    Pest(&'static str),
    /// A LALRPOP grammar (an LR grammar over a line lexer).
    Lalrpop(&'static str),
}

/// Parses and lowers `text[body]` into the shared model; `contents`: keep
/// the bytes of binary literals (a check without a tree only counts them).
pub type Parse = for<'t> fn(
    &'t str,
    &'t bumpalo::Bump,
    Span,
    Options,
    bool,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>>;

/// One format's row.
pub struct Spec {
    /// The format (the row's index in [`REGISTRY`] is its discriminant).
    pub format: Format,
    /// The name `--format` takes.
    pub name: &'static str,
    /// The format in a few words.
    pub describe: &'static str,
    /// Its grammar file.
    pub grammar: Grammar,
    /// The Lark export of that grammar.
    pub lark: &'static str,
    /// Whether the first meaningful line of a text starts this format.
    pub starts: fn(&str) -> bool,
    /// The path of the file whose edits a text opens with, read from its
    /// first lines: a guess at the file the planner reads first, never
    /// trusted (`FileTree::read_ahead`); `None` where it cannot tell.
    pub first_path: fn(&str) -> Option<&str>,
    /// Its parser and lowering.
    pub parse: Parse,
    /// Its printer (`convert`).
    pub print: crate::convert::Printer,
}

/// Every format, in [`Format`]'s order.
pub const REGISTRY: [Spec; 5] = [
    Spec {
        format: Format::Udiff,
        name: "udiff",
        describe: "unified diff (git headers, renames, /dev/null, advisory line numbers)",
        grammar: Grammar::Pest(include_str!("../../grammars/udiff.pest")),
        lark: include_str!(concat!(env!("OUT_DIR"), "/udiff.lark")),
        starts: |line| {
            line.starts_with("diff --git ")
                || line.starts_with("diff -")
                || line.starts_with("--- ")
                || (line.starts_with("Only in ") && line.contains(": "))
        },
        // `+++ b/PATH`, git's form (no guess for another).
        first_path: |text| {
            first_line(text, |line| {
                let path = line.strip_prefix("+++ b/")?;
                path.split('\t').next().filter(|p| !p.starts_with('"'))
            })
        },
        parse: |text, store, body, _, contents| udiff::parse(text, store, body, contents),
        print: print::udiff,
    },
    Spec {
        format: Format::Codex,
        name: "codex",
        describe: "the *** Begin Patch format of OpenAI Codex's apply_patch",
        grammar: Grammar::Pest(include_str!("../../grammars/codex.pest")),
        lark: include_str!(concat!(env!("OUT_DIR"), "/codex.lark")),
        starts: |line| line.starts_with("*** Begin Patch"),
        first_path: |text| {
            first_line(text, |line| {
                Some(line.strip_prefix("*** Update File: ")?.trim_end())
            })
        },
        parse: |text, store, body, _, _| codex::parse(text, store, body),
        print: print::codex,
    },
    Spec {
        format: Format::Repopatch,
        name: "repopatch",
        describe: "RepoPatch Patch Language v1.3 (PATCHSET / PATCH / ENDPATCH)",
        grammar: Grammar::Pest(include_str!("../../grammars/repopatch.pest")),
        lark: include_str!(concat!(env!("OUT_DIR"), "/repopatch.lark")),
        starts: |line| line.starts_with("PATCHSET"),
        first_path: |text| {
            first_line(text, |line| {
                let path = line.strip_prefix("PATCH")?;
                path.starts_with([' ', '\t']).then(|| path.trim())
            })
        },
        parse: |text, store, body, _, _| repopatch::parse(text, store, body),
        print: print::repopatch,
    },
    Spec {
        format: Format::Ap,
        name: "ap",
        describe: "the 'ap' AI-friendly Patch format, 3.1 and 3.2",
        grammar: Grammar::Lalrpop(include_str!("../../grammars/ap.lalrpop")),
        lark: include_str!(concat!(env!("OUT_DIR"), "/ap.lark")),
        starts: is_ap_header,
        first_path: ap_first_path,
        parse: |text, store, body, options, _| ap::parse(text, store, body, options.tolerant),
        print: print::ap,
    },
    Spec {
        format: Format::Searchreplace,
        name: "searchreplace",
        describe: "SEARCH/REPLACE blocks after a file's path (Aider's diff edit format)",
        grammar: Grammar::Pest(include_str!("../../grammars/searchreplace.pest")),
        lark: include_str!(concat!(env!("OUT_DIR"), "/searchreplace.lark")),
        // Its first line is a path or prose: told by its blocks instead
        // (`searchreplace::holds_blocks`), after every other format.
        starts: |_| false,
        first_path: |_| None,
        parse: |text, store, body, _, _| searchreplace::parse(text, store, body),
        print: print::searchreplace,
    },
];

/// How many lines [`Spec::first_path`] looks at: a file's first edits
/// follow its header at once, after a few lines of preamble at most.
const LOOKED_AT: usize = 32;

/// What `names` finds in the first of the opening lines of `text` it
/// finds anything in.
fn first_line<'t>(text: &'t str, names: impl Fn(&'t str) -> Option<&'t str>) -> Option<&'t str> {
    text.lines()
        .take(LOOKED_AT)
        .find_map(names)
        .filter(|p| !p.is_empty())
}

/// ap: the value under the first `<8 hex> FILE` (its first line that is
/// not blank), or the path after `FILE` on the same line (3.2).
fn ap_first_path(text: &str) -> Option<&str> {
    let mut lines = text.lines().take(LOOKED_AT);
    let rest = lines.find_map(|line| {
        let (id, rest) = line.split_once(' ')?;
        let rest = rest.trim_start().strip_prefix("FILE")?;
        let file = rest.is_empty() || rest.starts_with([' ', '\t']);
        (is_patch_id(id) && file).then(|| rest.trim())
    })?;
    let path = match rest {
        "" | "LF" | "CRLF" | "CR" => lines.map(str::trim).find(|l| !l.is_empty())?,
        inline => inline,
    };
    Some(path)
}

/// `<8 hex> AP 3.x`.
fn is_ap_header(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let id = words.next().unwrap_or("");
    is_patch_id(id)
        && words.next() == Some("AP")
        && words.next().is_some_and(|v| v.starts_with("3."))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row sits at its format's discriminant, and the grammar list
    /// `build.rs` exports is every pest grammar of the registry.
    #[test]
    fn rows_are_in_the_formats_order_and_build_rs_exports_each_pest_grammar() {
        for (i, spec) in REGISTRY.iter().enumerate() {
            assert_eq!(spec.format as usize, i, "{}", spec.name);
            assert_eq!(Format::ALL[i], spec.format);
        }
        let pest: Vec<&str> = REGISTRY
            .iter()
            .filter(|s| matches!(s.grammar, Grammar::Pest(_)))
            .map(|s| s.name)
            .collect();
        let exported: Vec<&str> = super::super::grammars::PEST_GRAMMARS
            .iter()
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(pest, exported);
    }

    /// Each format's guess at its first file: the path its opening lines
    /// name, and no guess where they name none in the form looked for.
    #[test]
    fn first_paths_are_the_paths_the_opening_lines_name() {
        let cases = [
            (
                Format::Udiff,
                "diff --git a/x b/x\n--- a/x\n+++ b/src/x.rs\t2020\n@@ -1 +1 @@\n",
                Some("src/x.rs"),
            ),
            (Format::Udiff, "--- \"a/q x\"\n+++ \"b/q x\"\n", None),
            (Format::Udiff, "--- x\n+++ x\n", None),
            (
                Format::Codex,
                "*** Begin Patch\n*** Add File: n\n+1\n*** Update File: f.txt  \n",
                Some("f.txt"),
            ),
            (
                Format::Codex,
                "*** Begin Patch\n*** Delete File: gone\n*** End Patch\n",
                None,
            ),
            (
                Format::Repopatch,
                "PATCHSET\nPATCH  src/a b.py \nREPLACE\n",
                Some("src/a b.py"),
            ),
            (Format::Repopatch, "PATCHSET\nPATCHES x\n", None),
            (
                Format::Ap,
                "# c\n0a1b2c3d AP 3.2\n\n0a1b2c3d FILE CRLF\n\n  dir/f.py\n",
                Some("dir/f.py"),
            ),
            (
                Format::Ap,
                "0a1b2c3d AP 3.2\n0a1b2c3d FILE dir/g.py\n",
                Some("dir/g.py"),
            ),
            (Format::Ap, "0a1b2c3d AP 3.2\n0a1b2c3d FILES x\n", None),
            (Format::Ap, "0a1b2c3d AP 3.2\nzz FILE x\n", None),
            (Format::Searchreplace, "f.py\n<<<<<<< SEARCH\n", None),
        ];
        for (format, text, want) in cases {
            assert_eq!(format.first_path(text), want, "{format}: {text:?}");
        }
        // Only the opening lines are looked at.
        let late = format!("{}+++ b/late\n", "\n".repeat(LOOKED_AT));
        assert_eq!(Format::Udiff.first_path(&late), None);
    }
}
