//! Reading a pest grammar: its rules with pest_meta, each rule's `lark:`
//! directives from its doc comment, and the `lark: inline` rules written
//! out where they are used.

use std::collections::BTreeMap;

use pest_meta::ast::{Expr, RuleType};
use pest_meta::parser::{self, Rule as MetaRule};

use crate::{err, ExportError};

pub(crate) const OMIT: &str = "lark: omit";

pub(crate) const DROP_LOOKAHEAD: &str = "lark: lookahead only disambiguates";

pub(crate) const INLINE: &str = "lark: inline";

pub(crate) struct Def {
    pub(crate) expr: Expr,
    pub(crate) atomic: bool,
    pub(crate) inline: bool,
    pub(crate) omit: bool,
    pub(crate) drop_lookahead: bool,
}

/// Parses the grammar with pest_meta, keeping each rule's doc comment.
pub(crate) fn load(pest_src: &str) -> Result<BTreeMap<String, Def>, ExportError> {
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
pub(crate) fn inline(
    mut defs: BTreeMap<String, Def>,
) -> Result<BTreeMap<String, Def>, ExportError> {
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

pub(crate) fn idents(expr: &Expr, out: &mut Vec<String>) {
    for e in expr.iter_top_down() {
        if let Expr::Ident(name) = e {
            out.push(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directive is a doc line that starts with it; an inlined rule is
    /// no terminal of its own.
    #[test]
    fn each_rule_keeps_the_directives_of_its_doc_comment() {
        let defs = load(concat!(
            "/// lark: omit\nprobe = { \"p\" }\n",
            "/// Plain words first.\n/// lark: lookahead only disambiguates: why\nguarded = { !\"x\" ~ \"y\" }\n",
            "/// lark: inline\nbody = @{ \"b\" }\n",
            "/// mentions lark: omit mid-line\nword = @{ \"w\" }\n",
        ))
        .unwrap();
        let flags = |n: &str| {
            let d = &defs[n];
            (d.omit, d.drop_lookahead, d.inline, d.atomic)
        };
        assert_eq!(flags("probe"), (true, false, false, false));
        assert_eq!(flags("guarded"), (false, true, false, false));
        assert_eq!(flags("body"), (false, false, true, false));
        assert_eq!(flags("word"), (false, false, false, true));
    }

    #[test]
    fn an_inlined_rule_is_written_where_it_is_used_and_gone() {
        let defs =
            inline(load("s = { b ~ b }\n/// lark: inline\nb = @{ \"b\" }").unwrap()).unwrap();
        assert!(!defs.contains_key("b"));
        let mut used = vec![];
        idents(&defs["s"].expr, &mut used);
        assert!(used.is_empty(), "{used:?}");
        let e = inline(
            load("s = { a }\n/// lark: inline\na = @{ b }\n/// lark: inline\nb = @{ \"x\" }")
                .unwrap(),
        )
        .map(|_| ())
        .unwrap_err();
        assert_eq!(
            (e.rule.as_str(), e.message.contains("inlined `b`")),
            ("a", true),
            "{e}"
        );
    }
}
