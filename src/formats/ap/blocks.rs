//! The walk over ap's parse tree: the header, file blocks, their
//! directives and values, into pending modifications (`modifications.rs`
//! turns them into edits).

use super::ids::directive_id;
use super::tree::{Block, Item, Part, Tree};
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
    /// A span of the parsed text as a span of the whole text.
    fn at(&self, span: Span) -> Span {
        Span::new(self.base + span.start, self.base + span.end)
    }

    /// The keyword of a directive line: the word after the ID.
    fn keyword(&self, line: Span) -> &'t str {
        let text = &self.text[line.start..line.end];
        text.get(self.own.id.len()..)
            .and_then(|rest| rest.split_ascii_whitespace().next())
            .unwrap_or("")
    }

    pub(super) fn patch(&mut self, tree: Tree) {
        match tree.header {
            Some(header) => self.header(self.at(header)),
            None => {
                let first = self.at(tree.blocks[0].head);
                self.own.id = &self.text[first.start..first.start + 8];
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
            }
        }
        for stray in tree.strays {
            self.stray(self.at(stray));
        }
        if let Some(end) = tree.end {
            self.own.ended = true;
            if let Some(tail) = end.ignored {
                let s = self.at(tail);
                self.warn(
                    Code::SurroundingTextStripped,
                    s,
                    "text after `END` is ignored",
                    "ignored",
                );
            }
        }
        for block in tree.blocks {
            self.file_block(block);
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

    /// `<ID> AP 3.x`: the ID and the version.
    fn header(&mut self, line: Span) {
        let text = &self.text[line.start..line.end];
        self.own.id = &text[..8];
        self.own.v31 = text[8..].trim_start()[2..].trim_start().starts_with("3.1");
    }

    /// Text where only blank lines belong (a `gap`'s `stray_line`; the
    /// gap is silent, so its lines stand among the parts around it).
    fn stray(&mut self, span: Span) {
        let text = &self.text[span.start..span.end];
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
    fn value_lines(&mut self, value: Span) -> &'t [Line<'t>] {
        self.read_value(value);
        self.keep(&self.own.lines)
    }

    /// The lines of a `content` value, in the store as the new lines they
    /// become.
    fn content_lines(&mut self, value: Span) -> &'t mut [NewLine<'t>] {
        self.read_value(value);
        let new = self.own.lines.iter().map(|&l| NewLine::Add(l));
        self.store.alloc_slice_fill_iter(new)
    }

    /// Reads the lines of a `value` into `own.lines`, checked for drifted
    /// directives outside fences.
    fn read_value(&mut self, value: Span) {
        let mut fenced = false;
        // A value is whole lines, each ending with `\n`: the lexer refuses
        // a last line without one.
        let value = self.at(value);
        let text = &self.text[value.start..value.end];
        let mut lines = std::mem::take(&mut self.own.lines);
        lines.clear();
        let mut at = 0;
        for end in newlines(text.as_bytes()) {
            let text = &text[at..end];
            let span = Span::new(value.start + at, value.start + end);
            at = end + 1;
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

    fn file_block(&mut self, block: Block) {
        self.own.last_value = None;
        let head_span = self.at(block.head);
        let create_head = self.keyword(head_span) == "CREATE";
        let (eol, inline) = self.file_head(head_span);
        let lines = self.value_lines(block.value);
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
        // Whether the last pending is an action the parts that follow
        // belong to (a `RENAME` closes it).
        let mut open = false;
        for item in block.items {
            match item {
                Item::Action { line, strays } => {
                    let span = self.at(line);
                    pendings.push(Pending::new(self.keyword(span), span));
                    self.own.last_value = None;
                    for stray in strays {
                        self.stray(self.at(stray));
                    }
                    open = true;
                }
                Item::Rename { line, value } => {
                    let span = self.at(line);
                    self.own.last_value = None;
                    let lines = self.value_lines(value);
                    if rename.is_some() {
                        self.error(
                            span,
                            "a second `RENAME` in one file block",
                            "second RENAME",
                            "a file block holds one RENAME and nothing else",
                        );
                    }
                    rename = Some((span, lines));
                    open = false;
                }
                Item::Part(part) => match pendings.last_mut() {
                    Some(pending) if open => self.part(part, pending),
                    _ => self.loose_item(part, &mut pendings, create_head),
                },
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
    fn file_head(&mut self, head: Span) -> (Option<Eol>, Option<PathRef>) {
        let line = &self.text[head.start..head.end];
        let Some(at) = line.find("FILE").filter(|_| self.keyword(head) == "FILE") else {
            return (None, None);
        };
        let rest = &line[at + 4..];
        let Some((mode, path)) = lexer::file_args(rest.as_bytes()) else {
            return (None, None);
        };
        let eol = mode.map(|m| match m {
            "CRLF" => Eol::Crlf,
            "CR" => Eol::Cr,
            _ => Eol::Lf,
        });
        let inline = path.map(|p| {
            let t = rest[p..].trim_end();
            let start = head.start + at + 4 + p;
            PathRef {
                text: t.to_string(),
                span: Span::new(start, start + t.len()),
            }
        });
        (eol, inline)
    }

    /// A value or option out of place: it joins the open pending (values
    /// before any action, or a `CREATE` head's), or opens one of its own
    /// for the lowering to name.
    fn loose_item(&mut self, part: Part, pendings: &mut Vec<Pending<'t>>, create_head: bool) {
        let open = pendings.len();
        match pendings.last_mut() {
            Some(p) if p.kw.is_empty() || (create_head && open == 1) => self.part(part, p),
            _ => {
                let line = match &part {
                    Part::Keyed { line, .. }
                    | Part::Opt { line, .. }
                    | Part::Unknown { line, .. } => *line,
                };
                let mut p = Pending::new("", self.at(line));
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
    fn part(&mut self, part: Part, pending: &mut Pending<'t>) {
        match part {
            Part::Keyed { line, value } => {
                let span = self.at(line);
                let kw = self.keyword(span);
                let vspan = self.at(value);
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
                self.own.last_value = Some((
                    Some(vspan).filter(|s| s.end > s.start).unwrap_or(span),
                    empty,
                ));
            }
            Part::Opt { line, strays } => {
                let span = self.at(line);
                let kw = self.keyword(span);
                let text = &self.text[span.start..span.end];
                let rest = text.find(kw).map_or("", |at| &text[at + kw.len()..]);
                let n = lexer::option_args(rest.as_bytes())
                    .flatten()
                    .and_then(|c| c.parse().ok());
                for stray in strays {
                    self.stray(self.at(stray));
                }
                self.own.last_value = None;
                pending.options.push((kw, span, n));
            }
            Part::Unknown { line, value } => {
                let span = self.at(line);
                let d = unknown_directive(self.own.id, &self.text[span.start..span.end], span);
                self.diags.push(d);
                self.read_value(value);
                pending.bad = true;
            }
        }
    }
}

/// The error of a directive line (`line`, at `span`) whose keyword is none
/// of ap's, with the keyword it may have meant.
pub(super) fn unknown_directive(id: &str, line: &str, span: Span) -> Diagnostic {
    let word = line[id.len()..].trim();
    let key: String = word.chars().take_while(|c| !c.is_whitespace()).collect();
    let bare = key.trim_end_matches(':');
    let guess = KEYWORDS.iter().find(|k| k.eq_ignore_ascii_case(bare));
    let hint = match guess {
        Some(k) => {
            format!("directive keywords are case-sensitive and take no colon: write `{id} {k}`")
        }
        None => format!("the directives are {}", KEYWORDS.join(", ")),
    };
    Diagnostic::new(Code::SyntaxError, format!("unknown directive `{key}`"))
        .at(span, "not an ap directive")
        .hint(hint)
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
