//! The binary as a user sees it: exit codes, the JSON shape, text output.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use grammar_patch::formats::Format;

use super::support::Snapshot;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_grammar-patch"));
    c.env_remove("NO_COLOR");
    c
}

/// The binary with these arguments.
fn gp(args: &[&str]) -> Command {
    let mut c = bin();
    c.args(args);
    c
}

/// The exit status of the binary with these arguments and no input.
fn status(args: &[&str]) -> Option<i32> {
    gp(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .status
        .code()
}

fn run_with_stdin(mut cmd: Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A run that refuses its arguments exits without reading its input:
    // the pipe may be closed before (or while) it is written.
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

const PATCH: &str = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";

fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.txt"), "a\nb\n").unwrap();
    tmp
}

/// The test file after the command.
fn content(tmp: &tempfile::TempDir) -> String {
    std::fs::read_to_string(tmp.path().join("f.txt")).unwrap()
}

/// The JSON result on stdout, checked against the schema.
fn json(out: &Output) -> serde_json::Value {
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    super::support::assert_valid_result(&value);
    value
}

#[test]
fn apply_json_success_has_the_contract_shape() {
    let tmp = tree();
    let mut cmd = bin();
    cmd.args(["apply", "--json", "--root"]).arg(tmp.path());
    let out = run_with_stdin(cmd, PATCH);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "ok",
            "format",
            "dry_run",
            "files",
            "diagnostics",
            "ignored_metadata"
        ]
    );
    assert_eq!(
        v["files"],
        serde_json::json!([{"path": "f.txt", "action": "modified", "from": null, "added": 1, "removed": 1}])
    );
    assert_eq!(content(&tmp), "a\nB\n");
}

#[test]
fn apply_json_failure_has_the_contract_shape_and_writes_nothing() {
    let tmp = tree();
    let patch_file = tmp.path().join("p.diff");
    std::fs::write(&patch_file, PATCH.replace("-b", "-x")).unwrap();
    let out = bin()
        .args(["apply", "--json", "--root"])
        .arg(tmp.path())
        .arg(&patch_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "context_not_found");
    assert_eq!(v["error"]["path"], "f.txt");
    assert_eq!(v["error"]["patch_line"], 3);
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap()
            .starts_with("re-read lines 1-2 of f.txt"),
        "{v}"
    );
    assert_eq!(content(&tmp), "a\nb\n");
}

#[test]
fn dry_run_writes_nothing() {
    let tmp = tree();
    let mut cmd = bin();
    cmd.args(["apply", "--dry-run", "-", "--root"])
        .arg(tmp.path());
    let out = run_with_stdin(cmd, PATCH);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "M f.txt\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("dry run"));
    assert_eq!(content(&tmp), "a\nb\n");
}

#[test]
fn text_output_summarises_and_renders_plain_diagnostics() {
    let tmp = tree();
    let mut cmd = bin();
    cmd.args(["apply", "--root"]).arg(tmp.path());
    let out = run_with_stdin(cmd, &format!("```diff\n{PATCH}```\n"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "M f.txt\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning[markdown_fence_stripped]"), "{err}");
    assert!(!err.contains('\x1b'), "colour on a pipe: {err}");
}

#[test]
fn lint_without_root_checks_the_patch_alone() {
    let out = run_with_stdin(gp(&["lint"]), PATCH);
    assert_eq!(out.status.code(), Some(0));
    let out = run_with_stdin(gp(&["lint"]), "--- a/f\n+++ b/f\n@@ -1 +1 @@\nno prefix\n");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error[syntax_error]") && err.contains("<stdin>:4:1"),
        "{err}"
    );
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(status(&["apply", "/nonexistent/patch.diff"]), Some(2));
    assert_eq!(status(&["apply", "--format", "nope", "-"]), Some(2));
    assert_eq!(
        status(&["apply", "--root", "/nonexistent/dir", "-"]),
        Some(2)
    );
    assert_eq!(status(&["grammar", "udiff", "--id", "0123abcd"]), Some(2));
}

