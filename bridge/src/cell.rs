//! What goes into a cell and what comes out of it, independent of transport.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{ContentItem, ToolCallId, ToolDefinition, ToolName};

/// A session's stored values (`store`/`load`), keyed by the stringified key.
pub type StoredValues = BTreeMap<String, serde_json::Value>;

/// Resource limits of one cell (beyond the reference: it has none).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellLimits {
    /// The V8 heap limit in MiB; reaching it fails the cell, not the process.
    pub heap_limit_mib: u64,
}

impl Default for CellLimits {
    fn default() -> Self {
        Self {
            heap_limit_mib: 256,
        }
    }
}

/// Everything a cell needs to start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellStart {
    /// The JavaScript module source (pragma already removed).
    pub source: String,
    /// The nested tools, in catalog order; `tools[i].name` is the JS name.
    pub tools: Vec<ToolDefinition>,
    /// The session's stored values when the cell starts (its snapshot).
    pub stored_values: StoredValues,
    /// Resource limits.
    pub limits: CellLimits,
}

/// Something a running cell reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CellEvent {
    /// The isolate and globals exist; the module is about to be compiled. The initial yield
    /// timer starts here (spec §3.4).
    Started,
    /// `text()`, `image()` or `generatedImage()` produced an item.
    ContentItem {
        /// The item.
        item: ContentItem,
    },
    /// `tools.x(arg)` was called; the promise waits for a `ToolResponse` or `ToolError`.
    ToolCall {
        /// The cell-local call id.
        id: ToolCallId,
        /// The tool to dispatch to.
        tool_name: ToolName,
        /// The JS name the call was made through.
        js_name: String,
        /// The JSON of the first argument; `None` when it was absent or `undefined`.
        input: Option<serde_json::Value>,
    },
    /// `notify(v)` was called.
    Notify {
        /// The text.
        text: String,
    },
    /// `yield_control()` was called.
    YieldRequested,
    /// The module settled, `exit()` ran, or the cell was stopped.
    Result {
        /// `None` on success; the error text otherwise.
        error_text: Option<String>,
        /// Keys written with `store` during this cell, last write wins.
        stored_value_writes: StoredValues,
        /// Nested calls still unanswered when the module settled (never awaited).
        abandoned_tool_calls: Vec<ToolCallId>,
        /// True when the cell was stopped by a terminate request.
        terminated: bool,
    },
}

/// Something sent into a running cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CellCommand {
    /// Resolve the promise of a nested call with a JSON value (`None` resolves `undefined`).
    ToolResponse {
        /// The call.
        id: ToolCallId,
        /// The value.
        value: Option<serde_json::Value>,
    },
    /// Reject the promise of a nested call with a string.
    ToolError {
        /// The call.
        id: ToolCallId,
        /// The rejection text.
        text: String,
    },
    /// Stop the cell now; its store writes are discarded.
    Terminate,
}
