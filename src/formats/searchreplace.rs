//! SEARCH/REPLACE blocks: the generated parser for
//! `grammars/searchreplace.pest` and the lowering of its parse tree into
//! the shared model. Matching and I/O are the applier's.
//!
//! Lowering decisions (docs/decisions.md explains each):
//! - Each block is one operation on its file, and blocks for one path apply
//!   in turn, each to what the ones before it left (as Aider applies them).
//! - The SEARCH text must occur exactly once in the file (the one ladder of
//!   match levels); the lines it shares with the REPLACE text at either end
//!   keep the file's own text.
//! - An empty SEARCH creates the file with the REPLACE text; the file must
//!   not exist (or hold exactly that text already). Aider appends to an
//!   existing file instead; a refusal names the file.
//! - A block without a path before it edits the file of the block before;
//!   the first block must have one (`missing_file_header`).

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use super::lowering::{keep_shared_ends, rule_words, Lowering};
use super::syntax_error;
use crate::error::{Code, Diagnostic};
use crate::ir::{
    Action, Advice, Edit, FileOp, Levels, Line, Locator, NewText, Patch, PathRef, Policy, Span,
    Uniqueness,
};

#[derive(Parser)]
#[grammar = "../grammars/searchreplace.pest"]
struct SearchReplaceParser;

fn rule_name(rule: &Rule) -> String {
    match rule {
        Rule::EOI => "the end of the message",
        Rule::path_line | Rule::decorated_path_line | Rule::path => "a file's path alone on a line",
        // Expected wherever prose may end, so named only where nothing else is.
        Rule::named => "",
        Rule::block | Rule::search_marker | Rule::loose_search_marker => "`<<<<<<< SEARCH`",
        Rule::divider | Rule::loose_divider => "`=======`",
        Rule::replace_marker | Rule::loose_replace_marker => "`>>>>>>> REPLACE`",
        Rule::search_line | Rule::plain_search_line | Rule::loose_search_line => {
            "a line of the SEARCH text"
        }
        Rule::replace_line | Rule::plain_replace_line | Rule::loose_replace_line => {
            "a line of the REPLACE text"
        }
        Rule::orphan
        | Rule::prose
        | Rule::blank_line
        | Rule::fence_open
        | Rule::fence_close
        | Rule::empty_sections => "",
        other => return rule_words(other),
    }
    .to_string()
}

fn syntax_hint(expected: &[Rule]) -> &'static str {
    let has = |r: Rule| expected.contains(&r);
    if has(Rule::replace_marker) || has(Rule::loose_replace_marker) || has(Rule::replace_line) {
        "end every block with `>>>>>>> REPLACE` alone on a line"
    } else if has(Rule::replace_line) {
        "a block needs lines to find or lines to write: to create a file, put its text \
         between `=======` and `>>>>>>> REPLACE`"
    } else if has(Rule::divider) || has(Rule::loose_divider) || has(Rule::search_line) {
        "put `=======` alone on a line between the SEARCH text and the REPLACE text"
    } else {
        "write the file's path alone on a line, then `<<<<<<< SEARCH`, the lines to find, \
         `=======`, the lines to put in their place, and `>>>>>>> REPLACE`"
    }
}

/// Whether `text` holds a SEARCH marker before any line that starts
/// another format: how the format is told apart, since its first line is
/// a path or prose. (A block cut short is still this format, for the
/// parser to say what is missing.)
pub fn holds_blocks(text: &str) -> bool {
    for line in text.lines() {
        let line = line.trim();
        if super::registry::REGISTRY.iter().any(|s| (s.starts)(line)) {
            return false;
        }
        let n = line.chars().take_while(|&c| c == '<').count();
        if (5..=9).contains(&n) && line[n..].trim_end_matches('>').trim() == "SEARCH" {
            return true;
        }
    }
    false
}

/// The names of the grammar rules in the parse tree of `text`, or `None`
/// when it does not parse (for checking the Lark export against pest).
#[cfg(feature = "internals")]
pub fn rules_used(text: &str) -> Option<std::collections::BTreeSet<String>> {
    SearchReplaceParser::parse(Rule::message, text)
        .ok()
        .map(super::rule_names)
}

