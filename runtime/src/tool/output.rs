//! Tool outputs and the Responses API items they become.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ToolPayload, messages};

/// One item of a content-items function output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FunctionCallOutputContentItem {
    /// Text.
    InputText {
        /// The text.
        text: String,
    },
    /// An image URL.
    InputImage {
        /// The URL (a `data:` URL).
        image_url: String,
        /// Requested detail.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

/// A tool result as a Responses API input item, with the original call id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseInputItem {
    /// Output of a `function_call`.
    FunctionCallOutput {
        /// The call id.
        call_id: String,
        /// A string or an array of content items.
        output: Value,
    },
    /// Output of a `custom_tool_call`.
    CustomToolCallOutput {
        /// The call id.
        call_id: String,
        /// A string or an array of content items.
        output: Value,
    },
    /// Output of a client `tool_search_call`.
    ToolSearchOutput {
        /// The call id.
        call_id: String,
        /// Always `completed`.
        status: String,
        /// Always `client`.
        execution: String,
        /// The loadable tool specs found.
        tools: Vec<Value>,
    },
}

impl ResponseInputItem {
    /// The output item matching the payload kind: `custom_tool_call_output` for custom calls,
    /// `function_call_output` for everything else.
    pub fn for_payload(call_id: &str, payload: &ToolPayload, output: Value) -> Self {
        let call_id = call_id.to_owned();
        match payload {
            ToolPayload::Custom { .. } => Self::CustomToolCallOutput { call_id, output },
            _ => Self::FunctionCallOutput { call_id, output },
        }
    }

    /// A `tool_search_output` listing `tools`.
    pub fn tool_search_output(call_id: &str, tools: Vec<Value>) -> Self {
        Self::ToolSearchOutput {
            call_id: call_id.to_owned(),
            status: "completed".to_owned(),
            execution: "client".to_owned(),
            tools,
        }
    }

    /// The call id this item answers.
    pub fn call_id(&self) -> &str {
        match self {
            Self::FunctionCallOutput { call_id, .. }
            | Self::CustomToolCallOutput { call_id, .. }
            | Self::ToolSearchOutput { call_id, .. } => call_id,
        }
    }

    /// The default code-mode JSON of an item (spec code-mode §5.3): a text body becomes a
    /// string, content items become their non-empty texts and image URLs joined with `\n`,
    /// a tool-search output becomes its array of tools.
    pub fn code_mode_value(&self) -> Value {
        match self {
            Self::FunctionCallOutput { output, .. } | Self::CustomToolCallOutput { output, .. } => {
                match output {
                    Value::Array(items) => Value::String(join_content_items(items)),
                    other => other.clone(),
                }
            }
            Self::ToolSearchOutput { tools, .. } => Value::Array(tools.clone()),
        }
    }
}

/// Non-empty texts and image URLs of content items, joined with newlines.
fn join_content_items(items: &[Value]) -> String {
    let parts: Vec<&str> = items
        .iter()
        .filter_map(|item| match item.get("type").and_then(Value::as_str) {
            Some("input_text" | "output_text") => item.get("text").and_then(Value::as_str),
            Some("input_image") => item.get("image_url").and_then(Value::as_str),
            Some("input_audio") => item.get("audio_url").and_then(Value::as_str),
            _ => None,
        })
        .filter(|part| !part.is_empty())
        .collect();
    parts.join("\n")
}

/// The model-visible item of a call that failed with `RespondToModel` (spec runtime §2.2): an
/// empty `tool_search_output` for tool search, else the text as the payload's output kind.
pub fn failure_response(call_id: &str, payload: &ToolPayload, message: &str) -> ResponseInputItem {
    match payload {
        ToolPayload::ToolSearch { .. } => {
            ResponseInputItem::tool_search_output(call_id, Vec::new())
        }
        _ => ResponseInputItem::for_payload(call_id, payload, Value::String(message.to_owned())),
    }
}

/// What a handler returns.
pub trait ToolOutput: Send + Sync + std::fmt::Debug {
    /// Whether the call succeeded (`None` when unknown, e.g. replaced by a hook).
    fn success(&self) -> Option<bool>;

    /// The model-visible text (used by hooks, logs and truncation).
    fn model_text(&self) -> String;

    /// The Responses API item for `call_id`.
    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem;

    /// The JSON value a `tools.x()` promise resolves with (spec code-mode §5.3). Defaults to
    /// the value derived from the function-call response item.
    fn code_mode_result(&self) -> Value {
        let payload = ToolPayload::Function {
            arguments: String::new(),
        };
        self.to_response_item("", &payload).code_mode_value()
    }

    /// The `tool_response` a PostToolUse hook sees; defaults to the model-visible text.
    /// `None` runs no PostToolUse hooks for this output (a command that is still running).
    fn hook_response(&self) -> Option<Value> {
        Some(Value::String(self.model_text()))
    }
}

