//! The walk over ap's parse tree: the header, file blocks, their
//! directives and values, into pending modifications (`modifications.rs`
//! turns them into edits).

use pest::iterators::Pair;

use super::ids::directive_id;
use super::*;
use crate::newlines::newlines;
use crate::trim::is_blank;

pub(super) type Lower<'t> = Lowering<'t, Ap<'t>>;

/// What ap's lowering keeps beyond the shared state.
pub(super) struct Ap<'t> {
    pub(super) id: &'t str,
    pub(super) v31: bool,
    pub(super) tolerant: bool,
    /// An `END` directive closes the patch.
    pub(super) ended: bool,
    /// The last value in the patch: (its span, whether it was empty), for
    /// the truncation rule.
    pub(super) last_value: Option<(Span, bool)>,
    /// A value's lines as they are read, before they go to the store (one
    /// list for every value).
    pub(super) lines: Vec<Line<'t>>,
}

/// The keys of values to find, in the order of their slots in
/// [`Pending`]; `content` has a slot of its own.
const FIND_KEYS: [&str; 3] = ["anchor", "snippet", "snippet_tail"];

/// A modification (or the parts before any action) while its directives
/// are read. A value key has one slot, no list: a large file block holds
/// thousands of pending modifications at once, and a list of values each
/// was most of what the lowering left in the heap. Values lie in the
/// store: a `content`'s as the new lines it becomes (an edit takes them as
/// they are), any other's as lines to find.
pub(super) struct Pending<'t> {
    pub(super) kw: &'t str,
    pub(super) span: Span,
    /// Each key's first value: its directive's span and its lines (a
    /// second value of a key is reported where it is read).
    finds: [Option<(Span, &'t [Line<'t>])>; 3],
    content: Option<(Span, &'t mut [NewLine<'t>])>,
    /// How many values were read, repeats included.
    pub(super) count: usize,
    pub(super) options: Vec<(&'t str, Span, Option<usize>)>,
    /// An unknown directive stood among these parts (already reported).
    pub(super) bad: bool,
}

impl<'t> Pending<'t> {
    pub(super) fn new(kw: &'t str, span: Span) -> Self {
        Pending {
            kw,
            span,
            finds: Default::default(),
            content: None,
            count: 0,
            options: vec![],
            bad: false,
        }
    }

    fn slot(key: &str) -> Option<usize> {
        FIND_KEYS.iter().position(|&k| k == key)
    }

    /// Where value `key`'s directive is, if the modification has one.
    pub(super) fn value(&self, key: &str) -> Option<Span> {
        match key {
            "content" => self.content.as_ref().map(|c| c.0),
            _ => Some(self.finds[Self::slot(key)?]?.0),
        }
    }

    /// Records a value to find (the first of its key is kept).
    fn push_find(&mut self, key: &str, span: Span, lines: &'t [Line<'t>]) {
        self.count += 1;
        if let Some(slot) = Self::slot(key) {
            self.finds[slot].get_or_insert((span, lines));
        }
    }

    /// Records a `content` (the first is kept).
    fn push_content(&mut self, span: Span, lines: &'t mut [NewLine<'t>]) {
        self.count += 1;
        self.content.get_or_insert((span, lines));
    }

    /// The lines of value `key` (not `content`), moved out (its span
    /// stays, for diagnostics).
    pub(super) fn take_find(&mut self, key: &str) -> Option<&'t [Line<'t>]> {
        let (_, lines) = self.finds[Self::slot(key)?].as_mut()?;
        Some(std::mem::take(lines))
    }

    /// The new lines of the `content`, moved out (its span stays).
    pub(super) fn take_content(&mut self) -> Option<&'t mut [NewLine<'t>]> {
        let (_, lines) = self.content.as_mut()?;
        Some(std::mem::take(lines))
    }

    pub(super) fn is_bare(&self) -> bool {
        self.count == 0 && self.options.is_empty()
    }
}

