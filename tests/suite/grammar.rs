//! The Lark exports, checked three ways:
//! - the committed `grammars/<format>.lark` equals what the build generates;
//! - llguidance (the engine behind OpenAI's Lark tools) loads it, accepts
//!   every well-formed fixture and rejects every syntax-error fixture;
//! - on random line soups, llguidance and the pest parser agree.
//!
//! Set `UPDATE_GRAMMARS=1` to rewrite stale committed grammars.

use std::path::Path;

use grammar_patch::formats::{self, Format};
use grammar_patch::unwrap::unwrap;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::ApproximateTokEnv;
use llguidance::{Matcher, ParserFactory};
use pest_lark as lark;
use proptest::prelude::*;

use super::fixtures::cases;

fn supported() -> impl Iterator<Item = Format> {
    Format::ALL.iter().copied()
}

/// The formats whose fixtures the generic grammar checks alone (ap has its
/// own test, for its two exports).
fn single_grammar() -> impl Iterator<Item = Format> {
    supported().filter(|&f| f != Format::Ap)
}

#[test]
fn committed_lark_grammars_are_fresh() {
    for format in supported() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("grammars/{}.lark", format.name()));
        let generated = format.lark_grammar();
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
            insta::assert_snapshot!(format!("lark_{}", format.name()), format.lark_grammar());
        });
    }
}

/// A compiled grammar that can check whole strings.
pub struct Engine(Matcher);

