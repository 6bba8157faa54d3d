//! The habits of `patch` and `git apply` users, and of pipelines that
//! apply in memory: `-R` undoes every success fixture it can (and says why
//! where it cannot), line counts agree with `git apply --numstat`, the
//! patch can be read without a tree, and batches of in-memory applies give
//! what one apply at a time gives.

use std::collections::BTreeMap;
use std::process::Command;

use grammar_patch::error::Code;
use grammar_patch::formats::Format;
use grammar_patch::{run_with, FileAction, MemTree, Mode, Options, Request};

use super::fixtures::plain_successes;
use super::support::Snapshot;

fn apply(
    tree: &mut MemTree,
    patch: &str,
    format: Format,
    options: Options,
) -> grammar_patch::Outcome {
    run_with(
        patch,
        Some(format),
        Mode::Apply { dry_run: false },
        Some(tree),
        None,
        options,
    )
}

#[test]
fn reversing_a_patch_after_applying_it_gives_back_the_tree() {
    let reverse = Options {
        reverse: true,
        ..Options::default()
    };
    let (mut undone, mut refused) = (0, 0);
    for &format in Format::ALL {
        for (name, before, after, patch) in plain_successes(format) {
            let tolerant = Options {
                tolerant: true,
                ..Options::default()
            };
            let mut tree = before.to_mem(&BTreeMap::new());
            let forward = apply(&mut tree, &patch, format, tolerant);
            let did_nothing = forward
                .files
                .iter()
                .any(|f| f.action == FileAction::Unchanged);
            // A warning but a line's drift says the file was read leniently
            // (whitespace, a typographic quote): what the patch states is
            // then not the file's text, and undoing it writes the patch's.
            let lenient = forward
                .diagnostics
                .iter()
                .any(|d| d.code != Code::LineHintDrift);
            // ap finishes every file it writes (a final newline, no trailing
            // blanks), which no patch states and so no reversal undoes.
            let finished = format == Format::Ap
                && before.files.values().any(|b| {
                    !b.ends_with(b"\n")
                        || b.split(|&c| c == b'\n')
                            .any(|l| l.ends_with(b" ") || l.ends_with(b"\t"))
                });
            if !forward.ok() || did_nothing || lenient || finished {
                // A case whose tolerance differs, or one whose patch was
                // applied already (undoing it then undoes what was there).
                continue;
            }
            if Snapshot::from_mem(&tree) != after {
                continue; // an unchanged file the patch recreates, checked by the fixtures
            }
            if name == "024_preserves_mixed_line_endings" {
                // The file's line ends are mixed; the patch does not state
                // the replaced line's own, so undoing it writes the file's
                // usual one (CRLF where the line had LF).
                continue;
            }
            let back = apply(
                &mut tree,
                &patch,
                format,
                Options {
                    tolerant: true,
                    ..reverse
                },
            );
            if back.ok() {
                // A directory a move made stays when the move is undone
                // (ap `RENAME` to a new parent): empty, and nothing else.
                let mut got = Snapshot::from_mem(&tree);
                let files = got
                    .files
                    .keys()
                    .chain(got.links.keys())
                    .cloned()
                    .collect::<Vec<_>>();
                got.dirs.retain(|d| {
                    before.dirs.contains(d) || files.iter().any(|f| f.starts_with(&format!("{d}/")))
                });
                assert_eq!(
                    got, before,
                    "{format} {name}: -R did not give back the tree: {:?}",
                    back.diagnostics
                );
                undone += 1;
            } else {
                let first = &back.diagnostics[0];
                assert!(
                    matches!(
                        first.code,
                        Code::UnsupportedGitPatchFeature
                            | Code::AlreadyApplied
                            | Code::ContextNotFound
                            | Code::AmbiguousContext
                            | Code::FileNotFound
                    ),
                    "{format} {name}: -R refused with {:?}",
                    back.diagnostics
                );
                assert_eq!(
                    Snapshot::from_mem(&tree),
                    after,
                    "{format} {name}: a refusal wrote"
                );
                eprintln!("{format} {name}: {:?} {}", first.code, first.message);
                refused += 1;
            }
        }
    }
    eprintln!("-R: {undone} fixtures undone, {refused} refused");
    assert!(
        undone >= 80,
        "only {undone} fixtures were undone ({refused} refused)"
    );
}

