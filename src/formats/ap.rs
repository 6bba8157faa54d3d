//! ap 3.1 and 3.2: the generated parser for `grammars/ap.pest` and the
//! lowering of its parse tree into the shared model. Locating, the
//! heuristics, idempotency and I/O are the applier's (`apply/locate.rs`).
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

use std::borrow::Cow;

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use super::lowering::{rule_words, Lowering};
use super::{rule_names, syntax_error};
use crate::error::{Code, Diagnostic, Reported};
use crate::ir::{
    Action, Advice, Edit, Eol, FileOp, Finish, Level, Line, Locator, NestingGuard, NewLine,
    NewText, Patch, PathRef, Place, Policy, RangeEnd, Span, Uniqueness,
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
        | Rule::replace_action
        | Rule::insert_action
        | Rule::delete_action
        | Rule::create_action
        | Rule::recreate_action => "an action directive",
        Rule::keyed | Rule::value_key => "a value directive",
        Rule::anchor_kv | Rule::anchor_key => "`<ID> anchor`",
        Rule::snippet_kv | Rule::snippet_key => "`<ID> snippet`",
        Rule::tail_kv | Rule::tail_key => "`<ID> snippet_tail`",
        Rule::content_kv | Rule::content_key => "`<ID> content`",
        Rule::option | Rule::option_directive => "an option",
        Rule::rename_block | Rule::loose_rename | Rule::rename_directive => "`<ID> RENAME`",
        Rule::blank_line
        | Rule::gap
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

/// `--tolerant`: a directive line whose ID drifted from the header's (case,
/// or at most two hex digits) is read as that directive: its ID is
/// rewritten in place (same length, so every span stays), with a warning
/// naming the line. Only a line that is exactly `<8 hex> <KEYWORD>[ args]`
/// outside a markdown fence; such a line is never content in the export.
pub fn correct_drifted_ids(text: &mut String, body: Span) -> Vec<Diagnostic> {
    let mut warnings = vec![];
    let mut at = body.start;
    let mut id: Option<String> = None;
    let mut fenced = false;
    let mut fixes = vec![];
    for line in text[body.start..body.end].split_inclusive('\n') {
        let start = at;
        at += line.len();
        let line = line.trim_end_matches('\n');
        let Some(other) = directive_id(line) else {
            let t = line.trim_start();
            if id.is_some() && (t.starts_with("```") || t.starts_with("~~~")) {
                fenced = !fenced;
            }
            continue;
        };
        let Some(want) = id.as_deref() else {
            if line[8..].trim_start().starts_with("AP") {
                id = Some(other.to_string());
            }
            continue;
        };
        let differing = other
            .bytes()
            .zip(want.bytes())
            .filter(|(a, b)| !a.eq_ignore_ascii_case(b))
            .count();
        if fenced || other == want || differing > 2 {
            continue;
        }
        fixes.push((start, want.to_string()));
        warnings.push(
            Diagnostic::new(
                Code::ToleratedFormatSlip,
                format!(
                    "directive ID `{other}` drifted from the header's `{want}`; read as `{want}`"
                ),
            )
            .at(Span::new(start, start + 8), "a drifted patch ID")
            .hint(format!(
                "every directive starts with the header's ID: write `{want}`"
            )),
        );
    }
    for (start, want) in fixes {
        text.replace_range(start..start + 8, &want);
    }
    warnings
}

/// Parses and lowers `text[body]`; spans are offsets into `text`.
pub fn parse(
    text: &str,
    body: Span,
    tolerant: bool,
) -> Result<(Patch<'_>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let input = &text[body.start..body.end];
    let pairs = ApParser::parse(Rule::patch, input)
        .map_err(|e| vec![syntax_error(e, text, body.start, rule_name, syntax_hint)])?;
    let mut lower = Lower::new(
        text,
        body.start,
        Ap {
            id: "",
            v31: false,
            tolerant,
            ended: false,
            last_value: None,
        },
    );
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
        strip_project_prefix: tolerant,
        skip_applied: true,
        nesting_guard: match (v31, tolerant) {
            (true, _) => None,
            (false, false) => Some(NestingGuard::Refuse),
            (false, true) => Some(NestingGuard::Move),
        },
        anchor_by_block: true,
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

/// What an ap modification does at the place it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ModKind {
    Replace,
    InsertBefore,
    InsertAfter,
    Delete,
}

/// An ap locator value: lines to find, or a file boundary (3.2 `^`, `$`).
#[derive(Debug, Clone)]
enum Target<'a> {
    Lines(Vec<Line<'a>>),
    Start,
    End,
}

/// One ap modification, as the patch states it.
struct Modification<'a> {
    kind: ModKind,
    anchor: Option<Vec<Line<'a>>>,
    snippet: Target<'a>,
    /// `snippet_tail`: the region runs to the end of its first match after the snippet.
    tail: Option<Target<'a>>,
    /// Trailing whitespace already stripped.
    content: Vec<Line<'a>>,
    leading_blank: usize,
    trailing_blank: usize,
    scope_end: bool,
    /// The action directive, for diagnostics.
    span: Span,
}