impl Engine {
    pub fn new(lark: &str) -> Engine {
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

    /// A fresh matcher at the start of the grammar, for a sampler.
    pub fn matcher(&self) -> Matcher {
        self.0.deep_clone()
    }

    /// Whether the engine accepts `text` as a whole, the way a sampler would
    /// (one byte per token; a byte outside the mask stops it).
    pub fn accepts(&self, text: &str) -> bool {
        let mut m = self.0.deep_clone();
        let tokens: Vec<u32> = text.bytes().map(u32::from).collect();
        match m.try_consume_tokens(&tokens) {
            Ok(n) if n == tokens.len() => m.is_accepting().unwrap_or(false),
            _ => false,
        }
    }
}

/// Whether `text` is in the format's language: pest parses it without the
/// rules the Lark export omits (those exist only for error codes); for ap,
/// the LR grammar's `Patch` takes it.
fn in_language(format: Format, text: &str) -> bool {
    if format == Format::Ap {
        return formats::ap_in_export_language(text);
    }
    let omitted = lark::omitted_rules(format.pest_grammar().unwrap()).unwrap();
    formats::rules_used(format, text)
        .is_some_and(|rules| !rules.iter().any(|r| omitted.contains(r)))
}

/// llguidance accepts every well-formed fixture (except those marked
/// `outside-grammar`, which it must reject), rejects every syntax-error
/// fixture, and on the rest (semantic errors, binary patches, headerless
/// hunks) agrees with the pest parser.
#[test]
fn llguidance_accepts_well_formed_and_rejects_malformed_fixtures() {
    for format in supported() {
        let single = single_grammar().any(|f| f == format);
        let engine = Engine::new(format.lark_grammar());
        let mut wrong = vec![];
        for (name, dir) in cases(format) {
            let patch = grammar_patch::lossless::decode(std::fs::read(dir.join("patch")).unwrap());
            let unwrapped = unwrap(patch);
            let error = std::fs::read_to_string(dir.join("expect-error"))
                .ok()
                .map(|s| s.trim().to_string());
            let should_accept = in_language(format, unwrapped.body());
            // A patch the parser accepts leniently (with a warning, or
            // layout the export leaves out) says why in `outside-grammar`.
            let lenient = dir.join("outside-grammar").exists();
            // A syntax error the grammar cannot express (an empty value
            // where one is required) says why in `inside-grammar`.
            let semantic = dir.join("inside-grammar").exists();
            match error.as_deref() {
                None if !should_accept && !lenient => {
                    wrong.push(format!("{name}: a well-formed fixture outside the grammar"))
                }
                None if should_accept && lenient => {
                    wrong.push(format!("{name}: marked outside-grammar, but inside it"))
                }
                Some("syntax_error") if should_accept && semantic => {}
                Some(_) if semantic => wrong.push(format!(
                    "{name}: marked inside-grammar, but not a syntax error in it"
                )),
                Some("syntax_error" | "unknown_format") if should_accept => {
                    wrong.push(format!("{name}: a syntax-error fixture inside the grammar"))
                }
                _ => {}
            }
            if single && engine.accepts(unwrapped.body()) != should_accept {
                let what = if should_accept {
                    "rejected it"
                } else {
                    "accepted it"
                };
                wrong.push(format!("{name}: llguidance {what}"));
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

/// Lines codex patches are made of, valid and not, for the middle of a patch.
const CODEX_LINES: &[&str] = &[
    "*** Add File: a.txt",
    "*** Delete File: a.txt",
    "*** Update File: a.txt",
    "  *** Update File: b.txt",
    "*** Move to: b.txt",
    "@@",
    "@@ fn main() {",
    "@@ :3",
    "@@ :3x",
    "*** End of File",
    " context",
    " *** End Patch",
    "-removed",
    "+added",
    "",
    "*** End Patch",
    "*** Frobnicate File: x",
    "garbage",
];

/// Lines RepoPatch patches are made of, valid and not.
const REPOPATCH_LINES: &[&str] = &[
    "PATCH a.txt",
    "PATCH  ",
    "ENDPATCH",
    "ENDPATCHSET",
    "REPLACE",
    "REPLACE 3-4",
    "INSERT BEFORE",
    "INSERT AFTER ",
    "DELETE",
    "CREATEFILE",
    "DELETEFILE",
    "- old",
    "- ",
    "-",
    "-old",
    ". new",
    ". ",
    ".",
    "---",
    "--- ",
    "",
    "  ",
    "# comment",
    "```",
];

/// A well-formed RepoPatch operation, as lines.
fn repopatch_op() -> impl Strategy<Value = Vec<String>> {
    let block = |prefix: &'static str, min: usize| {
        proptest::collection::vec(
            prop_oneof![Just(""), Just("x"), Just("- y"), Just(". z")],
            min..4,
        )
        .prop_map(move |ls| {
            ls.iter()
                .map(|l| format!("{prefix}{l}"))
                .collect::<Vec<_>>()
        })
    };
    (0..6usize, block("- ", 1), block(". ", 0)).prop_map(|(kind, old, new)| {
        let mut lines = vec![];
        match kind {
            0 => lines.push("CREATEFILE".to_string()),
            1 => lines.push("DELETEFILE".to_string()),
            _ => {
                let kw = ["REPLACE", "INSERT BEFORE", "INSERT AFTER", "DELETE"][kind - 2];
                lines.push(kw.to_string());
                lines.extend(old);
                if kw != "DELETE" {
                    lines.push("---".to_string());
                }
            }
        }
        if kind != 1 && kind != 5 {
            lines.extend(new);
        }
        lines
    })
}

/// Whether llguidance and pest (without the omitted rules) agree on `text`.
fn agree(format: Format, engine: &Engine, text: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        in_language(format, text),
        engine.accepts(text),
        "{} text:\n{}",
        format,
        text
    );
    Ok(())
}

/// The ID on an ap header line, if `text` has one.
fn ap_header_id(text: &str) -> Option<&str> {
    text.lines()
        .find(|l| l.split_whitespace().nth(1) == Some("AP"))
        .and_then(|l| l.get(..8))
}

/// Whether a line starts like a directive of some patch ID (8 hex digits
/// and a space), which the generic ap export allows only for directives.
fn hex_led(line: &str) -> bool {
    line.len() > 8
        && line.as_bytes()[..8].iter().all(u8::is_ascii_hexdigit)
        && line.as_bytes()[8] == b' '
}

/// ap, both exports: the one specialised to a fixture's own ID agrees
/// with the parser's `Patch` exactly; the generic one also refuses any other line that
/// starts with 8 hex digits and a space (it cannot tell IDs apart).
#[test]
fn llguidance_checks_ap_fixtures_with_generic_and_specialised_grammars() {
    let generic = Engine::new(Format::Ap.lark_grammar());
    let mut wrong = vec![];
    let mut specialised = 0;
    for (name, dir) in cases(Format::Ap) {
        let unwrapped = unwrap(grammar_patch::lossless::decode(
            std::fs::read(dir.join("patch")).unwrap(),
        ));
        let body = unwrapped.body();
        let should = in_language(Format::Ap, body);
        let id = ap_header_id(body);
        // The generic grammar reads every hex-led line as a directive of
        // the patch, whatever its ID: what pest says of the text with those
        // IDs made the header's.
        let generic_should = match id {
            Some(id) => {
                let same: String = body
                    .lines()
                    .map(|l| {
                        if hex_led(l) {
                            format!("{id}{}\n", &l[8..])
                        } else {
                            format!("{l}\n")
                        }
                    })
                    .collect();
                in_language(Format::Ap, &same)
            }
            None => should,
        };
        if generic.accepts(body) != generic_should {
            wrong.push(format!(
                "{name}: the generic grammar disagrees (expected {generic_should})"
            ));
        }
        if let Some(id) = id.filter(|id| id.bytes().all(|b| b.is_ascii_hexdigit())) {
            let lark = Format::Ap.lark_grammar_for(Some(id)).unwrap();
            if Engine::new(&lark).accepts(body) != should {
                wrong.push(format!(
                    "{name}: the grammar for ID {id} disagrees (expected {should})"
                ));
            }
            specialised += 1;
        }
    }
    assert!(
        specialised > 100,
        "only {specialised} fixtures checked with their own ID"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// ap's lexer gives a line the class whose Lark definition (the export's,
/// bound to the patch's ID) matches it, and a line no exported terminal
/// matches a class the export leaves out. Checked on every line of every
/// ap fixture and on random lines made of the bytes ap's classes turn on.
#[test]
fn the_lexer_classes_lines_as_the_export_defines_them() {
    let id = "a1b2c3d4";
    let export = Format::Ap.lark_grammar_for(Some(id)).unwrap();
    let defs: String = export
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|l| format!("{l}\n"))
        .collect();
    let names: Vec<&str> = defs
        .lines()
        .map(|l| l.split(':').next().unwrap())
        .filter(|n| {
            n.ends_with("_LINE")
                || n.ends_with("_DIRECTIVE")
                || n.ends_with("_KEY")
                || *n == "CREATE_ACTION"
        })
        .collect();
    let engines: Vec<(&str, Engine)> = names
        .iter()
        .map(|n| (*n, Engine::new(&format!("start: {n}\n{defs}"))))
        .collect();
    let mut lines: Vec<String> = AP_LINES
        .iter()
        .map(|l| l.replacen("I ", &format!("{id} "), 1))
        .collect();
    for (_, dir) in cases(Format::Ap) {
        let text = String::from_utf8_lossy(&std::fs::read(dir.join("patch")).unwrap()).into_owned();
        lines.extend(text.lines().map(str::to_string));
    }
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let alphabet: &[&str] = &[
        " ",
        "\t",
        "#",
        "^",
        "a",
        "1",
        "b2c3d4",
        "a1b2c3d4",
        "x",
        "FILE",
        "LF",
        "CREATE",
        "content",
        "scope_end",
        "7",
        "END",
        "AP",
        "3.2",
    ];
    for _ in 0..3000 {
        let mut line = String::new();
        for _ in 0..(rng % 6) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            line.push_str(alphabet[(rng % alphabet.len() as u64) as usize]);
        }
        lines.push(line);
    }
    let mut wrong = vec![];
    for line in lines {
        let class = formats::ap_line_terminals(&format!("{id} AP 3.2\n{line}\n"))[1];
        let matched: Vec<&str> = engines
            .iter()
            .filter(|(_, e)| e.accepts(&format!("{line}\n")))
            .map(|(n, _)| *n)
            .collect();
        let twin = |n: &str| n.replace("CREATE_ACTION", "CREATE_DIRECTIVE");
        let agrees = match class {
            Some(c) if names.contains(&c) => {
                matched.iter().all(|m| twin(m) == twin(c)) && !matched.is_empty()
            }
            _ => matched.is_empty(),
        };
        if !agrees {
            wrong.push(format!("{line:?}: lexer {class:?}, export {matched:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Lines ap patches are made of, valid and not; `I` is the patch ID.
const AP_LINES: &[&str] = &[
    "I FILE",
    "I FILE CRLF",
    "I FILE CRLF a.txt",
    "I FILE a.txt",
    "a.txt",
    "I REPLACE",
    "I INSERT_AFTER",
    "I DELETE",
    "I CREATE",
    "I RECREATE",
    "I RENAME",
    "I snippet",
    "I snippet_tail",
    "I anchor",
    "I content",
    "I include_leading_blank_lines 2",
    "I scope_end",
    "I replace",
    "I END",
    "bb000005 REPLACE",
    "    x = 1",
    "",
    "# comment",
    "^",
];

thread_local! {
    static AP: Engine = Engine::new(&Format::Ap.lark_grammar_for(Some("a1b2c3d4")).unwrap());
    static UDIFF: Engine = Engine::new(Format::Udiff.lark_grammar());
    static CODEX: Engine = Engine::new(Format::Codex.lark_grammar());
    static REPOPATCH: Engine = Engine::new(Format::Repopatch.lark_grammar());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// llguidance accepts exactly what the pest parser accepts without the
    /// rules the export omits.
    #[test]
    fn llguidance_agrees_with_pest_on_udiff_line_soups(picks in proptest::collection::vec(0..UDIFF_LINES.len(), 1..14)) {
        let text: String = picks.iter().map(|&i| format!("{}\n", UDIFF_LINES[i])).collect();
        UDIFF.with(|e| agree(Format::Udiff, e, &text))?;
    }

    /// The same for codex, inside (mostly) well-formed Begin/End lines.
    #[test]
    fn llguidance_agrees_with_pest_on_codex_line_soups(
        heredoc in any::<bool>(),
        begin in prop_oneof![Just("*** Begin Patch"), Just("  *** Begin Patch "), Just("*** Begin")],
        picks in proptest::collection::vec(0..CODEX_LINES.len(), 0..12),
        end in prop_oneof![Just("*** End Patch\n"), Just(" *** End Patch \n"), Just("")],
    ) {
        let middle: String = picks.iter().map(|&i| format!("{}\n", CODEX_LINES[i])).collect();
        let (open, close) = if heredoc { ("apply_patch <<'EOF'\n", "EOF\n") } else { ("", "") };
        let text = format!("{open}{begin}\n{middle}{end}{close}");
        CODEX.with(|e| agree(Format::Codex, e, &text))?;
    }

    /// The same for RepoPatch line soups inside `PATCHSET`.
    #[test]
    fn llguidance_agrees_with_pest_on_repopatch_line_soups(
        picks in proptest::collection::vec(0..REPOPATCH_LINES.len(), 0..14),
        close in any::<bool>(),
    ) {
        let middle: String = picks.iter().map(|&i| format!("{}\n", REPOPATCH_LINES[i])).collect();
        let text = format!("PATCHSET\n{middle}{}", if close { "ENDPATCHSET\n" } else { "" });
        REPOPATCH.with(|e| agree(Format::Repopatch, e, &text))?;
    }

    /// The same for ap line soups after a header, with the grammar
    /// specialised to the patch's ID.
    #[test]
    fn llguidance_agrees_with_the_lr_grammar_on_ap_line_soups(
        header in prop_oneof![Just("a1b2c3d4 AP 3.2\n"), Just("# plan\na1b2c3d4 AP 3.1\n"), Just("a1b2c3d4 AP 9.9\n"), Just("")],
        picks in proptest::collection::vec(0..AP_LINES.len(), 0..14),
    ) {
        let middle: String = picks.iter().map(|&i| format!("{}\n", AP_LINES[i].replacen("I ", "a1b2c3d4 ", 1))).collect();
        let text = format!("{header}{middle}");
        AP.with(|e| agree(Format::Ap, e, &text))?;
    }

    /// And on well-formed patches with one line inserted, replaced or
    /// removed, where the two are most likely to part.
    #[test]
    fn llguidance_agrees_with_pest_on_mutated_repopatch(
        ops in proptest::collection::vec(proptest::collection::vec(repopatch_op(), 1..3), 1..3),
        mutation in (0..3usize, any::<prop::sample::Index>(), 0..REPOPATCH_LINES.len()),
    ) {
        let mut lines = vec!["PATCHSET".to_string()];
        for file in ops {
            lines.push("PATCH f.txt".to_string());
            lines.extend(file.into_iter().flatten());
            lines.push("ENDPATCH".to_string());
        }
        lines.push("ENDPATCHSET".to_string());
        let (kind, at, pick) = mutation;
        let at = at.index(lines.len());
        let line = REPOPATCH_LINES[pick].to_string();
        match kind {
            0 => lines.insert(at, line),
            1 => lines[at] = line,
            _ => { lines.remove(at); }
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        REPOPATCH.with(|e| agree(Format::Repopatch, e, &text))?;
    }
}

/// A patch derived from Codex's own grammar: random choices at each of its
/// productions (file operations, moves, context headers, change lines, End
/// of File, the optional final newline).
fn codex_grammar_patch() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        "@@".prop_map(String::from),
        "@@ [a-z :(){}0-9]{1,10}".prop_map(|s| s),
        "[ +-][a-z ]{0,8}".prop_map(|s| s),
    ];
    let update = (
        any::<bool>(),
        proptest::collection::vec(line, 0..6),
        any::<bool>(),
    )
        .prop_map(|(mv, lines, eof)| {
            let mut s = String::from("*** Update File: src/PATH.rs\n");
            if mv {
                s.push_str("*** Move to: moved/PATH.rs\n");
            }
            for l in &lines {
                s.push_str(l);
                s.push('\n');
            }
            if eof && !lines.is_empty() {
                s.push_str("*** End of File\n");
            }
            s
        });
    let add = proptest::collection::vec("[a-z ]{0,8}", 1..4).prop_map(|lines| {
        let body: String = lines.iter().map(|l| format!("+{l}\n")).collect();
        format!("*** Add File: new/PATH.txt\n{body}")
    });
    let delete = Just("*** Delete File: old/PATH.txt\n".to_string());
    let op = prop_oneof![update, add, delete];
    (proptest::collection::vec(op, 1..4), any::<bool>()).prop_map(|(ops, lf)| {
        // Distinct paths: two operations on one path are a separate question.
        let ops: String = ops
            .iter()
            .enumerate()
            .map(|(i, op)| op.replace("PATH", &format!("f{i}")))
            .collect();
        format!(
            "*** Begin Patch\n{ops}*** End Patch{}",
            if lf { "\n" } else { "" }
        )
    })
}

/// An update without change lines (none at all, or only `@@` headers):
/// Codex's grammar allows it, Codex's parser refuses it ("Update hunk does
/// not contain any lines"), and so do we. A move alone is a rename.
fn has_empty_update(text: &str) -> bool {
    let mut in_update = false;
    let (mut moved, mut changed) = (false, false);
    for line in text.lines().chain(std::iter::once("*** End Patch")) {
        if line.starts_with("*** End of File") {
            continue;
        } else if line.starts_with("*** Move to: ") {
            moved = true;
        } else if line.starts_with("*** ") {
            if in_update && !changed && (!moved || text.contains("\n@@")) {
                return true;
            }
            in_update = line.starts_with("*** Update File: ");
            (moved, changed) = (false, false);
        } else if in_update && !line.starts_with("@@") {
            changed = true;
        }
    }
    false
}

thread_local! {
    static CODEX_UPSTREAM: Engine = Engine::new(include_str!("../data/codex_apply_patch.lark"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every patch Codex's own Lark grammar accepts, and Codex can apply,
    /// our codex parser accepts too.
    #[test]
    fn codex_parser_accepts_what_codex_grammar_accepts(text in codex_grammar_patch()) {
        prop_assume!(CODEX_UPSTREAM.with(|e| e.accepts(&text)));
        prop_assume!(!has_empty_update(&text));
        let outcome = grammar_patch::run(text.as_str(), Some(Format::Codex), grammar_patch::Mode::Lint, None, None);
        let errors: Vec<_> = outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.message.clone()).collect();
        prop_assert!(errors.is_empty(), "rejected: {:?}\n{}", errors, text);
    }
}

/// pest parses without its stack guard (Cargo.toml), which is safe only
/// while no rule can reach itself: a recursive rule nests as deep as its
/// input does, and a deep enough input would overflow the stack. The
/// check itself is checked on grammars that do recurse (crates/pest-lark).
#[test]
fn no_rule_of_any_grammar_is_recursive() {
    // ap's grammar is LR: its parser keeps its own stack, and its export
    // refuses recursion (`lalrpop_lark`).
    for format in supported().filter(|&f| f != Format::Ap) {
        assert_eq!(
            lark::recursive_rules(format.pest_grammar().unwrap()).unwrap(),
            Vec::<String>::new(),
            "{format}"
        );
    }
}

/// `grammar ap --id HEX8` fills the ID into an export made at build time;
/// it must be what the exporter makes for that ID.
#[test]
fn the_id_bound_ap_export_is_the_exporters() {
    for id in ["3d7e1a90", "00000000", "ffffffff", "DEADbeef"] {
        assert_eq!(
            *Format::Ap.lark_grammar_for(Some(id)).unwrap(),
            lalrpop_lark::export(Format::Ap.lalrpop_grammar().unwrap(), "Patch", Some(id)).unwrap(),
            "{id}"
        );
    }
    assert!(Format::Ap.lark_grammar_for(Some("@PATCH_ID@")).is_err());
}