#[test]
fn grammar_formats_detect() {
    let out = bin().args(["grammar", "udiff"]).output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        Format::Udiff.lark_grammar()
    );
    let grammar = |args: &[&str]| bin().arg("grammar").args(args).output().unwrap();
    let out = grammar(&["udiff", "--syntax", "pest"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        Format::Udiff.pest_grammar().unwrap()
    );
    // ap's grammar is LALRPOP's: printed as written, and `--syntax pest`
    // (or `lalrpop` for a pest format) is a usage error that says which.
    let out = grammar(&["ap", "--syntax", "lalrpop"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        Format::Ap.lalrpop_grammar().unwrap()
    );
    let out = grammar(&["ap", "--syntax", "pest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--syntax lalrpop"));
    let out = grammar(&["codex", "--syntax", "lalrpop"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--syntax pest"));
    let out = bin().arg("formats").output().unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("udiff "));
    let out = run_with_stdin(gp(&["detect"]), PATCH);
    assert_eq!(
        (out.status.code(), String::from_utf8(out.stdout).unwrap()),
        (Some(0), "udiff\n".to_string())
    );
    let out = run_with_stdin(gp(&["detect"]), "hello\n");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn help_lists_every_error_code() {
    let out = bin().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for code in grammar_patch::error::Code::ALL {
        assert!(help.contains(code.as_str()), "{code} missing from --help");
    }
}

/// A RepoPatch patch through the binary: detected, applied, its lenient
/// reading reported as a warning in the JSON.
#[test]
fn repopatch_apply_json_reports_format_and_warnings() {
    let tmp = tree();
    let mut cmd = bin();
    cmd.args(["apply", "--json", "--root"]).arg(tmp.path());
    let patch =
        "PATCHSET\nPATCH f.txt\nINSERT AFTER\n- a\n---\n. x\n-\n. y\nENDPATCH\nENDPATCHSET\n";
    let out = run_with_stdin(cmd, patch);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["format"], "repopatch");
    assert_eq!(v["diagnostics"][0]["code"], "blank_line_prefix");
    assert_eq!(v["diagnostics"][0]["patch_line"], 7);
    assert_eq!(content(&tmp), "a\nx\n\ny\nb\n");
    let out = bin().args(["grammar", "repopatch"]).output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        Format::Repopatch.lark_grammar()
    );
}

/// The call's own `tolerant` and `diff` are not switched off by flags the
/// command line did not give: a call read from stdin means what it says.
#[test]
fn a_tool_calls_tolerant_and_diff_survive_absent_flags() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.txt"), "a\n").unwrap();
    // No `<ID> AP 3.2` header: strict ap refuses it, tolerant ap reads it.
    let ap = "9f3c2a1e FILE\na.txt\n9f3c2a1e REPLACE\n9f3c2a1e snippet\na\n\
              9f3c2a1e content\nA\n";
    let call = serde_json::json!({"patch": ap, "format": "ap", "tolerant": true, "diff": true});
    let mut cmd = bin();
    cmd.args(["apply", "--json", "--root"]).arg(tmp.path());
    let out = run_with_stdin(cmd, &call.to_string());
    let v = json(&out);
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("a.txt")).unwrap(),
        "A\n"
    );
    let diff = v["files"][0]["diff"]
        .as_str()
        .expect("the call asked for a diff");
    assert!(diff.contains("-a\n+A\n"), "{diff}");
}

