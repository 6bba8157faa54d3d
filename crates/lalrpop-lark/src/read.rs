//! Reading the subset of LALRPOP's syntax the grammars use: comments
//! stripped, tokens, the `extern` block's terminals with their `// lark:`
//! lines, and the nonterminals' alternatives (actions and types skipped).

use std::collections::BTreeMap;

use crate::{err, refusal, ExportError, Sym, Terminals, GRAMMAR};

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

pub(crate) fn is_terminal_name(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// Reads the `lark:` comments of the `extern` block's terminals and the
/// `lark-define:` helpers.
pub(crate) fn read_terminals(src: &str) -> Result<(Terminals, Vec<(String, String)>), ExportError> {
    let mut helpers = vec![];
    let mut terminals = BTreeMap::new();
    let mut pending: Option<Option<String>> = None;
    let mut in_enum = false;
    for line in src.lines() {
        let t = line.trim();
        if let Some(def) = t.strip_prefix("// lark-define:") {
            let (name, def) = def
                .split_once(':')
                .ok_or_else(|| refusal(t, "a helper is `NAME: DEFINITION`"))?;
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
            let def = pending
                .take()
                .ok_or_else(|| refusal(&name, "the terminal has no `// lark:` line above it"))?;
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
            other => err(GRAMMAR, format!("expected `{want}`, found {other:?}")),
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
                    return err(t, "a quoted terminal: name terminals")
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
                            None => return err(&name, "`<` unclosed"),
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

    /// Skips a balanced `{ … }` block (an `extern` block's body).
    fn skip_block(&mut self) -> Result<(), ExportError> {
        self.expect("{")?;
        let mut depth = 1;
        while depth > 0 {
            match self.next() {
                Some("{") => depth += 1,
                Some("}") => depth -= 1,
                None => return err(GRAMMAR, "an unclosed `extern` block"),
                _ => {}
            }
        }
        Ok(())
    }

    /// Skips a nonterminal's `: Type`, to the `=` at depth 0.
    fn skip_type(&mut self) {
        let mut depth = 0;
        while let Some(t) = self.next() {
            match t {
                "(" | "<" | "[" => depth += 1,
                t if t.ends_with('<') => depth += 1,
                ")" | ">" | "]" => depth -= 1,
                _ => {}
            }
            if depth == 0 && self.peek() == Some("=") {
                break;
            }
        }
    }

    /// The alternatives after `name =`: one and its `;`, or `{ …, … }`.
    fn alternatives(&mut self, name: &str) -> Result<Vec<Vec<Sym>>, ExportError> {
        let mut alts = vec![];
        if self.peek() != Some("{") {
            alts.push(self.alternative()?);
            self.expect(";")?;
            return Ok(alts);
        }
        self.next();
        while self.peek() != Some("}") {
            alts.push(self.alternative()?);
            if self.peek() == Some(",") {
                self.next();
            }
            if self.peek().is_none() {
                return err(name, "an unclosed `{`");
            }
        }
        self.next();
        if self.peek() == Some(";") {
            self.next();
        }
        Ok(alts)
    }
}

/// Reads the nonterminals after the `grammar;` line (macros are skipped).
pub(crate) fn read_rules(src: &str) -> Result<BTreeMap<String, Vec<Vec<Sym>>>, ExportError> {
    let toks = tokens(&strip_comments(src));
    let start = toks
        .windows(2)
        .position(|w| w[0] == "grammar" && w[1] == ";")
        .ok_or_else(|| refusal(GRAMMAR, "no `grammar;` line"))?;
    let mut r = Reader {
        toks: &toks,
        at: start + 2,
    };
    let mut rules = BTreeMap::new();
    while let Some(t) = r.peek() {
        match t {
            "extern" => {
                r.next();
                r.skip_block()?;
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
            r.skip_type();
        }
        r.expect("=")?;
        let alts = r.alternatives(&name)?;
        if !is_macro {
            rules.insert(name, alts);
        }
    }
    Ok(rules)
}
