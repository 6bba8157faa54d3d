//! Which rules the export has: the terminals (atomic rules and what they
//! reach), the rules omission leaves dead, and the rules the start rule
//! reaches through what is exported.

use std::collections::{BTreeMap, BTreeSet};

use pest_meta::ast::Expr;

use crate::emit::Cx;
use crate::load::{idents, Def};
use crate::ExportError;

/// Atomic rules and everything they reach (pest inherits atomicity downwards).
pub(crate) fn terminal_rules(defs: &BTreeMap<String, Def>) -> BTreeSet<String> {
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
pub(crate) fn dead_rules(
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
pub(crate) fn reachable(
    defs: &BTreeMap<String, Def>,
    dead: &BTreeSet<String>,
    start: &str,
) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load;

    fn names(set: impl IntoIterator<Item = String>) -> Vec<String> {
        set.into_iter().collect()
    }

    /// Atomicity is inherited: what an atomic rule reaches is a terminal.
    #[test]
    fn terminals_are_atomic_rules_and_what_they_reach() {
        let defs = load("s = { w ~ x }\nw = @{ l+ }\nl = { 'a'..'z' }\nx = { \"x\" }").unwrap();
        assert_eq!(names(terminal_rules(&defs)), ["l", "w"]);
    }

    /// An omitted rule is dead, and so is a rule every alternative of
    /// which needs a dead one; a choice with one live alternative lives.
    #[test]
    fn omission_kills_the_rules_that_cannot_do_without_it() {
        let defs = load(concat!(
            "s = { a | b }\n",
            "a = { p ~ \"a\" }\n",
            "b = { p | \"b\" }\n",
            "c = { a ~ a }\n",
            "/// lark: omit\np = { \"p\" }\n",
        ))
        .unwrap();
        let dead = dead_rules(&defs, &terminal_rules(&defs)).unwrap();
        assert_eq!(names(dead), ["a", "c", "p"]);
    }

    /// Breadth first from the start, without dead rules, and without what
    /// only a dropped lookahead names.
    #[test]
    fn reachable_rules_read_top_down() {
        let defs = load(concat!(
            "s = { a ~ b }\n",
            "a = { c }\n",
            "b = { \"b\" }\n",
            "c = { \"c\" }\n",
            "/// lark: lookahead only disambiguates: test\nd = { !e ~ \"d\" }\n",
            "e = { \"e\" }\n",
        ))
        .unwrap();
        let none = BTreeSet::new();
        assert_eq!(reachable(&defs, &none, "s"), ["s", "a", "b", "c"]);
        assert_eq!(reachable(&defs, &none, "d"), ["d"]);
        let dead: BTreeSet<String> = ["b".to_string()].into();
        assert_eq!(reachable(&defs, &dead, "s"), ["s", "a", "c"]);
    }
}
