//! ap 3.1 and 3.2: the LR parser generated from `grammars/ap.lalrpop`
//! over the line lexer, and the lowering of its parse tree into the shared
//! model. Locating, the
//! heuristics, idempotency and I/O are the one engine's (`apply/`), under
//! the policy `policy()` returns.
//!
//! Files: this one (parser, terminal names, `parse`, the policy),
//! `lexer.rs` (a line's class), `tree.rs` (the parse tree), `blocks.rs`
//! (the walk over the parse tree), `modifications.rs` (a block's directives
//! as file ops), `model.rs` (modifications as edits), `ids.rs` (tolerant ID
//! repair).
//!
//! Lowering decisions (docs/decisions.md explains each):
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

use lalrpop_util::ParseError;

use super::lowering::Lowering;
use super::syntax_diagnostic;
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{
    Action, Advice, Eol, FileOp, Finish, Line, NestingGuard, NewLine, NewText, Patch, PathRef,
    Policy, Span,
};

/// The parsers LALRPOP builds from `grammars/ap.lalrpop` (build.rs).
#[allow(clippy::all, clippy::pedantic, unused_parens, dead_code)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/grammars/ap.rs"));
}

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

/// What a terminal the parser expected is called in a diagnostic; empty
/// for a line of text, which is never the thing missing.
fn terminal_words(name: &str) -> &'static str {
    match name {
        "HEADER" => "the header `<8 hex ID> AP 3.2`",
        "HASH_LINE" => "a `#` comment",
        "FILE_DIRECTIVE" | "FILE_WITH_PATH" => "`<ID> FILE`",
        "CREATE_DIRECTIVE" => "`<ID> CREATE`",
        "END_DIRECTIVE" => "`<ID> END`",
        "REPLACE_DIRECTIVE" | "INSERT_DIRECTIVE" | "DELETE_DIRECTIVE" | "RECREATE_DIRECTIVE"
        | "CREATE_ACTION" => "an action directive",
        "ANCHOR_KEY" | "SNIPPET_KEY" | "TAIL_KEY" | "CONTENT_KEY" => "a value directive",
        "OPTION_DIRECTIVE" => "an option",
        "RENAME_DIRECTIVE" => "`<ID> RENAME`",
        _ => "",
    }
}

/// The diagnostic of a text the grammar refuses; `base` is where the
/// parsed text starts in `text`.
fn syntax_error(
    err: ParseError<usize, lexer::Tok, lexer::LexError>,
    text: &str,
    base: usize,
) -> Diagnostic {
    let header_hint = "an ap patch starts (after `#` comments) with `<ID> AP 3.2`, where <ID> is 8 random hex digits";
    let blocks_hint =
        "after the header come file blocks: `<ID> FILE`, the path on the next line, then actions \
         (`<ID> REPLACE`, `<ID> snippet`, the lines, `<ID> content`, the lines)";
    let (at, expected) = match err {
        ParseError::User { error } => return lex_error(error, text, base),
        ParseError::UnrecognizedToken {
            token: (at, lexer::Tok::Unknown, end),
            ..
        } => {
            let span = Span::new(base + at, base + end - 1);
            return blocks::unknown_directive(
                &text[span.start..span.start + 8],
                &text[span.start..span.end],
                span,
            );
        }
        ParseError::UnrecognizedToken {
            token: (at, _, _),
            expected,
        } => (at, expected),
        ParseError::UnrecognizedEof { location, expected } => (location, expected),
        ParseError::ExtraToken { token: (at, _, _) } => (at, vec![]),
        ParseError::InvalidToken { location } => (location, vec![]),
    };
    let header = expected.iter().any(|e| e == "HEADER");
    // Before the header, only what may stand there (a patch without one is
    // tolerated, never taught); after it, a `#` line is text, no comment.
    let taught = |e: &&String| {
        if header {
            *e == "HEADER" || *e == "HASH_LINE"
        } else {
            *e != "HASH_LINE"
        }
    };
    let mut names: Vec<&str> = vec![];
    for word in expected.iter().filter(taught).map(|e| terminal_words(e)) {
        if !word.is_empty() && !names.contains(&word) {
            names.push(word);
        }
    }
    let hint = if header { header_hint } else { blocks_hint };
    syntax_diagnostic(text, base + at, &names, hint)
}

