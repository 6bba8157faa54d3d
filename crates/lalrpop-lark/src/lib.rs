//! Exports a LALRPOP grammar written over an external lexer as Lark, the
//! syntax OpenAI custom tools take for constrained decoding (checked with
//! llguidance, the engine behind them).
//!
//! LALRPOP has no public API for its grammar's syntax tree, so this reads
//! the subset of its syntax our grammars are written in, and refuses the
//! rest by name:
//!
//! - Terminals are the entries `NAME => Tok::Variant,` of the `extern`
//!   block's `enum`. The comment line `// lark: DEFINITION` above an entry
//!   is its Lark definition; `// lark: omit` leaves the terminal out, with
//!   every alternative that uses it (the export can only shrink).
//! - `// lark-define: NAME: DEFINITION` lines define the helper terminals
//!   the definitions name.
//! - Nonterminals are `[pub] Name[: Type] = ALTERNATIVE;` or `= { ALT, …
//!   };`, an alternative being symbols (names, `<x:…>` and `<…>`
//!   bindings, `@L`/`@R`, the quantifiers `?`, `*`, `+`, and parentheses)
//!   and an optional `=> action`, which is skipped. A macro (`Name<T>`)
//!   may be defined but not reached from the start symbol.
//! - The export is every nonterminal reached from the start symbol, in
//!   snake_case; one whose only alternative is one terminal is written as
//!   that terminal. A recursive nonterminal is refused: every grammar here
//!   says its repetitions with quantifiers.
//!
//! `read.rs` reads the grammar file; this file checks it and writes Lark.

use std::collections::{BTreeMap, BTreeSet};

mod read;

use read::{is_terminal_name, read_rules, read_terminals};

/// Why a grammar cannot be exported: the rule (nonterminal or terminal)
/// it is about, `<grammar>` for the file as a whole, and what is wrong.
/// The same shape as `pest_lark::ExportError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError {
    pub rule: String,
    pub message: String,
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rule `{}`: {}", self.rule, self.message)
    }
}

impl std::error::Error for ExportError {}

/// The refusal of `rule` for `message`.
pub(crate) fn refusal(rule: &str, message: impl Into<String>) -> ExportError {
    ExportError {
        rule: rule.to_string(),
        message: message.into(),
    }
}

pub(crate) fn err<T>(rule: &str, message: impl Into<String>) -> Result<T, ExportError> {
    Err(refusal(rule, message))
}

/// A refusal about the grammar file as a whole.
pub(crate) const GRAMMAR: &str = "<grammar>";

/// A symbol of an alternative.
#[derive(Debug, Clone, PartialEq)]
enum Sym {
    Name(String),
    /// A macro applied (`Name<…>`): not exported.
    Macro(String),
    Group(Vec<Vec<Sym>>),
    Repeat(Box<Sym>, char),
}

/// Terminal name → its Lark definition (`None`: omitted).
type Terminals = BTreeMap<String, Option<String>>;

/// The grammar as the export reads it.
struct Grammar {
    terminals: Terminals,
    /// Helper terminals, in the order they are defined.
    helpers: Vec<(String, String)>,
    /// Nonterminal → its alternatives (macros left out).
    rules: BTreeMap<String, Vec<Vec<Sym>>>,
}

