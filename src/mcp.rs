//! `grammar-patch mcp`: the Model Context Protocol over stdio, with the
//! official SDK (rmcp). Tools `apply_patch` and `lint_patch` run the same
//! pipeline as the command line against one root; every supported format's
//! Lark grammar and prompt are resources. A rejected patch is a tool error
//! (`isError: true`) whose text is the contract's JSON result, so the model
//! reads the code, message and hint; nothing is written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

use crate::apply::{DiskTree, FileTree};
use crate::formats::{self, Format};
use crate::{agent, payload, report, run, Mode};

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

    fn run_tool(&self, mode: Mode, args: &Map<String, Value>) -> Result<CallToolResult, ErrorData> {
        let invalid = |m: String| ErrorData::invalid_params(m, None);
        if mode == Mode::Lint && args.contains_key("dry_run") {
            return Err(invalid(
                "lint_patch never writes: it takes no `dry_run`".into(),
            ));
        }
        let call = payload::from_fields(args.clone()).map_err(invalid)?;
        let format =
            formats::format_arg(call.format.as_deref().unwrap_or("auto")).map_err(invalid)?;
        let mode = match (mode, call.dry_run) {
            (Mode::Apply { .. }, Some(dry_run)) => Mode::Apply { dry_run },
            _ => mode,
        };
        let patch = call.patch;
        let mut tree = DiskTree::new(&self.root).map_err(|e| {
            ErrorData::internal_error(format!("root {}: {e}", self.root.display()), None)
        })?;
        let outcome = run(
            patch,
            format,
            mode,
            Some(&mut tree as &mut dyn FileTree),
            Some(&self.root),
        );
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

/// The input schema of a patch tool.
fn schema(with_dry_run: bool) -> Arc<Map<String, Value>> {
    let names: Vec<&str> = Format::ALL
        .iter()
        .filter(|f| f.is_supported())
        .map(|f| f.name())
        .collect();
    let mut properties = json!({
        "patch": {"type": "string", "description": "The whole patch text."},
        "format": {
            "type": "string",
            "enum": std::iter::once("auto").chain(names).collect::<Vec<_>>(),
            "description": "The patch format; `auto` (the default) detects it.",
        },
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
    vec![
        Tool::new(
            "apply_patch",
            "Apply a patch (unified diff, codex `*** Begin Patch`, or RepoPatch `PATCHSET`) to \
             the workspace: every file or none. Returns the JSON result; a refused patch is an \
             error whose JSON carries the code, message, patch line and a hint. The grammars \
             and model instructions are resources.",
            schema(true),
        ),
        Tool::new(
            "lint_patch",
            "Check a patch without writing: its syntax, its paths, and that every edit has \
             exactly one place in the workspace. Returns the same JSON as apply_patch.",
            schema(false),
        ),
    ]
}

/// `(uri, name, mime type, text)` of every resource.
fn resources() -> Vec<(String, String, &'static str, String)> {
    let mut out = vec![];
    for &format in Format::ALL.iter().filter(|f| f.is_supported()) {
        let name = format.name();
        if let Some(lark) = format.lark_grammar() {
            out.push((
                format!("grammar-patch://grammar/{name}.lark"),
                format!("{name} grammar (Lark)"),
                "text/plain",
                lark.to_string(),
            ));
        }
        if let Some(prompt) = agent::prompt(format) {
            out.push((
                format!("grammar-patch://prompt/{name}"),
                format!("{name} instructions for a model"),
                "text/markdown",
                prompt,
            ));
        }
    }
    out
}

impl ServerHandler for PatchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
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
        _context: RequestContext<RoleServer>,
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
        self.run_tool(mode, &args).map(Into::into)
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

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
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

/// Serves MCP on stdin/stdout until the client goes away.
pub fn serve(root: &Path) -> Result<(), String> {
    let server = PatchServer::new(root).map_err(|e| format!("--root {}: {e}", root.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())?;
        Ok(())
    })
}
