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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use pest_meta::ast::{Expr, RuleType};
use pest_meta::parser::{self, Rule as MetaRule};

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

const OMIT: &str = "lark: omit";
const DROP_LOOKAHEAD: &str = "lark: lookahead only disambiguates";
const INLINE: &str = "lark: inline";

struct Def {
    expr: Expr,
    atomic: bool,
    inline: bool,
    omit: bool,
    drop_lookahead: bool,
}

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

fn err(rule: &str, message: &str) -> ExportError {
    ExportError {
        rule: rule.to_string(),
        message: message.to_string(),
    }
}

/// Parses the grammar with pest_meta, keeping each rule's doc comment.
fn load(pest_src: &str) -> Result<BTreeMap<String, Def>, ExportError> {
    let pairs = parser::parse(MetaRule::grammar_rules, pest_src)
        .map_err(|e| err("<grammar>", &e.to_string()))?;
    let mut docs: BTreeMap<String, String> = BTreeMap::new();
    let mut pending = String::new();
    for pair in pairs.clone() {
        if pair.as_rule() != MetaRule::grammar_rule {
            continue;
        }
        let Some(first) = pair.into_inner().next() else {
            continue;
        };
        if first.as_rule() == MetaRule::line_doc {
            pending.push_str(first.as_str().trim_start_matches('/').trim());
            pending.push('\n');
        } else {
            docs.insert(first.as_str().to_string(), std::mem::take(&mut pending));
        }
    }
    let rules = parser::consume_rules(pairs).map_err(|errors| {
        let text = errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("; ");
        err("<grammar>", &text)
    })?;
    let mut defs = BTreeMap::new();
    for rule in rules {
        let doc = docs.get(&rule.name).map(String::as_str).unwrap_or("");
        let says = |directive: &str| doc.lines().any(|l| l.starts_with(directive));
        let def = Def {
            atomic: matches!(rule.ty, RuleType::Atomic | RuleType::CompoundAtomic) && !says(INLINE),
            inline: says(INLINE),
            omit: says(OMIT),
            drop_lookahead: says(DROP_LOOKAHEAD),
            expr: rule.expr,
        };
        defs.insert(rule.name, def);
    }
    Ok(defs)
}

/// The grammar with every `lark: inline` rule written out where it is
/// used, and gone as a rule.
fn inline(mut defs: BTreeMap<String, Def>) -> Result<BTreeMap<String, Def>, ExportError> {
    let mut inlined: BTreeMap<String, Expr> = BTreeMap::new();
    for (name, def) in &defs {
        if def.inline {
            inlined.insert(name.clone(), def.expr.clone());
        }
    }
    for (name, expr) in &inlined {
        let mut used = vec![];
        idents(expr, &mut used);
        if let Some(other) = used.iter().find(|u| inlined.contains_key(*u)) {
            return Err(err(
                name,
                &format!("an inlined rule refers to the inlined `{other}`"),
            ));
        }
    }
    defs.retain(|_, d| !d.inline);
    for def in defs.values_mut() {
        def.expr = def.expr.clone().map_bottom_up(|e| match e {
            Expr::Ident(name) if inlined.contains_key(&name) => inlined[&name].clone(),
            other => other,
        });
    }
    Ok(defs)
}

fn idents(expr: &Expr, out: &mut Vec<String>) {
    for e in expr.iter_top_down() {
        if let Expr::Ident(name) = e {
            out.push(name);
        }
    }
}

/// Atomic rules and everything they reach (pest inherits atomicity downwards).
fn terminal_rules(defs: &BTreeMap<String, Def>) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let mut stack: Vec<String> = defs
        .iter()
        .filter(|(_, d)| d.atomic)
        .map(|(n, _)| n.clone())
        .collect();
    while let Some(name) = stack.pop() {
        let Some(def) = defs.get(&name) else { continue };
        if set.insert(name) {
            idents(&def.expr, &mut stack);
        }
    }
    set
}

/// Rules that cannot match once omitted rules are gone: the omitted ones,
/// and those every alternative of which needs one.
fn dead_rules(
    defs: &BTreeMap<String, Def>,
    terminals: &BTreeSet<String>,
) -> Result<BTreeSet<String>, ExportError> {
    let mut dead: BTreeSet<String> = defs
        .iter()
        .filter(|(_, d)| d.omit)
        .map(|(n, _)| n.clone())
        .collect();
    loop {
        let mut grew = false;
        for (name, def) in defs {
            if dead.contains(name) {
                continue;
            }
            let mut cx = Cx {
                rule: name,
                defs,
                dead: &dead,
                terminals,
                in_terminal: false,
            };
            if cx.prune(&def.expr)?.is_none() {
                dead.insert(name.clone());
                grew = true;
            }
        }
        if !grew {
            return Ok(dead);
        }
    }
}

/// The identifiers the export of `def` refers to: a lookahead that is
/// dropped refers to nothing.
fn exported_idents(def: &Def, out: &mut Vec<String>) {
    fn walk(expr: &Expr, drop: bool, out: &mut Vec<String>) {
        match expr {
            Expr::PosPred(_) | Expr::NegPred(_) if drop => {}
            Expr::Ident(name) => out.push(name.clone()),
            Expr::Seq(a, b) | Expr::Choice(a, b) => {
                walk(a, drop, out);
                walk(b, drop, out);
            }
            Expr::Opt(a)
            | Expr::Rep(a)
            | Expr::RepOnce(a)
            | Expr::RepExact(a, _)
            | Expr::RepMin(a, _)
            | Expr::RepMax(a, _)
            | Expr::RepMinMax(a, _, _)
            | Expr::PosPred(a)
            | Expr::NegPred(a)
            | Expr::Push(a) => walk(a, drop, out),
            other => idents(other, out),
        }
    }
    walk(&def.expr, def.drop_lookahead, out)
}

