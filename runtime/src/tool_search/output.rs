//! `ToolSearchOutput`: the specs a search found, as a `tool_search_output` item.

use serde_json::Value;

use crate::tool::{ResponseInputItem, ToolOutput, ToolPayload, ToolSpec};

/// The loadable specs found by one `tool_search` call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSearchOutput {
    tools: Vec<Value>,
}

impl ToolSearchOutput {
    /// Serializes the found specs.
    pub fn new(specs: &[ToolSpec]) -> Self {
        Self {
            tools: specs
                .iter()
                .filter_map(|spec| serde_json::to_value(spec).ok())
                .collect(),
        }
    }

    /// The specs as Responses API tool JSON.
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }
}

impl ToolOutput for ToolSearchOutput {
    fn success(&self) -> Option<bool> {
        Some(true)
    }

    fn model_text(&self) -> String {
        Value::Array(self.tools.clone()).to_string()
    }

    fn to_response_item(&self, call_id: &str, _payload: &ToolPayload) -> ResponseInputItem {
        ResponseInputItem::ToolSearchOutput {
            call_id: call_id.to_owned(),
            status: "completed".to_owned(),
            execution: "client".to_owned(),
            tools: self.tools.clone(),
        }
    }

    /// An array of specs (spec code-mode §5.3).
    fn code_mode_result(&self) -> Value {
        Value::Array(self.tools.clone())
    }
}
