//! Exports a pest grammar as Lark, the syntax OpenAI custom tools take for
//! constrained decoding (checked with llguidance, the engine behind them).
//!
//! The walk is over `pest_meta::ast::Expr`, the same AST `pest_derive`
//! compiles, so the Lark text can never drift from the parser. `build.rs`
//! includes this file with `#[path]` and writes `$OUT_DIR/<format>.lark`;
//! the library includes it too, so the refusals below are unit-tested.
//!
//! The translation is sound only for a disciplined subset of pest, and
//! everything outside it is refused with the rule's name:
//!
//! - Atomic rules (`@{}`, `${}`) and every rule they reach become Lark
//!   terminals; the others become Lark rules. A terminal cannot recurse.
//!   An atomic rule whose doc comment says `lark: inline` is written out
//!   where it is used, as if the grammar had never named it (it cannot
//!   refer to itself): with implicit whitespace refused, atomicity changes
//!   only which tokens pest keeps (one for the whole match), never the
//!   language.
//! - A choice written so that PEG tries the usual case first, `x | a+ ~ x`
//!   or `x | p ~ x`, is written `a* x` or `p? x`: the same language, as
//!   it reads.
//! - `!(c1 | c2 | 'a'..'z') ~ ANY` becomes a negated character class.
//!   Any other lookahead is refused, unless the rule's doc comment says
//!   `lark: lookahead only disambiguates` and explains why dropping it
//!   accepts the same strings (PEG needs it to pick a parse, a CFG does not).
//! - Rules whose doc comment starts with `lark: omit` exist only to give a
//!   malformed patch a precise error code. They and every alternative that
//!   needs them are left out, which can only make the Lark language smaller:
//!   a model constrained by it still only writes patches the parser accepts.
//! - `SOI`/`EOI` are allowed only at the two ends of the start rule. Implicit
//!   `WHITESPACE`/`COMMENT`, the stack and unknown built-ins are refused.
//! - `!(p) ~ text`, where `p` is a fixed-length sequence of characters
//!   and classes and `text` is the rest of the line, becomes one regex for
//!   "a line that does not start with `p`". The pest stack (`PUSH`,
//!   `PEEK`, `POP`) is refused: no grammar here needs it since ap's moved
//!   to LALRPOP.
//!
//! It does not check that ordered choice (PEG) and unordered choice (CFG)
//! agree; the grammars are written so alternatives start differently, and
//! the test suite runs pest and llguidance on the same fixtures.
//!
//! The passes, each a module: `load.rs` reads the grammar and its `lark:`
//! directives and writes inlined rules out; `reach.rs` finds the terminals,
//! the rules omission leaves dead, and what the start rule reaches;
//! `emit.rs` writes each rule as Lark; `regex.rs` spells literals, classes
//! and the "line not starting with" regexes.

use std::collections::BTreeSet;
use std::fmt;

mod emit;
mod load;
mod reach;
mod regex;

use emit::{lark_name, strip_soi_eoi, Cx, Prec};
use load::{idents, inline, load};
use reach::{dead_rules, reachable, terminal_rules};

/// A pest construct the export cannot express soundly, named by its rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError {
    pub rule: String,
    pub message: String,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule `{}`: {}", self.rule, self.message)
    }
}

impl std::error::Error for ExportError {}

/// Translates `pest_src` into Lark with `start` as the start rule.
pub fn export(pest_src: &str, start: &str) -> Result<String, ExportError> {
    let defs = inline(load(pest_src)?)?;
    if !defs.contains_key(start) {
        return Err(err(start, "the start rule is not defined"));
    }
    for banned in ["WHITESPACE", "COMMENT"] {
        if defs.contains_key(banned) {
            return Err(err(
                banned,
                "implicit whitespace/comment skipping has no Lark equivalent; thread it explicitly",
            ));
        }
    }
    let terminals = terminal_rules(&defs);
    let dead = dead_rules(&defs, &terminals)?;
    let mut out =
        String::from("// Generated from the pest grammar by grammar-patch; do not edit.\n");
    if start != "start" {
        out.push_str(&format!(
            "start: {}\n",
            lark_name(start, terminals.contains(start))
        ));
    }
    for name in reachable(&defs, &dead, start) {
        let def = &defs[name.as_str()];
        let is_terminal = terminals.contains(&name);
        let mut cx = Cx {
            rule: &name,
            defs: &defs,
            dead: &dead,
            terminals: &terminals,
            in_terminal: is_terminal,
        };
        let mut expr = def.expr.clone();
        if name == start {
            expr = strip_soi_eoi(expr);
        }
        let Some(expr) = cx.prune(&expr)? else {
            return Err(err(&name, "every alternative needs an omitted rule"));
        };
        let body = cx.emit(&expr, Prec::Choice)?;
        if body.is_empty() {
            return Err(err(
                &name,
                "matches only the empty string, which Lark cannot express",
            ));
        }
        out.push_str(&format!("{}: {}\n", lark_name(&name, is_terminal), body));
    }
    Ok(out)
}

/// The rules documented `lark: omit` (parsed for their diagnostics,
/// absent from the export): a text that needs one of them is outside the
/// export's language.
pub fn omitted_rules(pest_src: &str) -> Result<Vec<String>, ExportError> {
    Ok(load(pest_src)?
        .into_iter()
        .filter(|(_, d)| d.omit)
        .map(|(n, _)| n)
        .collect())
}

