//! Grammar soundness: whatever the exported Lark grammar lets a model write,
//! the parser accepts. Checked two ways, with llguidance (the engine behind
//! OpenAI's Lark tools) as the judge:
//!
//! - **sampling**: random walks through llguidance's token masks over a
//!   byte vocabulary, biased toward the grammar's corners (a forced keyword,
//!   an end, an optional part, a long line), as a constrained model would
//!   decode;
//! - **mutation**: every well-formed fixture, slipped the way models slip
//!   (a trailing space or tab, a blank line, a line dropped or doubled, a CR,
//!   leading whitespace, a tab after a keyword); every mutant the grammar
//!   accepts must parse.
//!
//! "Parse" means: no error the grammar could have decided. Errors that need
//! the tree or a relation between two places (`rename_path_mismatch`,
//! `duplicate_file_patch`, `path_escape`) are real reasons, not syntax.

use grammar_patch::error::Code;
use grammar_patch::formats::Format;
use grammar_patch::unwrap::unwrap;
use grammar_patch::{run_with, Mode, Options};

use super::fixtures::cases;
use super::grammar::Engine;

/// Errors a grammar can decide: none may follow from a text it accepts.
const SYNTAX: [Code; 7] = [
    Code::SyntaxError,
    Code::UnknownFormat,
    Code::MissingFileHeader,
    Code::InvalidHunkHeader,
    Code::InvalidHunkBody,
    Code::UnsupportedGitPatchFeature,
    Code::IdMismatch,
];

const FORMATS: &[Format] = Format::ALL;

/// The grammar-decidable errors the parser raises on `text`. ap's generic
/// grammar admits any 8-hex ID on every directive (a CFG cannot say "the
/// same ID as the header"): a text it accepts with two IDs is refused with
/// `id_mismatch` at the first drifted directive (and what follows from
/// it), and is left out; the ID-bound grammar has no such exception.
fn refusals(grammar: &str, format: Format, text: &str) -> Vec<String> {
    let outcome = run_with(
        text,
        Some(format),
        Mode::Lint,
        None,
        None,
        Options::default(),
    );
    // The generic grammar's samples with two IDs are outside the property.
    if grammar == "ap"
        && outcome
            .diagnostics
            .iter()
            .any(|d| d.code == Code::IdMismatch)
    {
        return vec![];
    }
    outcome
        .diagnostics
        .iter()
        .filter(|d| SYNTAX.contains(&d.code))
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect()
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, per_thousand: u64) -> bool {
        self.next() % 1000 < per_thousand
    }
}

/// Bytes a sampler may pick where the grammar allows free text: a small
/// alphabet, so that keywords, markers and repeats come up often.
const FREE: &[u8] = b"ab -+@/.\\\"\t:0129xAF_*#()";

/// Bytes that lead toward an end, in order of preference.
const FINISH: &[u8] = b"\n*EPNDS ";

/// Whole lines that may close what a walk has open, tried in order.
const CLOSINGS: &[&str] = &[">>>>>>> REPLACE\n", "=======\n>>>>>>> REPLACE\n"];

/// Whether `lines`, taken whole, leave the matcher accepting.
fn closes(m: &llguidance::Matcher, lines: &str) -> bool {
    let mut m = m.deep_clone();
    let tokens: Vec<u32> = lines.bytes().map(u32::from).collect();
    matches!(m.try_consume_tokens(&tokens), Ok(n) if n == tokens.len())
        && m.is_accepting().unwrap_or(false)
}

/// One random walk through the grammar: `None` if it did not reach an
/// accepting state within the length bound.
fn sample(engine: &Engine, rng: &mut Rng, max_len: usize) -> Option<String> {
    let mut m = engine.matcher();
    let mut out: Vec<u8> = vec![];
    // Per line: how eager to end it (long lines sometimes).
    let mut eol = 150;
    loop {
        let accepting = m.is_accepting().unwrap_or(false);
        if accepting && out.last() == Some(&b'\n') && (out.len() >= max_len || rng.chance(80)) {
            return String::from_utf8(out).ok();
        }
        if out.len() > max_len * 3 {
            return None;
        }
        // A grammar that can only end here stops the parser: a whole patch.
        if m.is_stopped() {
            return accepting.then(|| String::from_utf8(out).ok()).flatten();
        }
        let mask = m.compute_mask().ok()?;
        let allowed: Vec<u8> = (0u8..128)
            .filter(|&b| b == b'\n' || b == b'\t' || (0x20..0x7f).contains(&b))
            .filter(|&b| mask.is_allowed(b as u32))
            .collect();
        if allowed.is_empty() {
            return (accepting).then(|| String::from_utf8(out).ok()).flatten();
        }
        let free: Vec<u8> = FREE
            .iter()
            .copied()
            .filter(|b| allowed.contains(b))
            .collect();
        // Past the length bound, steer to an end: close the line, then
        // prefer the bytes that begin end markers (`*** End Patch`,
        // `ENDPATCH`, `ENDPATCHSET`, ap's `END`).
        let finish = out.len() > max_len;
        let at_line_start = out.last().is_none_or(|&b| b == b'\n');
        // Lines that close a SEARCH/REPLACE block, whose markers a walk
        // byte by byte almost never spells: taken whole where they end the
        // text in an accepting state.
        if finish && at_line_start {
            if let Some(lines) = CLOSINGS.iter().find(|lines| closes(&m, lines)) {
                let tokens: Vec<u32> = lines.bytes().map(u32::from).collect();
                m.try_consume_tokens(&tokens).ok()?;
                out.extend_from_slice(lines.as_bytes());
                continue;
            }
        }
        let steer = FINISH
            .iter()
            .filter(|&&b| !(at_line_start && b == b'\n'))
            .find(|b| allowed.contains(b))
            .copied();
        let b = if let (true, Some(b)) = (finish, steer) {
            b
        } else if allowed.contains(&b'\n') && rng.chance(eol) {
            b'\n'
        } else if allowed.len() <= 12 || free.is_empty() || rng.chance(200) {
            allowed[rng.below(allowed.len())]
        } else {
            free[rng.below(free.len())]
        };
        if b == b'\n' {
            eol = if rng.chance(100) { 5 } else { 150 };
        }
        m.consume_token(b as u32).ok()?;
        out.push(b);
    }
}

