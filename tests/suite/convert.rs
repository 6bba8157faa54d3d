//! `convert`, as a property over every fixture: for every success fixture
//! of every format and every format to print in, the printed patch applied
//! to the before-tree gives the after-tree, and llguidance (the format's
//! Lark export) and the parser both accept it; or the conversion is
//! refused, saying what the format cannot state.

use std::collections::BTreeMap;

use grammar_patch::error::Code;
use grammar_patch::formats::Format;
use grammar_patch::{MemTree, Request};

use super::grammar::Engine;
use super::support::Snapshot;

#[test]
fn every_success_fixture_converts_to_every_format_or_says_why_not() {
    let engines: Vec<(Format, Engine)> = Format::ALL
        .iter()
        .map(|&f| (f, Engine::new(f.lark_grammar())))
        .collect();
    let mut table: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
    for &from in Format::ALL {
        for (name, before, after, patch) in super::fixtures::plain_successes(from) {
            for (to, engine) in &engines {
                let mut tree = before.to_mem(&BTreeMap::new());
                let request = Request::new(patch.as_str())
                    .format(from.name())
                    .tolerant(true)
                    .convert(*to);
                let outcome = request.run_in(&mut tree).unwrap();
                let cell = table.entry((from.name(), to.name())).or_default();
                if !outcome.ok() {
                    let e = &outcome.diagnostics[0];
                    // The source's own refusals are the fixtures' concern
                    // (a strict twin of a tolerant case); a conversion's is this.
                    if e.message.starts_with("cannot convert") {
                        assert_eq!(e.code, Code::UnsupportedGitPatchFeature);
                        if std::env::var_os("GP_CONVERT_WHY").is_some() {
                            eprintln!("{from} {name} → {to}: {}", e.message);
                        }
                        cell.1 += 1;
                    }
                    continue;
                }
                assert_eq!(
                    Snapshot::from_mem(&tree),
                    before,
                    "{from} {name} → {to}: convert wrote"
                );
                let printed = outcome.converted.clone().expect("a converted patch");
                if printed.is_empty() {
                    continue; // nothing to print: the patch changes nothing
                }
                let mut applied: MemTree = before.to_mem(&BTreeMap::new());
                let again = Request::new(printed.as_str())
                    .format(to.name())
                    .run_in(&mut applied)
                    .unwrap();
                assert!(
                    again.ok(),
                    "{from} {name} → {to}:\n{printed}\n{:?}",
                    again.diagnostics
                );
                // An unchanged file the source patch recreates is its own case.
                if Snapshot::from_mem(&applied) != after {
                    let mut want = after.clone();
                    want.dirs.retain(|d| applied.dirs.contains(d));
                    assert_eq!(
                        Snapshot::from_mem(&applied).files,
                        want.files,
                        "{from} {name} → {to}:\n{printed}"
                    );
                }
                assert!(
                    engine.accepts(&printed),
                    "{from} {name} → {to}: outside the Lark export:\n{printed}"
                );
                cell.0 += 1;
            }
        }
    }
    let mut report = String::from("from → to: converted, refused\n");
    for ((from, to), (ok, refused)) in &table {
        report += &format!("{from} → {to}: {ok}, {refused}\n");
    }
    eprintln!("{report}");
    // Every pair converts most of what it is given.
    for ((from, to), (ok, refused)) in &table {
        assert!(
            ok > refused,
            "{from} → {to} converted {ok}, refused {refused}"
        );
    }
}

/// `convert` without a tree, over every success fixture and every format:
/// where the pair is one the source states enough for, the print applied
/// to the before-tree gives the after-tree or is refused, never another
/// tree, and is in the target's Lark export; every other pair is refused
/// before anything is printed, saying the files are needed.
#[test]
fn without_a_tree_a_conversion_is_exact_or_refused() {
    let engines: Vec<(Format, Engine)> = Format::ALL
        .iter()
        .map(|&f| (f, Engine::new(f.lark_grammar())))
        .collect();
    let mut table: BTreeMap<(&str, &str), [usize; 3]> = BTreeMap::new();
    for &from in Format::ALL {
        for (name, before, after, patch) in super::fixtures::plain_successes(from) {
            for (to, engine) in &engines {
                let outcome = Request::new(patch.as_str())
                    .format(from.name())
                    .tolerant(true)
                    .convert(*to)
                    .run()
                    .unwrap();
                let cell = table.entry((from.name(), to.name())).or_default();
                let Some(printed) = outcome.converted.clone().filter(|_| outcome.ok()) else {
                    let e = &outcome.diagnostics[0];
                    if e.message.starts_with("cannot convert") {
                        assert!(e.message.contains("without the files"), "{}", e.message);
                        if std::env::var_os("GP_CONVERT_WHY").is_some() {
                            eprintln!("{from} {name} → {to}: {}", e.message);
                        }
                        cell[1] += 1;
                    }
                    continue;
                };
                let supported = grammar_patch::convert::rootless_pair(from, *to);
                assert!(supported, "{from} → {to} converted without the files");
                let mut applied: MemTree = before.to_mem(&BTreeMap::new());
                let again = Request::new(printed.as_str())
                    .format(to.name())
                    .run_in(&mut applied)
                    .unwrap();
                if !again.ok() {
                    assert_eq!(
                        Snapshot::from_mem(&applied),
                        before,
                        "{from} {name} → {to}: a refusal wrote"
                    );
                    if std::env::var_os("GP_CONVERT_WHY").is_some() {
                        eprintln!(
                            "{from} {name} → {to}: refused to apply: {}",
                            again.diagnostics[0].message
                        );
                    }
                    cell[2] += 1;
                    continue;
                }
                let mut want = after.clone();
                want.dirs.retain(|d| applied.dirs.contains(d));
                assert_eq!(
                    Snapshot::from_mem(&applied).files,
                    want.files,
                    "{from} {name} → {to}: another tree\n{printed}"
                );
                assert!(
                    engine.accepts(&printed),
                    "{from} {name} → {to}: outside the Lark export:\n{printed}"
                );
                cell[0] += 1;
            }
        }
    }
    let mut report =
        String::from("from → to: converted and exact, refused to convert, refused to apply\n");
    for ((from, to), [ok, refused, failed]) in &table {
        report += &format!("{from} → {to}: {ok}, {refused}, {failed}\n");
    }
    eprintln!("{report}");
    for ((from, to), [ok, refused, _]) in &table {
        let supported = grammar_patch::convert::rootless_pair(
            Format::from_name(from).unwrap(),
            Format::from_name(to).unwrap(),
        );
        assert_eq!(
            supported,
            *ok > 0,
            "{from} → {to}: {ok} converted, {refused} refused"
        );
    }
}
