//! `CodeModeBroker`: the runtime side of a code-mode session. Cells reach back through it to
//! call tools, notify the model and commit their stores (spec code-mode §5.2).
//!
//! # States
//! - No active step: nested calls wait (they are queued, not failed) until the embedder sets
//!   the runtime of the next sampling step, or until their cell stops caring.
//! - Active step: nested calls dispatch through that step's `ToolCallRuntime`, whichever turn
//!   started the cell, so background cells keep progressing on later turns.
//!
//! # Guarantees
//! - A nested call of `exec` or `wait` is refused with `exec cannot invoke itself`.
//! - Every other nested call goes through the ordinary router (lock, hooks, lifecycle,
//!   approvals, sandbox) with `ToolCallSource::CodeMode` and a fresh `exec-<uuid>` call id.
//! - A cell's store writes reach the [`SessionStore`] only through `commit_store`, which the
//!   cell actor calls once, with the natural completion, never after a terminate.
//!
//! # Termination
//! A nested call ends when its tool answers or its cancellation token fires (cell ended, turn
//! interrupted); a call still waiting for an active step answers
//! `code mode nested tool call cancelled`.

use std::sync::Arc;

use codemode_bridge::{CellId, NestedToolCall, SessionDelegate, StoredValues, ToolKind};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::messages;
use super::naming::{EXEC_TOOL_NAME, is_code_mode_tool};
use super::payload::build_nested_payload;
use super::store::SessionStore;
use crate::parallel::ToolCallRuntime;
use crate::router::ToolCall;
use crate::tool::{ToolCallSource, ToolSpec};

/// A `notify(text)` from a cell: the embedder injects it into the active turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecNotification {
    /// The cell that called `notify`.
    pub cell_id: CellId,
    /// The call id of the `exec` call that started the cell.
    pub exec_call_id: String,
    /// The text.
    pub text: String,
}

impl ExecNotification {
    /// The `custom_tool_call_output` item to add to the conversation: the exec call id, name
    /// `exec` and the text (spec code-mode §4.2 `notify`).
    pub fn response_item(&self) -> Value {
        json!({
            "type": "custom_tool_call_output",
            "call_id": self.exec_call_id,
            "name": EXEC_TOOL_NAME,
            "output": self.text,
        })
    }
}

/// Where notifications go (the embedder's active turn).
pub trait NotificationSink: Send + Sync + 'static {
    /// Delivers one notification; resolves once it is recorded (or dropped for lack of a turn).
    fn deliver(&self, notification: ExecNotification) -> BoxFuture<'static, ()>;
}

/// The runtime half of one code-mode session; implements the bridge's `SessionDelegate`.
pub struct CodeModeBroker {
    active: watch::Sender<Option<ToolCallRuntime>>,
    store: Arc<SessionStore>,
    sink: Arc<dyn NotificationSink>,
}

impl std::fmt::Debug for CodeModeBroker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeModeBroker")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl CodeModeBroker {
    /// A broker over `store`, delivering notifications to `sink`; no step is active yet.
    pub fn new(store: Arc<SessionStore>, sink: Arc<dyn NotificationSink>) -> Self {
        Self {
            active: watch::Sender::new(None),
            store,
            sink,
        }
    }

    /// Sets the runtime nested calls dispatch through (the current sampling step), or `None`
    /// between turns (calls then wait).
    pub fn set_active_runtime(&self, runtime: Option<ToolCallRuntime>) {
        self.active.send_replace(runtime);
    }

    /// The session store.
    pub fn store(&self) -> &Arc<SessionStore> {
        &self.store
    }
}

impl SessionDelegate for CodeModeBroker {
    fn invoke_tool(
        &self,
        call: NestedToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Option<Value>, String>> {
        let mut active = self.active.subscribe();
        let call_id = format!("exec-{}", uuid::Uuid::new_v4());
        let span = tracing::info_span!("nested_tool_call", call_id = %call_id, cell_id = %call.cell_id, tool = %call.tool_name);
        Box::pin(
            async move {
                if is_code_mode_tool(&call.tool_name) {
                    return Err(messages::EXEC_CANNOT_INVOKE_ITSELF.to_owned());
                }
                let runtime = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Err(messages::NESTED_CALL_CANCELLED.to_owned()),
                    runtime = active.wait_for(Option::is_some) => match runtime {
                        Ok(runtime) => runtime.clone(),
                        Err(_) => return Err(messages::NESTED_DISPATCHER_UNAVAILABLE.to_owned()),
                    },
                };
                let Some(runtime) = runtime else {
                    return Err(messages::NESTED_DISPATCHER_UNAVAILABLE.to_owned());
                };
                let kind = match runtime.step().registry().get(&call.tool_name).map(|tool| tool.spec()) {
                    Some(ToolSpec::Freeform { .. }) => ToolKind::Freeform,
                    _ => ToolKind::Function,
                };
                let payload = build_nested_payload(kind, &call.js_name, call.input)?;
                let tool_call = ToolCall { tool_name: call.tool_name, call_id, payload };
                let source =
                    ToolCallSource::CodeMode { cell_id: call.cell_id, runtime_tool_call_id: call.runtime_tool_call_id };
                let result = runtime.handle_tool_call_with_cancellation(tool_call, source, cancel).await;
                result.code_mode_result().map(Some)
            }
            .instrument(span),
        )
    }

    fn notify(
        &self,
        cell_id: CellId,
        exec_call_id: String,
        text: String,
    ) -> BoxFuture<'static, ()> {
        self.sink.deliver(ExecNotification {
            cell_id,
            exec_call_id,
            text,
        })
    }

    fn commit_store(&self, _cell_id: CellId, writes: StoredValues) -> BoxFuture<'static, ()> {
        self.store.commit(writes);
        Box::pin(async {})
    }

    fn cell_closed(&self, cell_id: CellId) {
        tracing::debug!(%cell_id, "exec cell closed");
    }
}

#[cfg(test)]
mod tests;