/// User rules reachable from `start`, skipping dead ones, in a stable order
/// (breadth first, so the Lark file reads top-down like the pest file).
fn reachable(defs: &BTreeMap<String, Def>, dead: &BTreeSet<String>, start: &str) -> Vec<String> {
    let mut order = vec![start.to_string()];
    let mut i = 0;
    while i < order.len() {
        let mut next = vec![];
        exported_idents(&defs[order[i].as_str()], &mut next);
        for name in next {
            if defs.contains_key(&name) && !dead.contains(&name) && !order.contains(&name) {
                order.push(name);
            }
        }
        i += 1;
    }
    order
}

fn strip_soi_eoi(expr: Expr) -> Expr {
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

/// `text`, of precedence `prec`, in parentheses where `outer` binds
/// tighter.
fn wrap(text: String, prec: Prec, outer: Prec) -> String {
    if prec < outer && !text.is_empty() {
        format!("({text})")
    } else {
        text
    }
}

fn rebuild_choice(alts: Vec<Expr>) -> Expr {
    alts.into_iter()
        .rev()
        .reduce(|acc, e| Expr::Choice(Box::new(e), Box::new(acc)))
        .unwrap_or(Expr::Str(String::new()))
}

fn lark_name(name: &str, terminal: bool) -> String {
    if terminal {
        name.to_ascii_uppercase()
    } else {
        name.to_ascii_lowercase()
    }
}

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Prec {
    Choice,
    Seq,
    Atom,
}

struct Cx<'a> {
    rule: &'a str,
    defs: &'a BTreeMap<String, Def>,
    /// Rules left out of the export (see [`dead_rules`]).
    dead: &'a BTreeSet<String>,
    terminals: &'a BTreeSet<String>,
    in_terminal: bool,
}

impl Cx<'_> {
    fn fail<T>(&self, message: &str) -> Result<T, ExportError> {
        Err(err(self.rule, message))
    }

    /// Removes omitted rules. `None` means "cannot match"; the empty string
    /// literal stands for "matches the empty string".
    fn prune(&mut self, expr: &Expr) -> Result<Option<Expr>, ExportError> {
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

    /// The Lark text of `expr` inside an expression of precedence `outer`.
    /// One arm per kind of pest expression, each what Lark says for it or
    /// the refusal; a long function by choice, since the arms are the
    /// translation table and read best side by side.
    fn emit(&mut self, expr: &Expr, outer: Prec) -> Result<String, ExportError> {
        let (text, prec) = match expr {
            Expr::Str(s) if s.is_empty() => (String::new(), Prec::Atom),
            Expr::Str(s) => (quote(s), Prec::Atom),
            Expr::Insens(s) => {
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
                (format!("/{class}/"), Prec::Atom)
            }
            Expr::Range(a, b) => (
                format!("/[{}-{}]/", class_escape_str(a), class_escape_str(b)),
                Prec::Atom,
            ),
            Expr::Ident(name) => (self.ident(name)?, Prec::Atom),
            Expr::Seq(..) => {
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
                    if let (Expr::NegPred(inner), Some(Expr::Ident(next))) =
                        (&items[i], items.get(i + 1))
                    {
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
                (parts.join(" "), prec)
            }
            Expr::Choice(..) => {
                let alts = flatten_choice(expr);
                if let Some(text) = self.optional_prefix(&alts)? {
                    return Ok(wrap(text, Prec::Seq, outer));
                }
                let mut parts = vec![];
                for alt in &alts {
                    let part = self.emit(alt, Prec::Seq)?;
                    if part.is_empty() {
                        return self.fail("an alternative matches the empty string; write the choice as an option `?`");
                    }
                    parts.push(part);
                }
                (parts.join(" | "), Prec::Choice)
            }
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

/// A regex for the rest of a line that does not start with `units` (one
/// character class each): it stops short of the prefix or leaves it at a
/// character outside the class.
fn prefix_complement(units: &[String]) -> String {
    let mut inner = String::new();
    for (k, unit) in units.iter().enumerate().rev() {
        let leave = format!("[^{unit}\\n][^\\n]*");
        inner = if k + 1 == units.len() {
            format!("({leave})?")
        } else {
            format!("({leave}|[{unit}]{inner})?")
        };
    }
    inner
}

/// [`prefix_complement`] for a line of at least one character, the first
/// not in `first` (a class disjoint from the prefix's first unit).
fn first_unit_complement(units: &[String], first: &str) -> String {
    let unit = &units[0];
    let leave = format!("[^{unit}{first}\\n][^\\n]*");
    if units.len() == 1 {
        return leave;
    }
    let rest = prefix_complement(&units[1..]);
    format!("({leave}|[{unit}]{rest})")
}

/// A Lark string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn class_escape_str(s: &str) -> String {
    s.chars().map(regex_escape).collect()
}

/// Escapes one character for use in a Lark `/regex/`, inside or outside a class.
fn regex_escape(c: char) -> String {
    match c {
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '/' => "\\/".into(),
        c if "\\^$.|?*+()[]{}-".contains(c) => format!("\\{c}"),
        c => c.to_string(),
    }
}