/// A JSON tool call, on stdin or as the PATCH file, is detected: its
/// `patch` is applied with its `format` and `dry_run`; a bad one is a usage
/// error that writes nothing.
#[test]
fn json_tool_calls_are_accepted_as_the_patch() {
    let call = |extra: &str| {
        format!(
            "{{\"patch\": {}{extra}}}",
            serde_json::to_string(PATCH).unwrap()
        )
    };
    // On stdin, with format and dry_run.
    let tmp = tree();
    let mut cmd = bin();
    cmd.args(["apply", "--json", "--root"]).arg(tmp.path());
    let out = run_with_stdin(cmd, &call(r#", "format": "udiff", "dry_run": true"#));
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(
        (v["format"].as_str(), v["dry_run"].as_bool()),
        (Some("udiff"), Some(true))
    );
    assert_eq!(
        content(&tmp),
        "a\nb\n",
        "dry_run in the call must not write"
    );
    // As the PATCH file, applied for real.
    let file = tmp.path().join("call.json");
    std::fs::write(&file, call("")).unwrap();
    let out = bin()
        .args(["apply", "--root"])
        .arg(tmp.path())
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(content(&tmp), "a\nB\n");
    // Misspelt keys, a missing patch and conflicting formats are refused.
    for bad in [
        call(r#", "dryrun": true"#),
        r#"{"format": "udiff"}"#.to_string(),
        call(r#", "format": "codex""#),
        "{not json".to_string(),
    ] {
        let tmp = tree();
        let mut cmd = bin();
        cmd.args(["apply", "--format", "udiff", "--root"])
            .arg(tmp.path());
        let out = run_with_stdin(cmd, &bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert_eq!(content(&tmp), "a\nb\n");
    }
}

/// An ap patch read from a file applies beside that file, as its spec
/// says; `--root` overrides that. Paths are then relative to the root.
#[test]
fn ap_applies_beside_the_patch_file_unless_root_is_given() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let copy = tmp.path().join("demo");
    std::fs::create_dir_all(copy.join("tree/src")).unwrap();
    std::fs::copy(demo.join("feature.ap"), copy.join("feature.ap")).unwrap();
    std::fs::copy(
        demo.join("tree/src/greet.py"),
        copy.join("tree/src/greet.py"),
    )
    .unwrap();
    let patch = copy.join("feature.ap");
    let patch = patch.to_str().unwrap();
    // From elsewhere, with --root pointing at the tree: the patch's paths
    // (`tree/src/greet.py`) are not under it.
    let out = gp(&[
        "apply",
        "--json",
        "--root",
        copy.join("tree").to_str().unwrap(),
        patch,
    ])
    .current_dir(tmp.path())
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["error"]["code"], "file_not_found");
    // Without --root: beside the patch file.
    let applies_beside = |patch: &str| {
        let out = gp(&["apply", "--json", patch])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        assert_eq!(json(&out)["files"][0]["path"], "tree/src/greet.py");
    };
    applies_beside(patch);
    let text = std::fs::read_to_string(copy.join("tree/src/greet.py")).unwrap();
    assert!(
        text.contains("return f\"Hello, {name}!\"") && text.contains("    print(farewell(name))\n")
    );
    // The same patch as a model sends it, prose and a fence around it: it
    // is still an ap patch, so it still applies beside its file.
    std::fs::copy(
        demo.join("tree/src/greet.py"),
        copy.join("tree/src/greet.py"),
    )
    .unwrap();
    let ap = std::fs::read_to_string(demo.join("feature.ap")).unwrap();
    let fenced = copy.join("fenced.ap");
    std::fs::write(&fenced, format!("Here is the patch:\n\n```\n{ap}```\n")).unwrap();
    applies_beside(fenced.to_str().unwrap());
}

/// The bundled example, as `examples/demo.sh` (the README's main job)
/// runs it: the feature applies, then the stale patch, written against an
/// older file, is refused (exit 1) and nothing is written. The README's
/// examples run the stale patch on the tree itself: refused there too.
#[test]
fn the_demo_applies_its_feature_and_refuses_its_stale_patch() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let tmp = tempfile::tempdir().unwrap();
    Snapshot::load(&demo.join("tree")).write(tmp.path(), &Default::default());
    let apply = |patch: &str| {
        let patch = demo.join(patch);
        let root = tmp.path().to_str().unwrap();
        gp(&["apply", "--json", "--root", root, patch.to_str().unwrap()])
            .output()
            .unwrap()
    };
    assert_eq!(apply("stale.diff").status.code(), Some(1));
    assert_eq!(
        Snapshot::load(tmp.path()),
        Snapshot::load(&demo.join("tree"))
    );
    assert_eq!(apply("feature.diff").status.code(), Some(0));
    let after_feature = Snapshot::load(tmp.path());
    let out = apply("stale.diff");
    assert_eq!(out.status.code(), Some(1), "{}", json(&out));
    assert_eq!(json(&out)["error"]["code"], "context_not_found");
    assert_eq!(Snapshot::load(tmp.path()), after_feature);
}

/// `grammar ap --id` specialises the export; `--tolerant` forgives what
/// strict mode refuses.
#[test]
fn ap_id_grammars_and_tolerant_mode() {
    let out = gp(&["grammar", "ap", "--id", "3d7e1a90"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        *Format::Ap.lark_grammar_for(Some("3d7e1a90")).unwrap()
    );
    assert!(text.contains("\"3d7e1a90\"") && text != Format::Ap.lark_grammar());
    // Upper case, as the parser reads headers: used exactly as given.
    let upper = gp(&["grammar", "ap", "--id", "3D7E1A90"]).output().unwrap();
    assert_eq!(upper.status.code(), Some(0));
    assert!(String::from_utf8(upper.stdout)
        .unwrap()
        .contains("\"3D7E1A90\""));
    assert_eq!(status(&["grammar", "ap", "--id", "3d7e1a9"]), Some(2));
    assert_eq!(status(&["grammar", "ap", "--id", "3d7e1a9g"]), Some(2));
    assert_eq!(status(&["grammar", "udiff", "--id", "3d7e1a90"]), Some(2));
    let tmp = tree();
    let headless =
        "a1b2c3d4 FILE\nf.txt\na1b2c3d4 REPLACE\na1b2c3d4 snippet\nb\na1b2c3d4 content\nB\n";
    let root = tmp.path().to_str().unwrap();
    let strict = run_with_stdin(
        gp(&["apply", "--json", "--format", "ap", "--root", root]),
        headless,
    );
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(json(&strict)["error"]["code"], "syntax_error");
    let before = content(&tmp);
    let tolerant = run_with_stdin(
        gp(&[
            "apply",
            "--json",
            "--format",
            "ap",
            "--tolerant",
            "--root",
            root,
        ]),
        headless,
    );
    assert_eq!(
        tolerant.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&tolerant.stdout)
    );
    assert_eq!(
        json(&tolerant)["diagnostics"][0]["code"],
        "tolerated_format_slip"
    );
    assert_eq!(before, "a\nb\n");
    assert_eq!(content(&tmp), "a\nB\n");
}

/// `--fsync` applies the same way (it only adds syncs), a rename and a
/// delete included, and leaves no journal behind.
#[test]
fn fsync_applies_and_leaves_nothing_behind() {
    let tmp = tree();
    std::fs::write(tmp.path().join("g.txt"), "g\n").unwrap();
    let patch = format!(
        "{PATCH}--- a/g.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n--- /dev/null\n+++ b/new/h.txt\n@@ -0,0 +1 @@\n+h\n"
    );
    let mut cmd = bin();
    cmd.args(["apply", "--fsync", "--root"]).arg(tmp.path());
    let out = run_with_stdin(cmd, &patch);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(content(&tmp), "a\nB\n");
    assert!(!tmp.path().join("g.txt").exists());
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("new/h.txt")).unwrap(),
        "h\n"
    );
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A usage error under `--json` is a result object too (exit 2), in the
/// same shape: a misspelt option, an unknown format, a missing patch file,
/// a JSON tool call with a clashing format.
#[test]
fn usage_errors_under_json_are_result_objects() {
    let tmp = tree();
    let call = r#"{"patch": "--- a/f.txt\n", "format": "codex"}"#;
    let cases: [(&[&str], Option<&str>); 5] = [
        (&["apply", "--json", "--bogus"], None),
        (&["apply", "--json", "--format", "nope", "-"], Some("x")),
        (&["lint", "--json", "/nonexistent/patch.diff"], None),
        (&["apply", "--json", "--format", "udiff", "-"], Some(call)),
        (&["apply", "--json", "--wait", "-1", "-"], Some("x")),
    ];
    for (args, stdin) in cases {
        let mut cmd = bin();
        cmd.args(args).arg("--root").arg(tmp.path());
        let out = run_with_stdin(cmd, stdin.unwrap_or(""));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v = json(&out);
        assert_eq!(v["ok"], false, "{args:?}");
        assert_eq!(v["error"]["code"], "usage_error", "{args:?}: {v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
        assert_eq!(v["dry_run"], args[0] == "lint", "{args:?}");
        // One answer, on stdout: an agent that reads both streams does not
        // get the message twice.
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(content(&tmp), "a\nb\n");
}

/// An argument that is not UTF-8 is a usage error like any other, with
/// `--json` too, not a crash: clap reads arguments as OS strings, and so
/// must the refusal that echoes them.
#[test]
fn arguments_that_are_not_utf8_are_usage_errors() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tree();
    let bad = std::ffi::OsStr::from_bytes(b"--\xff");
    for json_out in [false, true] {
        let mut cmd = bin();
        cmd.arg("apply").arg(bad).arg("--root").arg(tmp.path());
        if json_out {
            cmd.arg("--json");
        }
        let out = run_with_stdin(cmd, "");
        assert_eq!(out.status.code(), Some(2), "--json {json_out}: {out:?}");
        if json_out {
            assert_eq!(json(&out)["error"]["code"], "usage_error");
        }
    }
    assert_eq!(content(&tmp), "a\nb\n");
}

/// The schema names exactly the codes the program has.
#[test]
fn the_result_schema_lists_every_code() {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../schema/result.schema.json")).unwrap();
    let listed: Vec<&str> = schema["$defs"]["code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let codes: Vec<&str> = grammar_patch::error::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(listed, codes);
    // And exactly the formats, after `null` (not known yet), then
    // `anthropic` (text-editor commands, which are no format).
    let formats: Vec<&str> = schema["properties"]["format"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    let mut names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    names.push("anthropic");
    assert_eq!(formats, names);
}

/// `--diff` prints what was written as a git diff (`git apply` of it on the
/// old tree gives the new one); a dry run or lint prints what would be;
/// with `--json` each file carries its section; without a root it is a
/// usage error.
#[test]
fn review_diff_is_what_git_applies() {
    let codex = "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n-b\n+B\n*** Add File: new.txt\n+new\n*** End Patch\n";
    let tmp = tree();
    let mut cmd = bin();
    cmd.args(["lint", "--diff", "--root"]).arg(tmp.path());
    let would = run_with_stdin(cmd, codex);
    assert_eq!(would.status.code(), Some(0));
    assert_eq!(content(&tmp), "a\nb\n", "lint writes nothing");
    let mut cmd = bin();
    cmd.args(["apply", "--diff", "--root"]).arg(tmp.path());
    let done = run_with_stdin(cmd, codex);
    assert_eq!(done.status.code(), Some(0));
    assert_eq!(done.stdout, would.stdout);
    let diff = String::from_utf8(done.stdout).unwrap();
    assert!(
        diff.starts_with("diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@"),
        "{diff}"
    );
    assert!(diff.contains("diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n"), "{diff}");

    let copy = tempfile::tempdir().unwrap();
    std::fs::write(copy.path().join("f.txt"), "a\nb\n").unwrap();
    std::fs::write(copy.path().join("r.diff"), &diff).unwrap();
    let git = Command::new("git")
        .args(["apply", "r.diff"])
        .current_dir(copy.path())
        .output()
        .unwrap();
    assert!(git.status.success(), "{git:?}");
    assert_eq!(
        std::fs::read_to_string(copy.path().join("f.txt")).unwrap(),
        "a\nB\n"
    );
    assert_eq!(
        std::fs::read_to_string(copy.path().join("new.txt")).unwrap(),
        "new\n"
    );

    let fresh = tree();
    let mut cmd = bin();
    cmd.args(["apply", "--dry-run", "--diff", "--json", "--root"])
        .arg(fresh.path());
    let v = json(&run_with_stdin(cmd, codex));
    assert_eq!(
        v["files"][0]["diff"].as_str().unwrap(),
        diff.split("diff --git a/new.txt").next().unwrap()
    );

    let mut cmd = bin();
    cmd.args(["lint", "--diff", "--json", "-"]);
    let no_root = run_with_stdin(cmd, codex);
    assert_eq!(no_root.status.code(), Some(2));
    assert_eq!(json(&no_root)["error"]["code"], "usage_error");
}

/// The small habits: `--fsync` is an option of `apply` only (`lint` never
/// writes); a format name is asked for by the names there are (`auto` is
/// none of them where a command prints a format's text); an empty patch
/// on standard input is one error, not a warning about blank lines too.
#[test]
fn options_and_names_say_only_what_is_there() {
    let tmp = tree();
    let root = tmp.path().to_str().unwrap();
    assert_eq!(status(&["lint", "--fsync", "--root", root, "-"]), Some(2));
    for args in [
        &["tool", "nope", "--provider", "openai"][..],
        &["prompt", "nope"][..],
        &["grammar", "nope"][..],
    ] {
        let out = gp(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("expected udiff, codex, repopatch, ap") && !err.contains("auto"),
            "{args:?}: {err}"
        );
    }
    let out = run_with_stdin(gp(&["apply", "--json", "--root", root, "-"]), "");
    let v = json(&out);
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"blank_lines_stripped"), "{v}");
    assert_eq!(content(&tmp), "a\nb\n");
}

/// `--color` decides for itself: `always` writes ANSI colour even into a
/// pipe (and over `NO_COLOR`), `never` none, and `auto` none into a pipe.
#[test]
fn color_is_as_asked() {
    let tmp = tree();
    let root = tmp.path().to_str().unwrap();
    let stale = PATCH.replace("-b", "-x");
    let stderr = |color: &str| {
        let mut cmd = gp(&["apply", "--color", color, "--root", root, "-"]);
        cmd.env("NO_COLOR", "1");
        let out = run_with_stdin(cmd, &stale);
        assert_eq!(out.status.code(), Some(1), "{color}");
        String::from_utf8(out.stderr).unwrap()
    };
    let always = stderr("always");
    assert!(always.contains("\u{1b}["), "{always}");
    assert!(always.contains("context_not_found"), "{always}");
    for plain in ["never", "auto"] {
        let text = stderr(plain);
        assert!(!text.contains('\u{1b}'), "{plain}: {text}");
        assert!(text.contains("context_not_found"), "{plain}: {text}");
    }
    assert_eq!(status(&["apply", "--color", "sometimes", "-"]), Some(2));
    assert_eq!(content(&tmp), "a\nb\n");
}

/// Shell completions and the man page come from the same argument
/// definitions as the command line itself: every command is in each.
#[test]
fn completions_and_the_man_page_name_every_command() {
    let commands = [
        "apply", "lint", "recover", "grammar", "tool", "prompt", "mcp", "detect",
    ];
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = gp(&["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in commands {
            assert!(script.contains(command), "{shell}: no {command}");
        }
        assert!(script.contains("dry-run"), "{shell}");
    }
    assert_eq!(status(&["completions", "tcsh"]), Some(2));
    let out = gp(&["man"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH grammar-patch"),
        "{page}"
    );
    for command in commands {
        assert!(page.contains(command), "man: no {command}");
    }
}

/// `--stat` and `--numstat` print what `git apply --stat`/`--numstat`
/// print for the same patch; with a root they count what is written, and
/// `apply --stat` still applies. Without a root, the patch's own counts.
#[test]
fn stat_and_numstat_print_as_git_apply_does() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.txt"), "a\nb\nc\n").unwrap();
    std::fs::write(tmp.path().join("gone.txt"), "x\ny\n").unwrap();
    let patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n\
                 --- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n\
                 --- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n";
    let numstat = "2\t1\tf.txt\n0\t2\tgone.txt\n1\t0\tnew.txt\n";
    let root = tmp.path().to_str().unwrap();
    for args in [
        vec!["lint", "--numstat", "-"],
        vec!["lint", "--numstat", "--root", root, "-"],
    ] {
        let out = run_with_stdin(gp(&args), patch);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), numstat, "{args:?}");
    }
    std::fs::write(tmp.path().join(".p"), patch).unwrap();
    let git = Command::new("git")
        .args(["apply", "--numstat", ".p"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&git.stdout),
        numstat,
        "git apply --numstat"
    );
    std::fs::remove_file(tmp.path().join(".p")).unwrap();
    let out = run_with_stdin(gp(&["apply", "--stat", "--root", root, "-"]), patch);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        " f.txt    | 3 ++-\n gone.txt | 2 --\n new.txt  | 1 +\n \
         3 files changed, 3 insertions(+), 3 deletions(-)\n"
    );
    assert!(
        !tmp.path().join("gone.txt").exists(),
        "apply --stat applies"
    );
    let out = run_with_stdin(
        gp(&["lint", "--json", "--root", root, "-"]),
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1 @@\n a\n-B\n",
    );
    let v = json(&out);
    assert_eq!(
        (
            v["files"][0]["added"].as_u64(),
            v["files"][0]["removed"].as_u64()
        ),
        (Some(0), Some(1))
    );
    assert_eq!(
        status(&["lint", "--stat", "--diff", "--root", root, "-"]),
        Some(2)
    );
}