/// A locator's normalised lines: blank ones dropped, the rest trimmed.
fn normalise<'a>(lines: &'a [Line]) -> Vec<&'a str> {
    lines
        .iter()
        .map(|l| l.text.trim())
        .filter(|t| !t.is_empty())
        .collect()
}

/// What a modification's locator says, normalised: two modifications with
/// the same key name the same place, the documented way to address N
/// identical blocks in order (each takes the next one).
fn locator_key(m: &Modification) -> Option<String> {
    let Target::Lines(lines) = &m.snippet else {
        return None;
    };
    let anchor = m.anchor.as_deref().map(normalise).unwrap_or_default();
    Some(format!(
        "{}\0{}",
        anchor.join("\n"),
        normalise(lines).join("\n")
    ))
}

/// The modifications of one file block as edits of the shared model. A
/// locator repeated within the block takes the first match after the
/// previous modification instead of a unique one.
fn edits(mods: Vec<Modification>) -> Vec<Edit> {
    let keys: Vec<Option<String>> = mods.iter().map(locator_key).collect();
    let repeated = |k: &Option<String>| k.is_some() && keys.iter().filter(|o| *o == k).count() > 1;
    let repeated: Vec<bool> = keys.iter().map(repeated).collect();
    mods.into_iter()
        .zip(repeated)
        .map(|(m, repeated)| {
            let (old, at_start, at_eof) = match m.snippet {
                Target::Lines(lines) => (lines, false, false),
                Target::Start => (vec![], true, false),
                Target::End => (vec![], false, true),
            };
            Edit {
                old,
                new: m.content.into_iter().map(NewLine::Add).collect(),
                old_no_eol: false,
                new_no_eol: false,
                own_eol: false,
                place: match m.kind {
                    ModKind::Replace | ModKind::Delete => Place::Replace,
                    ModKind::InsertBefore => Place::Before,
                    ModKind::InsertAfter => Place::After,
                },
                locator: Locator {
                    hint: None,
                    anchor: m.anchor,
                    range_end: m.tail.map(|t| match t {
                        Target::Lines(lines) => RangeEnd::Lines(lines),
                        _ => RangeEnd::Eof,
                    }),
                    at_start,
                    at_eof,
                    scope_end: m.scope_end,
                    widen: (m.leading_blank, m.trailing_blank),
                    levels: &[Level::BlankLinesIgnored, Level::SoftStart],
                    uniqueness: if repeated {
                        Uniqueness::FirstAfterCursor
                    } else {
                        Uniqueness::UniqueAfterCursor
                    },
                },
                span: m.span,
            }
        })
        .collect()
}

