//! The patch formats: which exist, how to tell them apart, and how to turn
//! a text into the shared `Patch`. Each format module
//! holds its generated pest parser and a `lower` function, and nothing else.

use std::fmt;

use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::RuleType;

use crate::error::{Code, Diagnostic};
use crate::ir::{Patch, PathRef, Span};

pub(crate) use ap::correct_drifted_ids;

mod ap;
mod codex;
pub(crate) mod commands;
mod git_binary;
#[cfg(test)]
mod grammars;
pub(crate) mod lowering;
mod registry;
mod repopatch;
mod reverse;
mod searchreplace;
mod strip;
mod udiff;

/// A patch format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Unified diff (the RFC's subset, git's and GNU diff's headers).
    Udiff,
    /// The `*** Begin Patch` format of Codex's `apply_patch`.
    Codex,
    /// RepoPatch Patch Language v1.3.
    Repopatch,
    /// ap, the AI-friendly Patch format, 3.1 and 3.2.
    Ap,
    /// SEARCH/REPLACE blocks (Aider's "diff" edit format).
    Searchreplace,
}

impl Format {
    /// Every format, in the order they are listed (the registry's order).
    pub const ALL: &'static [Format] = &[
        Format::Udiff,
        Format::Codex,
        Format::Repopatch,
        Format::Ap,
        Format::Searchreplace,
    ];

    /// The format's row of the registry.
    fn spec(self) -> &'static registry::Spec {
        &registry::REGISTRY[self as usize]
    }

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// The format in a few words.
    pub fn describe(self) -> &'static str {
        self.spec().describe
    }

    /// A guess, from its first lines, at the file a patch body in this
    /// format edits first; never trusted (`FileTree::read_ahead`).
    pub fn first_path(self, body: &str) -> Option<&str> {
        (self.spec().first_path)(body)
    }

    /// The format's pest grammar, the single source of its syntax; `None`
    /// for ap, whose grammar is LALRPOP's ([`Format::lalrpop_grammar`]).
    pub fn pest_grammar(self) -> Option<&'static str> {
        match self.spec().grammar {
            registry::Grammar::Pest(src) => Some(src),
            registry::Grammar::Lalrpop(_) => None,
        }
    }

    /// The format's LALRPOP grammar (an LR grammar over a line lexer), the
    /// single source of its syntax: ap's only.
    pub fn lalrpop_grammar(self) -> Option<&'static str> {
        match self.spec().grammar {
            registry::Grammar::Lalrpop(src) => Some(src),
            registry::Grammar::Pest(_) => None,
        }
    }

    /// The Lark export of the grammar, generated at build time.
    pub fn lark_grammar(self) -> &'static str {
        self.spec().lark
    }

    /// The format's printer, which `convert` writes patches with.
    pub fn printer(self) -> crate::convert::Printer {
        self.spec().print
    }
}

impl Format {
    /// The Lark grammar; for ap with `id`, specialised to that patch ID,
    /// which must be one ([`crate::agent::is_patch_id`]).
    pub fn lark_grammar_for(
        self,
        id: Option<&str>,
    ) -> Result<std::borrow::Cow<'static, str>, String> {
        match (self, id) {
            (Format::Ap, Some(id)) if crate::agent::is_patch_id(id) => {
                // Exported at build time with a slot for the ID (build.rs).
                let slot = format!("\"{}\"", env!("GP_AP_ID_SLOT"));
                let bound = include_str!(concat!(env!("OUT_DIR"), "/ap-bound.lark"));
                Ok(std::borrow::Cow::Owned(
                    bound.replace(&slot, &format!("\"{id}\"")),
                ))
            }
            (Format::Ap, Some(id)) => Err(format!("`{id}` is not a patch ID (8 hex digits)")),
            _ => Ok(std::borrow::Cow::Borrowed(self.lark_grammar())),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Format {
    /// A `--format` (or tool-call `format`) value: `auto` is `None`;
    /// anything else must name a format.
    pub fn from_arg(name: &str) -> Result<Option<Format>, String> {
        if name == "auto" {
            return Ok(None);
        }
        let format = Format::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            format!(
                "unknown format `{name}` (expected auto, {})",
                names.join(", ")
            )
        })?;
        Ok(Some(format))
    }
}

/// Tells the format from the first meaningful line, as the contract says:
/// `PATCHSET`; `*** Begin Patch`; `<8 hex> AP 3.x` after `#` comments;
/// `diff --git` or `--- `.
pub fn detect(text: &str) -> Option<Format> {
    // A heredoc opener (`apply_patch <<'EOF'`) wraps a codex patch.
    let line = text.lines().map(str::trim).find(|l| {
        !l.is_empty()
            && !l.starts_with('#')
            && !l.starts_with("<<")
            && !l.starts_with("apply_patch")
    })?;
    let by_line = registry::REGISTRY
        .iter()
        .find(|spec| (spec.starts)(line))
        .map(|spec| spec.format);
    by_line.or_else(|| searchreplace::holds_blocks(text).then_some(Format::Searchreplace))
}