/// Parses and lowers `text[body]`; spans are offsets into `text`.
pub fn parse<'t>(
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    let pairs = SearchReplaceParser::parse(Rule::message, input)
        .map_err(|e| vec![syntax_error(e, text, body.start, rule_name, syntax_hint)])?;
    let mut lower = Lowering::new(text, store, body.start, SearchReplace::default());
    lower.patch.policy = Policy {
        repeated_paths: true,
        advice: Advice {
            block: "SEARCH text",
            disambiguate: "add lines copied from the file above or below the SEARCH text \
                           until it occurs only once",
            create:
                "create it with an empty SEARCH section and its whole text as the REPLACE section",
            update: "the file exists: copy the lines to change into the SEARCH section \
                     instead of leaving it empty",
            ..Advice::default()
        },
        ..Policy::default()
    };
    for pair in pairs.flatten() {
        match pair.as_rule() {
            Rule::path => lower.path(&pair),
            Rule::block => lower.block(pair),
            Rule::loose_search_marker | Rule::loose_divider | Rule::loose_replace_marker => {
                lower.loose_marker(&pair)
            }
            _ => {}
        }
    }
    lower.finish()
}

/// The lowering's own state: the path the blocks read now edit.
#[derive(Default)]
struct SearchReplace {
    path: Option<PathRef>,
}

type Lower<'t> = Lowering<'t, SearchReplace>;

impl<'t> Lower<'t> {
    fn path(&mut self, pair: &Pair<'t, Rule>) {
        self.own.path = Some(PathRef {
            text: pair.as_str().to_string(),
            span: self.span(pair),
        });
    }

    /// A marker with other than 7 characters, or blanks around it.
    fn loose_marker(&mut self, pair: &Pair<'t, Rule>) {
        let canonical = match pair.as_rule() {
            Rule::loose_search_marker => "<<<<<<< SEARCH",
            Rule::loose_divider => "=======",
            _ => ">>>>>>> REPLACE",
        };
        let span = self.line_span(pair);
        self.diags.push(
            Diagnostic::new(
                Code::ToleratedFormatSlip,
                format!("`{}` read as `{canonical}`", pair.as_str().trim()),
            )
            .at(
                span,
                "a marker with other than 7 characters, or blanks around it",
            )
            .hint(format!("write `{canonical}` alone on its line")),
        );
    }

    /// One block: an operation on the current path.
    fn block(&mut self, pair: Pair<'t, Rule>) {
        // The block's SEARCH section, marker to divider: what is sought.
        let mut span = self.line_span(&pair);
        let (mut search, mut replace) = (vec![], vec![]);
        for part in pair.into_inner() {
            let line = || Line::of(part.as_str().strip_suffix('\n').unwrap_or(part.as_str()));
            match part.as_rule() {
                Rule::search_line => search.push(line()),
                Rule::replace_line => replace.push(line()),
                Rule::divider => span.end = self.line_span(&part).end,
                Rule::empty_sections => {
                    let at = Span::line_at(self.text, span.start);
                    return self.error(
                        at,
                        "an empty block: both its SEARCH and REPLACE sections are empty",
                        "changes nothing",
                        "to create a file, put its text in the REPLACE section; to delete lines, copy them into SEARCH",
                    );
                }
                _ => {}
            }
        }
        let Some(path) = self.own.path.clone() else {
            self.diags.push(
                Diagnostic::new(
                    Code::MissingFileHeader,
                    "a block without a file's path before it",
                )
                .at(
                    Span::line_at(self.text, span.start),
                    "which file does this block edit?",
                )
                .hint("write the file's path alone on the line before `<<<<<<< SEARCH`"),
            );
            return;
        };
        let action = if search.is_empty() {
            Action::add(NewText {
                lines: self.keep(&replace),
                final_newline: true,
            })
        } else {
            let mut new = keep_shared_ends(&search, replace);
            let edit = Edit::replace(
                self.keep(&search),
                self.keep_new(&mut new),
                Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER),
                span,
            );
            Action::Modify {
                edits: vec![edit],
                move_to: None,
            }
        };
        self.patch.files.push(FileOp::new(path, action, span));
    }
}
