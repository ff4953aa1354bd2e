//! `codemode serve`: an MCP server over stdio exposing `exec` and `wait` to any MCP client,
//! with the configured tools as the cells' `tools.*` surface.
//!
//! # Contract
//! - `exec` takes `{code}` (pragma allowed); `wait` takes the model tool's arguments
//!   (`cell_id`, `yield_time_ms`, `max_tokens`, `terminate`).
//! - Results carry the model-facing content items (text and images); `isError` is set when
//!   the script failed or the call was refused.
//! - `notify()` messages are appended, as `notify: <text>` text items, to the next exec or
//!   wait result (an MCP client has no other channel into the model's context).
//!
//! # Termination
//! When the client closes stdin the server terminates every cell and exits.

use std::sync::{Arc, Mutex, PoisonError};

use codemode_runtime::code_mode::{
    EXEC_TOOL_NAME, ExecNotification, WAIT_TOOL_NAME, wait_tool_spec,
};
use codemode_runtime::router::ToolCallResult;
use codemode_runtime::session::Session;
use codemode_runtime::tool::{FunctionCallOutputContentItem, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::args::ServeArgs;
use crate::observation::{Observation, Status};
use crate::setup::{Mode, start_session};

/// What the server tells clients about itself.
const INSTRUCTIONS: &str = "Call `exec` with JavaScript source in `code`; nested tools are \
available as `tools.<name>(args)` (see the exec description). A script that outlives its \
yield time returns `Script running with cell ID <id>`; call `wait` with that `cell_id` to \
get more output or the result.";

/// Runs `codemode serve` until the client disconnects.
pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<u8> {
    let session = Arc::new(start_session(&args.common, Mode::Serve).await?);
    let server = CodemodeServer::new(session.clone());
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| anyhow::anyhow!("MCP initialization failed: {error}"))?;
    let quit = running.waiting().await;
    session.shutdown().await;
    quit.map_err(|error| anyhow::anyhow!("MCP server task failed: {error}"))?;
    Ok(0)
}

/// The MCP server handler.
struct CodemodeServer {
    session: Arc<Session>,
    tools: Vec<Tool>,
    notifications: Mutex<Option<UnboundedReceiver<ExecNotification>>>,
}

impl CodemodeServer {
    fn new(session: Arc<Session>) -> Self {
        let tools = vec![exec_tool(&session), wait_tool()];
        let notifications = Mutex::new(session.take_notifications());
        Self {
            session,
            tools,
            notifications,
        }
    }

    async fn call(&self, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            EXEC_TOOL_NAME => {
                let Some(code) = arguments.get("code").and_then(Value::as_str) else {
                    return Err(ErrorData::invalid_params(
                        "exec expects a string argument `code` with JavaScript source",
                        None,
                    ));
                };
                self.session.exec(code).await
            }
            WAIT_TOOL_NAME => self.session.wait(Value::Object(arguments)).await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{other}`; this server has `exec` and `wait`"),
                    None,
                ));
            }
        };
        Ok(self.to_mcp(&result))
    }

    /// The model-facing items as MCP content, plus pending notifications.
    fn to_mcp(&self, result: &ToolCallResult) -> CallToolResult {
        let observation = Observation::from_result(result, None);
        let mut content: Vec<ContentBlock> =
            observation.model_items.iter().map(content_block).collect();
        content.extend(
            self.pending_notifications()
                .into_iter()
                .map(|notification| ContentBlock::text(format!("notify: {}", notification.text))),
        );
        if observation.status == Status::Failed {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
    }

    fn pending_notifications(&self) -> Vec<ExecNotification> {
        let mut guard = self
            .notifications
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut pending = Vec::new();
        if let Some(receiver) = guard.as_mut() {
            while let Ok(notification) = receiver.try_recv() {
                pending.push(notification);
            }
        }
        pending
    }
}

/// One content item as an MCP content block; a `data:` image URL becomes an image block.
fn content_block(item: &FunctionCallOutputContentItem) -> ContentBlock {
    match item {
        FunctionCallOutputContentItem::InputText { text } => ContentBlock::text(text.clone()),
        FunctionCallOutputContentItem::InputImage { image_url, .. } => {
            match image_url
                .strip_prefix("data:")
                .and_then(|rest| rest.split_once(";base64,"))
            {
                Some((mime, data)) => ContentBlock::image(data, mime),
                None => ContentBlock::text(format!("[image: {image_url}]")),
            }
        }
    }
}

/// `exec` with the session's model-facing description (every nested tool documented).
fn exec_tool(session: &Session) -> Tool {
    let tools = session.model_tools();
    let description = tools
        .as_array()
        .into_iter()
        .flatten()
        .find(|tool| tool.get("name").and_then(Value::as_str) == Some(EXEC_TOOL_NAME))
        .and_then(|tool| tool.get("description").and_then(Value::as_str))
        .unwrap_or("Runs JavaScript in a code-mode cell.")
        .to_owned();
    let schema = json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "JavaScript source, optionally starting with a `// @exec: {\"yield_time_ms\": 10000, \"max_output_tokens\": 1000}` line."
            }
        },
        "required": ["code"],
        "additionalProperties": false
    });
    Tool::new(EXEC_TOOL_NAME, description, object(schema))
}

/// `wait` with the model tool's description and parameters.
fn wait_tool() -> Tool {
    match wait_tool_spec() {
        ToolSpec::Function {
            name,
            description,
            parameters,
            ..
        } => Tool::new(name, description, object(parameters)),
        other => Tool::new(WAIT_TOOL_NAME, format!("{other:?}"), JsonObject::new()),
    }
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

impl ServerHandler for CodemodeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("codemode", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request).await.map(CallToolResponse::from)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }
}
