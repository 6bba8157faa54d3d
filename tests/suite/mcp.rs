//! `grammar-patch mcp` driven by a real MCP client: rmcp's own client over
//! a child process, as an agent runtime would connect. The tools apply and
//! lint against the root; a refused patch is a tool error carrying the
//! JSON error, and the tree is untouched; grammars and prompts are
//! resources, and the prompts MCP prompts too.

use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};

use grammar_patch::agent;
use grammar_patch::formats::Format;

const PATCH: &str = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An rmcp client of `grammar-patch mcp --root ROOT`, run as a child.
async fn connect(root: &std::path::Path) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let command =
        tokio::process::Command::new(env!("CARGO_BIN_EXE_grammar-patch")).configure(|c| {
            c.arg("mcp").arg("--root").arg(root);
        });
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

#[test]
fn an_mcp_client_applies_lints_and_reads_resources() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f.txt");
    std::fs::write(&file, "a\nb\n").unwrap();
    let root = tmp.path().to_path_buf();
    runtime().block_on(async move {
        let client = connect(&root).await;

        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["apply_patch", "lint_patch"]);

        let call =
            |name: &'static str, a: Value| CallToolRequestParams::new(name).with_arguments(args(a));
        // Every result, in the output schema's shape.
        let text = |r: &rmcp::model::CallToolResult| -> Value {
            let t = r.content[0].as_text().expect("text content").text.clone();
            let v = serde_json::from_str(&t).unwrap();
            super::support::assert_valid_result(&v);
            v
        };

        // A stale patch: a tool error holding the JSON error; nothing written.
        let stale = client
            .call_tool(call(
                "apply_patch",
                json!({"patch": PATCH.replace("-b", "-x")}),
            ))
            .await
            .unwrap();
        assert_eq!(stale.is_error, Some(true));
        let v = text(&stale);
        assert_eq!(v["ok"], false);
        assert_eq!(v["error"]["code"], "context_not_found");
        assert!(
            v["error"]["hint"].as_str().unwrap().contains("re-read"),
            "{v}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\n");

        // Lint and dry run write nothing.
        let lint = client
            .call_tool(call("lint_patch", json!({"patch": PATCH})))
            .await
            .unwrap();
        assert_eq!(lint.is_error, Some(false));
        let dry = client
            .call_tool(call(
                "apply_patch",
                json!({"patch": PATCH, "format": "udiff", "dry_run": true}),
            ))
            .await
            .unwrap();
        assert_eq!(text(&dry)["dry_run"], true);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\n");

        // Applied for real.
        let done = client
            .call_tool(call("apply_patch", json!({"patch": PATCH})))
            .await
            .unwrap();
        assert_eq!(done.is_error, Some(false));
        assert_eq!(text(&done)["files"][0]["action"], "modified");
        assert_eq!(done.structured_content.as_ref().unwrap()["ok"], true);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nB\n");

        // `idempotentHint` is true: a call sent again (an agent retrying
        // after a time-out) leaves the tree as the first one left it, for
        // a change and for insertions with no context after them (a udiff
        // append, then a codex one).
        let append_udiff = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,3 @@\n a\n B\n+c\n";
        let append_codex =
            "*** Begin Patch\n*** Update File: f.txt\n@@\n B\n c\n+d\n*** End Patch\n";
        for (patch, after) in [
            (PATCH, "a\nB\n"),
            (append_udiff, "a\nB\nc\n"),
            (append_codex, "a\nB\nc\nd\n"),
        ] {
            if patch != PATCH {
                let first = client
                    .call_tool(call("apply_patch", json!({ "patch": patch })))
                    .await
                    .unwrap();
                assert_eq!(first.is_error, Some(false), "{}", text(&first));
            }
            let again = client
                .call_tool(call("apply_patch", json!({ "patch": patch })))
                .await
                .unwrap();
            assert_eq!(again.is_error, Some(true), "{patch}: {}", text(&again));
            assert_eq!(std::fs::read_to_string(&file).unwrap(), after, "{patch}");
        }
        std::fs::write(&file, "a\nB\n").unwrap();

        // OpenAI's apply_patch_call items, and a SEARCH/REPLACE message, as
        // the `patch` string: the same pipeline.
        let items = json!([{"type": "apply_patch_call", "call_id": "c1", "status": "completed",
            "operation": {"type": "update_file", "path": "f.txt", "diff": "@@\n a\n-B\n+b\n"}}]);
        let openai = client
            .call_tool(call("lint_patch", json!({"patch": items.to_string()})))
            .await
            .unwrap();
        assert_eq!(text(&openai)["format"], "codex", "{}", text(&openai));
        assert_eq!(text(&openai)["files"][0]["path"], "f.txt");
        let blocks = "f.txt\n<<<<<<< SEARCH\nB\n=======\nb\n>>>>>>> REPLACE\n";
        let sr = client
            .call_tool(call("lint_patch", json!({"patch": blocks})))
            .await
            .unwrap();
        assert_eq!(text(&sr)["format"], "searchreplace");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nB\n");
        // Anthropic's text-editor commands, applied: `B` becomes `b`.
        let commands = json!([{"type": "tool_use", "id": "toolu_1", "name": "str_replace_based_edit_tool",
            "input": {"command": "str_replace", "path": "f.txt", "old_str": "B", "new_str": "b"}}]);
        let anthropic = client
            .call_tool(call("apply_patch", json!({"patch": commands.to_string()})))
            .await
            .unwrap();
        assert_eq!(anthropic.is_error, Some(false), "{}", text(&anthropic));
        assert_eq!(text(&anthropic)["format"], "anthropic");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\n");
        std::fs::write(&file, "a\nB\n").unwrap();

        // Arguments outside the schema are refused, not guessed at: a tool
        // result with `isError` (the model reads it and corrects the call),
        // code `usage_error`, in the output schema's shape.
        for (name, bad) in [
            ("apply_patch", json!({"patch": PATCH, "dryrun": true})),
            ("apply_patch", json!({"format": "udiff"})),
            ("apply_patch", json!({"patch": PATCH, "format": "nope"})),
            ("apply_patch", json!({"patch": 5})),
            ("apply_patch", json!({"patch": PATCH, "dry_run": "yes"})),
            ("apply_patch", json!({})),
            ("lint_patch", json!({"patch": PATCH, "dry_run": false})),
        ] {
            let refused = client.call_tool(call(name, bad.clone())).await.unwrap();
            assert_eq!(refused.is_error, Some(true), "{bad}");
            let v = text(&refused);
            assert_eq!(v["error"]["code"], "usage_error", "{bad}: {v}");
            assert!(v["error"]["hint"].as_str().unwrap().contains("patch"));
            assert_eq!(refused.structured_content.as_ref(), Some(&v));
            super::support::assert_valid_result(&v);
        }
        // Tools say what they are, and what they return.
        let apply = tools.iter().find(|t| t.name == "apply_patch").unwrap();
        let lint_tool = tools.iter().find(|t| t.name == "lint_patch").unwrap();
        let (a, l) = (
            apply.annotations.as_ref().unwrap(),
            lint_tool.annotations.as_ref().unwrap(),
        );
        assert_eq!(apply.title.as_deref(), Some("Apply a patch"));
        assert_eq!(
            (a.destructive_hint, a.idempotent_hint),
            (Some(true), Some(true))
        );
        assert_eq!(
            (l.read_only_hint, a.read_only_hint),
            (Some(true), Some(false))
        );
        for tool in [apply, lint_tool] {
            let schema = tool.output_schema.as_ref().expect("an output schema");
            assert_eq!(schema["title"], "grammar-patch result");
        }
        let server = client.peer_info().unwrap();
        let info = server.server_info.as_ref().expect("serverInfo");
        assert_eq!(info.name, "grammar-patch");
        assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
        // Lint lists the files, as a dry run does.
        assert_eq!(text(&lint)["files"], text(&dry)["files"]);
        super::support::assert_valid_result(&text(&lint));
        assert!(
            client
                .call_tool(call("frobnicate", json!({})))
                .await
                .is_err(),
            "no such tool"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nB\n");

        // Every supported format's grammar and prompt.
        let resources = client.list_all_resources().await.unwrap();
        for format in Format::ALL.iter() {
            let lark_uri = format!("grammar-patch://grammar/{}.lark", format.name());
            let prompt_uri = format!("grammar-patch://prompt/{}", format.name());
            for (uri, want) in [
                (lark_uri, format.lark_grammar().to_string()),
                (prompt_uri, agent::prompt(*format)),
            ] {
                assert!(resources.iter().any(|r| r.uri == uri), "{uri} not listed");
                let read = client
                    .read_resource(ReadResourceRequestParams::new(uri.clone()))
                    .await
                    .unwrap();
                match &read.contents[0] {
                    ResourceContents::TextResourceContents { text, .. } => {
                        assert_eq!(text, &want, "{uri}")
                    }
                    other => panic!("{uri}: {other:?}"),
                }
            }
        }

        // ap's ID-bound grammar, through the resource template.
        let templates = client.list_all_resource_templates().await.unwrap();
        assert!(
            templates
                .iter()
                .any(|t| t.uri_template == "grammar-patch://grammar/ap/{id}.lark"),
            "{templates:?}"
        );
        let uri = "grammar-patch://grammar/ap/3d7e1a90.lark".to_string();
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        match &read.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => assert_eq!(
                text,
                &*Format::Ap.lark_grammar_for(Some("3d7e1a90")).unwrap()
            ),
            other => panic!("{uri}: {other:?}"),
        }
        let bad = client
            .read_resource(ReadResourceRequestParams::new(
                "grammar-patch://grammar/ap/nothex!.lark".to_string(),
            ))
            .await;
        assert!(bad.is_err(), "a malformed ID is no resource");
        client.cancel().await.unwrap();
    });
}

