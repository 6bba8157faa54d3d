//! Writing a rule's expression as Lark: one arm per kind of pest
//! expression, each what Lark says for it or the refusal.

use std::collections::{BTreeMap, BTreeSet};

use pest_meta::ast::Expr;

use crate::load::{Def, DROP_LOOKAHEAD};
use crate::regex::{
    class_escape_str, first_unit_complement, prefix_complement, quote, regex_escape,
};
use crate::{err, ExportError};

#[derive(Clone, Copy, PartialEq, PartialOrd)]
pub(crate) enum Prec {
    Choice,
    Seq,
    Atom,
}

pub(crate) struct Cx<'a> {
    pub(crate) rule: &'a str,
    pub(crate) defs: &'a BTreeMap<String, Def>,
    /// Rules left out of the export (see [`dead_rules`]).
    pub(crate) dead: &'a BTreeSet<String>,
    pub(crate) terminals: &'a BTreeSet<String>,
    pub(crate) in_terminal: bool,
}

impl Cx<'_> {
    fn fail<T>(&self, message: &str) -> Result<T, ExportError> {
        Err(err(self.rule, message))
    }

    /// Removes omitted rules. `None` means "cannot match"; the empty string
    /// literal stands for "matches the empty string".
    pub(crate) fn prune(&mut self, expr: &Expr) -> Result<Option<Expr>, ExportError> {
        let epsilon = || Expr::Str(String::new());
        Ok(match expr {
            Expr::Ident(name) if self.dead.contains(name) => None,
            Expr::Seq(a, b) => match (self.prune(a)?, self.prune(b)?) {
                (Some(a), Some(b)) => Some(Expr::Seq(Box::new(a), Box::new(b))),
                _ => None,
            },
            Expr::Choice(a, b) => match (self.prune(a)?, self.prune(b)?) {
                (Some(a), Some(b)) => Some(Expr::Choice(Box::new(a), Box::new(b))),
                (Some(x), None) | (None, Some(x)) => Some(x),
                (None, None) => None,
            },
            Expr::Opt(a) => Some(
                self.prune(a)?
                    .map_or_else(epsilon, |a| Expr::Opt(Box::new(a))),
            ),
            Expr::Rep(a) => Some(
                self.prune(a)?
                    .map_or_else(epsilon, |a| Expr::Rep(Box::new(a))),
            ),
            Expr::RepOnce(a) => self.prune(a)?.map(|a| Expr::RepOnce(Box::new(a))),
            // Lookahead is handled (or refused) by `emit`; a pruned operand
            // would change its meaning, so leave it whole.
            other => Some(other.clone()),
        })
    }

    /// The Lark text of `expr` inside an expression of precedence `outer`:
    /// one arm per kind of pest expression, each what Lark says for it or
    /// the refusal (the arms are the translation table, side by side).
    pub(crate) fn emit(&mut self, expr: &Expr, outer: Prec) -> Result<String, ExportError> {
        let (text, prec) = match expr {
            Expr::Str(s) if s.is_empty() => (String::new(), Prec::Atom),
            Expr::Str(s) => (quote(s), Prec::Atom),
            Expr::Insens(s) => (insensitive(s), Prec::Atom),
            Expr::Range(a, b) => (
                format!("/[{}-{}]/", class_escape_str(a), class_escape_str(b)),
                Prec::Atom,
            ),
            Expr::Ident(name) => (self.ident(name)?, Prec::Atom),
            Expr::Seq(..) => self.emit_seq(expr)?,
            Expr::Choice(..) => match self.emit_choice(expr)? {
                Ok(done) => return Ok(wrap(done, Prec::Seq, outer)),
                Err(text) => (text, Prec::Choice),
            },
            Expr::Opt(a) => (format!("{}?", self.emit_atom(a)?), Prec::Atom),
            Expr::Rep(a) => (format!("{}*", self.emit_atom(a)?), Prec::Atom),
            Expr::RepOnce(a) => (format!("{}+", self.emit_atom(a)?), Prec::Atom),
            Expr::RepExact(a, n) => (self.repeat(a, *n, Some(*n))?, Prec::Atom),
            Expr::RepMin(a, n) => (self.repeat(a, *n, None)?, Prec::Atom),
            Expr::RepMax(a, n) => (self.repeat(a, 0, Some(*n))?, Prec::Atom),
            Expr::RepMinMax(a, m, n) => (self.repeat(a, *m, Some(*n))?, Prec::Atom),
            Expr::NegPred(_) | Expr::PosPred(_) => {
                if self.defs[self.rule].drop_lookahead {
                    (String::new(), Prec::Atom)
                } else {
                    return self.fail(&format!(
                        "lookahead has no Lark equivalent (only `!(chars) ~ ANY` is translated); \
                         if it only picks between parses of the same text, say so with `/// {DROP_LOOKAHEAD}: why`"
                    ));
                }
            }
            Expr::Skip(_) => {
                return self.fail("`(!x ~ ANY)*` skipping via `SKIP`/`_` is not supported")
            }
            Expr::Push(_) | Expr::PeekSlice(..) => {
                return self.fail("the pest stack has no Lark equivalent")
            }
            #[allow(unreachable_patterns)]
            _ => return self.fail("this pest construct has no Lark equivalent"),
        };
        Ok(wrap(text, prec, outer))
    }

    /// A sequence: the line idioms (`!p ~ !c ~ ANY ~ text`, `!c ~ ANY`,
    /// `!p ~ text`) as one regex each, adjacent literals as one, the rest
    /// item by item.
    fn emit_seq(&mut self, expr: &Expr) -> Result<(String, Prec), ExportError> {
        let items = flatten_seq(expr);
        let mut parts = vec![];
        let mut i = 0;
        while i < items.len() {
            // `!p ~ !c ~ ANY ~ text`: a non-empty line that does not
            // start with `p` and whose first character is not in `c`.
            if let (
                Expr::NegPred(prefix),
                Some(Expr::NegPred(first)),
                Some(Expr::Ident(any)),
                Some(Expr::Ident(rest)),
            ) = (
                &items[i],
                items.get(i + 1),
                items.get(i + 2),
                items.get(i + 3),
            ) {
                if any == "ANY" && self.is_line_rest(rest) {
                    let units = self.units(prefix)?;
                    let class = self.char_class(first)?;
                    parts.push(format!("/{}/", first_unit_complement(&units, &class)));
                    i += 4;
                    continue;
                }
            }
            if let (Expr::NegPred(inner), Some(Expr::Ident(next))) = (&items[i], items.get(i + 1)) {
                if next == "ANY" {
                    parts.push(format!("/[^{}]/", self.char_class(inner)?));
                    i += 2;
                    continue;
                }
                if self.is_line_rest(next) {
                    let units = self.units(inner)?;
                    parts.push(format!("/{}/", prefix_complement(&units)));
                    i += 2;
                    continue;
                }
            }
            // Adjacent literals are one: `"***" " " "End"` reads
            // `"*** End"` (a pruned choice leaves such runs).
            if let Expr::Str(first) = &items[i] {
                let mut joined = first.clone();
                while let Some(Expr::Str(next)) = items.get(i + 1) {
                    joined.push_str(next);
                    i += 1;
                }
                if !joined.is_empty() {
                    parts.push(quote(&joined));
                }
                i += 1;
                continue;
            }
            let part = self.emit(&items[i], Prec::Seq)?;
            if !part.is_empty() {
                parts.push(part);
            }
            i += 1;
        }
        let prec = if parts.len() == 1 {
            Prec::Atom
        } else {
            Prec::Seq
        };
        Ok((parts.join(" "), prec))
    }

    /// A choice: `Ok(text)` when it reads as an optional prefix (see
    /// [`Cx::optional_prefix`]), a sequence; else `Err(text)`, the
    /// alternatives side by side.
    fn emit_choice(&mut self, expr: &Expr) -> Result<Result<String, String>, ExportError> {
        let alts = flatten_choice(expr);
        if let Some(text) = self.optional_prefix(&alts)? {
            return Ok(Ok(text));
        }
        let mut parts = vec![];
        for alt in &alts {
            let part = self.emit(alt, Prec::Seq)?;
            if part.is_empty() {
                return self.fail(
                    "an alternative matches the empty string; write the choice as an option `?`",
                );
            }
            parts.push(part);
        }
        Ok(Err(parts.join(" | ")))
    }

    /// Alternatives `x | p ~ x` (where PEG tries the usual `x` first, and
    /// `x` may be a choice itself) as Lark's `p? x`, and `x | a+ ~ x` as
    /// `a* x`: the same language, written as it reads. `None` when the
    /// last alternative does not end with the others.
    fn optional_prefix(&mut self, alts: &[Expr]) -> Result<Option<String>, ExportError> {
        let Some((last, before)) = alts.split_last() else {
            return Ok(None);
        };
        if before.is_empty() {
            return Ok(None);
        }
        let x = self.emit(&rebuild_choice(before.to_vec()), Prec::Seq)?;
        let items = flatten_seq(last);
        for k in 1..items.len() {
            if self.emit(&rebuild_seq(items[k..].to_vec()), Prec::Seq)? != x {
                continue;
            }
            let (prefix, star) = match rebuild_seq(items[..k].to_vec()) {
                Expr::RepOnce(a) => (*a, "*"),
                p => (p, "?"),
            };
            let p = self.emit(&prefix, Prec::Atom)?;
            if p.is_empty() {
                return Ok(None);
            }
            return Ok(Some(format!("{p}{star} {x}")));
        }
        Ok(None)
    }

    fn emit_atom(&mut self, expr: &Expr) -> Result<String, ExportError> {
        let text = self.emit(expr, Prec::Atom)?;
        if text.is_empty() {
            return self.fail("a repetition of something that matches only the empty string");
        }
        Ok(text)
    }

    fn repeat(&mut self, expr: &Expr, min: u32, max: Option<u32>) -> Result<String, ExportError> {
        if max.unwrap_or(min) > 32 {
            return self.fail("bounded repetition above 32 is not expanded");
        }
        let one = self.emit_atom(expr)?;
        let mut parts: Vec<String> = (0..min).map(|_| one.clone()).collect();
        match max {
            None => parts.push(format!("{one}*")),
            Some(max) => parts.extend((min..max).map(|_| format!("{one}?"))),
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            format!("({})", parts.join(" "))
        })
    }

    /// Whether `name` is `(!"\n" ~ ANY)*`, the rest of a line.
    fn is_line_rest(&self, name: &str) -> bool {
        let rest = Expr::Rep(Box::new(Expr::Seq(
            Box::new(Expr::NegPred(Box::new(Expr::Str("\n".into())))),
            Box::new(Expr::Ident("ANY".into())),
        )));
        self.defs.get(name).is_some_and(|d| d.expr == rest)
    }

    /// A fixed-length prefix as one character class per character.
    fn units(&self, expr: &Expr) -> Result<Vec<String>, ExportError> {
        let mut out = vec![];
        for item in flatten_seq(expr) {
            match &item {
                Expr::Str(s) => out.extend(s.chars().map(regex_escape)),
                Expr::Ident(name) if name == "ASCII_HEX_DIGIT" => out.push("0-9a-fA-F".into()),
                Expr::Ident(name) if self.defs.contains_key(name) && name != self.rule => {
                    out.extend(self.units(&self.defs[name.as_str()].expr)?)
                }
                Expr::RepExact(inner, n) => {
                    let one = self.units(inner)?;
                    for _ in 0..*n {
                        out.extend(one.iter().cloned());
                    }
                }
                Expr::Range(a, b) => {
                    out.push(format!("{}-{}", class_escape_str(a), class_escape_str(b)))
                }
                // A choice of single characters is one class.
                Expr::Choice(..) => out.push(self.char_class(&item)?),
                _ => {
                    return self.fail(
                        "`!p ~ text` is translated only when p is a fixed-length run of characters and classes",
                    )
                }
            }
        }
        if out.is_empty() {
            return self.fail("`!p ~ text` with an empty p");
        }
        Ok(out)
    }

    fn ident(&mut self, name: &str) -> Result<String, ExportError> {
        let builtin = match name {
            "ANY" => Some("/(?s:.)/"),
            "ASCII_DIGIT" => Some("/[0-9]/"),
            "ASCII_NONZERO_DIGIT" => Some("/[1-9]/"),
            "ASCII_HEX_DIGIT" => Some("/[0-9a-fA-F]/"),
            "ASCII_ALPHA_LOWER" => Some("/[a-z]/"),
            "ASCII_ALPHA_UPPER" => Some("/[A-Z]/"),
            "ASCII_ALPHA" => Some("/[a-zA-Z]/"),
            "ASCII_ALPHANUMERIC" => Some("/[a-zA-Z0-9]/"),
            "NEWLINE" => Some("(\"\\n\" | \"\\r\\n\" | \"\\r\")"),
            _ => None,
        };
        if let Some(text) = builtin {
            return Ok(text.to_string());
        }
        if !self.defs.contains_key(name) {
            return self.fail(&format!(
                "`{name}` (built-in or undefined) has no Lark equivalent"
            ));
        }
        let is_terminal = self.terminals.contains(name);
        if self.in_terminal && !is_terminal {
            return self.fail(&format!("terminal refers to the non-terminal `{name}`"));
        }
        if self.in_terminal && name == self.rule {
            return self.fail("a terminal cannot be recursive");
        }
        Ok(lark_name(name, is_terminal))
    }

    /// The characters of a `!(…) ~ ANY` lookahead, as the body of `[^…]`.
    fn char_class(&self, expr: &Expr) -> Result<String, ExportError> {
        let mut out = String::new();
        for alt in flatten_choice(expr) {
            match &alt {
                Expr::Str(s) if s.chars().count() == 1 => out.push_str(&class_escape_str(s)),
                Expr::Range(a, b) => out.push_str(&format!("{}-{}", class_escape_str(a), class_escape_str(b))),
                Expr::Ident(name) if self.defs.contains_key(name) && name != self.rule => {
                    out.push_str(&self.char_class(&self.defs[name.as_str()].expr)?)
                }
                _ => {
                    return self.fail(
                        "`!x ~ ANY` is translated only when x is a choice of single characters or ranges",
                    )
                }
            }
        }
        Ok(out)
    }
}

