//! `grammar-patch mcp`: the Model Context Protocol over stdio, with the
//! official SDK (rmcp). Tools `apply_patch` and `lint_patch` run the same
//! pipeline as the command line against one root; every supported format's
//! Lark grammar is a resource, and its instructions for a model are an MCP
//! prompt (and a resource). A rejected patch is a tool error
//! (`isError: true`) whose text is the contract's JSON result, so the model
//! reads the code, message and hint; nothing is written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

use crate::apply::DiskTree;
use crate::error::Code;
use crate::formats::Format;
use crate::{agent, report, Mode, Request};

/// The server: one root, fixed at start.
#[derive(Debug, Clone)]
pub struct PatchServer {
    root: PathBuf,
}

impl PatchServer {
    /// A server for the tree under `root` (canonicalised).
    pub fn new(root: &Path) -> std::io::Result<PatchServer> {
        Ok(PatchServer {
            root: DiskTree::new(root)?.root().to_path_buf(),
        })
    }

    /// Runs one tool call; `go_on` turns false when the client cancels it,
    /// which stops a wait for the lock, and any call not yet committing.
    fn run_tool(
        &self,
        mode: Mode,
        args: &Map<String, Value>,
        go_on: &(dyn Fn() -> bool + Sync),
    ) -> Result<CallToolResult, ErrorData> {
        // Wrong arguments are a tool result the model reads and can
        // correct (`isError`, code `usage_error`), not a protocol error.
        let dry_run = mode != (Mode::Apply { dry_run: false });
        let invalid = |m: String| {
            let value = report::failure(Code::UsageError, &m, Some(ARGUMENTS_HINT), dry_run);
            let mut result = CallToolResult::error(vec![ContentBlock::text(value.to_string())]);
            result.structured_content = Some(value);
            Ok(result)
        };
        if mode == Mode::Lint && args.contains_key("dry_run") {
            return invalid("lint_patch never writes: it takes no `dry_run`".into());
        }
        let request = match Request::from_fields(args.clone()) {
            Ok(request) if mode == Mode::Lint => request.lint(),
            Ok(request) => request,
            Err(e) => return invalid(e),
        };
        let outcome = match request.root(&self.root).until(go_on).run() {
            Ok(outcome) => outcome,
            Err(d) if d.code == Code::UsageError => return invalid(d.message),
            Err(d) => return Err(ErrorData::internal_error(d.message, None)),
        };
        let value = report::to_value(&outcome);
        let text = value.to_string();
        let mut result = if outcome.ok() {
            CallToolResult::success(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::error(vec![ContentBlock::text(text)])
        };
        result.structured_content = Some(value);
        Ok(result)
    }
}

/// How to call the tools right, for a model that called one wrong.
const ARGUMENTS_HINT: &str = "call with {\"patch\": \"<the whole patch>\"}, optionally \
     \"format\" (auto, udiff, codex, repopatch, ap), \"tolerant\": true, \"diff\": true and, \
     for apply_patch, \"dry_run\": true";

/// What the server is, for the client's model (the initialize result's
/// `instructions`).
const INSTRUCTIONS: &str = "Edits files in one workspace by applying patches. Call \
     `apply_patch` with the whole patch (a unified diff, a codex `*** Begin Patch`, a RepoPatch \
     `PATCHSET`, or an ap patch): every file changes or none does. Call `lint_patch` to check \
     a patch without writing. A refused patch returns a JSON result whose `code`, `message` \
     and `hint` say what to fix; correct the patch and call again. The prompts \
     (`udiff`, `codex`, `repopatch`, `ap`) teach a model each format; the resources hold \
     each format's Lark grammar, to constrain a model's output.";

/// The output schema of both tools: the JSON result, in the shape
/// `schema/result.schema.json` documents.
fn output_schema() -> Arc<Map<String, Value>> {
    match serde_json::from_str(include_str!("../schema/result.schema.json")) {
        Ok(Value::Object(map)) => Arc::new(map),
        _ => unreachable!("the committed schema is a JSON object (a test reads it)"),
    }
}

/// The input schema of a patch tool.
fn schema(with_dry_run: bool) -> Arc<Map<String, Value>> {
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    let mut properties = json!({
        "patch": {
            "type": "string",
            "description": "The whole patch text; or, as JSON text, OpenAI `apply_patch_call` \
                items or Anthropic text-editor commands (`str_replace`, `create`, `insert`).",
        },
        "format": {
            "type": "string",
            "enum": std::iter::once("auto").chain(names).collect::<Vec<_>>(),
            "description": "The patch format; `auto` (the default) detects it.",
        },
    });
    properties["tolerant"] = json!({
        "type": "boolean",
        "description": "ap only: forgive a missing header, `#` comments between directives, \
            an anchor without a snippet, a redundant project prefix on a path and a top-level \
            insertion inside a block (each a warning).",
    });
    properties["diff"] = json!({
        "type": "boolean",
        "description": "Also return, per file, what was (or would be) written as a git diff.",
    });
    if with_dry_run {
        properties["dry_run"] =
            json!({"type": "boolean", "description": "Do everything but write."});
    }
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": ["patch"],
        "additionalProperties": false,
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("a JSON object literal"),
    }
}

