//! pest as vendored (`vendor/pest`, `vendor/README.md`): its three
//! changes against a naive model of what upstream pest computes, and its
//! diff file against its source.
//!
//! The changes: the rest of a line, `(!"\n" ~ ANY)*`, is found sixteen
//! bytes at a step; the line index behind `line_col` is made when a
//! position is first asked for; a literal is compared byte by byte. A
//! grammar of lines, each rule ending in the rest of its line, reads texts
//! of ASCII, multi-byte chars and newlines; each pair must end where the
//! naive scan says, and every `line_col` must be the one counted char by
//! char. A literal, tried at every char of such texts, must match exactly
//! where the text there starts with it.

use pest::Parser;
use pest_derive::Parser;
use proptest::prelude::*;

#[derive(Parser)]
#[grammar_inline = r#"
text = { SOI ~ (line ~ "\n")* ~ last ~ EOI }
line = @{ (!"\n" ~ ANY)* }
last = @{ (!"\n" ~ ANY)* }
upto = { SOI ~ before ~ mark ~ ANY* }
before = @{ (!"x" ~ ANY)* }
mark = { "x" }
"#]
struct Lines;

/// (line, column) of byte `pos` of `text`, both from 1, column in chars.
fn naive_line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, text[start..pos].chars().count() + 1)
}

/// Pieces a text is built of: long ASCII runs (past a 16-byte block),
/// chars of two, three and four bytes, and the bytes searched for.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c ]{0,40}",
        Just("é".to_string()),
        Just("你好".to_string()),
        Just("🎈".to_string()),
        Just("\n".to_string()),
        Just("x".to_string()),
    ]
}

fn text_of(pieces: &[String]) -> String {
    pieces.concat()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every line ends at its newline, and every position's line and
    /// column are the ones counted.
    #[test]
    fn lines_end_at_their_newline_and_positions_count_as_chars(
        pieces in proptest::collection::vec(piece(), 0..24)
    ) {
        let text = text_of(&pieces);
        let pairs = Lines::parse(Rule::text, &text).expect("every text is lines");
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let lines: Vec<_> = pairs
            .flatten()
            .filter(|p| matches!(p.as_rule(), Rule::line | Rule::last))
            .collect();
        prop_assert_eq!(lines.len(), starts.len());
        for (pair, &start) in lines.iter().zip(&starts) {
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            prop_assert_eq!((pair.as_span().start(), pair.as_span().end()), (start, end));
            prop_assert_eq!(pair.line_col(), naive_line_col(&text, start));
        }
    }

    /// `(!"x" ~ ANY)*` stops at the first `x`, or the text has none and
    /// the parse fails at its end, where `mark` was tried.
    #[test]
    fn the_rest_stops_at_the_first_byte_searched_for(
        pieces in proptest::collection::vec(piece(), 0..24)
    ) {
        let text = text_of(&pieces);
        match (Lines::parse(Rule::upto, &text), text.find('x')) {
            (Ok(pairs), Some(at)) => {
                let before = pairs.flatten().find(|p| p.as_rule() == Rule::before);
                prop_assert_eq!(before.map(|p| p.as_span().end()), Some(at));
            }
            (Err(e), None) => {
                let pest::error::InputLocation::Pos(at) = e.location else {
                    return Err(TestCaseError::fail("a position"));
                };
                prop_assert_eq!(at, text.len());
                let pest::error::LineColLocation::Pos(line_col) = e.line_col else {
                    return Err(TestCaseError::fail("a position"));
                };
                prop_assert_eq!(line_col, naive_line_col(&text, text.len()));
            }
            (result, at) => {
                return Err(TestCaseError::fail(format!("{result:?} with `x` at {at:?}")));
            }
        }
    }
}

