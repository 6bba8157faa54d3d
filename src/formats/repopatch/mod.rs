//! RepoPatch v1.3: the generated parser for `grammars/repopatch.pest` and
//! the lowering of its parse tree into the shared model (`lower.rs`;
//! misspelt keywords: `misspelt.rs`). Matching and I/O are the applier's.
//!
//! Lowering decisions (docs/decisions.md explains each):
//! - Operations of a `PATCH` apply in order, each to the file as the
//!   previous ones left it (`Patch::sequential`); every old/anchor block
//!   must occur exactly once, exactly or else ignoring trailing whitespace.
//! - `INSERT BEFORE`/`INSERT AFTER` keep their anchor block (with the file's
//!   own text) and add the new block before or after it; `REPLACE` keeps
//!   the lines its old and new blocks share at either end.
//! - The spec's "Must Never Do" rules are reported here, from the rules the
//!   grammar parses only to name them: errors where the patch's meaning is
//!   in doubt, `blank_line_prefix` warnings where a blank line's block is
//!   fixed by where it stands.

mod lower;
mod misspelt;

use lower::{Lower, Repopatch};
use misspelt::misspelt_near;

use pest::Parser;
use pest_derive::Parser;

use super::lowering::{rule_words, Lowering};
use super::{marker_path, syntax_error};
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{
    Action, Advice, Edit, FileOp, Levels, Line, Locator, NewLine, NewText, Patch, PathRef, Policy,
    Span, Uniqueness,
};
use crate::newlines::newlines;

#[derive(Parser)]
#[grammar = "../grammars/repopatch.pest"]
struct RepoPatchParser;

fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::EOI => "the end of the patch",
        Rule::patchset_open => "`PATCHSET`",
        Rule::patchset_close | Rule::missing_patchset_close => "`ENDPATCHSET`",
        Rule::patch | Rule::patch_open => "`PATCH path`",
        Rule::patch_close | Rule::missing_patch_close => "`ENDPATCH`",
        Rule::insert_before | Rule::insert_before_kw => "`INSERT BEFORE`",
        Rule::insert_after | Rule::insert_after_kw => "`INSERT AFTER`",
        Rule::replace | Rule::replace_kw => "`REPLACE`",
        Rule::delete | Rule::delete_kw => "`DELETE`",
        Rule::createfile | Rule::createfile_kw => "`CREATEFILE`",
        Rule::deletefile | Rule::deletefile_kw => "`DELETEFILE`",
        Rule::old_block | Rule::old_run | Rule::old_line | Rule::bare_dash | Rule::dot_in_old => {
            "an old/anchor line `- TEXT`"
        }
        Rule::new_block
        | Rule::new_run
        | Rule::new_line
        | Rule::bare_dot
        | Rule::dash_in_new
        | Rule::misplaced_separator => "a new line `. TEXT`",
        Rule::separator | Rule::missing_separator => "`---`",
        Rule::empty_line
        | Rule::loose_empty
        | Rule::stray
        | Rule::stray_line
        | Rule::missing_old_block
        | Rule::no_operation
        | Rule::mixed_ops
        | Rule::delete_extra
        | Rule::keyword_args => "",
        other => return rule_words(other),
    }
    .to_string()
}

/// The advice that fits what the parser expected.
fn syntax_hint(expected: &[Rule]) -> &'static str {
    let has = |r: Rule| expected.contains(&r);
    if has(Rule::separator) || has(Rule::missing_separator) {
        "put `---` alone on a line between the `- ` block and the `. ` block"
    } else if has(Rule::new_line) || has(Rule::new_run) || has(Rule::new_block) {
        "write the lines to insert as a new block: each `. ` and the line (`. ` alone for a blank line)"
    } else if has(Rule::patch_close) {
        "end every `PATCH` with `ENDPATCH`; inside it, operations are `INSERT BEFORE`, `INSERT AFTER`, \
         `REPLACE` or `DELETE`, each on its own line, or one `CREATEFILE` or `DELETEFILE` alone"
    } else if has(Rule::patch_open) || has(Rule::patch) {
        "each file is `PATCH path/to/file`, its operations, then `ENDPATCH`; the patchset ends with `ENDPATCHSET`"
    } else if has(Rule::patchset_open) {
        "a RepoPatch patch starts with `PATCHSET` on its own line"
    } else {
        "a RepoPatch patch is `PATCHSET`, then per file `PATCH path`, operations \
         (`REPLACE`: `- ` old lines, `---`, `. ` new lines), `ENDPATCH`, and finally `ENDPATCHSET`"
    }
}

/// Parses and lowers `text[body]`; spans are offsets into `text`.
pub fn parse<'t>(
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    let pairs = RepoPatchParser::parse(Rule::patchset, input).map_err(|e| {
        let d = syntax_error(e, text, body.start, rule_name, syntax_hint);
        vec![misspelt_near(text, &d).unwrap_or(d)]
    })?;
    let mut lower = Lower::new(text, store, body.start, Repopatch);
    lower.patch.policy = Policy {
        sequential: true,
        repeated_paths: true,
        advice: Advice {
            block: "old/anchor block",
            disambiguate: "add `- ` lines copied from the file above or below the block \
                           until it occurs only once",
            create: "create it with `CREATEFILE` alone in its `PATCH`",
            update: "the file exists: edit it with `REPLACE`, `INSERT BEFORE`/`INSERT AFTER` \
                     or `DELETE` instead of `CREATEFILE`",
            ..Advice::default()
        },
        ..Policy::default()
    };
    for pair in pairs.flatten() {
        match pair.as_rule() {
            Rule::patch => lower.file(pair),
            Rule::missing_patchset_close => {
                lower.missing_close(&pair, "ENDPATCHSET", "the patchset")
            }
            // Anywhere, including between `PATCH` blocks.
            Rule::stray => lower.stray(&pair),
            Rule::patchset_open
            | Rule::patchset_close
            | Rule::patch_open
            | Rule::patch_close
            | Rule::separator
            | Rule::insert_before_kw
            | Rule::insert_after_kw
            | Rule::replace_kw
            | Rule::delete_kw
            | Rule::createfile_kw
            | Rule::deletefile_kw => lower.marker(&pair),
            _ => {}
        }
    }
    lower.finish()
}

/// The names of the grammar rules in the parse tree of `text`, or `None`
/// when it does not parse (for checking the Lark export against pest).
#[cfg(feature = "internals")]
pub fn rules_used(text: &str) -> Option<std::collections::BTreeSet<String>> {
    RepoPatchParser::parse(Rule::patchset, text)
        .ok()
        .map(super::rule_names)
}
