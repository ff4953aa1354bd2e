//! `McpToolOutput`: a `CallToolResult` as the model and code mode see it.

use base64::Engine as _;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use crate::tool::{FunctionCallOutputContentItem, ResponseInputItem, ToolOutput, ToolPayload};

/// The result of one MCP tool call, kept as MCP JSON: `{content, structuredContent?, isError?}`
/// (`_meta` and protocol bookkeeping such as `resultType` dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolOutput {
    result: Value,
}

impl McpToolOutput {
    /// Wraps a server result.
    pub fn from_result(result: &CallToolResult) -> Self {
        let mut object = Map::new();
        object.insert(
            "content".to_owned(),
            serde_json::to_value(&result.content).unwrap_or_else(|_| json!([])),
        );
        if let Some(structured) = &result.structured_content {
            object.insert("structuredContent".to_owned(), structured.clone());
        }
        if let Some(is_error) = result.is_error {
            object.insert("isError".to_owned(), Value::Bool(is_error));
        }
        Self {
            result: Value::Object(object),
        }
    }

    /// An error result with one text block, as Codex builds for failures on our side.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            result: json!({"content": [{"type": "text", "text": text.into()}], "isError": true}),
        }
    }

    /// The result JSON (`{content, structuredContent?, isError?}`).
    pub fn result_json(&self) -> &Value {
        &self.result
    }

    fn is_error(&self) -> bool {
        self.result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    fn structured(&self) -> Option<&Value> {
        self.result
            .get("structuredContent")
            .filter(|value| !value.is_null())
    }

    fn content(&self) -> &[Value] {
        self.result
            .get("content")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }
}

fn block_text(block: &Value) -> String {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => block
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => block.to_string(),
    }
}

/// An image block as a `data:` URL, when it carries valid base64 data.
fn image_url(block: &Value) -> Option<String> {
    if block.get("type").and_then(Value::as_str) != Some("image") {
        return None;
    }
    let data = block.get("data").and_then(Value::as_str)?;
    let mime = block
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream");
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    Some(format!("data:{mime};base64,{data}"))
}

impl ToolOutput for McpToolOutput {
    fn success(&self) -> Option<bool> {
        Some(!self.is_error())
    }

    /// Prefers `structuredContent` (serialized JSON) when present, else the content blocks:
    /// texts as they are, other blocks as their JSON, one per line.
    fn model_text(&self) -> String {
        if let Some(structured) = self.structured() {
            return structured.to_string();
        }
        self.content()
            .iter()
            .map(block_text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn to_response_item(&self, call_id: &str, _payload: &ToolPayload) -> ResponseInputItem {
        let has_image = self.structured().is_none()
            && self
                .content()
                .iter()
                .any(|block| image_url(block).is_some());
        let output = if has_image {
            let items: Vec<FunctionCallOutputContentItem> = self
                .content()
                .iter()
                .map(|block| match image_url(block) {
                    Some(image_url) => FunctionCallOutputContentItem::InputImage {
                        image_url,
                        detail: None,
                    },
                    None => FunctionCallOutputContentItem::InputText {
                        text: block_text(block),
                    },
                })
                .collect();
            serde_json::to_value(items).unwrap_or_else(|_| Value::String(self.model_text()))
        } else {
            Value::String(self.model_text())
        };
        ResponseInputItem::FunctionCallOutput {
            call_id: call_id.to_owned(),
            output,
        }
    }

    fn code_mode_result(&self) -> Value {
        self.result.clone()
    }

    /// PostToolUse sees the MCP result itself (spec runtime §9.3).
    fn hook_response(&self) -> Option<Value> {
        Some(self.result.clone())
    }
}