/// Why a patch of `len` bytes is not parsed: 4 GiB or more
/// ([`crate::ir::TOO_LARGE`], as for a file), where a parse's tokens keep
/// their positions as `u32`s (`vendor/pest`), and its lines would number
/// past what a target may have. Asked before any parse, so such a patch is
/// refused before it is read a second time.
fn too_large(len: usize) -> Option<Diagnostic> {
    (len as u64 >= crate::ir::TOO_LARGE).then(|| {
        Diagnostic::new(Code::UnsupportedFile, "the patch is 4 GiB or larger")
            .hint("split it into patches under 4 GiB, each applied in turn")
    })
}

/// Parses `text[body]` in `format`. Spans in the result are offsets into `text`.
/// Returns the patch with its warnings, or every error found.
/// `store` keeps the line texts lowering makes (a binary literal's
/// decoded bytes): it must live as long as the patch.
#[cfg(feature = "internals")]
pub fn parse<'t>(
    format: Format,
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
    options: crate::Options,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    parse_to(format, text, store, body, options, true)
}

/// [`parse`]; without `contents`, for a check that needs no tree, binary
/// literals are checked by counting their bytes and come back empty (a
/// literal of a gigabyte is checked without holding it).
pub fn parse_to<'t>(
    format: Format,
    text: &'t str,
    store: &'t bumpalo::Bump,
    body: Span,
    options: crate::Options,
    contents: bool,
) -> Result<(Patch<'t>, Vec<Diagnostic>), Vec<Diagnostic>> {
    if let Some(refused) = too_large(text.len()) {
        return Err(vec![refused]);
    }
    let result = (format.spec().parse)(text, store, body, options, contents);
    let result = result.and_then(|(mut patch, warnings)| {
        if let Some(n) = options.strip {
            strip::strip(&mut patch, text, format, n)?;
        }
        if options.reverse {
            reverse::reverse(&mut patch, text, store)?;
        }
        Ok((patch, warnings))
    });
    result.map_err(|mut errors| {
        let other = detect(&text[body.start..body.end]).filter(|&f| f != format);
        if let (Some(other), Some(first)) = (other, errors.first_mut()) {
            if first.code == Code::SyntaxError {
                first.message = format!("this is a {other} patch, not {format}");
                first.notes.insert(0, format!("the text reads as {}", other.describe()));
                first.hint = Some(format!(
                    "rewrite it in the {format} format, or apply it with `--format {other}` (or no --format)"
                ));
            }
        }
        errors
    })
}

/// The grammar rules in the parse tree of `text`, or `None` when it does
/// not parse (and for ap, whose grammar has no pest rules); used to check
/// the Lark export against the pest parser.
#[cfg(feature = "internals")]
pub fn rules_used(format: Format, text: &str) -> Option<std::collections::BTreeSet<String>> {
    match format {
        Format::Udiff => udiff::rules_used(text),
        Format::Codex => codex::rules_used(text),
        Format::Repopatch => repopatch::rules_used(text),
        Format::Searchreplace => searchreplace::rules_used(text),
        // ap's grammar is LALRPOP's: `ap_in_export_language` says it.
        Format::Ap => None,
    }
}

/// Whether `text` is in the language of ap's Lark export (ap's grammar is
/// LALRPOP's, so it has no pest rules to name).
#[cfg(feature = "internals")]
pub fn ap_in_export_language(text: &str) -> bool {
    ap::in_export_language(text)
}

/// The terminal of each line of an ap text as ap's lexer reads it
/// (`None` for a line no terminal takes, where it stops).
#[cfg(feature = "internals")]
pub fn ap_line_terminals(text: &str) -> Vec<Option<&'static str>> {
    ap::lexer::line_terminals(text)
}

/// The names of the rules in a parse tree.
#[cfg(feature = "internals")]
pub(crate) fn rule_names<R: RuleType>(
    pairs: pest::iterators::Pairs<'_, R>,
) -> std::collections::BTreeSet<String> {
    pairs
        .flatten()
        .map(|p| format!("{:?}", p.as_rule()))
        .collect()
}

/// The span of a pair in the whole text (`base` is where the parsed body starts).
pub(crate) fn span_of<R: RuleType>(base: usize, pair: &Pair<'_, R>) -> Span {
    let s = pair.as_span();
    Span::new(base + s.start(), base + s.end())
}

/// The span of a line pair without its newline.
pub(crate) fn line_span_of<R: RuleType>(base: usize, pair: &Pair<'_, R>) -> Span {
    let s = span_of(base, pair);
    Span::new(s.start, s.end.saturating_sub(1).max(s.start))
}

/// The path on a marker line (`*** Update File: PATH`, `PATCH PATH`): its
/// `path_rule` child with trailing spaces trimmed, or an empty path spanning
/// the line.
pub(crate) fn marker_path<R: RuleType>(base: usize, marker: Pair<'_, R>, path_rule: R) -> PathRef {
    let span = line_span_of(base, &marker);
    match marker.into_inner().find(|p| p.as_rule() == path_rule) {
        Some(p) => {
            let s = span_of(base, &p);
            let text = p.as_str().trim_end();
            PathRef {
                text: text.to_string(),
                span: Span::new(s.start, s.start + text.len()),
            }
        }
        None => PathRef {
            text: String::new(),
            span,
        },
    }
}