/// The terminal names a Lark definition refers to (not the text of its
/// strings and regexes).
fn names_in(def: &str) -> Vec<String> {
    let mut out = vec![];
    let cs: Vec<char> = def.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        match cs[i] {
            q @ ('"' | '/') => {
                i += 1;
                while i < cs.len() && cs[i] != q {
                    i += if cs[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let s = i;
                while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                    i += 1;
                }
                let w: String = cs[s..i].iter().collect();
                if is_terminal_name(&w) {
                    out.push(w);
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

impl Grammar {
    fn read(src: &str) -> Result<Grammar, ExportError> {
        let (terminals, helpers) = read_terminals(src)?;
        let rules = read_rules(src)?;
        Ok(Grammar {
            terminals,
            helpers,
            rules,
        })
    }

    /// Whether a symbol can be exported (it needs no omitted terminal).
    fn kept(&self, sym: &Sym) -> bool {
        match sym {
            Sym::Name(n) if is_terminal_name(n) => matches!(self.terminals.get(n), Some(Some(_))),
            Sym::Name(n) => self
                .rules
                .get(n)
                .is_some_and(|alts| alts.iter().any(|a| a.iter().all(|s| self.kept(s)))),
            Sym::Group(alts) => alts.iter().any(|a| a.iter().all(|s| self.kept(s))),
            // An optional or repeated part may be left out.
            Sym::Repeat(inner, q) => *q != '+' || self.kept(inner),
            Sym::Macro(_) => false,
        }
    }

    /// A symbol in Lark, `None` if it must go.
    fn lark(&self, sym: &Sym, used: &mut Vec<String>) -> Option<String> {
        match sym {
            Sym::Name(n) if is_terminal_name(n) => {
                self.terminals.get(n)?.as_ref()?;
                if !used.contains(n) {
                    used.push(n.clone());
                }
                Some(n.clone())
            }
            Sym::Name(n) => {
                let alts = self.rules.get(n)?;
                if let [alt] = &alts[..] {
                    if let [Sym::Name(t)] = &alt[..] {
                        if is_terminal_name(t) {
                            return self.lark(&alt[0], used);
                        }
                    }
                }
                if !self.kept(sym) {
                    return None;
                }
                if !used.contains(n) {
                    used.push(n.clone());
                }
                Some(snake(n))
            }
            Sym::Group(alts) => {
                let alts: Vec<String> =
                    alts.iter().filter_map(|a| self.sequence(a, used)).collect();
                (!alts.is_empty()).then(|| format!("({})", alts.join(" | ")))
            }
            Sym::Repeat(inner, q) => self.lark(inner, used).map(|s| format!("{s}{q}")),
            Sym::Macro(_) => None,
        }
    }

    fn sequence(&self, alt: &[Sym], used: &mut Vec<String>) -> Option<String> {
        if !alt.iter().all(|s| self.kept(s)) {
            return None;
        }
        let parts: Vec<String> = alt.iter().filter_map(|s| self.lark(s, used)).collect();
        Some(parts.join(" "))
    }

    /// Refuses a nonterminal that reaches itself.
    fn check_recursion(&self, start: &str) -> Result<(), ExportError> {
        fn names(sym: &Sym, out: &mut Vec<String>) -> Result<(), ExportError> {
            match sym {
                Sym::Name(n) => out.push(n.clone()),
                Sym::Macro(m) => return err(m, "a macro cannot be exported"),
                Sym::Group(alts) => {
                    for s in alts.iter().flatten() {
                        names(s, out)?;
                    }
                }
                Sym::Repeat(inner, _) => names(inner, out)?,
            }
            Ok(())
        }
        fn visit(
            g: &Grammar,
            n: &str,
            path: &mut Vec<String>,
            done: &mut BTreeSet<String>,
        ) -> Result<(), ExportError> {
            if path.iter().any(|p| p == n) {
                return err(n, "recursive: say its repetition with a quantifier");
            }
            if done.contains(n) {
                return Ok(());
            }
            let Some(alts) = g.rules.get(n) else {
                return Ok(());
            };
            path.push(n.to_string());
            let mut refs = vec![];
            for s in alts.iter().flatten() {
                names(s, &mut refs)?;
            }
            for r in refs.iter().filter(|r| !is_terminal_name(r)) {
                visit(g, r, path, done)?;
            }
            path.pop();
            done.insert(n.to_string());
            Ok(())
        }
        visit(self, start, &mut vec![], &mut BTreeSet::new())
    }
}

/// The Lark export of `start` in the LALRPOP grammar `src`; with `id`, the
/// helper terminal `PATCH_ID` is that literal.
pub fn export(src: &str, start: &str, id: Option<&str>) -> Result<String, ExportError> {
    let g = Grammar::read(src)?;
    if !g.rules.contains_key(start) {
        return err(start, "no such nonterminal");
    }
    g.check_recursion(start)?;
    for (name, def) in &g.terminals {
        if def.is_none() {
            continue;
        }
        if g.helpers.iter().any(|(h, _)| h == name) {
            return err(name, "both a terminal and a helper");
        }
    }
    let mut out =
        String::from("// Generated from the LALRPOP grammar by grammar-patch; do not edit.\n");
    out.push_str(&format!("start: {}\n", snake(start)));
    let mut used: Vec<String> = vec![start.to_string()];
    let mut i = 0;
    let mut rules = vec![];
    while i < used.len() {
        let n = used[i].clone();
        i += 1;
        if is_terminal_name(&n) {
            continue;
        }
        let alts: Vec<String> = g.rules[&n]
            .iter()
            .filter_map(|a| g.sequence(a, &mut used))
            .collect();
        if alts.is_empty() {
            return err(&n, "every alternative needs an omitted terminal");
        }
        rules.push(format!("{}: {}\n", snake(&n), alts.join(" | ")));
    }
    out.extend(rules);
    let mut defs: Vec<(String, String)> = used
        .iter()
        .filter(|n| is_terminal_name(n))
        .map(|n| {
            (
                n.clone(),
                g.terminals[n].clone().expect("kept terminals are defined"),
            )
        })
        .collect();
    // The helpers the definitions name, in the order they are defined.
    let mut needed: BTreeSet<String> = BTreeSet::new();
    let mut frontier: Vec<String> = defs.iter().map(|(_, d)| d.clone()).collect();
    while let Some(def) = frontier.pop() {
        for word in names_in(&def) {
            if let Some((_, d)) = g.helpers.iter().find(|(h, _)| *h == word) {
                if needed.insert(word.clone()) {
                    frontier.push(d.clone());
                }
            } else if !g.terminals.contains_key(&word) {
                return err(&word, "named in a definition but defined nowhere");
            }
        }
    }
    for (h, d) in &g.helpers {
        if needed.contains(h) {
            let d = match (h.as_str(), id) {
                ("PATCH_ID", Some(id)) => format!("\"{id}\""),
                _ => d.clone(),
            };
            defs.push((h.clone(), d));
        }
    }
    for (n, d) in defs {
        out.push_str(&format!("{n}: {d}\n"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: &str = r#"
// lark-define: WORD: /[a-z]+/
grammar;
extern {
    enum Tok {
        // lark: WORD "\n"
        LINE => Tok::Line,
        // lark: omit
        JUNK => Tok::Junk,
    }
}
pub Top: () = Item* => ();
Item: () = { Line => (), JUNK => () };
Line: () = LINE => ();
Other: Vec<u8> = <a:LINE> <b:JUNK> => vec![];
"#;

    #[test]
    fn exports_the_reached_rules_and_leaves_out_omitted_terminals() {
        assert_eq!(
            export(G, "Top", None).unwrap(),
            "// Generated from the LALRPOP grammar by grammar-patch; do not edit.\n\
             start: top\ntop: item*\nitem: LINE\nLINE: WORD \"\\n\"\nWORD: /[a-z]+/\n"
        );
    }

    #[test]
    fn a_repeated_rule_that_needs_an_omitted_terminal_goes_whole() {
        let src = G.replace(
            "pub Top: () = Item* => ();",
            "pub Top: () = Item* Junky* => ();\nJunky: () = { JUNK => (), JUNK JUNK => () };",
        );
        assert!(export(&src, "Top", None)
            .unwrap()
            .contains("\ntop: item*\n"));
    }

    #[test]
    fn refuses_macros_recursion_and_undefined_names() {
        let refusal = |from: &str, to: &str| export(&G.replace(from, to), "Top", None).unwrap_err();
        let names = |e: ExportError, rule: &str, says: &str| {
            assert_eq!(e.rule, rule, "{e}");
            assert!(e.message.contains(says), "{e}");
        };
        let line = "Line: () = LINE => ();";
        names(
            refusal(line, "Line: () = M<LINE> => ();\nM<T>: () = T => ();"),
            "M",
            "macro",
        );
        names(
            refusal(line, "Line: () = { LINE => (), Line LINE => () };"),
            "Line",
            "recursive",
        );
        names(
            refusal("WORD \"\\n\"", "NOWHERE \"\\n\""),
            "NOWHERE",
            "defined nowhere",
        );
        names(
            refusal("        // lark: WORD \"\\n\"\n", ""),
            "LINE",
            "no `// lark:`",
        );
    }
}
