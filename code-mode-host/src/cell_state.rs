//! Per-cell Rust state, kept in an isolate slot (never in a static): what the natives read
//! and write while JavaScript runs.

use std::collections::HashMap;

use codemode_bridge::{CellEvent, StoredValues, ToolCallId, ToolDefinition};
use tokio::sync::mpsc::UnboundedSender;

use crate::timers::Timers;

/// The state of one running cell.
pub(crate) struct CellState {
    /// Where events go (the cell actor).
    pub(crate) events: UnboundedSender<CellEvent>,
    /// The nested tools, indexed as `tools.*` calls them.
    pub(crate) tools: Vec<ToolDefinition>,
    /// How many nested calls were made (ids are `tool-<n>`).
    pub(crate) tool_calls_made: u64,
    /// Promises of nested calls not answered yet.
    pub(crate) pending_tools: HashMap<ToolCallId, ::v8::Global<::v8::PromiseResolver>>,
    /// The store as this cell sees it: the snapshot plus its own writes.
    pub(crate) values: StoredValues,
    /// This cell's writes, committed only with its completion.
    pub(crate) writes: StoredValues,
    /// Set by `exit()`: from then on no native admits a new effect.
    pub(crate) exit_requested: bool,
    /// `setTimeout` deadlines.
    pub(crate) timers: Timers,
}

impl CellState {
    /// Sends an event; a closed channel means nobody listens any more, which is not the
    /// cell's problem.
    pub(crate) fn emit(&self, event: CellEvent) {
        let _ = self.events.send(event);
    }

    /// Ids of nested calls still waiting, in call order.
    pub(crate) fn pending_ids(&self) -> Vec<ToolCallId> {
        let mut ids: Vec<ToolCallId> = self.pending_tools.keys().cloned().collect();
        ids.sort_by_key(|id| {
            id.as_str()
                .strip_prefix("tool-")
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(u64::MAX)
        });
        ids
    }
}