/// The simplest output: one text body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextToolOutput {
    /// The body.
    pub text: String,
    /// Success flag.
    pub success: Option<bool>,
}

impl TextToolOutput {
    /// A successful text output.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            success: Some(true),
        }
    }

    /// A failed text output (shown to the model, the call still counts as handled).
    pub fn failed(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            success: Some(false),
        }
    }
}

impl ToolOutput for TextToolOutput {
    fn success(&self) -> Option<bool> {
        self.success
    }

    fn model_text(&self) -> String {
        self.text.clone()
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        ResponseInputItem::for_payload(call_id, payload, Value::String(self.text.clone()))
    }

    fn code_mode_result(&self) -> Value {
        Value::String(self.text.clone())
    }
}

/// A body of content items (text and images). One lone text item collapses to a plain text
/// output, as the reference does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentItemsToolOutput {
    /// The items, in order.
    pub items: Vec<FunctionCallOutputContentItem>,
    /// Success flag.
    pub success: Option<bool>,
}

impl ContentItemsToolOutput {
    /// A successful output of `items`.
    pub fn ok(items: Vec<FunctionCallOutputContentItem>) -> Self {
        Self {
            items,
            success: Some(true),
        }
    }

    fn output_value(&self) -> Value {
        match self.items.as_slice() {
            [FunctionCallOutputContentItem::InputText { text }] => Value::String(text.clone()),
            items => serde_json::to_value(items).unwrap_or_else(|_| Value::Array(Vec::new())),
        }
    }
}

impl ToolOutput for ContentItemsToolOutput {
    fn success(&self) -> Option<bool> {
        self.success
    }

    fn model_text(&self) -> String {
        let parts: Vec<&str> = self
            .items
            .iter()
            .map(|item| match item {
                FunctionCallOutputContentItem::InputText { text } => text.as_str(),
                FunctionCallOutputContentItem::InputImage { image_url, .. } => image_url.as_str(),
            })
            .filter(|part| !part.is_empty())
            .collect();
        parts.join("\n")
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        ResponseInputItem::for_payload(call_id, payload, self.output_value())
    }
}

/// The result of a client tool search: loadable tool specs.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSearchToolOutput {
    /// The specs found, as Responses API JSON.
    pub tools: Vec<Value>,
}

impl ToolOutput for ToolSearchToolOutput {
    fn success(&self) -> Option<bool> {
        Some(true)
    }

    fn model_text(&self) -> String {
        Value::Array(self.tools.clone()).to_string()
    }

    fn to_response_item(&self, call_id: &str, _payload: &ToolPayload) -> ResponseInputItem {
        ResponseInputItem::tool_search_output(call_id, self.tools.clone())
    }

    fn code_mode_result(&self) -> Value {
        Value::Array(self.tools.clone())
    }
}

/// What a call cancelled before it finished answers (spec runtime §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortedToolOutput {
    /// `aborted by user after <s>s`.
    pub message: String,
}

impl AbortedToolOutput {
    /// The aborted output after `elapsed_secs` seconds.
    pub fn after(elapsed_secs: f64) -> Self {
        Self {
            message: messages::aborted_by_user(elapsed_secs),
        }
    }
}

impl ToolOutput for AbortedToolOutput {
    fn success(&self) -> Option<bool> {
        None
    }

    fn model_text(&self) -> String {
        self.message.clone()
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        match payload {
            ToolPayload::ToolSearch { .. } => {
                ResponseInputItem::tool_search_output(call_id, Vec::new())
            }
            _ => ResponseInputItem::for_payload(
                call_id,
                payload,
                Value::String(self.message.clone()),
            ),
        }
    }

    fn code_mode_result(&self) -> Value {
        serde_json::json!({ "status": "aborted", "message": self.message })
    }
}

/// A model-visible output replaced by PostToolUse hook feedback. The code-mode JSON stays the
/// original tool's (spec runtime §2.3, `post_tool_use_feedback_output_keeps_code_mode_result_typed`).
#[derive(Debug)]
pub struct HookReplacedToolOutput {
    /// The feedback text the model sees instead.
    pub text: String,
    /// The tool's own output.
    pub original: Box<dyn ToolOutput>,
}

impl ToolOutput for HookReplacedToolOutput {
    fn success(&self) -> Option<bool> {
        None
    }

    fn model_text(&self) -> String {
        self.text.clone()
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        ResponseInputItem::for_payload(call_id, payload, Value::String(self.text.clone()))
    }

    fn code_mode_result(&self) -> Value {
        self.original.code_mode_result()
    }

    fn hook_response(&self) -> Option<Value> {
        self.original.hook_response()
    }
}