/// What an opening directive of a file block says.
enum Opening<'a> {
    /// The text the block's modifications start from.
    Base(Base<'a>),
    /// The block is one operation on the whole path.
    Whole(Action<'a>),
    Nothing,
}

/// What a file block's text starts from.
enum Base<'a> {
    /// The file as it is on disk.
    Existing,
    /// `CREATE` with `content`: a new file (or an identical existing one).
    Create(Vec<Line<'a>>),
    /// `RECREATE`: this text, whatever the file held (created if missing).
    Recreate(Vec<Line<'a>>),
}

/// The grammar rules in the parse tree of `text`, or `None` when it does not parse.
pub fn rules_used(text: &str) -> Option<std::collections::BTreeSet<String>> {
    ApParser::parse(Rule::patch, text).ok().map(rule_names)
}

type Lower<'t> = Lowering<'t, Ap<'t>>;

/// What ap's lowering keeps beyond the shared state.
struct Ap<'t> {
    id: &'t str,
    v31: bool,
    tolerant: bool,
    /// An `END` directive closes the patch.
    ended: bool,
    /// The last value in the patch: (its span, whether it was empty), for
    /// the truncation rule.
    last_value: Option<(Span, bool)>,
}

/// A modification (or the parts before any action) while its directives are read.
struct Pending<'t> {
    kw: &'t str,
    span: Span,
    values: Vec<(&'t str, Span, Vec<Line<'t>>)>,
    options: Vec<(&'t str, Span, Option<usize>)>,
    /// An unknown directive stood among these parts (already reported).
    bad: bool,
}

impl<'t> Pending<'t> {
    fn new(kw: &'t str, span: Span) -> Self {
        Pending {
            kw,
            span,
            values: vec![],
            options: vec![],
            bad: false,
        }
    }

    fn value(&self, key: &str) -> Option<&(&'t str, Span, Vec<Line<'t>>)> {
        self.values.iter().find(|v| v.0 == key)
    }
    fn is_bare(&self) -> bool {
        self.values.is_empty() && self.options.is_empty()
    }
}

impl<'t> Lowering<'t, Ap<'t>> {
    /// The keyword of a directive line: the word after the ID.
    fn keyword(&self, line: &Pair<'t, Rule>) -> &'t str {
        let text = line.as_str();
        text.get(self.own.id.len()..)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("")
    }

    fn patch(&mut self, pair: Pair<'t, Rule>) {
        let mut blocks = vec![];
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::header => self.header(part),
                Rule::gap => {
                    self.gap(part);
                }
                Rule::file_block => blocks.push(part),
                Rule::headless => {
                    let span = self.span(&part);
                    let mut inner = part.into_inner();
                    let head = inner.next().expect("headless starts with FILE");
                    self.own.id = head
                        .clone()
                        .into_inner()
                        .find(|p| p.as_rule() == Rule::patch_id)
                        .map_or("", |p| p.as_str());
                    let first = Span::line_at(self.text, span.start);
                    if self.own.tolerant {
                        self.warn(
                            Code::ToleratedFormatSlip,
                            first,
                            "the patch has no `<ID> AP 3.2` header; the ID of this `FILE` is taken",
                            "the header belongs above this line",
                        );
                    } else {
                        self.error(
                            first,
                            "the patch has no `<ID> AP 3.x` header",
                            "the first directive, with no header above it",
                            "put `<ID> AP 3.2` above the first `FILE` (or apply with --tolerant)",
                        );
                    }
                    let (nested, own): (Vec<_>, Vec<_>) =
                        inner.partition(|p| p.as_rule() == Rule::file_block);
                    self.file_block(Some(head), own);
                    blocks.extend(nested);
                }
                Rule::end_block => {
                    self.own.ended = true;
                    let end = part
                        .into_inner()
                        .nth(1)
                        .and_then(|t| t.into_inner().find(|p| p.as_rule() == Rule::ignored_tail));
                    if let Some(tail) = end {
                        let s = self.span(&tail);
                        self.warn(
                            Code::SurroundingTextStripped,
                            s,
                            "text after `END` is ignored",
                            "ignored",
                        );
                    }
                }
                _ => {}
            }
        }
        for block in blocks {
            let mut inner = block.into_inner();
            let mut head = inner.next();
            if head
                .as_ref()
                .is_some_and(|h| h.as_rule() == Rule::loose_file)
            {
                inner = head.take().expect("just matched").into_inner();
                head = inner.next();
            }
            self.file_block(head, inner.collect());
        }
        if let Some((span, true)) = self.own.last_value {
            if !self.own.ended {
                self.error(
                    span,
                    "the patch ends with an empty value and no `END`: it may have been cut off",
                    "an empty value at the very end",
                    "end the patch with `<ID> END` if the value is meant to be empty",
                );
            }
        }
    }

    fn header(&mut self, pair: Pair<'t, Rule>) {
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::patch_id => self.own.id = p.as_str(),
                Rule::version => self.own.v31 = p.as_str() == "3.1",
                _ => {}
            }
        }
    }

    /// Blank lines, or text where only they belong.
    fn gap(&mut self, pair: Pair<'t, Rule>) {
        for line in pair.into_inner() {
            if line.as_rule() != Rule::stray_line {
                continue;
            }
            let span = self.line_span(&line);
            let text = line.as_str().trim_end_matches('\n');
            if self.foreign(text, span) {
                continue;
            }
            if self.own.tolerant && text.trim_start().starts_with('#') {
                self.warn(
                    Code::ToleratedFormatSlip,
                    span,
                    "a `#` comment between directives is ignored",
                    "comment",
                );
                continue;
            }
            let (message, hint) = if text.trim_start().starts_with('#') {
                (
                    "a comment between directives",
                    "ap allows `#` comments only before the header; delete it (or apply with --tolerant)",
                )
            } else {
                (
                    "text where only a directive or a blank line may stand",
                    "every value needs its directive above it, e.g. `<ID> snippet` before the lines to find",
                )
            };
            self.error(span, message, "not part of any value", hint);
        }
    }

    /// A line that is a directive with another patch ID: `id_mismatch`.
    fn foreign(&mut self, text: &str, span: Span) -> bool {
        let Some(other) = directive_id(text) else {
            return false;
        };
        if other == self.own.id {
            return false;
        }
        self.diags.push(
            Diagnostic::new(
                Code::IdMismatch,
                format!(
                    "directive with patch ID `{other}`, but the header's is `{}`",
                    self.own.id
                ),
            )
            .at(Span::new(span.start, span.start + 8), "another ID")
            .hint(format!(
                "every directive must start with the header's ID: write `{}` here",
                self.own.id
            )),
        );
        true
    }

    /// The lines of a `value`, checked for drifted directives outside fences.
    fn value_lines(&mut self, value: Option<Pair<'t, Rule>>) -> Vec<Line<'t>> {
        let mut lines = vec![];
        let mut fenced = false;
        for line in value.into_iter().flat_map(|v| v.into_inner()) {
            let span = self.line_span(&line);
            let text = line.as_str().strip_suffix('\n').unwrap_or(line.as_str());
            let t = text.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                fenced = !fenced;
            }
            if !fenced {
                self.foreign(text, span);
            }
            lines.push(Line {
                text: Cow::Borrowed(text),
                span,
            });
        }
        lines
    }

    fn file_block(&mut self, head: Option<Pair<'t, Rule>>, items: Vec<Pair<'t, Rule>>) {
        let Some(head) = head else { return };
        self.own.last_value = None;
        let head_span = self.line_span(&head);
        let create_head = head.as_rule() == Rule::create_directive;
        let (eol, inline) = self.file_head(head);
        let mut items = items.into_iter().peekable();
        let value = match items.peek() {
            Some(p) if is_value(p.as_rule()) => items.next(),
            _ => None,
        };
        let lines = self.value_lines(value);
        let path = match inline {
            Some(p) => {
                self.extra_path_lines(&lines, 0);
                Some(p)
            }
            None => self.path_value(
                &lines,
                head_span,
                if create_head { "CREATE" } else { "FILE" },
            ),
        };
        let mut pendings: Vec<Pending<'t>> = vec![];
        if create_head {
            pendings.push(Pending::new("CREATE", head_span));
        }
        let mut rename: Option<(Span, Vec<Line<'t>>)> = None;
        for item in items {
            match item.as_rule() {
                Rule::action_block
                | Rule::recreate_block
                | Rule::delete_file
                | Rule::create_block
                | Rule::create_file
                | Rule::replace_mod
                | Rule::insert_mod
                | Rule::delete_mod => pendings.push(self.action_item(item)),
                Rule::rename_block | Rule::loose_rename => {
                    let (span, lines) = self.rename_item(item);
                    if rename.is_some() {
                        self.error(
                            span,
                            "a second `RENAME` in one file block",
                            "second RENAME",
                            "a file block holds one RENAME and nothing else",
                        );
                    }
                    rename = Some((span, lines));
                }
                Rule::loose_part | Rule::content_kv => {
                    self.loose_item(item, &mut pendings, create_head)
                }
                _ => {}
            }
        }
        let Some(path) = path else { return };
        match rename {
            Some((span, _)) if !pendings.is_empty() => {
                self.error(span, "`RENAME` shares its file block with other actions", "RENAME", "a file block holds one RENAME and nothing else; put the other changes in their own `FILE` block");
            }
            Some((span, lines)) => {
                if let Some(to) = self.path_value(&lines, span, "RENAME") {
                    let op = FileOp::new(path, Action::Rename { to }, head_span);
                    self.patch.files.push(op);
                }
            }
            None => self.lower_file(path, head_span, eol, pendings),
        }
    }

    /// The `FILE` line's newline mode and inline path (3.2).
    fn file_head(&mut self, head: Pair<'t, Rule>) -> (Option<Eol>, Option<PathRef>) {
        let mut eol = None;
        let mut inline = None;
        for p in head.into_inner() {
            match p.as_rule() {
                Rule::newline_mode => {
                    eol = Some(match p.as_str() {
                        "CRLF" => Eol::Crlf,
                        "CR" => Eol::Cr,
                        _ => Eol::Lf,
                    })
                }
                Rule::inline_path => {
                    let s = self.span(&p);
                    let t = p.as_str().trim_end();
                    inline = Some(PathRef {
                        text: t.to_string(),
                        span: Span::new(s.start, s.start + t.len()),
                    });
                }
                _ => {}
            }
        }
        (eol, inline)
    }

    /// An action directive and its values and options.
    fn action_item(&mut self, item: Pair<'t, Rule>) -> Pending<'t> {
        let mut inner = item.into_inner();
        let action = inner
            .next()
            .expect("an action block starts with its action");
        let span = self.line_span(&action);
        let kw = self.keyword(&action);
        let mut pending = Pending::new(kw, span);
        self.own.last_value = None;
        for part in inner {
            if part.as_rule() == Rule::gap {
                self.gap(part);
            } else {
                self.part(part, &mut pending);
            }
        }
        pending
    }

    /// A `RENAME` directive and its value's lines.
    fn rename_item(&mut self, item: Pair<'t, Rule>) -> (Span, Vec<Line<'t>>) {
        let mut inner = item.into_inner();
        let d = inner.next().expect("rename_block starts with RENAME");
        let span = self.line_span(&d);
        self.own.last_value = None;
        (span, self.value_lines(inner.next()))
    }

    /// A value or option out of place: it joins the open pending (values
    /// before any action, or a `CREATE` head's), or opens one of its own
    /// for the lowering to name.
    fn loose_item(
        &mut self,
        item: Pair<'t, Rule>,
        pendings: &mut Vec<Pending<'t>>,
        create_head: bool,
    ) {
        let part = if item.as_rule() == Rule::content_kv {
            item
        } else {
            item.into_inner().next().expect("loose_part has a part")
        };
        let open = pendings.len();
        match pendings.last_mut() {
            Some(p) if p.kw.is_empty() || (create_head && open == 1) => self.part(part, p),
            _ => {
                let span = Span::line_at(self.text, self.span(&part).start);
                let mut p = Pending::new("", span);
                self.part(part, &mut p);
                pendings.push(p);
            }
        }
    }

    /// The one path line of a `FILE`, `CREATE` or `RENAME` value.
    fn path_value(&mut self, lines: &[Line<'t>], directive: Span, what: &str) -> Option<PathRef> {
        let Some(i) = lines.iter().position(|l| !l.text.trim().is_empty()) else {
            self.error(
                directive,
                format!("`{what}` without a path"),
                "the path belongs on the next line",
                "write the path relative to the root on the line after the directive",
            );
            return None;
        };
        let line = &lines[i];
        let t = line.text.trim();
        let start = line.span.start + (line.text.len() - line.text.trim_start().len());
        self.extra_path_lines(lines, i + 1);
        Some(PathRef {
            text: t.to_string(),
            span: Span::new(start, start + t.len()),
        })
    }

    fn extra_path_lines(&mut self, lines: &[Line<'t>], from: usize) {
        for line in lines
            .iter()
            .skip(from)
            .filter(|l| !l.text.trim().is_empty())
        {
            if self.own.tolerant && line.text.trim_start().starts_with('#') {
                self.warn(
                    Code::ToleratedFormatSlip,
                    line.span,
                    "a `#` comment after a path is ignored",
                    "comment",
                );
            } else {
                self.error(
                    line.span,
                    "a second line under a path",
                    "a path value is one line",
                    "put one path on the line after `FILE`; every other line needs its directive above it",
                );
            }
        }
    }

    /// A value directive or an option, added to `pending`.
    fn part(&mut self, part: Pair<'t, Rule>, pending: &mut Pending<'t>) {
        match part.as_rule() {
            Rule::keyed | Rule::anchor_kv | Rule::snippet_kv | Rule::tail_kv | Rule::content_kv => {
                let mut inner = part.into_inner();
                let key = inner.next().expect("a value starts with its key");
                let span = self.line_span(&key);
                let kw = self.keyword(&key);
                let value = inner.next();
                let vspan = value.as_ref().map(|v| self.span(v));
                let lines = self.value_lines(value);
                if let Some((_, first, _)) = pending.value(kw) {
                    let first = *first;
                    self.diags.push(
                        Diagnostic::new(Code::SyntaxError, format!("a second `{kw}` in one modification"))
                            .at(span, "repeated here")
                            .secondary(first, "first here")
                            .hint("each modification has one of each value; for another change, start a new modification with its action directive (`<ID> REPLACE`, …)"),
                    );
                }
                let empty = lines.iter().all(|l| l.text.trim().is_empty());
                self.own.last_value = Some((
                    vspan.filter(|s| s.end > s.start).unwrap_or(span),
                    empty && kw == "content" && matches!(pending.kw, "REPLACE" | "RECREATE"),
                ));
                pending.values.push((kw, span, lines));
            }
            Rule::option => {
                let mut inner = part.into_inner();
                let d = inner.next().expect("option starts with its directive");
                let span = self.line_span(&d);
                let mut kw = "";
                let mut n = None;
                for p in d.into_inner() {
                    match p.as_rule() {
                        Rule::option_kw => kw = p.as_str(),
                        Rule::count => n = p.as_str().parse().ok(),
                        _ => {}
                    }
                }
                if let Some(gap) = inner.next() {
                    self.gap(gap);
                }
                self.own.last_value = None;
                pending.options.push((kw, span, n));
            }
            Rule::bad_directive => {
                let mut inner = part.into_inner();
                let line = inner.next().expect("bad_directive has its line");
                let span = self.line_span(&line);
                let word = line.as_str()[self.own.id.len()..].trim();
                let key: String = word.chars().take_while(|c| !c.is_whitespace()).collect();
                let bare = key.trim_end_matches(':');
                let guess = KEYWORDS.iter().find(|k| k.eq_ignore_ascii_case(bare));
                let hint = match guess {
                    Some(k) => format!(
                        "directive keywords are case-sensitive and take no colon: write `{} {k}`",
                        self.own.id
                    ),
                    None => format!("the directives are {}", KEYWORDS.join(", ")),
                };
                self.diags.push(
                    Diagnostic::new(Code::SyntaxError, format!("unknown directive `{key}`"))
                        .at(span, "not an ap directive")
                        .hint(hint),
                );
                self.value_lines(inner.next());
                pending.bad = true;
            }
            _ => {}
        }
    }

    fn lower_file(
        &mut self,
        path: PathRef,
        head: Span,
        eol: Option<Eol>,
        pendings: Vec<Pending<'t>>,
    ) {
        let mut base = Base::Existing;
        let mut mods = vec![];
        let count = pendings.len();
        for (i, p) in pendings.into_iter().enumerate() {
            let content = p.value("content").map(|v| content_lines(&v.2));
            let opening = match p.kw {
                "" | "CREATE" | "RECREATE" => self.opening(&p, i == 0, count, content),
                "DELETE" if p.is_bare() => self.bare_delete(&p, count),
                kw => {
                    mods.extend(self.modification(kw, &p, content));
                    Opening::Nothing
                }
            };
            match opening {
                Opening::Base(b) => base = b,
                Opening::Whole(action) => {
                    self.patch.files.push(FileOp::new(path, action, head));
                    return;
                }
                Opening::Nothing => {}
            }
        }
        let edits = edits(mods);
        let text = |lines| NewText {
            lines,
            final_newline: true,
        };
        let action = match base {
            Base::Existing => Action::Modify {
                edits,
                move_to: None,
            },
            Base::Create(lines) => Action::Add {
                content: text(lines),
                edits,
                overwrite: false,
            },
            Base::Recreate(lines) => Action::Add {
                content: text(lines),
                edits,
                overwrite: true,
            },
        };
        self.patch.files.push(FileOp {
            eol,
            ..FileOp::new(path, action, head)
        });
    }

    /// What a block's opening directive says: values before any action
    /// (an implicit `CREATE`), `CREATE` (with content, or a directory) or
    /// `RECREATE`. Only the block's first directive (`first`) may open it.
    fn opening(
        &mut self,
        p: &Pending<'t>,
        first: bool,
        count: usize,
        content: Option<Vec<Line<'t>>>,
    ) -> Opening<'t> {
        match p.kw {
            "" => {
                if let (Some(content), 1, true, true) =
                    (content, p.values.len(), p.options.is_empty(), first)
                {
                    self.warn(
                        Code::ImplicitCreate,
                        p.span,
                        "a file block with only `content` creates the file (implicit CREATE)",
                        "read as `CREATE`",
                    );
                    return Opening::Base(Base::Create(content));
                }
                if !p.bad {
                    self.error(
                        p.span,
                        "values without an action directive",
                        "no REPLACE/INSERT_AFTER/INSERT_BEFORE/DELETE/CREATE above this",
                        "start each modification with its action: `<ID> REPLACE`, then `<ID> snippet` and `<ID> content`",
                    );
                }
                Opening::Nothing
            }
            "CREATE" if !first => {
                self.error(
                    p.span,
                    "`CREATE` after other modifications",
                    "CREATE",
                    "`CREATE` opens its file block: put it first",
                );
                Opening::Nothing
            }
            "CREATE" => {
                self.no_options(p);
                match content {
                    Some(c) => Opening::Base(Base::Create(c)),
                    None if count == 1 => Opening::Whole(Action::CreateDir),
                    None => {
                        self.error(p.span, "`CREATE` without `content` creates a directory, which takes no modifications", "CREATE", "add `<ID> content` with the file's text");
                        Opening::Nothing
                    }
                }
            }
            _ => {
                self.no_options(p);
                if !first {
                    self.error(
                        p.span,
                        "`RECREATE` after other modifications",
                        "RECREATE",
                        "`RECREATE` replaces the whole file: put it first in its block",
                    );
                    return Opening::Nothing;
                }
                match content {
                    Some(c) => Opening::Base(Base::Recreate(c)),
                    None => {
                        self.error(
                            p.span,
                            "`RECREATE` without `content`",
                            "RECREATE",
                            "add `<ID> content` with the file's new text",
                        );
                        Opening::Nothing
                    }
                }
            }
        }
    }

    /// A `DELETE` with no snippet: the whole file or directory, alone in
    /// its block.
    fn bare_delete(&mut self, p: &Pending<'t>, count: usize) -> Opening<'t> {
        if count == 1 {
            return Opening::Whole(Action::Remove);
        }
        self.error(
            p.span,
            "a bare `DELETE` (which deletes the whole file) beside other modifications",
            "DELETE with no snippet",
            "to delete lines, give `<ID> snippet`; to delete the file, put `DELETE` alone in its own `FILE` block",
        );
        Opening::Nothing
    }

    fn no_options(&mut self, p: &Pending<'t>) {
        for (kw, span, _) in &p.options {
            self.error(
                *span,
                format!("`{kw}` does not apply to `{}`", p.kw),
                "option without a located region",
                "options belong to REPLACE, DELETE, INSERT_AFTER and INSERT_BEFORE",
            );
        }
    }

    fn modification(
        &mut self,
        kw: &'t str,
        p: &Pending<'t>,
        content: Option<Vec<Line<'t>>>,
    ) -> Option<Modification<'t>> {
        let mut kind = match kw {
            "REPLACE" => ModKind::Replace,
            "INSERT_AFTER" => ModKind::InsertAfter,
            "INSERT_BEFORE" => ModKind::InsertBefore,
            _ => ModKind::Delete,
        };
        let mut anchor = p.value("anchor").map(|v| v.2.clone());
        let snippet = self.snippet(kw, p, &mut anchor)?;
        let tail = self.tail(kw, kind, p).ok()?;
        let content = self.content(kw, &mut kind, p, content)?;
        let mut m = Modification {
            kind,
            anchor,
            snippet,
            tail,
            content,
            leading_blank: 0,
            trailing_blank: 0,
            scope_end: false,
            span: p.span,
        };
        for &(opt, _, n) in &p.options {
            match opt {
                "include_leading_blank_lines" => m.leading_blank = n.unwrap_or(1),
                "include_trailing_blank_lines" => m.trailing_blank = n.unwrap_or(1),
                _ => m.scope_end = n != Some(0),
            }
        }
        Some(m)
    }

    /// The modification's `snippet` (or, tolerant, its anchor standing in).
    fn snippet(
        &mut self,
        kw: &str,
        p: &Pending<'t>,
        anchor: &mut Option<Vec<Line<'t>>>,
    ) -> Option<Target<'t>> {
        let snippet = match p.value("snippet") {
            Some(v) => Some(v.2.clone()),
            None => match anchor.take() {
                Some(a) if self.own.tolerant => {
                    self.warn(Code::ToleratedFormatSlip, p.span, format!("`{kw}` has an `anchor` but no `snippet`; the anchor is used as the snippet"), "no snippet");
                    Some(a)
                }
                a => {
                    let hint = if a.is_some() {
                        "an anchor only narrows the search; add `<ID> snippet` with the lines to change (or apply with --tolerant)"
                    } else {
                        "add `<ID> snippet` and, on the lines after it, the text to find"
                    };
                    self.error(
                        p.span,
                        format!("`{kw}` without a `snippet`"),
                        "nothing says where",
                        hint,
                    );
                    return None;
                }
            },
        }?;
        let target = target(&snippet);
        if target.is_none() {
            self.error(
                p.value("snippet").map_or(p.span, |v| v.1),
                "an empty `snippet`",
                "no lines to find",
                "put the lines to find under `<ID> snippet`",
            );
        }
        target
    }

    /// The range end, if there is one.
    fn tail(
        &mut self,
        kw: &str,
        kind: ModKind,
        p: &Pending<'t>,
    ) -> Result<Option<Target<'t>>, Reported> {
        Ok(match p.value("snippet_tail") {
            Some((_, span, lines)) => {
                if matches!(kind, ModKind::InsertAfter | ModKind::InsertBefore) {
                    self.error(
                        *span,
                        format!("`snippet_tail` with `{kw}`"),
                        "a range",
                        "an insertion needs one point: use a single `snippet`",
                    );
                    return Err(Reported);
                }
                match target(lines) {
                    Some(Target::Start) | None => {
                        self.error(*span, "an empty or `^` `snippet_tail`", "no end to find", "put the last lines of the range under `<ID> snippet_tail` (or `$` for the end of the file)");
                        return Err(Reported);
                    }
                    t => t,
                }
            }
            None => None,
        })
    }

    /// The new lines; an empty `REPLACE` content is a `DELETE` in 3.2.
    fn content(
        &mut self,
        kw: &str,
        kind: &mut ModKind,
        p: &Pending<'t>,
        content: Option<Vec<Line<'t>>>,
    ) -> Option<Vec<Line<'t>>> {
        Some(match (*kind, content) {
            (ModKind::Delete, Some(_)) => {
                self.error(
                    p.value("content").map_or(p.span, |v| v.1),
                    "`DELETE` takes no `content`",
                    "content",
                    "use REPLACE to change lines, DELETE only to remove them",
                );
                return None;
            }
            (ModKind::Delete, None) => vec![],
            (_, None) => {
                self.error(
                    p.span,
                    format!("`{kw}` without `content`"),
                    "no new text",
                    "add `<ID> content` and the new lines under it",
                );
                return None;
            }
            (ModKind::Replace, Some(c)) if c.is_empty() => {
                let at = p.value("content").map_or(p.span, |v| v.1);
                if self.own.v31 {
                    self.error(
                        at,
                        "`REPLACE` with an empty `content`",
                        "empty",
                        "to remove the lines, use `DELETE` (ap 3.1 has no empty REPLACE)",
                    );
                    return None;
                }
                self.warn(
                    Code::EmptyContentAsDelete,
                    at,
                    "an empty `content` makes this `REPLACE` a `DELETE`",
                    "empty content",
                );
                *kind = ModKind::Delete;
                c
            }
            (_, Some(c)) => c,
        })
    }
}