/// The grammars a constrained model decodes under, per format (ap: the
/// generic one and one bound to an ID).
fn grammars(format: Format) -> Vec<(String, String)> {
    let mut out = vec![(format.name().to_string(), format.lark_grammar().to_string())];
    if format == Format::Ap {
        out.push((
            "ap --id 3d7e1a90".into(),
            format
                .lark_grammar_for(Some("3d7e1a90"))
                .unwrap()
                .to_string(),
        ));
    }
    out
}

#[test]
fn every_sample_of_the_grammar_parses() {
    let per_grammar = std::env::var("GRAMMAR_PATCH_SAMPLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2000);
    let mut failures = vec![];
    for &format in FORMATS {
        for (name, lark) in grammars(format) {
            let engine = Engine::new(&lark);
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
            let (mut checked, mut incomplete) = (0, 0);
            for i in 0..per_grammar {
                let max_len = if i % 10 == 0 { 1200 } else { 300 };
                let Some(text) = sample(&engine, &mut rng, max_len) else {
                    incomplete += 1;
                    continue;
                };
                checked += 1;
                let errs = refusals(&name, format, &text);
                if !errs.is_empty() {
                    failures.push(format!("{name}: {}\n---\n{text}---", errs.join("; ")));
                }
            }
            eprintln!("{name}: {checked} samples checked, {incomplete} walks did not finish");
            assert!(checked * 2 > per_grammar, "{name}: too few walks finished");
        }
    }
    assert!(
        failures.is_empty(),
        "the grammar accepts what the parser refuses:\n{}",
        failures.join("\n\n")
    );
}

/// The patch ID of an ap patch's header.
fn ap_id(text: &str) -> Option<String> {
    text.lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .and_then(|l| l.split_once(' '))
        .map(|(id, _)| id.to_string())
        .filter(|id| id.len() == 8)
}

/// The slips models make, applied to one line of a patch.
fn mutants(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = vec![];
    for i in 0..lines.len() {
        let line = lines[i];
        let body = line.strip_suffix('\n').unwrap_or(line);
        let mut with = |new: String| {
            let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            v[i] = new;
            out.push(v.concat());
        };
        with(format!("{body} \n"));
        with(format!("{body}\t\n"));
        with(format!("{body}\r\n"));
        with(format!(" {body}\n"));
        with(format!("\t{body}\n"));
        with(format!("{body}\n\n"));
        with(format!("{body}\n{body}\n"));
        with(String::new());
        if let Some((kw, rest)) = body.split_once(' ') {
            with(format!("{kw}\t{rest}\n"));
            with(format!("{kw}  {rest}\n"));
        }
    }
    out
}

#[test]
fn every_mutant_of_a_fixture_the_grammar_accepts_parses() {
    let mut failures = vec![];
    let mut counts = vec![];
    for &format in FORMATS {
        for (name, lark) in grammars(format) {
            let engine = Engine::new(&lark);
            let (mut tried, mut accepted) = (0, 0);
            for (case, dir) in cases(format) {
                if dir.join("expect-error").exists() {
                    let e = std::fs::read_to_string(dir.join("expect-error")).unwrap();
                    if SYNTAX.iter().any(|c| c.as_str() == e.trim()) {
                        continue;
                    }
                }
                let patch =
                    grammar_patch::lossless::decode(std::fs::read(dir.join("patch")).unwrap());
                let mut body = unwrap(patch).body().to_string();
                // The ID-bound grammar: the fixture written with that ID.
                if let (Some(bound), Some(id)) = (name.strip_prefix("ap --id "), ap_id(&body)) {
                    body = body.replace(&id, bound);
                }
                for mutant in mutants(&body) {
                    tried += 1;
                    if !engine.accepts(&mutant) {
                        continue;
                    }
                    accepted += 1;
                    let errs = refusals(&name, format, &mutant);
                    if !errs.is_empty() {
                        failures.push(format!(
                            "{name} {case}: {}\n---\n{mutant}---",
                            errs.join("; ")
                        ));
                    }
                }
            }
            counts.push(format!(
                "{name}: {accepted} of {tried} mutants in the grammar"
            ));
        }
    }
    eprintln!("{}", counts.join("\n"));
    assert!(
        failures.is_empty(),
        "the grammar accepts what the parser refuses:\n{}",
        failures.join("\n\n")
    );
}