/// `-p N` strips as `patch -pN` does; `-R` undoes a patch; a patch made
/// one directory up says where the file is.
#[test]
fn strip_reverse_and_a_level_off() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("sub")).unwrap();
    std::fs::write(tmp.path().join("sub/f.txt"), "a\nb\n").unwrap();
    let sub = tmp.path().join("sub");
    let sub = sub.to_str().unwrap();
    let patch = "--- a/sub/f.txt\n+++ b/sub/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
    let out = run_with_stdin(gp(&["apply", "--json", "--root", sub, "-"]), patch);
    let v = json(&out);
    assert_eq!(v["error"]["code"], "file_not_found");
    let hint = v["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("`f.txt` exists") && hint.contains("`sub/`"),
        "{hint}"
    );
    let out = run_with_stdin(gp(&["apply", "-p2", "--root", sub, "-"]), patch);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("sub/f.txt")).unwrap(),
        "a\nB\n"
    );
    let out = run_with_stdin(
        gp(&["apply", "-R", "--strip", "2", "--root", sub, "-"]),
        patch,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("sub/f.txt")).unwrap(),
        "a\nb\n"
    );
    // Undone already: reversing again finds the patch's new side missing.
    let out = run_with_stdin(
        gp(&["apply", "-R", "-p2", "--json", "--root", sub, "-"]),
        patch,
    );
    assert_eq!(json(&out)["ok"], false);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("sub/f.txt")).unwrap(),
        "a\nb\n"
    );
}

