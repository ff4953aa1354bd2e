//! The one interface the tool runtime uses to run cells, whether they run in this process
//! ([`crate::LocalSession`]) or in a `code-mode-host` process ([`crate::RemoteSession`],
//! [`crate::PooledSession`]), and the delegate through which cells reach back into the runtime.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::{BridgeError, CellId, CellStart, ContentItem, StoredValues, ToolCallId, ToolName};

/// Default cap on concurrently running nested tool calls of one cell (beyond the reference).
pub const DEFAULT_MAX_CONCURRENT_TOOL_CALLS: usize = 64;

/// The error text of a cell whose engine stopped without reporting a result (spec §3.5).
pub const RUNTIME_ENDED_UNEXPECTEDLY: &str = "exec runtime ended unexpectedly";

/// The error text of a cell that was running in a host process that died.
pub const HOST_EXITED_CELL_LOST: &str = "code-mode host exited unexpectedly; the cell was lost (stored values committed earlier are kept)";

/// Starts one exec cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecuteRequest {
    /// The model's call id of the `exec` call (notifications carry it).
    pub exec_call_id: String,
    /// Source, tools, stored-values snapshot and limits.
    pub start: CellStart,
    /// How long the initial observation waits before yielding, counted from
    /// `CellEvent::Started`.
    pub yield_time_ms: u64,
    /// Cap on concurrently running nested calls; further calls queue. 0 is treated as 1.
    pub max_concurrent_tool_calls: usize,
}

/// What one observation (exec, wait or terminate) of a cell returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RuntimeResponse {
    /// The cell is still running; the items were produced since the previous observation.
    Yielded {
        /// The cell.
        cell_id: CellId,
        /// Output since the previous observation.
        content_items: Vec<ContentItem>,
    },
    /// The cell was stopped by a terminate request; its store writes were discarded.
    Terminated {
        /// The cell.
        cell_id: CellId,
        /// Output nobody had observed yet.
        content_items: Vec<ContentItem>,
    },
    /// The cell finished (the module settled, `exit()` ran, or its runtime was lost).
    Result {
        /// The cell.
        cell_id: CellId,
        /// Output since the previous observation.
        content_items: Vec<ContentItem>,
        /// `None` on success.
        error_text: Option<String>,
        /// Nested calls the module never awaited (the "forgot await" warning).
        abandoned_tool_calls: usize,
    },
}

impl RuntimeResponse {
    /// The cell this response is about.
    pub fn cell_id(&self) -> &CellId {
        match self {
            Self::Yielded { cell_id, .. }
            | Self::Terminated { cell_id, .. }
            | Self::Result { cell_id, .. } => cell_id,
        }
    }

    /// The output items carried.
    pub fn content_items(&self) -> &[ContentItem] {
        match self {
            Self::Yielded { content_items, .. }
            | Self::Terminated { content_items, .. }
            | Self::Result { content_items, .. } => content_items,
        }
    }

    /// True when the cell is closed after this response (it was terminated or finished).
    pub fn is_final(&self) -> bool {
        !matches!(self, Self::Yielded { .. })
    }
}

/// The outcome of a `wait` or `terminate` on a cell id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "value", rename_all = "snake_case")]
pub enum WaitOutcome {
    /// The cell exists; this is what the observation returned.
    Live(RuntimeResponse),
    /// No cell with this id was ever known (or it was forgotten long ago).
    Missing(CellId),
    /// The cell closed recently and its final result was already returned.
    AlreadyClosed(CellId),
    /// Another observation of the cell is in progress; it was not displaced.
    AlreadyObserved(CellId),
    /// A terminate of the cell is already in progress.
    AlreadyTerminating(CellId),
}

/// One `tools.x(arg)` call of a cell, to be dispatched by the runtime.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NestedToolCall {
    /// The calling cell.
    pub cell_id: CellId,
    /// The cell-local call id (`tool-N`).
    pub runtime_tool_call_id: ToolCallId,
    /// The registry name to dispatch to.
    pub tool_name: ToolName,
    /// The JS name the call was made through.
    pub js_name: String,
    /// The JSON of the argument; `None` when absent or `undefined`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::message::present"
    )]
    pub input: Option<serde_json::Value>,
}

/// What cells need from the runtime: tool dispatch, notifications and the session store.
/// Implemented by the runtime.
pub trait SessionDelegate: Send + Sync + 'static {
    /// Runs a nested tool call. `cancel` fires when the cell stops caring (termination,
    /// completion, shutdown); the implementation should then stop soon. `Ok(None)` resolves
    /// the promise with `undefined`; `Err(text)` rejects it with `text`.
    fn invoke_tool(
        &self,
        call: NestedToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Option<serde_json::Value>, String>>;

    /// Delivers a `notify(text)` of cell `cell_id`, started by the exec call `exec_call_id`.
    fn notify(&self, cell_id: CellId, exec_call_id: String, text: String)
    -> BoxFuture<'static, ()>;

    /// Merges a completed cell's store writes into the session store (last writer wins per
    /// key). Called at most once per cell and only when it wrote something, before its
    /// completion is published, never for a terminated cell.
    fn commit_store(&self, cell_id: CellId, writes: StoredValues) -> BoxFuture<'static, ()>;

    /// The cell closed: its final response was delivered or it was terminated.
    fn cell_closed(&self, cell_id: CellId);
}

/// One logical code-mode session (one agent thread): starts, observes and stops cells.
pub trait CodeModeSession: Send + Sync {
    /// Starts a cell and observes it until it yields or finishes.
    fn execute(&self, req: ExecuteRequest) -> BoxFuture<'_, Result<RuntimeResponse, BridgeError>>;

    /// Observes a cell for up to `yield_time_ms` (model `wait`).
    fn wait(
        &self,
        cell_id: CellId,
        yield_time_ms: u64,
    ) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>>;

    /// Stops a cell (model `wait` with `terminate: true`); a completed but unobserved cell
    /// returns its result instead.
    fn terminate(&self, cell_id: CellId) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>>;

    /// Terminates every cell, waits until they are gone, and admits no new cells.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}