/// A locator value: `^`, `$`, or its lines without blank ones at either end.
fn target<'t>(lines: &[Line<'t>]) -> Option<Target<'t>> {
    let trimmed = trim_blank(lines);
    match trimmed {
        [] => None,
        [one] if one.text.trim() == "^" => Some(Target::Start),
        [one] if one.text.trim() == "$" => Some(Target::End),
        _ => Some(Target::Lines(trimmed.to_vec())),
    }
}

fn trim_blank<'a, 't>(lines: &'a [Line<'t>]) -> &'a [Line<'t>] {
    let start = lines
        .iter()
        .position(|l| !l.text.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.text.trim().is_empty())
        .map_or(start, |i| i + 1);
    &lines[start..end]
}

/// `content` without blank lines at either end and without trailing whitespace.
fn content_lines<'t>(lines: &[Line<'t>]) -> Vec<Line<'t>> {
    trim_blank(lines)
        .iter()
        .map(|l| {
            let t = l.text.trim_end_matches([' ', '\t']);
            Line {
                text: match &l.text {
                    Cow::Borrowed(b) => Cow::Borrowed(&b[..t.len()]),
                    Cow::Owned(_) => Cow::Owned(t.to_string()),
                },
                span: l.span,
            }
        })
        .collect()
}

/// The ID of a line that looks like a directive (`<8 hex> KEYWORD …`).
fn directive_id(line: &str) -> Option<&str> {
    let id = line.get(..8)?;
    if !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rest = line[8..].strip_prefix(' ')?.trim_start();
    let word = rest.split_whitespace().next()?;
    (KEYWORDS.contains(&word) || word == "AP").then_some(id)
}
/// Whether a pair is a value of some kind (the canonical ones are stricter).
fn is_value(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::value | Rule::filled_value | Rule::tail_value | Rule::path_value
    )
}