pub(crate) fn strip_soi_eoi(expr: Expr) -> Expr {
    let mut items = flatten_seq(&expr);
    if items.first() == Some(&Expr::Ident("SOI".into())) {
        items.remove(0);
    }
    if items.last() == Some(&Expr::Ident("EOI".into())) {
        items.pop();
    }
    rebuild_seq(items)
}

fn flatten_seq(expr: &Expr) -> Vec<Expr> {
    match expr {
        Expr::Seq(a, b) => {
            let mut v = flatten_seq(a);
            v.extend(flatten_seq(b));
            v
        }
        other => vec![other.clone()],
    }
}

fn flatten_choice(expr: &Expr) -> Vec<Expr> {
    match expr {
        Expr::Choice(a, b) => {
            let mut v = flatten_choice(a);
            v.extend(flatten_choice(b));
            v
        }
        other => vec![other.clone()],
    }
}

fn rebuild_seq(items: Vec<Expr>) -> Expr {
    items
        .into_iter()
        .rev()
        .reduce(|acc, e| Expr::Seq(Box::new(e), Box::new(acc)))
        .unwrap_or(Expr::Str(String::new()))
}

fn rebuild_choice(alts: Vec<Expr>) -> Expr {
    alts.into_iter()
        .rev()
        .reduce(|acc, e| Expr::Choice(Box::new(e), Box::new(acc)))
        .unwrap_or(Expr::Str(String::new()))
}

/// `text`, of precedence `prec`, in parentheses where `outer` binds
/// tighter.
fn wrap(text: String, prec: Prec, outer: Prec) -> String {
    if prec < outer && !text.is_empty() {
        format!("({text})")
    } else {
        text
    }
}

pub(crate) fn lark_name(name: &str, terminal: bool) -> String {
    if terminal {
        name.to_ascii_uppercase()
    } else {
        name.to_ascii_lowercase()
    }
}

/// A case-insensitive literal as a regex of one class per letter.
fn insensitive(s: &str) -> String {
    let class: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
            } else {
                regex_escape(c)
            }
        })
        .collect();
    format!("/{class}/")
}