/// Turns pest's single syntax error into a diagnostic, naming rules the way
/// `rule_name` does and ending with the format's own advice.
pub(crate) fn syntax_error<R: RuleType>(
    err: pest::error::Error<R>,
    text: &str,
    base: usize,
    rule_name: fn(&R) -> String,
    hint: fn(&[R]) -> &'static str,
) -> Diagnostic {
    let pos = base
        + match err.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((s, _)) => s,
        };
    let positives: &[R] = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => positives,
        ErrorVariant::CustomError { .. } => &[],
    };
    let advice = hint(positives);
    let mut names: Vec<String> = vec![];
    match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => {
            for name in positives.iter().map(rule_name) {
                if !name.is_empty() && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        ErrorVariant::CustomError { message } => names.push(message.clone()),
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    syntax_diagnostic(text, pos, &names, advice)
}

/// A `syntax_error` at `pos` in `text`: what was expected there (`names`,
/// joined), the line found, and `hint`.
pub(crate) fn syntax_diagnostic(text: &str, pos: usize, names: &[&str], hint: &str) -> Diagnostic {
    let pos = pos.min(text.len());
    let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
    let found = &text[pos..line_end];
    let expected = match names {
        [] => "something else here".to_string(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    };
    let label = if found.is_empty() {
        if pos >= text.len() {
            "the patch ends here".to_string()
        } else {
            "unexpected empty line".to_string()
        }
    } else {
        let shown: String = found.chars().take(40).collect();
        format!("unexpected `{shown}`")
    };
    let end = if line_end > pos {
        line_end
    } else {
        (pos + 1).min(text.len())
    };
    Diagnostic::new(Code::SyntaxError, format!("expected {expected}"))
        .at(Span::new(pos, end), label)
        .hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` zero bytes as text, mapped but never touched: pages of an
    /// anonymous mapping read as zeros, and a NUL is UTF-8. Unmapped on drop.
    struct Zeros(*mut std::ffi::c_void, usize);

    impl Zeros {
        fn new(len: usize) -> Zeros {
            use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
            // SAFETY: a new private mapping, no memory of ours.
            let at = unsafe {
                mmap_anonymous(
                    std::ptr::null_mut(),
                    len,
                    ProtFlags::READ,
                    MapFlags::PRIVATE | MapFlags::NORESERVE,
                )
            };
            Zeros(at.expect("4 GiB of address space"), len)
        }

        fn text(&self) -> &str {
            // SAFETY: the mapping is `self.1` readable bytes, all zero
            // (valid UTF-8), and lives as long as `self`; not validated,
            // which would read every page.
            unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.0.cast(), self.1))
            }
        }
    }

    impl Drop for Zeros {
        fn drop(&mut self) {
            // SAFETY: the mapping `new` made, no longer borrowed.
            let _ = unsafe { rustix::mm::munmap(self.0, self.1) };
        }
    }

    /// A patch of 4 GiB or more is refused as too large before any format
    /// parses it (whose tokens keep `u32` positions); one byte less is
    /// parsed (and, being zeros, fails as a syntax error).
    #[test]
    fn a_patch_of_4_gib_is_refused_before_its_parse() {
        let len = crate::ir::TOO_LARGE as usize;
        let huge = Zeros::new(len);
        let store = bumpalo::Bump::new();
        for &format in Format::ALL {
            let errors = parse_to(
                format,
                huge.text(),
                &store,
                Span::new(0, len),
                crate::Options::default(),
                false,
            )
            .expect_err("refused");
            assert_eq!(errors.len(), 1, "{format}");
            assert_eq!(errors[0].code, Code::UnsupportedFile, "{format}");
            assert!(errors[0].message.contains("4 GiB"), "{format}");
        }
        assert!(too_large(len - 1).is_none());
    }

    /// The vendored pest refuses an input whose positions a `u32` cannot
    /// hold, before it reads a byte: an error, not positions that wrap.
    #[test]
    fn pest_refuses_an_input_past_u32_positions() {
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
        enum Rule {
            nul,
        }
        let parse = |text| {
            pest::state::<Rule, _>(text, |s| {
                s.rule(Rule::nul, |s| s.repeat(|s| s.match_string("\0")))
            })
        };
        let over = Zeros::new(u32::MAX as usize + 1);
        let refused = parse(over.text()).expect_err("refused");
        assert!(
            matches!(&refused.variant, ErrorVariant::CustomError { message } if message.contains("4 GiB")),
            "{refused:?}"
        );
        // The same parse of a small text holds its span.
        let pairs = parse("\0\0").expect("parses");
        assert_eq!(pairs.into_iter().next().map(|p| p.as_span().end()), Some(2));
    }
}
