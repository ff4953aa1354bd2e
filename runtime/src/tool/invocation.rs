//! One call of one tool.

use std::sync::Arc;

use codemode_bridge::{CellId, ToolCallId, ToolName};
use tokio_util::sync::CancellationToken;

use super::ToolContext;

/// The raw input of a call, by the kind of item that carried it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolPayload {
    /// `function_call`: JSON arguments as the model wrote them (not yet parsed).
    Function {
        /// The raw JSON text.
        arguments: String,
    },
    /// `custom_tool_call`: free-form input.
    Custom {
        /// The raw input.
        input: String,
    },
    /// client `tool_search_call`.
    ToolSearch {
        /// The raw JSON arguments (`{query, limit?}`).
        arguments: String,
    },
}

/// Who made the call. Serialized for hooks as `{"type":"direct"}` or
/// `{"type":"code_mode","cell_id":…,"runtime_tool_call_id":…}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolCallSource {
    /// The model, directly.
    Direct,
    /// A `tools.x()` call inside an exec cell.
    CodeMode {
        /// The cell.
        cell_id: CellId,
        /// The cell-local call id (`tool-N`).
        runtime_tool_call_id: ToolCallId,
    },
}

impl ToolCallSource {
    /// Whether the call came from an exec cell.
    pub fn is_code_mode(&self) -> bool {
        matches!(self, Self::CodeMode { .. })
    }
}

/// Everything a handler gets for one call.
#[derive(Debug, Clone)]
pub struct ToolInvocation {
    /// The call id (`exec-<uuid>` for nested calls).
    pub call_id: String,
    /// The tool being called.
    pub tool_name: ToolName,
    /// The input.
    pub payload: ToolPayload,
    /// Who called.
    pub source: ToolCallSource,
    /// Cancelled when the turn is interrupted or the cell ends; handlers must honour it.
    pub cancellation: CancellationToken,
    /// Session facts.
    pub context: Arc<ToolContext>,
}
