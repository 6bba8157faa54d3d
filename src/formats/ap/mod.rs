//! ap 3.1 and 3.2: the generated parser for `grammars/ap.pest` and the
//! lowering of its parse tree into the shared model. Locating, the
//! heuristics, idempotency and I/O are the one engine's (`apply/`), under
//! the policy `policy()` returns.
//!
//! Files: this one (parser, rule names, `parse`, the policy), `blocks.rs`
//! (the walk over the parse tree), `modifications.rs` (a block's directives
//! as file ops), `model.rs` (modifications as edits), `ids.rs` (tolerant ID
//! repair).
//!
//! Lowering decisions (the README explains each):
//! - A directive line carrying another 8-hex ID is `id_mismatch`, except
//!   inside a markdown fence opened within the same value (an ap example in
//!   documentation is content).
//! - Each value may appear once per modification; a repeated `snippet` or
//!   `content` means a forgotten action directive and is a `syntax_error`.
//! - `content` loses its leading and trailing blank lines and the trailing
//!   whitespace of every line. 3.1 refuses an empty `REPLACE` content; 3.2
//!   reads it as `DELETE` unless it is the last thing in a patch without
//!   `END` (a cut-off answer), which is a `syntax_error`.
//! - The version decides one more thing: 3.1 strips trailing whitespace from
//!   every line of a written file, 3.2 only from the inserted content.
//! - Tolerant mode (`--tolerant`, the 3.2 reference's default) forgives a
//!   missing header, `#` comments between directives and an `anchor`
//!   without `snippet`, each with a warning; strict mode refuses them.

use pest::Parser;
use pest_derive::Parser;

use super::lowering::{rule_words, Lowering};
use super::{rule_names, syntax_error};
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{
    Action, Advice, Eol, FileOp, Finish, Line, NestingGuard, NewLine, NewText, Patch, PathRef,
    Policy, Span,
};

#[derive(Parser)]
#[grammar = "../grammars/ap.pest"]
struct ApParser;

/// The directive keywords, for telling a drifted ID or a typo from text.
const KEYWORDS: &[&str] = &[
    "FILE",
    "REPLACE",
    "INSERT_AFTER",
    "INSERT_BEFORE",
    "DELETE",
    "CREATE",
    "RECREATE",
    "RENAME",
    "END",
    "snippet",
    "snippet_tail",
    "anchor",
    "content",
    "include_leading_blank_lines",
    "include_trailing_blank_lines",
    "scope_end",
];

fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::EOI => "the end of the patch",
        Rule::id_pad => "",
        Rule::header | Rule::patch_id => "the header `<8 hex ID> AP 3.2`",
        Rule::version => "the version `3.1` or `3.2`",
        Rule::file_block
        | Rule::file_directive
        | Rule::bare_file_directive
        | Rule::headless_file => "`<ID> FILE`",
        Rule::create_directive => "`<ID> CREATE`",
        Rule::end_block | Rule::end_directive => "`<ID> END`",
        Rule::preamble | Rule::comment_line => "a `#` comment",
        Rule::action_block
        | Rule::action
        | Rule::action_kw
        | Rule::create_action
        | Rule::recreate_action
        | Rule::replace_mod
        | Rule::insert_mod
        | Rule::delete_mod => "an action directive",
        Rule::keyed | Rule::value_key => "a value directive",
        Rule::anchor_kv => "`<ID> anchor`",
        Rule::snippet_kv => "`<ID> snippet`",
        Rule::tail_kv => "`<ID> snippet_tail`",
        Rule::content_kv => "`<ID> content`",
        Rule::option | Rule::option_directive => "an option",
        Rule::rename_block | Rule::loose_rename | Rule::rename_directive => "`<ID> RENAME`",
        Rule::blank_line
        | Rule::stray_line
        | Rule::value
        | Rule::value_line
        | Rule::filled_value
        | Rule::tail_value
        | Rule::path_value
        | Rule::indented_line
        | Rule::filled_line
        | Rule::foreign_line
        | Rule::tail_line => "",
        other => return rule_words(other),
    }
    .to_string()
}

