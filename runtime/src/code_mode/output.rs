//! `CodeModeOutput`: how one observation of a cell (an exec or a wait) is shown to the model
//! (spec code-mode §3.3, §3.6, §3.7).

use std::time::Duration;

use codemode_bridge::ContentItem;
use serde_json::Value;

use super::messages::{self, ScriptStatus};
use crate::tool::{FunctionCallOutputContentItem, ResponseInputItem, ToolOutput, ToolPayload};
use crate::truncate::truncate_content_items;

/// What one observation of a cell produced, before rendering.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// How the observation ended.
    pub status: ScriptStatus,
    /// Output since the previous observation.
    pub content_items: Vec<ContentItem>,
    /// The script's error (`Script failed`), or a session error such as an unknown cell.
    pub error_text: Option<String>,
    /// Nested calls the module never awaited (they were cancelled).
    pub abandoned_tool_calls: usize,
}

/// The rendered result of an exec or wait call: the header item, then the output.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeModeOutput {
    items: Vec<FunctionCallOutputContentItem>,
    success: bool,
}

impl CodeModeOutput {
    /// Renders an observation: output items, then `Script error:\n…` if any, truncated to
    /// `max_tokens`; then the header `<status>\nWall time <s.s> seconds\nOutput:\n` in front
    /// and, ours, the abandoned-calls warning at the end (both outside the budget, so they are
    /// never cut). Success is false only for a failed script.
    pub fn render(observation: Observation, wall_time: Duration, max_tokens: u64) -> Self {
        let Observation {
            status,
            content_items,
            error_text,
            abandoned_tool_calls,
        } = observation;
        let success = error_text.is_none() && status != ScriptStatus::Failed;
        let mut items: Vec<FunctionCallOutputContentItem> =
            content_items.into_iter().map(convert_item).collect();
        if let Some(error_text) = error_text {
            items.push(FunctionCallOutputContentItem::InputText {
                text: messages::script_error(&error_text),
            });
        }
        let budget = usize::try_from(max_tokens).unwrap_or(usize::MAX);
        let mut rendered = Vec::with_capacity(items.len() + 2);
        rendered.push(FunctionCallOutputContentItem::InputText {
            text: messages::script_header(&status, wall_time),
        });
        rendered.extend(truncate_content_items(items, budget));
        if abandoned_tool_calls > 0 {
            rendered.push(FunctionCallOutputContentItem::InputText {
                text: messages::abandoned_calls_warning(abandoned_tool_calls),
            });
        }
        Self {
            items: rendered,
            success,
        }
    }

    /// The rendered items, header first.
    pub fn items(&self) -> &[FunctionCallOutputContentItem] {
        &self.items
    }
}

/// A cell's content item as a Responses API output item; images always carry their detail
/// (`high` when the script gave none).
fn convert_item(item: ContentItem) -> FunctionCallOutputContentItem {
    match item {
        ContentItem::InputText { text } => FunctionCallOutputContentItem::InputText { text },
        ContentItem::InputImage { image_url, detail } => {
            FunctionCallOutputContentItem::InputImage {
                image_url,
                detail: Some(detail.unwrap_or_default().as_str().to_owned()),
            }
        }
    }
}

impl ToolOutput for CodeModeOutput {
    fn success(&self) -> Option<bool> {
        Some(self.success)
    }

    fn model_text(&self) -> String {
        let texts: Vec<&str> = self
            .items
            .iter()
            .filter_map(|item| match item {
                FunctionCallOutputContentItem::InputText { text } => Some(text.as_str()),
                FunctionCallOutputContentItem::InputImage { .. } => None,
            })
            .collect();
        texts.join("\n")
    }

    /// `custom_tool_call_output` for exec, `function_call_output` for wait, both carrying the
    /// content-item array.
    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        let output = serde_json::to_value(&self.items).unwrap_or(Value::Null);
        let call_id = call_id.to_owned();
        match payload {
            ToolPayload::Custom { .. } => {
                ResponseInputItem::CustomToolCallOutput { call_id, output }
            }
            _ => ResponseInputItem::FunctionCallOutput { call_id, output },
        }
    }

    /// exec and wait are never nested (the broker refuses them), so this is only a fallback.
    fn code_mode_result(&self) -> Value {
        Value::String(self.model_text())
    }
}

#[cfg(test)]
mod tests;