/// Literals a grammar tries at a line's start, and near misses: prefixes
/// of one another, multi-byte chars, the empty literal.
fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c x\n-]{0,5}",
        Just("- ".to_string()),
        Just("---".to_string()),
        Just("é".to_string()),
        Just("你好x".to_string()),
        Just("🎈".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    /// A literal matches where the text, from the position it is tried
    /// at, starts with it, and the position moves past it; anywhere else
    /// it fails. Half the literals are taken from the text at the position
    /// (a match), cut to a few chars.
    #[test]
    fn a_literal_matches_where_the_text_starts_with_it(
        pieces in proptest::collection::vec(piece(), 0..12),
        lit in literal(),
        skip in 0usize..48,
        from_text in any::<bool>(),
        cut in 0usize..6,
    ) {
        let text = text_of(&pieces);
        let skip = skip.min(text.chars().count());
        let at = text.char_indices().nth(skip).map_or(text.len(), |(i, _)| i);
        let lit = match from_text {
            true => text[at..].chars().take(cut).collect(),
            false => lit,
        };
        let moved = std::cell::Cell::new(None);
        let result = pest::state::<(), _>(&text, |s| {
            s.skip(skip)
                .and_then(|s| s.match_string(&lit))
                .inspect(|s| moved.set(Some(s.position().pos())))
        });
        let want = text[at..].starts_with(lit.as_str());
        prop_assert_eq!(result.is_ok(), want, "{:?} at {} in {:?}", lit, at, text);
        if want {
            prop_assert_eq!(moved.get(), Some(at + lit.len()));
        }
    }
}

/// `vendor/pest.diff` is in `vendor/pest`: it reverses cleanly out of the
/// vendored source (`git apply -R --check`), so the change a reader
/// reviews is the code that runs; and it touches the files
/// `vendor/README.md` describes, no other. (That the rest is pest 2.9.6
/// as published, a reader checks against crates.io.)
#[test]
fn the_vendored_diff_is_the_vendored_change() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("git")
        .args(["apply", "-R", "--check", "vendor/pest.diff"])
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "vendor/pest.diff does not reverse out of vendor/pest: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // And the files it changes are those the README describes.
    let diff = std::fs::read_to_string(format!("{root}/vendor/pest.diff")).expect("the diff");
    let files: Vec<_> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("+++ b/vendor/pest/src/"))
        .collect();
    assert_eq!(
        files,
        [
            "iterators/line_index.rs",
            "iterators/pair.rs",
            "iterators/pairs.rs",
            "iterators/pairs_builder.rs",
            "iterators/queueable_token.rs",
            "iterators/tokens.rs",
            "parser_state.rs",
            "position.rs"
        ]
    );
}

/// No grammar of ours tags a node (`#tag = rule`), which the vendored
/// pest no longer keeps (`vendor/README.md`): outside string literals and
/// comments, no `#` stands in a `.pest` file.
#[test]
fn no_grammar_tags_a_node() {
    let dir = format!("{}/grammars", env!("CARGO_MANIFEST_DIR"));
    let mut grammars = 0;
    for entry in std::fs::read_dir(&dir).expect("grammars/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "pest") {
            continue;
        }
        grammars += 1;
        let text = std::fs::read_to_string(&path).expect("a grammar");
        for (n, line) in text.lines().enumerate() {
            assert_eq!(
                tag_in(line),
                None,
                "{}:{}: a node tag in {line:?}",
                path.display(),
                n + 1
            );
        }
    }
    assert!(grammars >= 4, "the pest grammars were found");
    // The scan finds a tag, and no `#` in a literal or a comment.
    assert_eq!(tag_in(r#"sum = { #lhs = number ~ "+" }"#), Some(8));
    assert_eq!(tag_in(r##"c = { "#" ~ "\"#" } // #x = y"##), None);
}

/// Where a `#` stands outside string literals and a `//` comment.
fn tag_in(line: &str) -> Option<usize> {
    let (mut quoted, mut escaped) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match (quoted, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') => quoted = false,
            (true, _) => {}
            (false, b'"') => quoted = true,
            (false, b'/') if bytes.get(i + 1) == Some(&b'/') => return None,
            (false, b'#') => return Some(i),
            (false, _) => {}
        }
    }
    None
}