/// OpenAI `apply_patch_call` items on stdin: applied together, all or
/// none, answered with `apply_patch_call_output` items; an operation that
/// would smuggle in another is refused before anything is read.
#[test]
fn openai_apply_patch_calls_apply_together_and_are_answered() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.txt"), "one\ntwo\n").unwrap();
    std::fs::write(tmp.path().join("old.txt"), "x\n").unwrap();
    let root = tmp.path().to_str().unwrap();
    let items = |diff: &str| {
        serde_json::json!([
            {"type": "apply_patch_call", "call_id": "c1", "status": "completed",
             "operation": {"type": "update_file", "path": "f.txt", "diff": diff}},
            {"type": "apply_patch_call", "call_id": "c2", "status": "completed",
             "operation": {"type": "create_file", "path": "n.txt", "diff": "+new\n"}},
            {"type": "apply_patch_call", "call_id": "c3", "status": "completed",
             "operation": {"type": "delete_file", "path": "old.txt"}}
        ])
        .to_string()
    };
    let apply = |text: &str, extra: &[&str]| {
        let mut args = vec!["apply", "--root", root];
        args.extend(extra);
        args.push("-");
        run_with_stdin(gp(&args), text)
    };
    // One fails: every call fails, nothing is written.
    let out = apply(&items("@@\n-zwei\n+2\n"), &["--provider-output", "openai"]);
    assert_eq!(out.status.code(), Some(1));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer[0]["status"], "failed");
    assert!(answer[0]["output"]
        .as_str()
        .unwrap()
        .starts_with("error[context_not_found]"));
    assert!(answer[2]["output"]
        .as_str()
        .unwrap()
        .contains("`c1` failed"));
    assert!(tmp.path().join("old.txt").exists() && !tmp.path().join("n.txt").exists());
    // All apply.
    let out = apply(
        &items("@@\n one\n-two\n+TWO\n"),
        &["--provider-output", "openai"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let statuses: Vec<&str> = answer
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed"; 3]);
    assert_eq!(answer[1]["output"], "applied: added n.txt (+1 -0)");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("f.txt")).unwrap(),
        "one\nTWO\n"
    );
    assert!(!tmp.path().join("old.txt").exists());
    // A bare operation, as the JSON result.
    let bare = r#"{"type": "update_file", "path": "f.txt", "diff": "@@\n-TWO\n+two\n"}"#;
    let v = json(&apply(bare, &["--json", "--dry-run"]));
    assert_eq!(
        (v["ok"].as_bool(), v["format"].as_str()),
        (Some(true), Some("codex"))
    );
    // Refused before reading: a smuggled operation, another format, text.
    let smuggled = r#"{"type": "update_file", "path": "f.txt", "diff": "@@\n-TWO\n+2\n*** Delete File: n.txt\n"}"#;
    assert_eq!(apply(smuggled, &[]).status.code(), Some(2));
    assert_eq!(apply(bare, &["--format", "udiff"]).status.code(), Some(2));
    let text = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+1\n";
    assert_eq!(
        apply(text, &["--provider-output", "openai"]).status.code(),
        Some(2)
    );
    assert!(tmp.path().join("n.txt").exists());
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("f.txt")).unwrap(),
        "one\nTWO\n"
    );
}

