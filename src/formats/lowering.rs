//! What every format's lowering shares: the patch text (spans are offsets
//! into it), where the parsed body starts, the patch being built, and the
//! diagnostics, with the helpers that turn pest pairs into spans and
//! problems into diagnostics. A format's lowering is a `Lowering` whose
//! `own` field holds only what is special to it, and its methods are an
//! `impl` on `Lowering<'t, ItsOwnState>`.

use pest::iterators::Pair;
use pest::RuleType;

use super::{line_span_of, span_of};
use crate::error::{Code, Diagnostic};
use crate::ir::{Line, NewLine, Patch, Span};

pub(crate) struct Lowering<'t, F> {
    /// The whole (unwrapped) patch text.
    pub text: &'t str,
    /// Where the lists of lines the model keeps lie (and the few line
    /// texts lowering makes), for as long as the patch.
    pub store: &'t bumpalo::Bump,
    /// Where the parsed body starts in `text`.
    pub base: usize,
    pub patch: Patch<'t>,
    pub diags: Vec<Diagnostic>,
    /// The format's own state.
    pub own: F,
}

impl<'t, F> Lowering<'t, F> {
    pub fn new(text: &'t str, store: &'t bumpalo::Bump, base: usize, own: F) -> Self {
        Lowering {
            text,
            store,
            base,
            patch: Patch {
                source: text,
                ..Patch::default()
            },
            diags: vec![],
            own,
        }
    }

    /// `items` copied into the store: a list of lines the model keeps.
    pub fn keep<T: Copy>(&self, items: &[T]) -> &'t [T] {
        self.store.alloc_slice_copy(items)
    }

    /// A new block copied into the store, its kept lines made runs first
    /// (where they lie in `lines`).
    pub fn keep_new(&self, lines: &mut Vec<NewLine<'t>>) -> &'t [NewLine<'t>] {
        NewLine::runs(lines);
        self.keep(lines)
    }

    /// The span of a pair in the whole text.
    pub fn span<R: RuleType>(&self, pair: &Pair<'_, R>) -> Span {
        span_of(self.base, pair)
    }

    /// The span of a line pair, without its newline.
    pub fn line_span<R: RuleType>(&self, pair: &Pair<'_, R>) -> Span {
        line_span_of(self.base, pair)
    }

    /// A `syntax_error`: the patch cannot mean anything here.
    pub fn error(&mut self, span: Span, message: impl Into<String>, label: &str, hint: &str) {
        self.diags.push(
            Diagnostic::new(Code::SyntaxError, message)
                .at(span, label)
                .hint(hint),
        );
    }

    /// A warning with `code`.
    pub fn warn(&mut self, code: Code, span: Span, message: impl Into<String>, label: &str) {
        self.diags
            .push(Diagnostic::new(code, message).at(span, label));
    }

    /// A marker the export writes as `canonical` and the patch as
    /// `written`, with other spaces or tabs around its words: read the
    /// same, with a `tolerated_format_slip` warning.
    pub fn padded(&mut self, span: Span, written: &str, canonical: &str) {
        if written == canonical {
            return;
        }
        let words = canonical.trim();
        self.diags.push(
            Diagnostic::new(
                Code::ToleratedFormatSlip,
                format!("spaces or tabs around `{words}`: read as `{words}`"),
            )
            .at(span, "a padded marker")
            .hint(format!(
                "write `{words}` with single spaces between its words and no tabs"
            )),
        );
    }

    /// The patch with its warnings, or every problem if any is an error.
    pub fn finish(self) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
        if self.diags.iter().any(Diagnostic::is_error) {
            Err(self.diags)
        } else {
            Ok((self.patch, self.diags))
        }
    }
}

/// A hunk line's text after its one-byte prefix, without its `\n` and a
/// byte-order mark (the file's, which the applier keeps), and without a
/// `\r` before the `\n` unless `keep_cr`; and whether there was one.
pub(crate) fn prefixed_text(line: &str, keep_cr: bool) -> (&str, bool) {
    // An empty line (git's blank context) is the empty text at its start.
    let text = line
        .get(1..line.len().saturating_sub(1))
        .unwrap_or(&line[..0]);
    let cr = text.ends_with('\r');
    let text = if cr && !keep_cr {
        &text[..text.len() - 1]
    } else {
        text
    };
    (text.strip_prefix('\u{feff}').unwrap_or(text), cr)
}

/// A rule named in an error message: its name, with spaces for `_`.
pub(crate) fn rule_words<R: std::fmt::Debug>(rule: &R) -> String {
    format!("{rule:?}").replace('_', " ")
}

/// A `REPLACE`'s new block, keeping the lines it shares with the old block
/// at either end so that they keep the file's own text after a
/// whitespace-tolerant match.
pub(crate) fn keep_shared_ends<'a>(old: &[Line<'a>], new: Vec<Line<'a>>) -> Vec<NewLine<'a>> {
    let prefix = old
        .iter()
        .zip(&new)
        .take_while(|(o, n)| o.text == n.text)
        .count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(o, n)| o.text == n.text)
        .count();
    let (old_len, new_len) = (old.len(), new.len());
    new.into_iter()
        .enumerate()
        .map(|(i, line)| {
            if i < prefix {
                NewLine::keep(i)
            } else if i >= new_len - suffix {
                NewLine::keep(old_len - (new_len - i))
            } else {
                NewLine::Add(line)
            }
        })
        .collect()
}
