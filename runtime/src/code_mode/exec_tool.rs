//! `ExecTool`: the `exec` tool. Starts a cell with the step's nested tools and the session's
//! store snapshot, and renders its first observation (spec code-mode §1, §3.3).

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use codemode_bridge::{
    BridgeError, CellLimits, CellStart, CodeModeSession, ExecuteRequest, ToolName,
};
use futures::future::BoxFuture;

use super::broker::CodeModeBroker;
use super::description::ExecDescription;
use super::messages;
use super::naming::EXEC_TOOL_NAME;
use super::nested_tools::NestedToolCatalog;
use super::options::CodeModeOptions;
use super::output::CodeModeOutput;
use super::pragma::parse_exec_source;
use super::spec::exec_tool_spec;
use crate::registry::ToolRegistry;
use crate::tool::{
    FunctionCallError, ToolExecutor, ToolInvocation, ToolOutput, ToolPayload, ToolSpec,
};

/// The `exec` tool of one session.
pub struct ExecTool {
    session: Arc<dyn CodeModeSession>,
    broker: Arc<CodeModeBroker>,
    options: CodeModeOptions,
    catalog: RwLock<NestedToolCatalog>,
}

impl std::fmt::Debug for ExecTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecTool")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl ExecTool {
    /// An exec tool running cells on `session`, whose nested calls, notifications and store
    /// commits go through `broker` (also the `SessionDelegate` of `session`). Call
    /// [`refresh_catalog`](Self::refresh_catalog) once the registry is filled.
    pub fn new(
        session: Arc<dyn CodeModeSession>,
        broker: Arc<CodeModeBroker>,
        options: CodeModeOptions,
    ) -> Self {
        Self {
            session,
            broker,
            options,
            catalog: RwLock::new(NestedToolCatalog::default()),
        }
    }

    /// Recomputes the nested tools (and so the description) from `registry`; call it whenever
    /// the registry changes, before the step plan is built from it.
    pub fn refresh_catalog(&self, registry: &ToolRegistry) {
        let catalog = NestedToolCatalog::build(registry.executors(), &self.options);
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = catalog;
    }

    /// The current nested-tool catalog.
    pub fn catalog(&self) -> NestedToolCatalog {
        self.catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    async fn run(
        &self,
        invocation: ToolInvocation,
    ) -> Result<Box<dyn ToolOutput>, FunctionCallError> {
        let started = Instant::now();
        let ToolPayload::Custom { input } = &invocation.payload else {
            return Err(FunctionCallError::RespondToModel(
                messages::EXEC_EXPECTS_SOURCE.to_owned(),
            ));
        };
        let (source, limits) = parse_exec_source(input)
            .map_err(|err| FunctionCallError::RespondToModel(err.to_string()))?;
        let request = ExecuteRequest {
            exec_call_id: invocation.call_id.clone(),
            start: CellStart {
                source,
                tools: self.catalog().tools,
                stored_values: self.broker.store().snapshot(),
                limits: CellLimits {
                    heap_limit_mib: self.options.heap_limit_mib,
                },
            },
            yield_time_ms: limits
                .yield_time_ms
                .unwrap_or(self.options.default_exec_yield_time_ms),
            max_concurrent_tool_calls: self.options.max_concurrent_tool_calls,
        };
        let response = self.session.execute(request).await.map_err(session_error)?;
        let max_tokens = limits
            .max_output_tokens
            .unwrap_or(self.options.max_output_tokens);
        Ok(Box::new(CodeModeOutput::render(
            response.into(),
            started.elapsed(),
            max_tokens,
        )))
    }
}

/// A session failure as the model sees it (cell cap, shutdown, lost host).
fn session_error(err: BridgeError) -> FunctionCallError {
    FunctionCallError::RespondToModel(match err {
        BridgeError::TooManyCells => messages::TOO_MANY_ACTIVE_CELLS.to_owned(),
        other => other.to_string(),
    })
}

impl ToolExecutor for ExecTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain(EXEC_TOOL_NAME)
    }

    fn spec(&self) -> ToolSpec {
        let catalog = self.catalog();
        let enabled = catalog.direct_tools();
        let deferred = catalog.deferred_tools();
        exec_tool_spec(&ExecDescription {
            enabled_tools: &enabled,
            deferred_tools: &deferred,
            namespaces: &catalog.namespaces,
            code_mode_only: self.options.code_mode_only,
            default_yield_time_ms: self.options.default_exec_yield_time_ms,
            default_max_output_tokens: self.options.max_output_tokens,
        })
    }

    /// Ours: exec only starts a cell and observes it, so it may overlap other calls.
    fn supports_parallel_tool_calls(&self) -> bool {
        true
    }

    /// Every payload reaches the handler, which answers a wrong kind with
    /// `exec expects raw JavaScript source text` instead of a fatal mismatch.
    fn matches_kind(&self, _payload: &ToolPayload) -> bool {
        true
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(self.run(invocation))
    }
}

#[cfg(test)]
mod tests;