/// `convert --to udiff` of a codex patch is a diff `git apply` takes, with
/// the same result as applying the codex patch; a format that cannot state
/// a change refuses (exit 1) and writes nothing.
#[test]
fn convert_prints_what_git_apply_takes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join("f.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(root.join("gone.txt"), "x\n").unwrap();
    let codex = "*** Begin Patch\n*** Update File: f.txt\n@@\n one\n-two\n+TWO\n*** Add File: n.txt\n+new\n*** Delete File: gone.txt\n*** End Patch\n";
    let out = run_with_stdin(
        gp(&[
            "convert",
            "--to",
            "udiff",
            "--root",
            root.to_str().unwrap(),
            "-",
        ]),
        codex,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::write(root.join(".p"), &out.stdout).unwrap();
    let git = Command::new("git")
        .args(["apply", ".p"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        git.status.success(),
        "{git:?}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::remove_file(root.join(".p")).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("f.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("n.txt")).unwrap(),
        "new\n"
    );
    assert!(!root.join("gone.txt").exists());
    // SEARCH/REPLACE cannot delete a file: refused, nothing written.
    let gone = "*** Begin Patch\n*** Delete File: n.txt\n*** End Patch\n";
    let out = run_with_stdin(
        gp(&[
            "convert",
            "--to",
            "searchreplace",
            "--root",
            root.to_str().unwrap(),
            "-",
        ]),
        gone,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot state"),
        "{out:?}"
    );
    assert!(out.stdout.is_empty() && root.join("n.txt").exists());
    assert_eq!(status(&["convert", "--to", "nope", "-"]), Some(2));
}

/// `convert` prints the converted patch and nothing else: an output option
/// beside it is a usage error, before anything is read.
#[test]
fn convert_takes_no_output_option() {
    for option in ["--json", "--diff", "--stat", "--numstat"] {
        assert_eq!(
            status(&["convert", "--to", "udiff", option, "-"]),
            Some(2),
            "{option}"
        );
    }
}

/// The phases and their milliseconds in `GRAMMAR_PATCH_TIMINGS`' lines.
fn timing_marks(stderr: &str) -> Vec<(f64, String)> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("timings:"))
        .map(|l| {
            let (ms, phase) = l.trim().split_once(" ms  ").expect("`MS ms  PHASE`");
            (ms.trim().parse().unwrap(), phase.to_string())
        })
        .collect()
}

