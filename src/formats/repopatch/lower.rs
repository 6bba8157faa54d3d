//! RepoPatch's parse tree lowered into the shared model: each operation
//! an edit of the file as the previous ones left it, the spec's "Must Never
//! Do" rules reported from the rules the grammar parses only to name them.

use pest::iterators::Pair;

use super::misspelt::misspelt_keyword;
use super::*;
use crate::formats::lowering::keep_shared_ends;

/// The Repopatch lowering: the shared one, with nothing of its own.
pub(super) struct Repopatch;

pub(super) type Lower<'a> = Lowering<'a, Repopatch>;

impl Lowering<'_, Repopatch> {
    /// Warns when a keyword line has spaces or tabs the export would not
    /// admit (see `lead` in the grammar). Trailing blanks it admits.
    pub(super) fn marker(&mut self, pair: &Pair<'_, Rule>) {
        let raw = pair.as_str().trim_end_matches(['\n', '\r']);
        let path_at = pair
            .clone()
            .into_inner()
            .find(|p| p.as_rule() == Rule::path)
            .map(|p| p.as_span().start() - pair.as_span().start());
        if pair
            .clone()
            .into_inner()
            .any(|p| p.as_rule() == Rule::keyword_args)
        {
            return;
        }
        let (written, canonical) = match path_at {
            // `PATCH` and spaces, as many as the export likes.
            Some(at) => {
                let written = &raw[..at];
                let spaced = written
                    .strip_prefix("PATCH")
                    .is_some_and(|gap| gap.bytes().all(|b| b == b' '));
                (written, if spaced { written } else { "PATCH " })
            }
            None => {
                let written = raw.trim_end_matches([' ', '\t']);
                let word = match pair.as_rule() {
                    Rule::patchset_open => "PATCHSET",
                    Rule::patchset_close => "ENDPATCHSET",
                    Rule::patch_close => "ENDPATCH",
                    Rule::separator => "---",
                    Rule::insert_before_kw => "INSERT BEFORE",
                    Rule::insert_after_kw => "INSERT AFTER",
                    Rule::replace_kw => "REPLACE",
                    Rule::delete_kw => "DELETE",
                    Rule::createfile_kw => "CREATEFILE",
                    _ => "DELETEFILE",
                };
                (written, word)
            }
        };
        let span = self.line_span(pair);
        self.padded(span, written, canonical);
    }
}

/// A line of content: the text after its one-character prefix and the
/// space that should follow it.
fn content(line: &str, prefix_len: usize) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.get(prefix_len..).unwrap_or(&line[line.len()..])
}

/// What an operation keyword is called in messages.
fn keyword(rule: Rule) -> &'static str {
    match rule {
        Rule::insert_before => "INSERT BEFORE",
        Rule::insert_after => "INSERT AFTER",
        Rule::replace => "REPLACE",
        Rule::delete => "DELETE",
        Rule::createfile => "CREATEFILE",
        _ => "DELETEFILE",
    }
}

impl<'a> Lowering<'a, Repopatch> {
    /// A `PATCH` or the patchset ends without its closing keyword.
    /// At the end of the text, the patch may have been cut off: a
    /// refusal, which says so and how to finish it.
    pub(super) fn missing_close(&mut self, pair: &Pair<Rule>, keyword: &str, what: &str) {
        let at = self.span(pair).start;
        let mut d = Diagnostic::new(
            Code::SyntaxError,
            format!("{what} ends without `{keyword}`"),
        )
        .at(
            Span::line_before(self.text, at),
            "the block stops after this line",
        );
        if self.text[at..].trim().is_empty() {
            d = d
                .note("the text ends here: the patch may have been cut off, so nothing was applied")
                .hint(format!(
                    "if the patch is complete, add `{keyword}` on its own line here{}; if it was cut off, send the whole patch again",
                    if keyword == "ENDPATCH" { " and `ENDPATCHSET` after it" } else { "" }
                ));
        } else {
            d = d.hint(format!("add `{keyword}` on its own line here"));
        }
        self.diags.push(d);
    }