/// The rules that can reach themselves, in name order. A parser of a
/// grammar without any nests its calls only as deep as the grammar is, never
/// as deep as its input, so it needs no guard against the native stack
/// running out.
pub fn recursive_rules(pest_src: &str) -> Result<Vec<String>, ExportError> {
    let defs = load(pest_src)?;
    let calls = |name: &str| {
        let mut out = vec![];
        if let Some(def) = defs.get(name) {
            idents(&def.expr, &mut out);
        }
        out
    };
    Ok(defs
        .keys()
        .filter(|&start| {
            let mut seen = BTreeSet::new();
            let mut stack = calls(start);
            while let Some(name) = stack.pop() {
                if name == *start {
                    return true;
                }
                if seen.insert(name.clone()) {
                    stack.extend(calls(&name));
                }
            }
            false
        })
        .cloned()
        .collect())
}

pub(crate) fn err(rule: &str, message: &str) -> ExportError {
    ExportError {
        rule: rule.to_string(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recursion is found through every kind of expression, and a rule
    /// used twice is not recursive.
    #[test]
    fn recursive_rules_are_the_ones_that_reach_themselves() {
        let recursive = |src: &str| recursive_rules(src).unwrap();
        assert_eq!(recursive("a = { \"(\" ~ a? ~ \")\" }"), ["a"]);
        assert_eq!(
            recursive("s = { a }\na = { \"x\" ~ !b }\nb = _{ c* }\nc = { a | \"y\" }"),
            ["a", "b", "c"]
        );
        assert!(recursive("s = { a ~ a }\na = { \"x\" }").is_empty());
    }

    #[test]
    fn omitted_rules_are_the_ones_documented_so() {
        let src = "start = { a | b }\n/// lark: omit\n/// why\na = { \"a\" }\nb = { \"b\" }";
        assert_eq!(omitted_rules(src).unwrap(), ["a"]);
        let e = omitted_rules("start = {").unwrap_err();
        assert_eq!(e.rule, "<grammar>", "{e}");
    }

    #[test]
    fn translator_refuses_what_lark_cannot_say() {
        let refused = |src: &str, rule: &str| {
            let err = export(src, "start").expect_err(src);
            assert_eq!(err.rule, rule, "{err}");
        };
        let exported = |src: &str| export(src, "start").unwrap();
        refused("start = { PUSH(\"a\") ~ POP }", "start");
        refused("start = { !\"ab\" ~ \"x\" }", "start");
        refused("start = { &\"a\" ~ \"a\" }", "start");
        refused("WHITESPACE = _{ \" \" }\nstart = { \"a\" }", "WHITESPACE");
        refused("start = { a }\na = @{ \"x\" ~ a? }", "a");
        refused("start = { \"a\" ~ SOI }", "start");
        refused("start = { \"\" }", "start");
        // A waived lookahead is dropped; the negated-class idiom is translated.
        let ok = exported("/// lark: lookahead only disambiguates: test\nstart = { !\"b\" ~ line+ }\nline = @{ (!\"\\n\" ~ ANY)* ~ \"\\n\" }");
        assert!(
            ok.ends_with("start: LINE+\nLINE: /[^\\n]/* \"\\n\"\n"),
            "{ok}"
        );
        // An omitted alternative disappears.
        let ok = exported("start = { a | b }\na = { \"a\" }\n/// lark: omit\nb = { \"b\" }");
        assert!(ok.ends_with("start: a\na: \"a\"\n"), "{ok}");
        // One marked `lark: inline` is written where it is used, and an
        // omitted probe after it disappears.
        let ok = exported("start = { \"@\" ~ (body ~ probe? | probe) }\n/// lark: inline\nbody = @{ line+ }\nline = @{ \"+\" ~ \"\\n\" }\n/// lark: omit\nprobe = _{ line }");
        assert!(ok.ends_with("start: \"@\" LINE+\nLINE: \"+\\n\"\n"), "{ok}");
        refused(
            "start = { a }\n/// lark: inline\na = @{ b }\n/// lark: inline\nb = @{ \"x\" }",
            "a",
        );
        // PEG's `x | a+ ~ x` and `x | p ~ x`, the usual case tried first,
        // read as `a* x` and `p? x`; other choices stay choices.
        let ok = exported("start = { (x | y | b+ ~ (x | y)) ~ (z | \"p\" ~ z) ~ (x | y ~ z) }\nx = { \"x\" }\ny = { \"y\" }\nb = { \"b\" }\nz = { \"z\" }");
        assert!(
            ok.contains("start: b* (x | y) \"p\"? z (x | y z)\n"),
            "{ok}"
        );
        // A prefix that is only a dropped lookahead leaves the choice as is.
        let ok = exported(
            "/// lark: lookahead only disambiguates: test\nstart = { x | &\"x\" ~ x }\nx = { \"x\" }",
        );
        assert!(ok.contains("start: x | x\n"), "{ok}");
        // The pest stack is refused whole, PEEK included.
        refused("start = { PUSH(\"a\") ~ PEEK }", "start");
        refused(
            "start = { line }\nline = @{ !(PEEK ~ \" \") ~ (!\"\\n\" ~ ANY)* ~ \"\\n\" }",
            "line",
        );
    }
}
