//! `McpToolExecutor`: one MCP tool as a `ToolExecutor` named `mcp__<server>__<tool>`.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::McpCallError;
use super::approval_rule::approval_annotations;
use super::output::McpToolOutput;
use super::server::{McpServer, McpTool};
use crate::approval::{McpToolAnnotations, request_mcp_tool_approval};
use crate::hooks::HookToolInput;
use crate::tool::{
    FunctionCallError, ToolExecutor, ToolExposure, ToolInvocation, ToolName, ToolOutput,
    ToolPayload, ToolSpec, parse_hook_arguments,
};

/// One tool of one MCP server.
pub struct McpToolExecutor {
    server: Arc<McpServer>,
    tool: McpTool,
    exposure: ToolExposure,
}

impl std::fmt::Debug for McpToolExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolExecutor")
            .field("server", &self.server.name())
            .field("tool", &self.tool.tool.name)
            .field("callable_name", &self.tool.callable_name)
            .field("exposure", &self.exposure)
            .finish()
    }
}

impl McpToolExecutor {
    pub(crate) fn new(server: Arc<McpServer>, tool: McpTool, exposure: ToolExposure) -> Self {
        Self {
            server,
            tool,
            exposure,
        }
    }

    /// The configured server name.
    pub fn server_name(&self) -> &str {
        self.server.name()
    }

    /// The tool name as the server knows it (sent in `tools/call`).
    pub fn raw_tool_name(&self) -> &str {
        &self.tool.tool.name
    }

    /// The raw MCP tool as listed.
    pub fn mcp_tool(&self) -> &Tool {
        &self.tool.tool
    }

    /// The tool's behaviour hints, when the server declares them.
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.tool.tool.annotations.as_ref()
    }

    /// The hints the approval check reads (missing hints count as `true`).
    pub fn approval_annotations(&self) -> McpToolAnnotations {
        approval_annotations(self.annotations())
    }

    /// Whether a call asks the user first (spec runtime §9.3; read-only tools never do).
    pub fn needs_approval(&self) -> bool {
        self.approval_annotations().requires_approval()
    }

    /// The hook-facing flat name `mcp__<server>__<tool>`.
    pub fn flat_name(&self) -> String {
        format!("{}{}", self.server.namespace(), self.tool.callable_name)
    }

    fn function_spec(&self) -> ToolSpec {
        let tool = &self.tool.tool;
        let description = tool
            .description
            .as_deref()
            .map(str::to_owned)
            .or_else(|| tool.title.clone())
            .unwrap_or_default();
        ToolSpec::Function {
            name: self.tool.callable_name.clone(),
            description,
            strict: false,
            defer_loading: (self.exposure == ToolExposure::Deferred).then_some(true),
            parameters: input_schema(tool),
            output_schema: Some(call_tool_result_schema(tool)),
        }
    }
}

/// What a call resolves with in code mode, as a JSON Schema: the whole `CallToolResult`, the
/// tool's declared output schema being that of its `structuredContent` (spec code-mode §5.3).
fn call_tool_result_schema(tool: &Tool) -> Value {
    let mut properties = JsonObject::new();
    properties.insert(
        "content".to_owned(),
        json!({ "type": "array", "items": { "type": "object" } }),
    );
    if let Some(schema) = &tool.output_schema {
        properties.insert(
            "structuredContent".to_owned(),
            Value::Object((**schema).clone()),
        );
    }
    properties.insert("isError".to_owned(), json!({ "type": "boolean" }));
    properties.insert("_meta".to_owned(), json!({ "type": "object" }));
    json!({
        "type": "object",
        "properties": properties,
        "required": ["content"],
        "additionalProperties": false
    })
}

/// The tool's input schema, with the `properties` the Responses API expects on objects.
fn input_schema(tool: &Tool) -> Value {
    let mut schema = (*tool.input_schema).clone();
    if schema.get("type").and_then(Value::as_str) == Some("object")
        && !schema.contains_key("properties")
    {
        schema.insert("properties".to_owned(), Value::Object(JsonObject::new()));
    }
    Value::Object(schema)
}

/// Empty → no arguments; JSON `null` → no arguments; an object → its fields; anything else
/// (including invalid JSON) → the error text shown to the model (spec runtime §9.3).
pub(crate) fn parse_arguments(raw: &str) -> Result<Option<JsonObject>, String> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Null) => Ok(None),
        Ok(Value::Object(object)) => Ok(Some(object)),
        Ok(other) => Err(format!("err: arguments must be a JSON object, got {other}")),
        Err(error) => Err(format!("err: {error}")),
    }
}

impl ToolExecutor for McpToolExecutor {
    fn tool_name(&self) -> ToolName {
        ToolName::namespaced(self.server.namespace(), self.tool.callable_name.clone())
    }

    /// A namespace holding the one function (spec runtime §9.2); no connector, so no
    /// namespace description.
    fn spec(&self) -> ToolSpec {
        ToolSpec::Namespace {
            name: self.server.namespace().to_owned(),
            description: String::new(),
            tools: vec![self.function_spec()],
        }
    }

    fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    /// Hooks see `mcp__<server>__<tool>` and the parsed arguments (blank → `{}`, invalid JSON
    /// → the raw string); a rewrite re-serializes the whole new input (the trait default).
    fn hook_input(&self, payload: &ToolPayload) -> Option<HookToolInput> {
        let ToolPayload::Function { arguments } = payload else {
            return None;
        };
        Some(HookToolInput {
            tool_name: self.flat_name(),
            tool_input: parse_hook_arguments(arguments),
            command: None,
        })
    }

    fn supports_parallel_tool_calls(&self) -> bool {
        self.server.config().supports_parallel_tool_calls
            || self
                .annotations()
                .and_then(|annotations| annotations.read_only_hint)
                == Some(true)
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let ToolPayload::Function { arguments } = &invocation.payload else {
                return Err(FunctionCallError::Fatal(format!(
                    "tool {} received an unsupported payload kind",
                    self.flat_name()
                )));
            };
            let arguments = match parse_arguments(arguments) {
                Ok(arguments) => arguments,
                Err(text) => return Ok(Box::new(McpToolOutput::error(text)) as Box<dyn ToolOutput>),
            };
            let raw = self.raw_tool_name();
            // Asked before anything reaches the server; a refusal is the call's error result.
            let approval_arguments = Value::Object(arguments.clone().unwrap_or_default());
            if let Err(refusal) = request_mcp_tool_approval(
                &invocation.context,
                self.server.name(),
                raw,
                &approval_arguments,
                self.approval_annotations(),
            )
            .await
            {
                tracing::debug!(server = self.server.name(), tool = raw, %refusal, "MCP tool call not approved");
                return Ok(Box::new(McpToolOutput::error(refusal)) as Box<dyn ToolOutput>);
            }
            tracing::debug!(server = self.server.name(), tool = raw, call_id = %invocation.call_id, "MCP tool call");
            match self
                .server
                .call_tool(raw, arguments, &invocation.cancellation)
                .await
            {
                Ok(result) => {
                    Ok(Box::new(McpToolOutput::from_result(&result)) as Box<dyn ToolOutput>)
                }
                Err(error @ McpCallError::Cancelled { .. }) => {
                    Err(FunctionCallError::RespondToModel(error.to_string()))
                }
                Err(error) => {
                    tracing::warn!(server = self.server.name(), tool = raw, %error, "MCP tool call failed");
                    Ok(Box::new(McpToolOutput::error(format!(
                        "tool call error: {error}"
                    ))))
                }
            }
        })
    }
}