    pub(super) fn file(&mut self, pair: Pair<'a, Rule>) {
        let span = self.line_span(&pair);
        let mut path = None;
        let mut action = None;
        let mut edits = vec![];
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::patch_open => path = Some(self.path(p)),
                Rule::createfile => {
                    let lines = self.createfile(p);
                    let content = NewText {
                        lines: self.keep(&lines),
                        final_newline: true,
                    };
                    action = Some(Action::add(content));
                }
                Rule::deletefile => {
                    self.keyword_args(&p);
                    action = Some(Action::Delete { expect: None });
                }
                Rule::insert_before | Rule::insert_after | Rule::replace | Rule::delete => {
                    if let Ok(edit) = self.operation(p) {
                        edits.push(edit);
                    }
                }
                Rule::mixed_ops => self.mixed(p),
                Rule::no_operation => {
                    self.error(
                        Span::line_at(self.text, self.span(&p).start),
                        "this `PATCH` has no operation",
                        "`ENDPATCH` comes before any operation",
                        "add `INSERT BEFORE`, `INSERT AFTER`, `REPLACE`, `DELETE`, `CREATEFILE` or \
                         `DELETEFILE`, or drop the empty `PATCH` block",
                    );
                }
                Rule::missing_patch_close => self.missing_close(&p, "ENDPATCH", "this `PATCH`"),
                _ => {}
            }
        }
        let Some(path) = path else { return };
        let action = action.unwrap_or(Action::Modify {
            edits,
            move_to: None,
        });
        self.patch.files.push(FileOp::new(path, action, span));
    }

    /// `CREATEFILE`/`DELETEFILE` among other operations.
    fn mixed(&mut self, pair: Pair<'a, Rule>) {
        for p in pair.into_inner() {
            let rule = p.as_rule();
            if matches!(rule, Rule::createfile | Rule::deletefile) {
                let kw = p.into_inner().next().map(|k| self.line_span(&k));
                let what = keyword(rule);
                self.error(
                    kw.unwrap_or_default(),
                    format!("`{what}` must be the only operation in its `PATCH`"),
                    "other operations share this `PATCH`",
                    if rule == Rule::createfile {
                        "a file is created whole: put `CREATEFILE` and all its `. ` lines alone in its `PATCH`"
                    } else {
                        "a deleted file needs no edits: leave `DELETEFILE` alone in its `PATCH`"
                    },
                );
            }
        }
    }

    /// The path of `PATCH <path>`, trailing spaces trimmed.
    fn path(&self, marker: Pair<'a, Rule>) -> PathRef {
        marker_path(self.base, marker, Rule::path)
    }

    /// Reports text after an operation keyword (such as a line number).
    fn keyword_args(&mut self, op: &Pair<'a, Rule>) {
        let what = keyword(op.as_rule());
        let Some(args) = op
            .clone()
            .into_inner()
            .next()
            .and_then(|kw| kw.into_inner().find(|p| p.as_rule() == Rule::keyword_args))
        else {
            return;
        };
        let span = self.line_span(&args);
        let text = args.as_str().trim();
        if text.chars().any(|c| c.is_ascii_digit()) {
            self.error(
                span,
                format!("`{what}` is followed by `{text}`: RepoPatch has no line numbers"),
                "line numbers are not locators",
                "remove the numbers; the `- ` block, copied from the file, says where the operation applies",
            );
        } else {
            self.error(
                span,
                format!("unexpected text after `{what}`"),
                "the keyword stands alone on its line",
                "write the keyword alone; the block lines follow on the next lines",
            );
        }
    }

    fn createfile(&mut self, op: Pair<'a, Rule>) -> Vec<Line<'a>> {
        self.keyword_args(&op);
        let mut lines = vec![];
        for p in op.into_inner() {
            if p.as_rule() == Rule::new_block {
                lines = self.block_lines(p, "new", "CREATEFILE");
            }
        }
        lines
    }

    /// An operation of kind `rule` whose keyword (at `kw`) no old (or
    /// anchor) block follows.
    fn no_old_block(&mut self, rule: Rule, kw: Span) {
        let what = keyword(rule);
        let block = if rule == Rule::insert_before || rule == Rule::insert_after {
            "anchor"
        } else {
            "old"
        };
        self.error(
            kw,
            format!("`{what}` has no {block} block"),
            &format!("no `- ` lines follow `{what}`"),
            &format!(
                "after `{what}`, copy the {block} lines from the file, each as `- ` and the line{}",
                if rule == Rule::delete {
                    ""
                } else {
                    ", then `---`"
                }
            ),
        );
    }

    /// Lowers `INSERT BEFORE`, `INSERT AFTER`, `REPLACE` or `DELETE`.
    fn operation(&mut self, op: Pair<'a, Rule>) -> Result<Edit<'a>, Reported> {
        let rule = op.as_rule();
        let what = keyword(rule);
        self.keyword_args(&op);
        let mut kw_span = None;
        let mut old: Option<Vec<Line<'a>>> = None;
        let mut old_span = None;
        let mut new = vec![];
        // A missing old block makes its missing separator no problem of its own.
        let mut no_old_block = false;
        for p in op.into_inner() {
            match p.as_rule() {
                Rule::insert_before_kw
                | Rule::insert_after_kw
                | Rule::replace_kw
                | Rule::delete_kw => kw_span = Some(self.line_span(&p)),
                Rule::old_block => {
                    old_span = Some(self.line_span(&p));
                    old = Some(self.block_lines(p, "old", what));
                }
                Rule::missing_old_block => {
                    self.no_old_block(rule, kw_span.unwrap_or_default());
                    no_old_block = true;
                }
                Rule::missing_separator if !no_old_block => {
                    self.error(
                        Span::line_at(self.text, self.span(&p).start),
                        format!("`{what}` has no `---` between its blocks"),
                        "the `. ` block starts here",
                        "put `---` alone on a line between the `- ` lines and the `. ` lines \
                         (a `. ` line before `---` would be a wrong prefix in the old block)",
                    );
                }
                Rule::new_block => new = self.block_lines(p, "new", what),
                Rule::delete_extra => {
                    let span = self.line_span(&p);
                    self.error(
                        span,
                        "`DELETE` takes no new block",
                        "`DELETE` ends with its `- ` lines",
                        "to put new lines in place of the old ones, write `REPLACE` instead of `DELETE`",
                    );
                }
                _ => {}
            }
        }
        // A missing old block was reported where the grammar saw it.
        let old = old.ok_or(Reported)?;
        let n = old.len();
        let kw = kw_span.unwrap_or_default();
        let mut new: Vec<NewLine<'a>> = match rule {
            Rule::insert_before => new
                .into_iter()
                .map(NewLine::Add)
                .chain((0..n).map(NewLine::keep))
                .collect(),
            Rule::insert_after => (0..n)
                .map(NewLine::keep)
                .chain(new.into_iter().map(NewLine::Add))
                .collect(),
            Rule::replace => keep_shared_ends(&old, new),
            _ => vec![],
        };
        Ok(Edit::replace(
            self.keep(&old),
            self.keep_new(&mut new),
            Locator::plain(Uniqueness::UniqueInFile, Levels::LADDER),
            old_span.map_or(kw, |s| kw.to(s)),
        ))
    }

    /// A blank line written without its own prefix: a warning, read as a
    /// blank line of the block it stands in.
    fn blank_slip(&mut self, span: Span, block: &str, how: &str) {
        let right = if block == "old" { "- " } else { ". " };
        self.diags.push(
            Diagnostic::new(
                Code::BlankLinePrefix,
                format!("a blank line of the {block} block is written {how}"),
            )
            .at(span, format!("read as a blank line, `{right}`"))
            .hint(format!(
                "write a blank line of the {block} block as `{right}` (the prefix and a space, nothing after)"
            )),
        );
    }

    /// The lines of an old/anchor block (`side` "old") or a new block
    /// ("new", of operation `what`), reporting each line written the other
    /// way: blank lines are read with a warning, anything else is an error.
    fn block_lines(&mut self, block: Pair<'a, Rule>, side: &str, what: &str) -> Vec<Line<'a>> {
        let mut lines = Vec::with_capacity(newlines(block.as_str().as_bytes()).count());
        for p in block.into_inner() {
            let rule = p.as_rule();
            if let Rule::old_run | Rule::new_run = rule {
                // Every line of a run ends with `\n` (the grammar's
                // line rules).
                let run = p.as_str();
                let mut at = 0;
                for end in newlines(run.as_bytes()) {
                    lines.push(Line::of(content(&run[at..=end], 2)));
                    at = end + 1;
                }
                debug_assert_eq!(at, run.len(), "a run ends with its line end");
                continue;
            }
            let span = self.line_span(&p);
            let text = match rule {
                Rule::bare_dash | Rule::bare_dot => {
                    let prefix = &p.as_str()[..1];
                    self.blank_slip(span, side, &format!("as `{prefix}` without its space"));
                    ""
                }
                Rule::loose_empty => {
                    self.blank_slip(span, side, "as an empty line");
                    ""
                }
                Rule::dot_in_old | Rule::dash_in_new
                    if content(p.as_str(), 1).trim().is_empty() =>
                {
                    let how = if rule == Rule::dot_in_old {
                        "with the new block's prefix `.`"
                    } else {
                        "with the old block's prefix `-`"
                    };
                    self.blank_slip(span, side, how);
                    ""
                }
                Rule::dot_in_old => {
                    self.error(
                        span,
                        "a `. ` line in an old/anchor block",
                        "before `---`, every line is a line of the file to find",
                        "prefix every line before `---` with `- `; `. ` lines belong after `---`",
                    );
                    continue;
                }
                Rule::dash_in_new => {
                    self.error(
                        span,
                        format!("a `- ` line in the new block of `{what}`"),
                        "after `---`, every line is a line to write",
                        "prefix every line to write with `. `; to change more of the file, \
                         start another operation",
                    );
                    continue;
                }
                Rule::misplaced_separator => {
                    self.error(
                        span,
                        format!("`---` out of place in `{what}`"),
                        if what == "CREATEFILE" {
                            "`CREATEFILE` has no old block to separate"
                        } else {
                            "the old and new blocks are already separated"
                        },
                        "write `---` once, between the `- ` block and the `. ` block; \
                         start a new operation for another change",
                    );
                    continue;
                }
                _ => continue,
            };
            lines.push(Line::of(text));
        }
        lines
    }

    /// Reports a run of lines that are no part of RepoPatch, saying what they look like.
    pub(super) fn stray(&mut self, pair: &Pair<'a, Rule>) {
        let span = self.line_span(pair);
        let lines: Vec<&str> = pair.as_str().lines().collect();
        let first = lines.first().copied().unwrap_or("").trim_start();
        let any = |f: &dyn Fn(&str) -> bool| lines.iter().any(|l| f(l));
        let (message, hint) = if any(&|l| {
            l.starts_with("diff --git") || l.starts_with("@@ ") || l.starts_with("+++ ")
        }) {
            (
                "a unified diff (git style) inside the PATCHSET",
                "RepoPatch has no diff hunks: copy the old lines as `- ` lines, then `---`, then the new \
                 lines as `. ` lines, under `REPLACE`",
            )
        } else if any(&|l| l.starts_with("*** ")) {
            (
                "codex `*** ` markers inside the PATCHSET",
                "write RepoPatch operations (`REPLACE`, `INSERT BEFORE`/`AFTER`, `DELETE`) instead",
            )
        } else if first.starts_with("```") || first.starts_with("~~~") {
            (
                "a markdown code fence inside the PATCHSET",
                "remove the fence lines; a fence may only surround the whole patch",
            )
        } else if let Some(kw) = misspelt_keyword(first) {
            return self.error(
                span,
                format!("`{}` is not a RepoPatch keyword", first.trim_end()),
                "not a keyword",
                &format!("write `{kw}`, upper case, alone on its line"),
            );
        } else if first.starts_with('+') || first.starts_with('-') || first.starts_with(' ') {
            (
                "lines with diff prefixes (`+`, `-`, ` `)",
                "prefix old/anchor lines with `- ` (dash, space) and new lines with `. ` (dot, space); \
                 there are no `+` or context lines",
            )
        } else if first.starts_with('.') {
            (
                "a `.` line without the space after the dot",
                "write a new line as `. ` (dot, space) and the line",
            )
        } else if ["#", "//", "/*", "<!--", ";", "*", ">"]
            .iter()
            .any(|c| first.starts_with(c))
        {
            (
                "a comment or markdown inside the PATCHSET",
                "remove it: only keywords, `- `, `. ` and `---` lines may stand between `PATCHSET` and \
                 `ENDPATCHSET`",
            )
        } else {
            (
                "text that is not RepoPatch inside the PATCHSET",
                "every line is a keyword, `---`, or content starting with `- ` (old/anchor) or `. ` (new); \
                 remove prose and comments",
            )
        };
        let label = if lines.len() == 1 {
            "this line".to_string()
        } else {
            format!("these {} lines", lines.len())
        };
        self.error(span, message, &label, hint);
    }
}