/// A directive with another patch's ID before where the parse failed
/// (a drifted ID on the first `FILE`, say): the first reason the patch does
/// not read, `id_mismatch` at that line rather than a syntax error below.
fn drifted_before(
    err: &ParseError<usize, lexer::Tok, lexer::LexError>,
    input: &str,
    base: usize,
) -> Option<Diagnostic> {
    let at = match err {
        ParseError::UnrecognizedToken {
            token: (at, ..), ..
        }
        | ParseError::ExtraToken { token: (at, ..) } => *at,
        ParseError::UnrecognizedEof { location, .. } | ParseError::InvalidToken { location } => {
            *location
        }
        ParseError::User { .. } => return None,
    };
    let header = lexer::Lexer::new(input)
        .flatten()
        .find(|(_, t, _)| *t == lexer::Tok::Header)
        .map(|(s, _, _)| &input[s..s + 8])?;
    let start = lexer::Lexer::new(input)
        .map_while(Result::ok)
        .take_while(|(s, _, _)| *s < at)
        .find(|&(s, t, e)| t == lexer::Tok::Foreign && ids::directive_id(&input[s..e]).is_some())
        .map(|(s, _, _)| s)?;
    let other = &input[start..start + 8];
    Some(
        Diagnostic::new(
            Code::IdMismatch,
            format!("directive with patch ID `{other}`, but the header's is `{header}`"),
        )
        .at(Span::new(base + start, base + start + 8), "another ID")
        .hint(format!(
            "every directive must start with the header's ID: write `{header}` here"
        )),
    )
}

/// The diagnostic of a line no terminal takes.
fn lex_error(error: lexer::LexError, text: &str, base: usize) -> Diagnostic {
    use lexer::LexError;
    let (at, what, hint) = match error {
        LexError::Version { at } => (
            at,
            "the version `3.1` or `3.2`",
            "this patcher reads ap 3.1 and 3.2: write the header as `<ID> AP 3.2`".to_string(),
        ),
        LexError::Unterminated { at } => (
            at,
            "a line end",
            "end every line of the patch with a newline".to_string(),
        ),
        LexError::Arguments {
            line,
            keyword: "FILE",
        } => (
            line,
            "a newline mode (`LF`, `CRLF`, `CR`) or a path after `FILE`, then the line end",
            "write `<ID> FILE`, `<ID> FILE CRLF` or (3.2) `<ID> FILE path`, with spaces between"
                .to_string(),
        ),
        LexError::Arguments {
            line,
            keyword:
                keyword @ ("include_leading_blank_lines" | "include_trailing_blank_lines" | "scope_end"),
        } => (
            line,
            "a count of at most 6 digits after a space, then the line end",
            format!("write the count after a space: `<ID> {keyword} 1`"),
        ),
        LexError::Arguments { line, keyword } => (
            line,
            "the line end after the keyword",
            format!("`{keyword}` stands alone on its line; put what follows it on the next line"),
        ),
    };
    syntax_diagnostic(text, base + at, &[what], &hint)
}

mod blocks;
mod ids;
pub(super) mod lexer;
mod model;
mod modifications;
mod tree;

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
    let mut lexer = lexer::Lexer::values(input);
    let tree = grammar::LooseParser::new().parse(&mut lexer).map_err(|e| {
        vec![drifted_before(&e, input, body.start)
            .unwrap_or_else(|| syntax_error(e, text, body.start))]
    })?;
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
    for pad in &lexer.pads {
        lower.warn(
            Code::ToleratedFormatSlip,
            Span::new(body.start + pad.start, body.start + pad.end),
            "a tab between the patch ID and its directive: read as a space",
            "a tab",
        );
    }
    lower.patch(tree);
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
        // 3.2 §3.6: content that opens no block of its own is a dropped
        // indent; in 3.1 too (written flat it breaks the code, exit 0).
        reindent_dropped: true,
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

/// Whether `text` is in the language the Lark export teaches: the
/// grammar's `Patch` takes its lines, and no directive has a tab after
/// its ID.
#[cfg(feature = "internals")]
pub fn in_export_language(text: &str) -> bool {
    let mut lexer = lexer::Lexer::new(text);
    grammar::PatchParser::new().parse(&mut lexer).is_ok() && lexer.pads.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first error `parse` gives for `text`: message, then hint.
    fn refusal(text: &str) -> (String, String) {
        let store = bumpalo::Bump::new();
        let errors = parse(text, &store, Span::new(0, text.len()), false).unwrap_err();
        (
            errors[0].message.clone(),
            errors[0].hint.clone().unwrap_or_default(),
        )
    }

    /// The errors the parser itself raises (the lowering's have fixtures).
    #[test]
    fn each_syntax_error_says_what_was_expected_there() {
        let (message, hint) = refusal("a1b2c3d4 AP 3.2\na1b2c3d4 FILE\nm.py");
        assert_eq!(message, "expected a line end");
        assert!(hint.contains("newline"), "{hint}");
        let (message, hint) = refusal("a1b2c3d4 AP 3.2\na1b2c3d4 FILE\tm.py\n");
        assert!(message.contains("newline mode"), "{message}");
        assert!(hint.contains("`<ID> FILE CRLF`"), "{hint}");
        let (message, hint) = refusal("# only a comment\n");
        assert_eq!(
            message,
            "expected a `#` comment or the header `<8 hex ID> AP 3.2`"
        );
        assert!(hint.starts_with("an ap patch starts"), "{hint}");
        let (message, _) = refusal("a1b2c3d4 AP 3.2\na1b2c3d4 REPLACE\n");
        assert_eq!(message, "expected `<ID> FILE`, `<ID> CREATE` or `<ID> END`");
    }
}