/// `GRAMMAR_PATCH_TIMINGS` asks for where an apply's time goes: the end of
/// each phase on standard error, in the order the phases run, each at
/// least as late as the one before. Unasked (or set empty), no line of
/// it; the result on standard output is the same either way.
#[test]
fn timings_are_written_where_asked_and_only_there() {
    let phases = [
        "arguments read",
        "patch read",
        "root opened and locked",
        "parsed",
        "validated",
        "planned",
        "written",
        "counted",
        "output written",
    ];
    let mut results = vec![];
    for asked in [Some("1"), None, Some("")] {
        let tmp = tree();
        let mut cmd = gp(&["apply", "--json", "--root", tmp.path().to_str().unwrap()]);
        match asked {
            Some(v) => cmd.env("GRAMMAR_PATCH_TIMINGS", v),
            None => cmd.env_remove("GRAMMAR_PATCH_TIMINGS"),
        };
        let out = run_with_stdin(cmd, PATCH);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(content(&tmp), "a\nB\n");
        let stderr = String::from_utf8(out.stderr.clone()).unwrap();
        let marks = timing_marks(&stderr);
        if asked == Some("1") {
            let named: Vec<&str> = marks.iter().map(|(_, p)| p.as_str()).collect();
            assert_eq!(named, phases, "{stderr}");
            assert!(marks.windows(2).all(|w| w[0].0 <= w[1].0), "{stderr}");
            assert!(marks[0].0 >= 0.0);
        } else {
            assert!(marks.is_empty() && !stderr.contains("timings"), "{stderr}");
        }
        results.push(json(&out)["files"].clone());
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
}

/// A patch that changes so many regions that their lines are counted
/// beside the commit still has the commit's end marked, before the count's.
#[test]
fn timings_mark_the_commit_where_the_count_runs_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let n = 40_000;
    let file: String = (0..n).map(|i| format!("line {i}\n")).collect();
    std::fs::write(tmp.path().join("f.txt"), &file).unwrap();
    let mut patch = format!("--- a/f.txt\n+++ b/f.txt\n@@ -1,{n} +1,{n} @@\n");
    for i in 0..n {
        match i % 2 {
            0 => patch.push_str(&format!(" line {i}\n")),
            _ => patch.push_str(&format!("-line {i}\n+LINE {i}\n")),
        }
    }
    let mut cmd = gp(&["apply", "--json", "--root", tmp.path().to_str().unwrap()]);
    cmd.env("GRAMMAR_PATCH_TIMINGS", "1");
    let out = run_with_stdin(cmd, &patch);
    assert_eq!(out.status.code(), Some(0));
    assert!(content(&tmp).starts_with("line 0\nLINE 1\nline 2\n"));
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    let named: Vec<String> = timing_marks(&stderr).into_iter().map(|(_, p)| p).collect();
    let written = named.iter().position(|p| p == "written");
    let counted = named.iter().position(|p| p == "counted");
    assert!(written.is_some() && written < counted, "{stderr}");
}
