//! The registry: one row per format, everything the toolkit knows of it
//! that is data — its name and description, its grammar file, the Lark
//! export `build.rs` made from that file (`grammars.rs` is the list both
//! read), the line that starts it, and the function that parses and
//! lowers it, and the printer `convert` writes it with. Adding a format is a row here, a grammar, a lowering, and
//! its worked example in `agent.rs` (docs/architecture.md, "Adding a
//! format").

use super::{ap, codex, repopatch, searchreplace, udiff, Format};
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
        parse: |text, store, body, _, _| searchreplace::parse(text, store, body),
        print: print::searchreplace,
    },
];

/// `<8 hex> AP 3.x`.
fn is_ap_header(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let id = words.next().unwrap_or("");
    id.len() == 8
        && id.bytes().all(|b| b.is_ascii_hexdigit())
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
}