/// The server speaks MCP's own words: `instructions` in the initialize
/// result, each format's instructions as an MCP prompt, the `tolerant` and
/// `diff` arguments the command line has as options, and hints that name
/// a tool call's arguments (`"format": "udiff"`), never a command-line
/// option (`--format udiff`).
#[test]
fn mcp_serves_prompts_instructions_and_hints_in_its_own_words() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.txt"), "a\nb\n").unwrap();
    std::fs::write(tmp.path().join("a.txt"), "a\n").unwrap();
    let root = tmp.path().to_path_buf();
    runtime().block_on(async move {
        let client = connect(&root).await;
        let info = client.peer_info().unwrap();
        let instructions = info.instructions.as_deref().expect("instructions");
        assert!(instructions.contains("apply_patch") && instructions.contains("lint_patch"));

        // Each format's prompt, as the command line's `prompt` prints it.
        let prompts = client.list_all_prompts().await.unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        let formats: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names, formats);
        for format in Format::ALL {
            let got = client
                .get_prompt(GetPromptRequestParams::new(format.name()))
                .await
                .unwrap();
            let text = &got.messages[0].content.as_text().expect("text").text;
            assert_eq!(text, &agent::prompt(*format), "{format}");
        }
        assert!(client
            .get_prompt(GetPromptRequestParams::new("nope"))
            .await
            .is_err());

        let call =
            |name: &'static str, a: Value| CallToolRequestParams::new(name).with_arguments(args(a));
        let result = |r: &rmcp::model::CallToolResult| -> Value {
            let t = r.content[0].as_text().expect("text content").text.clone();
            let v: Value = serde_json::from_str(&t).unwrap();
            super::support::assert_valid_result(&v);
            v
        };

        // A udiff patch called codex: the hint names the argument.
        let wrong = client
            .call_tool(call(
                "lint_patch",
                json!({"patch": PATCH, "format": "codex"}),
            ))
            .await
            .unwrap();
        let v = result(&wrong);
        let hint = v["error"]["hint"].as_str().unwrap();
        assert!(hint.contains("`\"format\": \"udiff\"`"), "{hint}");
        assert!(!hint.contains("--"), "{hint}");

        // ap's tolerant mode: refused without it, with a hint naming the
        // argument; applied with it, with a warning.
        // No `<ID> AP 3.2` header.
        let ap = "9f3c2a1e FILE\na.txt\n9f3c2a1e REPLACE\n9f3c2a1e snippet\na\n\
                  9f3c2a1e content\nA\n";
        let strict = client
            .call_tool(call("apply_patch", json!({"patch": ap, "format": "ap"})))
            .await
            .unwrap();
        let v = result(&strict);
        assert_eq!(strict.is_error, Some(true), "{v}");
        let hint = v["error"]["hint"].as_str().unwrap();
        assert!(
            hint.contains("`\"tolerant\": true`") && !hint.contains("--"),
            "{hint}"
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("a.txt")).unwrap(),
            "a\n"
        );
        let tolerant = client
            .call_tool(call(
                "apply_patch",
                json!({"patch": ap, "format": "ap", "tolerant": true}),
            ))
            .await
            .unwrap();
        let v = result(&tolerant);
        assert_eq!(tolerant.is_error, Some(false), "{v}");
        let codes: Vec<&Value> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| &d["code"])
            .collect();
        assert!(codes.contains(&&json!("tolerated_format_slip")), "{v}");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("a.txt")).unwrap(),
            "A\n"
        );

        // The review diff, per file.
        let diffed = client
            .call_tool(call("apply_patch", json!({"patch": PATCH, "diff": true})))
            .await
            .unwrap();
        let v = result(&diffed);
        let diff = v["files"][0]["diff"].as_str().expect("a diff");
        assert!(diff.contains("-b\n+B\n"), "{diff}");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("f.txt")).unwrap(),
            "a\nB\n"
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn mcp_with_a_missing_root_is_a_usage_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grammar-patch"))
        .args(["mcp", "--root", "/nonexistent/grammar-patch-root"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--root"));
}

/// A line that is not JSON gets JSON-RPC's parse error (`-32700`, id
/// null), and the session goes on: the next request is answered.
#[test]
fn a_line_that_is_not_json_is_a_parse_error() {
    use std::io::Write;
    let root = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_grammar-patch"))
        .args(["mcp", "--root"])
        .arg(root.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{{not json\n{init}").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        replies
            .iter()
            .any(|r| r["error"]["code"] == -32700 && r["id"].is_null()),
        "{replies:?}"
    );
    assert!(
        replies
            .iter()
            .any(|r| r["id"] == 1 && r["result"]["serverInfo"]["name"] == "grammar-patch"),
        "{replies:?}"
    );
}