fn tools() -> Vec<Tool> {
    let apply = ToolAnnotations::with_title("Apply a patch")
        .read_only(false)
        .destructive(true)
        .idempotent(true)
        .open_world(false);
    let lint = ToolAnnotations::with_title("Check a patch")
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false);
    vec![
        Tool::new(
            "apply_patch",
            "Apply a patch (unified diff, codex `*** Begin Patch`, RepoPatch `PATCHSET`, or ap \
             `<ID> AP 3.x`) to the workspace: every file or none. Returns the JSON result; a \
             refused patch is an error whose JSON carries the code, message, patch line and a \
             hint. The grammars and model instructions are resources; to constrain a model \
             writing ap, use grammar-patch://grammar/ap/{id}.lark with the patch's own ID.",
            schema(true),
        )
        .with_title("Apply a patch")
        .with_annotations(apply)
        .with_raw_output_schema(output_schema()),
        Tool::new(
            "lint_patch",
            "Check a patch without writing: its syntax, its paths, and that every edit has \
             exactly one place in the workspace. Returns the same JSON as apply_patch.",
            schema(false),
        )
        .with_title("Check a patch")
        .with_annotations(lint)
        .with_raw_output_schema(output_schema()),
    ]
}

/// The template of ap's ID-bound grammars: the grammar a model decoding an
/// ap patch should get, since only it makes every directive carry one ID.
const AP_GRAMMAR_TEMPLATE: &str = "grammar-patch://grammar/ap/{id}.lark";

/// ap's grammar bound to the ID in a `grammar-patch://grammar/ap/{id}.lark` URI.
fn ap_bound_grammar(uri: &str) -> Option<String> {
    let id = uri
        .strip_prefix("grammar-patch://grammar/ap/")?
        .strip_suffix(".lark")?;
    if !agent::is_patch_id(id) {
        return None;
    }
    Format::Ap
        .lark_grammar_for(Some(id))
        .ok()
        .map(|g| g.into_owned())
}

/// What a format's prompt is.
fn prompt_description(format: Format) -> String {
    format!(
        "How to write a {} patch ({}): instructions and a worked example for a model's \
         system prompt",
        format.name(),
        format.describe()
    )
}

/// `(uri, name, mime type, text)` of every resource.
fn resources() -> Vec<(String, String, &'static str, String)> {
    let mut out = vec![];
    for format in Format::ALL {
        let name = format.name();
        out.push((
            format!("grammar-patch://grammar/{name}.lark"),
            format!("{name} grammar (Lark)"),
            "text/plain",
            format.lark_grammar().to_string(),
        ));
        out.push((
            format!("grammar-patch://prompt/{name}"),
            format!("{name} instructions for a model"),
            "text/markdown",
            agent::prompt(*format),
        ));
    }
    out
}

