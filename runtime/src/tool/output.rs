//! Tool outputs and the Responses API items they become.

use serde::{Deserialize, Serialize};

use super::ToolPayload;

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
        output: serde_json::Value,
    },
    /// Output of a `custom_tool_call`.
    CustomToolCallOutput {
        /// The call id.
        call_id: String,
        /// A string or an array of content items.
        output: serde_json::Value,
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
        tools: Vec<serde_json::Value>,
    },
}

/// What a handler returns.
pub trait ToolOutput: Send + Sync + std::fmt::Debug {
    /// Whether the call succeeded (`None` when unknown, e.g. replaced by a hook).
    fn success(&self) -> Option<bool>;

    /// The model-visible text (used by hooks, logs and truncation).
    fn model_text(&self) -> String;

    /// The Responses API item for `call_id`.
    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem;

    /// The JSON value a `tools.x()` promise resolves with (spec code-mode §5.3).
    fn code_mode_result(&self) -> serde_json::Value;
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
        Self { text: text.into(), success: Some(true) }
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
        let output = serde_json::Value::String(self.text.clone());
        match payload {
            ToolPayload::Custom { .. } => {
                ResponseInputItem::CustomToolCallOutput { call_id: call_id.to_owned(), output }
            }
            _ => ResponseInputItem::FunctionCallOutput { call_id: call_id.to_owned(), output },
        }
    }

    fn code_mode_result(&self) -> serde_json::Value {
        serde_json::Value::String(self.text.clone())
    }
}
