//! The Lark exports, checked three ways:
//! - the committed `grammars/<format>.lark` equals what the build generates;
//! - llguidance (the engine behind OpenAI's Lark tools) loads it, accepts
//!   every well-formed fixture and rejects every syntax-error fixture;
//! - on random line soups, llguidance and the pest parser agree.
//!
//! Set `UPDATE_GRAMMARS=1` to rewrite stale committed grammars.

use std::path::Path;

use grammar_patch::formats::{self, Format};
use grammar_patch::lark;
use grammar_patch::unwrap::unwrap;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::ApproximateTokEnv;
use llguidance::{Matcher, ParserFactory};
use proptest::prelude::*;

use super::fixtures::cases;

fn supported() -> impl Iterator<Item = Format> {
    Format::ALL.iter().copied().filter(|f| f.is_supported())
}

#[test]
fn committed_lark_grammars_are_fresh() {
    for format in supported() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("grammars/{}.lark", format.name()));
        let generated = format.lark_grammar().unwrap();
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != generated {
            if std::env::var_os("UPDATE_GRAMMARS").is_some() {
                std::fs::write(&path, generated).unwrap();
            } else {
                panic!(
                    "{} is stale: run `UPDATE_GRAMMARS=1 cargo test` and commit it",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn exported_grammars_match_snapshots() {
    for format in supported() {
        insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(format!("lark_{}", format.name()), format.lark_grammar().unwrap());
        });
    }
}

/// A compiled grammar that can check whole strings.
struct Engine(Matcher);

impl Engine {
    fn new(lark: &str) -> Engine {
        let tok_env = ApproximateTokEnv::single_byte_env();
        let mut factory = ParserFactory::new_simple(&tok_env).unwrap();
        factory.quiet();
        let parser = factory.create_parser(TopLevelGrammar::from_lark(lark.to_string()));
        let matcher = Matcher::new(parser);
        assert!(
            matcher.get_error().is_none(),
            "llguidance rejects the grammar: {:?}",
            matcher.get_error()
        );
        Engine(matcher)
    }

    /// Whether the engine accepts `text` as a whole, the way a sampler would
    /// (one byte per token; a byte outside the mask stops it).
    fn accepts(&self, text: &str) -> bool {
        let mut m = self.0.deep_clone();
        let tokens: Vec<u32> = text.bytes().map(u32::from).collect();
        match m.try_consume_tokens(&tokens) {
            Ok(n) if n == tokens.len() => m.is_accepting().unwrap_or(false),
            _ => false,
        }
    }
}

/// Errors that mean "not in the language"; every other fixture is well-formed.
const SYNTAX_CODES: &[&str] = &[
    "syntax_error",
    "unknown_format",
    "missing_file_header",
    "invalid_hunk_header",
];

#[test]
fn llguidance_accepts_well_formed_and_rejects_malformed_fixtures() {
    for format in supported() {
        let engine = Engine::new(format.lark_grammar().unwrap());
        let mut wrong = vec![];
        for (name, dir) in cases(format) {
            let patch = std::fs::read_to_string(dir.join("patch")).unwrap();
            let unwrapped = unwrap(patch);
            let error = std::fs::read_to_string(dir.join("expect-error"))
                .ok()
                .map(|s| s.trim().to_string());
            let should_accept = match error.as_deref() {
                None => true,
                Some(code) if SYNTAX_CODES.contains(&code) => false,
                // Binary patches and copies are outside the language; a
                // mode-only change is inside it and refused later.
                Some("unsupported_git_patch_feature") => {
                    !name.contains("binary") && !name.contains("copy")
                }
                Some(_) => true,
            };
            if engine.accepts(unwrapped.body()) != should_accept {
                wrong.push(format!(
                    "{name}: llguidance {}",
                    if should_accept {
                        "rejected it"
                    } else {
                        "accepted it"
                    }
                ));
            }
        }
        assert!(wrong.is_empty(), "{format}:\n{}", wrong.join("\n"));
    }
}

/// Lines that udiff patches are made of, valid and not.
const UDIFF_LINES: &[&str] = &[
    "diff --git a/x b/x",
    "index 1111111..2222222 100644",
    "new file mode 100644",
    "rename from x",
    "rename to y",
    "copy from x",
    "--- a/x",
    "--- /dev/null",
    "+++ b/x",
    "+++ /dev/null",
    "@@ -1,2 +1,2 @@",
    "@@ -0,0 +1 @@ fn main",
    "@@ nonsense",
    " context",
    "-removed",
    "+added",
    "--- removed dashes",
    "+++ added pluses",
    "",
    "\\ No newline at end of file",
    "garbage",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// llguidance accepts exactly what the pest parser accepts without the
    /// rules the export omits.
    #[test]
    fn llguidance_agrees_with_pest_on_line_soups(picks in proptest::collection::vec(0..UDIFF_LINES.len(), 1..14)) {
        let text: String = picks.iter().map(|&i| format!("{}\n", UDIFF_LINES[i])).collect();
        let format = Format::Udiff;
        let omitted = lark::omitted_rules(format.pest_grammar().unwrap()).unwrap();
        let pest_accepts = formats::rules_used(format, &text)
            .is_some_and(|rules| !rules.iter().any(|r| omitted.contains(r)));
        thread_local! {
            static ENGINE: Engine = Engine::new(Format::Udiff.lark_grammar().unwrap());
        }
        let lark_accepts = ENGINE.with(|e| e.accepts(&text));
        prop_assert_eq!(pest_accepts, lark_accepts, "text:\n{}", text);
    }
}

#[test]
fn translator_refuses_what_lark_cannot_say() {
    let refused = |src: &str, rule: &str| {
        let err = lark::export(src, "start").expect_err(src);
        assert_eq!(err.rule, rule, "{err}");
    };
    refused("start = { PUSH(\"a\") ~ POP }", "start");
    refused("start = { !\"ab\" ~ \"x\" }", "start");
    refused("start = { &\"a\" ~ \"a\" }", "start");
    refused("WHITESPACE = _{ \" \" }\nstart = { \"a\" }", "WHITESPACE");
    refused("start = { a }\na = @{ \"x\" ~ a? }", "a");
    refused("start = { \"a\" ~ SOI }", "start");
    refused("start = { \"\" }", "start");
    // A waived lookahead is dropped; the negated-class idiom is translated.
    let ok = lark::export(
        "/// lark: lookahead only disambiguates: test\nstart = { !\"b\" ~ line+ }\nline = @{ (!\"\\n\" ~ ANY)* ~ \"\\n\" }",
        "start",
    )
    .unwrap();
    assert!(
        ok.ends_with("start: LINE+\nLINE: /[^\\n]/* \"\\n\"\n"),
        "{ok}"
    );
    // An omitted alternative disappears.
    let ok = lark::export(
        "start = { a | b }\na = { \"a\" }\n/// lark: omit\nb = { \"b\" }",
        "start",
    )
    .unwrap();
    assert!(ok.ends_with("start: a\na: \"a\"\n"), "{ok}");
}