impl ServerHandler for PatchServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::new("grammar-patch", env!("CARGO_PKG_VERSION"));
        info.title = Some("grammar-patch".into());
        info.description = Some(env!("CARGO_PKG_DESCRIPTION").into());
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(info)
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            Format::ALL
                .iter()
                .map(|f| {
                    Prompt::new(f.name(), Some(prompt_description(*f)), None)
                        .with_title(format!("Write a {} patch", f.name()))
                })
                .collect(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(format) = Format::ALL.iter().find(|f| f.name() == request.name) else {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "no prompt `{}` (the prompts: {})",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            agent::prompt(*format),
        )])
        .with_description(prompt_description(*format))
        .into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let mode = match request.name.as_ref() {
            "apply_patch" => Mode::Apply { dry_run: false },
            "lint_patch" => Mode::Lint,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool `{other}`"),
                    None,
                ))
            }
        };
        // Off the protocol's thread, so pings, cancellations and other
        // calls are served while this one waits for the root or works.
        let server = self.clone();
        let cancelled = context.ct.clone();
        tokio::task::spawn_blocking(move || {
            server.run_tool(mode, &args, &|| !cancelled.is_cancelled())
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            resources()
                .into_iter()
                .map(|(uri, name, mime, _)| Resource::new(uri, name).with_mime_type(mime))
                .collect(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(
                AP_GRAMMAR_TEMPLATE,
                "ap grammar bound to one patch ID (Lark)",
            )
            .with_description(
                "ap's Lark grammar with every directive bound to the patch ID {id} (8 hex \
                     digits): use it to constrain a model writing an ap patch. The generic \
                     grammar-patch://grammar/ap.lark admits any ID on any line.",
            )
            .with_mime_type("text/plain"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(text) = ap_bound_grammar(&request.uri) {
            return Ok(ReadResourceResult::new(vec![ResourceContents::text(
                text,
                request.uri.clone(),
            )
            .with_mime_type("text/plain")])
            .into());
        }
        let Some((uri, _, mime, text)) = resources().into_iter().find(|r| r.0 == request.uri)
        else {
            return Err(ErrorData::resource_not_found(
                format!("no resource at {}", request.uri),
                None,
            ));
        };
        Ok(
            ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(mime)])
                .into(),
        )
    }
}

/// Serves MCP on stdin/stdout until the client goes away. Nothing is read
/// from the root, or written, until a tool is called: `apply_patch` rolls
/// back an interrupted apply first, as every apply does.
pub fn serve(root: &Path) -> Result<(), String> {
    let server = PatchServer::new(root).map_err(|e| format!("--root {}: {e}", root.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        // rmcp talks to one end of a pipe; `checked_stdio` joins the other
        // end to stdin and stdout, answering what is not a valid message.
        let (ours, rmcps) = tokio::io::duplex(1 << 16);
        let relay = tokio::spawn(checked_stdio(ours));
        let (read, write) = tokio::io::split(rmcps);
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(read, write)
            .with_max_line_length(MAX_MESSAGE + 1);
        let service = server.serve(transport).await.map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())?;
        relay.await.map_err(|e| e.to_string())?;
        Ok(())
    })
}

/// The longest message read, in bytes; a longer line gets an error reply
/// (`-32600`, id null) and is dropped, and the session goes on.
pub const MAX_MESSAGE: usize = 64 << 20;

/// A JSON-RPC error reply.
fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// What the relay does with one line from the client.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// A well-formed message: rmcp's to handle.
    Pass,
    /// Not one: this error reply instead.
    Reply(Value),
    /// A malformed notification: JSON-RPC answers none.
    Drop,
}

/// Checks one line against JSON-RPC 2.0 and MCP's framing, before rmcp
/// sees it: every error reply carries `id` (null when it cannot be known).
fn check(line: &[u8]) -> Verdict {
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Reply(error_reply(
            Value::Null,
            -32700,
            "Parse error: a message is UTF-8 text",
        ));
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return Verdict::Reply(error_reply(
            Value::Null,
            -32700,
            "Parse error: a message is one line of JSON",
        ));
    };
    let Value::Object(message) = &value else {
        return Verdict::Reply(error_reply(
            Value::Null,
            -32600,
            "Invalid Request: a message is one JSON object (batches are not part of MCP)",
        ));
    };
    let id = message.get("id");
    let id_ok = match id {
        None | Some(Value::String(_)) => true,
        Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    if !id_ok {
        return Verdict::Reply(error_reply(
            Value::Null,
            -32600,
            "Invalid Request: `id` is a string or an integer",
        ));
    }
    let reply_id = id.cloned().unwrap_or(Value::Null);
    let invalid = |m: &str| Verdict::Reply(error_reply(reply_id.clone(), -32600, m));
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("Invalid Request: `jsonrpc` must be \"2.0\"");
    }
    match message.get("method") {
        None if id.is_some()
            && (message.contains_key("result") || message.contains_key("error")) =>
        {
            Verdict::Pass
        }
        None => invalid("Invalid Request: a request has a `method`"),
        Some(Value::String(method)) => {
            let params = message.get("params");
            let params_ok = matches!(
                params,
                None | Some(Value::Object(_)) | Some(Value::Array(_))
            );
            let arguments = params.and_then(|p| p.get("arguments"));
            let arguments_ok = method != "tools/call"
                || matches!(arguments, None | Some(Value::Object(_)) | Some(Value::Null));
            match (params_ok && arguments_ok, id) {
                (true, _) => Verdict::Pass,
                (false, None) => Verdict::Drop,
                (false, Some(_)) => Verdict::Reply(error_reply(
                    reply_id,
                    -32602,
                    if params_ok {
                        "Invalid params: a tool's `arguments` is a JSON object"
                    } else {
                        "Invalid params: `params` is a JSON object"
                    },
                )),
            }
        }
        Some(_) => invalid("Invalid Request: `method` is a string"),
    }
}