fn syntax_hint(expected: &[Rule]) -> &'static str {
    if expected.contains(&Rule::version) {
        "this patcher reads ap 3.1 and 3.2: write the header as `<ID> AP 3.2`"
    } else if expected.contains(&Rule::header) || expected.contains(&Rule::patch_id) {
        "an ap patch starts (after `#` comments) with `<ID> AP 3.2`, where <ID> is 8 random hex digits"
    } else {
        "after the header come file blocks: `<ID> FILE`, the path on the next line, then actions \
         (`<ID> REPLACE`, `<ID> snippet`, the lines, `<ID> content`, the lines)"
    }
}

mod blocks;
mod ids;
mod model;
mod modifications;

use blocks::{Ap, Lower};
pub use ids::correct_drifted_ids;

/// Parses and lowers `text[body]`; spans are offsets into `text`.
pub fn parse<'t>(
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
    tolerant: bool,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    let pairs = ApParser::parse(Rule::patch, input)
        .map_err(|e| vec![syntax_error(e, text, body.start, rule_name, syntax_hint)])?;
    let mut lower = Lower::new(
        text,
        store,
        body.start,
        Ap {
            id: "",
            v31: false,
            tolerant,
            ended: false,
            last_value: None,
            lines: vec![],
        },
    );
    // A tab between the ID and the directive needs a tab in the patch:
    // without one, the walk over every token is spared.
    if crate::bytes::find(b'\t', input.as_bytes()).is_some() {
        for pad in pairs
            .clone()
            .flatten()
            .filter(|p| p.as_rule() == Rule::id_pad)
        {
            let span = lower.span(&pad);
            lower.warn(
                Code::ToleratedFormatSlip,
                span,
                "a tab between the patch ID and its directive: read as a space",
                "a tab",
            );
        }
    }
    lower.patch(
        pairs
            .into_iter()
            .next()
            .expect("pest returns the start rule"),
    );
    lower.patch.policy = policy(lower.own.v31, tolerant);
    lower.finish()
}

/// How ap's modifications are placed and its files written (§3).
fn policy(v31: bool, tolerant: bool) -> Policy {
    Policy {
        advice: Advice {
            block: "snippet",
            disambiguate: "add an `anchor`: a line above the target that occurs only once in the file",
            create: "create it with `<ID> CREATE` and `<ID> content`",
            update: "the file exists: edit it with REPLACE/INSERT_AFTER/INSERT_BEFORE/DELETE, or use RECREATE",
            range_end: "snippet_tail",
            ops: ["REPLACE", "DELETE", "INSERT_BEFORE", "INSERT_AFTER"],
        },
        // §3.2: the file is read as lines however they end.
        lone_cr_breaks: true,
        // Modifications are found in the original from a cursor (§3.3).
        sequential: false,
        repeated_paths: true,
        unfound_anchor_ignored: false,
        strip_project_prefix: tolerant,
        skip_applied: true,
        nesting_guard: match (v31, tolerant) {
            (true, _) => None,
            (false, false) => Some(NestingGuard::Refuse),
            (false, true) => Some(NestingGuard::Move),
        },
        anchor_by_block: true,
        // 3.2 §3.6: content that opens no block of its own is a dropped indent.
        reindent_dropped: !v31,
        correct_ranges: true,
        stop_at_miss: true,
        finish: Finish {
            // 3.1 §3.5 strips every line of a written file; 3.2 only the
            // inserted content, which lowering strips.
            strip_trailing_whitespace: v31,
            final_newline: true,
            bracket_check: true,
        },
    }
}

/// The grammar rules in the parse tree of `text`, or `None` when it does not parse.
///
/// A value is one token (its rule is atomic), so the line rules inside it
/// are not in the tree. The one among them the export omits matters:
/// a value line that `value_line` refuses is a `foreign_line`.
pub fn rules_used(text: &str) -> Option<std::collections::BTreeSet<String>> {
    let pairs = ApParser::parse(Rule::patch, text).ok()?;
    let foreign = pairs.clone().flatten().any(|p| {
        blocks::is_value(p.as_rule())
            && p.as_str()
                .split_inclusive('\n')
                .any(|line| ApParser::parse(Rule::value_line, line).is_err())
    });
    let mut names = rule_names(pairs);
    if foreign {
        names.insert(format!("{:?}", Rule::foreign_line));
    }
    Some(names)
}