#[test]
fn a_reversed_unified_diff_matches_git_apply_r() {
    let before = "one\ntwo\nthree\nfour\n";
    let after = "one\nTWO\nthree\nfour\nfive\n";
    let patch =
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,5 @@\n one\n-two\n+TWO\n three\n four\n+five\n";
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.txt"), after).unwrap();
    std::fs::write(tmp.path().join(".p"), patch).unwrap();
    let git = Command::new("git")
        .args(["apply", "-R", "--unsafe-paths", ".p"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(git.status.success(), "{git:?}");
    let theirs = std::fs::read_to_string(tmp.path().join("f.txt")).unwrap();
    let mut tree = MemTree::default().with_file("f.txt", after);
    let options = Options {
        reverse: true,
        ..Options::default()
    };
    let outcome = apply(&mut tree, patch, Format::Udiff, options);
    assert!(outcome.ok(), "{:?}", outcome.diagnostics);
    assert_eq!(tree.text("f.txt"), Some(before));
    assert_eq!(theirs, before);
}

#[test]
fn what_reverse_cannot_undo_is_refused_with_the_reason() {
    let codex = "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n";
    let mut tree = MemTree::default();
    let options = Options {
        reverse: true,
        ..Options::default()
    };
    let outcome = apply(&mut tree, codex, Format::Codex, options);
    let e = &outcome.diagnostics[0];
    assert_eq!(e.code, Code::UnsupportedGitPatchFeature);
    assert!(
        e.message.contains("does not state the content"),
        "{}",
        e.message
    );
    let ap = "0badf00d AP 3.1\n0badf00d FILE\nf.txt\n0badf00d INSERT_AFTER\n0badf00d snippet\na\n0badf00d content\nb\n";
    let mut tree = MemTree::default().with_file("f.txt", "a\nb\n");
    let outcome = apply(&mut tree, ap, Format::Ap, options);
    assert_eq!(
        outcome.diagnostics[0].code,
        Code::UnsupportedGitPatchFeature
    );
    assert!(outcome.diagnostics[0].message.contains("insertion beside"));
    assert_eq!(tree.text("f.txt"), Some("a\nb\n"));
}

#[test]
fn line_counts_agree_with_git_apply_numstat() {
    let mut compared = 0;
    for (name, before, _, patch) in plain_successes(Format::Udiff) {
        if name == "prose_after_a_miscounted_hunk" {
            // git counts the lines the header's counts take in (1 and 1);
            // both tools apply the hunk's every line (2 and 2), ours counts those.
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        before.write(tmp.path(), &BTreeMap::new());
        std::fs::write(
            tmp.path().join(".p"),
            grammar_patch::lossless::encode(&patch),
        )
        .unwrap();
        let git = Command::new("git")
            .args(["apply", "--numstat", "--unsafe-paths", ".p"])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&git.stdout);
        if !git.status.success()
            || text.contains('-') && text.contains("-\t-")
            || text.contains("=>")
        {
            continue; // git refuses it, or a binary or a rename, whose counts git words otherwise
        }
        let theirs: BTreeMap<String, (usize, usize)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split('\t');
                let (a, r, p) = (f.next()?, f.next()?, f.next()?);
                Some((p.to_string(), (a.parse().ok()?, r.parse().ok()?)))
            })
            .collect();
        let mut tree = before.to_mem(&BTreeMap::new());
        let outcome = apply(&mut tree, &patch, Format::Udiff, Options::default());
        if !outcome.ok() {
            continue;
        }
        let mine: BTreeMap<String, (usize, usize)> = outcome
            .files
            .iter()
            .filter(|f| theirs.contains_key(&f.path) && f.action != FileAction::Unchanged)
            .map(|f| (f.path.clone(), (f.added, f.removed)))
            .collect();
        // Files the patch found applied already are ours to leave out.
        let theirs: BTreeMap<_, _> = theirs
            .into_iter()
            .filter(|(p, _)| mine.contains_key(p))
            .collect();
        assert_eq!(mine, theirs, "{name}");
        compared += 1;
    }
    assert!(compared > 30, "only {compared} compared");
}