impl<'t> Lowering<'t, Ap<'t>> {
    /// The keyword of a directive line: the word after the ID.
    fn keyword(&self, line: &Pair<'t, Rule>) -> &'t str {
        let text = line.as_str();
        text.get(self.own.id.len()..)
            .and_then(|rest| rest.split_ascii_whitespace().next())
            .unwrap_or("")
    }

    pub(super) fn patch(&mut self, pair: Pair<'t, Rule>) {
        let mut blocks = vec![];
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::header => self.header(part),
                Rule::stray_line => self.stray(part),
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

    /// Text where only blank lines belong (a `gap`'s `stray_line`; the
    /// gap is silent, so its lines stand among the parts around it).
    fn stray(&mut self, line: Pair<'t, Rule>) {
        let span = self.line_span(&line);
        let text = line.as_str().trim_end_matches('\n');
        if self.foreign(text, span) {
            return;
        }
        if self.own.tolerant && text.trim_start().starts_with('#') {
            self.warn(
                Code::ToleratedFormatSlip,
                span,
                "a `#` comment between directives is ignored",
                "comment",
            );
            return;
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

    /// The lines of a `value` other than `content`, in the store.
    fn value_lines(&mut self, value: Option<Pair<'t, Rule>>) -> &'t [Line<'t>] {
        self.read_value(value);
        self.keep(&self.own.lines)
    }

    /// The lines of a `content` value, in the store as the new lines they
    /// become.
    fn content_lines(&mut self, value: Option<Pair<'t, Rule>>) -> &'t mut [NewLine<'t>] {
        self.read_value(value);
        let new = self.own.lines.iter().map(|&l| NewLine::Add(l));
        self.store.alloc_slice_fill_iter(new)
    }

    /// Reads the lines of a `value` into `own.lines`, checked for drifted
    /// directives outside fences.
    fn read_value(&mut self, value: Option<Pair<'t, Rule>>) {
        let mut fenced = false;
        // A value is one token (its rule is atomic); every line in it ends
        // with `\n`, which the grammar's line rules require.
        let (mut start, text) = match &value {
            Some(v) => (self.base + v.as_span().start(), v.as_str()),
            None => (self.base, ""),
        };
        let bytes = text.as_bytes();
        let mut lines = std::mem::take(&mut self.own.lines);
        lines.clear();
        // Each line's end and where the next starts (a last line without
        // `\n`, which the grammar never leaves, would end the text).
        let unended = !text.is_empty() && !text.ends_with('\n');
        let ends = newlines(bytes)
            .map(|e| (e, e + 1))
            .chain(unended.then_some((text.len(), text.len())));
        let mut at = 0;
        for (end, next) in ends {
            let text = &text[at..end];
            let span = Span::new(start, start + text.len());
            start += next - at;
            at = next;
            if is_fence(text) {
                fenced = !fenced;
            }
            if !fenced {
                self.foreign(text, span);
            }
            lines.push(Line::of(text));
        }
        self.own.lines = lines;
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
                self.extra_path_lines(lines, 0);
                Ok(p)
            }
            None => self.path_value(
                lines,
                head_span,
                if create_head { "CREATE" } else { "FILE" },
            ),
        };
        let mut pendings: Vec<Pending<'t>> = vec![];
        if create_head {
            pendings.push(Pending::new("CREATE", head_span));
        }
        let mut rename: Option<(Span, &'t [Line<'t>])> = None;
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
        let Ok(path) = path else { return };
        match rename {
            Some((span, _)) if !pendings.is_empty() => {
                self.error(span, "`RENAME` shares its file block with other actions", "RENAME", "a file block holds one RENAME and nothing else; put the other changes in their own `FILE` block");
            }
            Some((span, lines)) => {
                if let Ok(to) = self.path_value(lines, span, "RENAME") {
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

    /// An action directive and its values and options. The directive is
    /// the item's first line (in the canonical order its rule is silent,
    /// as are a gap and the keys of values: fewer tokens for pest to keep).
    fn action_item(&mut self, item: Pair<'t, Rule>) -> Pending<'t> {
        let span = Span::line_at(self.text, self.span(&item).start);
        let kw = self.keyword(&item);
        let mut pending = Pending::new(kw, span);
        self.own.last_value = None;
        for part in item.into_inner() {
            match part.as_rule() {
                Rule::action | Rule::create_action | Rule::recreate_action | Rule::blank_line => {}
                Rule::stray_line => self.stray(part),
                _ => self.part(part, &mut pending),
            }
        }
        pending
    }

    /// A `RENAME` directive and its value's lines.
    fn rename_item(&mut self, item: Pair<'t, Rule>) -> (Span, &'t [Line<'t>]) {
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
    fn path_value(
        &mut self,
        lines: &[Line<'t>],
        directive: Span,
        what: &str,
    ) -> Result<PathRef, Reported> {
        let Some(i) = lines.iter().position(|l| !is_blank(l.text)) else {
            self.error(
                directive,
                format!("`{what}` without a path"),
                "the path belongs on the next line",
                "write the path relative to the root on the line after the directive",
            );
            return Err(Reported);
        };
        let line = &lines[i];
        let t = line.text.trim();
        let start = line.span(self.text).start + (line.text.len() - line.text.trim_start().len());
        self.extra_path_lines(lines, i + 1);
        Ok(PathRef {
            text: t.to_string(),
            span: Span::new(start, start + t.len()),
        })
    }

    fn extra_path_lines(&mut self, lines: &[Line<'t>], from: usize) {
        for line in lines.iter().skip(from).filter(|l| !is_blank(l.text)) {
            if self.own.tolerant && line.text.trim_start().starts_with('#') {
                self.warn(
                    Code::ToleratedFormatSlip,
                    line.span(self.text),
                    "a `#` comment after a path is ignored",
                    "comment",
                );
            } else {
                self.error(
                    line.span(self.text),
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
                // The key is the first line (a silent rule but in `keyed`).
                let span = Span::line_at(self.text, self.span(&part).start);
                let kw = self.keyword(&part);
                let value = part.into_inner().find(|p| is_value(p.as_rule()));
                let vspan = value.as_ref().map(|v| self.span(v));
                if let Some(first) = pending.value(kw) {
                    self.diags.push(
                        Diagnostic::new(Code::SyntaxError, format!("a second `{kw}` in one modification"))
                            .at(span, "repeated here")
                            .secondary(first, "first here")
                            .hint("each modification has one of each value; for another change, start a new modification with its action directive (`<ID> REPLACE`, …)"),
                    );
                }
                let blank = |l: &Line| is_blank(l.text);
                let empty = if kw == "content" {
                    let lines = self.content_lines(value);
                    let empty = model::added(lines).all(|l| blank(&l));
                    pending.push_content(span, lines);
                    empty && matches!(pending.kw, "REPLACE" | "RECREATE")
                } else {
                    let lines = self.value_lines(value);
                    pending.push_find(kw, span, lines);
                    false
                };
                self.own.last_value =
                    Some((vspan.filter(|s| s.end > s.start).unwrap_or(span), empty));
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
                for line in inner.filter(|l| l.as_rule() == Rule::stray_line) {
                    self.stray(line);
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
                self.read_value(inner.next());
                pending.bad = true;
            }
            _ => {}
        }
    }
}

/// Whether a line opens or closes a markdown fence: ```` ``` ```` or `~~~`
/// after its leading whitespace. Spaces and tabs are skipped here; a line
/// whose first other byte is whitespace too, or not ASCII, is left to
/// `str::trim_start` (Unicode's whitespace). Every line of every value is
/// asked (and, in tolerant mode, every line of the patch: `ids.rs`), and
/// nearly all of them answer at their first byte of text.
pub(super) fn is_fence(line: &str) -> bool {
    let b = line.as_bytes();
    let i = b.iter().position(|&c| c != b' ' && c != b'\t');
    let rest = match i.map(|i| (i, b[i])) {
        None => return false,
        Some((_, c)) if (b'\t'..=b'\r').contains(&c) || !c.is_ascii() => line.trim_start(),
        Some((_, c)) if c != b'`' && c != b'~' => return false,
        Some((i, _)) => &line[i..],
    };
    rest.starts_with("```") || rest.starts_with("~~~")
}

/// Whether a pair is a value of some kind (the canonical ones are stricter).
pub(super) fn is_value(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::value | Rule::filled_value | Rule::tail_value | Rule::path_value
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trim::trim;

    /// `is_fence` answers as the trimmed line's prefix does.
    #[test]
    fn a_fence_is_three_backticks_or_tildes_after_whitespace() {
        for line in [
            "```",
            "```rust",
            "  ```",
            "\t~~~",
            "~~~ x",
            "`` `",
            "~~",
            "",
            "   ",
            "x```",
            "\u{b}```",
            "\u{c}~~~",
            "\r```",
            "\u{a0}```",
            "\u{2003} ~~~",
            "é```",
            " \u{85}```",
            "    code",
            "#```",
            "\t \t```",
        ] {
            let t = trim(line);
            let want = t.starts_with("```") || t.starts_with("~~~");
            assert_eq!(is_fence(line), want, "{line:?}");
        }
    }
}