/// One line read by [`read_line`].
enum Line {
    /// A whole line (its `\n` taken off) is in the buffer.
    Whole,
    /// The line was longer than the limit: dropped, unread.
    TooLong,
    /// The end of the input.
    End,
}

/// Reads one line into `buf`, never holding more than `limit` bytes of it.
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    use tokio::io::AsyncBufReadExt;
    buf.clear();
    let mut dropping = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if dropping {
                Line::TooLong
            } else if buf.is_empty() {
                Line::End
            } else {
                Line::Whole
            });
        }
        let (take, done) = match crate::bytes::find(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !dropping && buf.len() + take > limit {
            dropping = true;
            buf.clear();
            buf.shrink_to(1 << 16);
        }
        if !dropping {
            buf.extend_from_slice(&chunk[..take]);
        }
        input.consume(take + usize::from(done));
        if done {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(if dropping { Line::TooLong } else { Line::Whole });
        }
    }
}

/// Relays stdin to rmcp and rmcp to stdout, a line at a time, answering
/// what rmcp would drop or answer without an `id` (see [`check`]). One
/// task writes stdout, so replies never interleave.
async fn checked_stdio(pipe: tokio::io::DuplexStream) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (from_rmcp, mut to_rmcp) = tokio::io::split(pipe);
    let (errors, mut own_replies) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let reader = tokio::spawn(async move {
        let mut input = BufReader::with_capacity(1 << 16, tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            let verdict = match read_line(&mut input, &mut line, MAX_MESSAGE).await {
                Ok(Line::End) | Err(_) => break,
                Ok(Line::TooLong) => Verdict::Reply(error_reply(
                    Value::Null,
                    -32600,
                    "Invalid Request: a message longer than 64 MiB was dropped",
                )),
                Ok(Line::Whole) if line.trim_ascii().is_empty() => continue,
                Ok(Line::Whole) => check(&line),
            };
            match verdict {
                Verdict::Pass => {
                    let sent = to_rmcp.write_all(&line).await;
                    if sent.and(to_rmcp.write_all(b"\n").await).is_err() {
                        break;
                    }
                }
                Verdict::Reply(reply) => {
                    let _ = errors.send(reply);
                }
                Verdict::Drop => {}
            }
        }
        // End of input: rmcp sees the pipe close and stops.
        let _ = to_rmcp.shutdown().await;
    });
    let mut out = tokio::io::stdout();
    let mut replies = BufReader::new(from_rmcp).lines();
    let mut stdin_open = true;
    loop {
        let line = tokio::select! {
            reply = replies.next_line() => match reply {
                Ok(Some(reply)) => with_id(reply),
                _ => break,
            },
            own = own_replies.recv(), if stdin_open => match own {
                Some(reply) => reply.to_string(),
                None => {
                    stdin_open = false;
                    continue;
                }
            },
        };
        let written = out.write_all(line.as_bytes()).await;
        if written.and(out.write_all(b"\n").await).is_err() || out.flush().await.is_err() {
            break;
        }
    }
    reader.abort();
}

/// An error reply of rmcp's without an `id` gets `"id": null`, as JSON-RPC
/// requires.
fn with_id(reply: String) -> String {
    match serde_json::from_str::<Value>(&reply) {
        Ok(Value::Object(mut m)) if m.contains_key("error") && !m.contains_key("id") => {
            m.insert("id".into(), Value::Null);
            Value::Object(m).to_string()
        }
        _ => reply,
    }
}