#[test]
fn parse_reads_every_success_fixture_with_its_counts() {
    for &format in Format::ALL {
        for (name, before, _, patch) in plain_successes(format) {
            if patch.contains("GIT binary patch") {
                continue; // a literal's bytes are not read without a tree
            }
            let parsed = grammar_patch::parse(
                patch.as_str(),
                Some(format),
                Options {
                    tolerant: true,
                    ..Options::default()
                },
            );
            assert!(parsed.ok(), "{format} {name}: {:?}", parsed.diagnostics);
            // What a modification states, applied, is what the result counts
            // where the patch's blocks do not overlap in the file.
            let mut tree = before.to_mem(&BTreeMap::new());
            let outcome = apply(
                &mut tree,
                &patch,
                format,
                Options {
                    tolerant: true,
                    ..Options::default()
                },
            );
            for f in parsed
                .files
                .iter()
                .filter(|f| f.operation == "add" && f.hunks.is_empty())
            {
                if let Some(r) = outcome
                    .files
                    .iter()
                    .find(|r| r.path == f.path && r.action == FileAction::Added)
                {
                    assert_eq!(r.added, f.added, "{format} {name}: {}", f.path);
                }
            }
            let value = grammar_patch::summary::to_value(&parsed);
            assert_eq!(value["ok"], true);
            assert_eq!(
                value["files"].as_array().map(Vec::len),
                Some(parsed.files.len())
            );
        }
    }
}

#[test]
fn a_batch_gives_what_one_apply_at_a_time_gives() {
    let patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
    let jobs: Vec<_> = (0..64)
        .map(|i| {
            let text = if i % 3 == 0 { "a\nx\n" } else { "a\nb\n" };
            (
                Request::new(patch),
                MemTree::default().with_file("f.txt", text),
            )
        })
        .collect();
    let singles: Vec<_> = jobs
        .iter()
        .map(|(_, tree)| {
            let mut tree = tree.clone();
            let outcome = Request::new(patch).run_in(&mut tree).unwrap();
            (outcome.ok(), tree)
        })
        .collect();
    for threads in [1, 2, 5] {
        let jobs = jobs
            .iter()
            .map(|(_, t)| (Request::new(patch), t.clone()))
            .collect();
        let done = grammar_patch::batch::run_all(jobs, threads);
        let got: Vec<_> = done
            .into_iter()
            .map(|(r, t)| (r.unwrap().ok(), t))
            .collect();
        assert_eq!(got, singles, "{threads} threads");
    }
    assert!(singles.iter().filter(|(ok, _)| !ok).count() == 22);
    assert!(grammar_patch::batch::run_all(vec![], 0).is_empty());
}

#[test]
fn a_request_in_memory_refuses_a_root_and_an_unknown_format() {
    let mut tree = MemTree::default().with_file("f.txt", "a\n");
    let rooted = Request::new("x").root("/tmp").run_in(&mut tree);
    assert_eq!(rooted.unwrap_err().code, Code::UsageError);
    let unknown = Request::new("x").format("nope").run_in(&mut tree);
    assert_eq!(unknown.unwrap_err().code, Code::UsageError);
    let mut bad = MemTree::default();
    assert!(bad.insert("../x", vec![]).is_err());
    assert!(bad.insert("a/b", vec![]).is_ok());
    assert!(bad.insert("a/b/c", vec![]).is_err(), "a/b is a file");
    assert!(bad.insert("a", vec![]).is_err(), "a is a directory");
}
