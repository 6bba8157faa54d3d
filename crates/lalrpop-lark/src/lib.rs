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

use std::collections::{BTreeMap, BTreeSet};

/// Why a grammar cannot be exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError(pub String);

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(message: impl Into<String>) -> Result<T, ExportError> {
    Err(ExportError(message.into()))
}

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

/// The source without `//` comments (strings are kept whole).
fn strip_comments(src: &str) -> String {
    src.lines()
        .map(|line| {
            let mut in_str = false;
            let b = line.as_bytes();
            for i in 0..b.len() {
                match b[i] {
                    b'"' if i == 0 || b[i - 1] != b'\\' => in_str = !in_str,
                    b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return &line[..i],
                    _ => {}
                }
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Splits the grammar's source into tokens: names, strings, punctuation.
fn tokens(src: &str) -> Vec<String> {
    let mut out = vec![];
    let cs: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' || c == '@' {
            let s = i;
            i += 1;
            while i < cs.len()
                && (cs[i].is_alphanumeric()
                    || cs[i] == '_'
                    || cs[i] == ':' && cs.get(i + 1) == Some(&':'))
            {
                i += if cs[i] == ':' { 2 } else { 1 };
            }
            // `Name<` applies (or defines) a macro.
            let macro_ = cs.get(i) == Some(&'<') && !cs[s].is_ascii_digit();
            if macro_ {
                i += 1;
            }
            out.push(cs[s..i].iter().collect());
        } else if c == '"' {
            let s = i;
            i += 1;
            while i < cs.len() && cs[i] != '"' {
                i += if cs[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(cs[s..i.min(cs.len())].iter().collect());
        } else if c == '=' && cs.get(i + 1) == Some(&'>') {
            let q = cs.get(i + 2) == Some(&'?');
            out.push(if q { "=>?" } else { "=>" }.to_string());
            i += if q { 3 } else { 2 };
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

fn is_terminal_name(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// Reads the `lark:` comments of the `extern` block's terminals and the
/// `lark-define:` helpers.
fn read_terminals(src: &str) -> Result<(Terminals, Vec<(String, String)>), ExportError> {
    let mut helpers = vec![];
    let mut terminals = BTreeMap::new();
    let mut pending: Option<Option<String>> = None;
    let mut in_enum = false;
    for line in src.lines() {
        let t = line.trim();
        if let Some(def) = t.strip_prefix("// lark-define:") {
            let (name, def) = def
                .split_once(':')
                .ok_or_else(|| ExportError(format!("`{t}`: a helper is `NAME: DEFINITION`")))?;
            helpers.push((name.trim().to_string(), def.trim().to_string()));
            continue;
        }
        if t.starts_with("enum ") && t.ends_with('{') {
            in_enum = true;
            continue;
        }
        if !in_enum {
            continue;
        }
        if t == "}" {
            break;
        }
        if let Some(def) = t.strip_prefix("// lark:") {
            let def = def.trim();
            pending = Some((def != "omit").then(|| def.to_string()));
        } else if let Some((name, _)) = t.split_once("=>") {
            let name = name.trim().to_string();
            let def = pending.take().ok_or_else(|| {
                ExportError(format!("terminal `{name}` has no `// lark:` line above it"))
            })?;
            terminals.insert(name, def);
        }
    }
    Ok((terminals, helpers))
}

/// Parses the alternatives of one nonterminal's body.
struct Reader<'a> {
    toks: &'a [String],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.at).map(String::as_str)
    }

    fn next(&mut self) -> Option<&'a str> {
        let t = self.toks.get(self.at)?;
        self.at += 1;
        Some(t)
    }

    fn expect(&mut self, want: &str) -> Result<(), ExportError> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            other => err(format!("expected `{want}`, found {other:?}")),
        }
    }

    /// Skips an action: to the `,`, `;` or `}` that ends it at depth 0.
    fn skip_action(&mut self) {
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" => depth -= 1,
                "}" if depth == 0 => return,
                "}" => depth -= 1,
                "," | ";" if depth == 0 => return,
                _ => {}
            }
            self.at += 1;
        }
    }

    /// Symbols up to the end of an alternative (`=>`, `,`, `;`, `}`, `)`, `|`).
    fn symbols(&mut self) -> Result<Vec<Sym>, ExportError> {
        let mut out = vec![];
        loop {
            let sym = match self.peek() {
                None | Some("=>" | "=>?" | "," | ";" | "}" | ")" | "|" | ">") => return Ok(out),
                Some("<") => {
                    self.next();
                    // `<x:Sym>`, `<mut x:Sym>` or `<Sym>`.
                    let save = self.at;
                    if self.peek() == Some("mut") {
                        self.next();
                    }
                    let named = self.next().is_some() && self.peek() == Some(":");
                    if named {
                        self.next();
                    } else {
                        self.at = save;
                    }
                    let inner = self.symbols()?;
                    self.expect(">")?;
                    match <[Sym; 1]>::try_from(inner) {
                        Ok([s]) => s,
                        Err(v) => Sym::Group(vec![v]),
                    }
                }
                Some("(") => {
                    self.next();
                    let mut alts = vec![self.symbols()?];
                    while self.peek() == Some("|") {
                        self.next();
                        alts.push(self.symbols()?);
                    }
                    self.expect(")")?;
                    Sym::Group(alts)
                }
                Some(t) if t.starts_with('@') => {
                    self.next();
                    continue;
                }
                Some(t) if t.starts_with('"') => {
                    return err(format!("a quoted terminal {t}: name terminals"))
                }
                Some(t) if t.ends_with('<') => {
                    let name = self
                        .next()
                        .expect("peeked")
                        .trim_end_matches('<')
                        .to_string();
                    let mut depth = 1;
                    while depth > 0 {
                        match self.next() {
                            Some("<") => depth += 1,
                            Some(t) if t.ends_with('<') => depth += 1,
                            Some(">") => depth -= 1,
                            None => return err(format!("`{name}<`: unclosed")),
                            _ => {}
                        }
                    }
                    Sym::Macro(name)
                }
                Some(_) => Sym::Name(self.next().expect("peeked").to_string()),
            };
            let sym = match self.peek() {
                Some(q @ ("?" | "*" | "+")) => {
                    let q = q.chars().next().expect("one char");
                    self.next();
                    Sym::Repeat(Box::new(sym), q)
                }
                _ => sym,
            };
            out.push(sym);
        }
    }

    /// One alternative and its action.
    fn alternative(&mut self) -> Result<Vec<Sym>, ExportError> {
        let syms = self.symbols()?;
        if matches!(self.peek(), Some("=>" | "=>?")) {
            self.next();
            self.skip_action();
        }
        Ok(syms)
    }
}

/// Reads the nonterminals after the `grammar;` line (macros are skipped).
fn read_rules(src: &str) -> Result<BTreeMap<String, Vec<Vec<Sym>>>, ExportError> {
    let toks = tokens(&strip_comments(src));
    let start = toks
        .windows(2)
        .position(|w| w[0] == "grammar" && w[1] == ";")
        .ok_or_else(|| ExportError("no `grammar;` line".into()))?;
    let mut r = Reader {
        toks: &toks,
        at: start + 2,
    };
    let mut rules = BTreeMap::new();
    while let Some(t) = r.peek() {
        match t {
            "extern" => {
                // Skip the balanced block.
                r.next();
                r.expect("{")?;
                let mut depth = 1;
                while depth > 0 {
                    match r.next() {
                        Some("{") => depth += 1,
                        Some("}") => depth -= 1,
                        None => return err("an unclosed `extern` block"),
                        _ => {}
                    }
                }
                continue;
            }
            "pub" => {
                r.next();
                continue;
            }
            "use" => {
                while r.next().is_some_and(|t| t != ";") {}
                continue;
            }
            _ => {}
        }
        let name = r.next().expect("peeked").to_string();
        let is_macro = name.ends_with('<');
        if is_macro {
            while r.next().is_some_and(|t| t != ">") {}
        }
        if r.peek() == Some(":") {
            // The type: to the `=` at depth 0.
            let mut depth = 0;
            while let Some(t) = r.next() {
                match t {
                    "(" | "<" | "[" => depth += 1,
                    t if t.ends_with('<') => depth += 1,
                    ")" | ">" | "]" => depth -= 1,
                    _ => {}
                }
                if depth == 0 && r.peek() == Some("=") {
                    break;
                }
            }
        }
        r.expect("=")?;
        let mut alts = vec![];
        if r.peek() == Some("{") {
            r.next();
            while r.peek() != Some("}") {
                alts.push(r.alternative()?);
                if r.peek() == Some(",") {
                    r.next();
                }
                if r.peek().is_none() {
                    return err(format!("`{name}`: an unclosed `{{`"));
                }
            }
            r.next();
            if r.peek() == Some(";") {
                r.next();
            }
        } else {
            alts.push(r.alternative()?);
            r.expect(";")?;
        }
        if !is_macro {
            rules.insert(name, alts);
        }
    }
    Ok(rules)
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
                Sym::Macro(m) => return err(format!("the macro `{m}<…>` cannot be exported")),
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
                return err(format!(
                    "`{n}` is recursive: say its repetition with a quantifier"
                ));
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
        return err(format!("no nonterminal `{start}`"));
    }
    g.check_recursion(start)?;
    for (name, def) in &g.terminals {
        if def.is_none() {
            continue;
        }
        if g.helpers.iter().any(|(h, _)| h == name) {
            return err(format!("`{name}` is both a terminal and a helper"));
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
            return err(format!(
                "`{n}`: every alternative needs an omitted terminal"
            ));
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
                return err(format!(
                    "`{word}` is named in a definition but defined nowhere"
                ));
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
        let refusal =
            |from: &str, to: &str| export(&G.replace(from, to), "Top", None).unwrap_err().0;
        let line = "Line: () = LINE => ();";
        assert!(
            refusal(line, "Line: () = M<LINE> => ();\nM<T>: () = T => ();")
                .contains("macro `M<…>`")
        );
        assert!(refusal(line, "Line: () = { LINE => (), Line LINE => () };").contains("recursive"));
        assert!(refusal("WORD \"\\n\"", "NOWHERE \"\\n\"").contains("NOWHERE"));
        assert!(refusal("        // lark: WORD \"\\n\"\n", "").contains("no `// lark:`"));
    }
}
