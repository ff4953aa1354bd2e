//! `WaitTool`: the `wait` tool. Observes (or terminates) a running cell and renders what it
//! produced since the last observation (spec code-mode §2).

use std::sync::Arc;
use std::time::Instant;

use codemode_bridge::{
    BridgeError, CellId, CodeModeSession, HOST_EXITED_CELL_LOST, RuntimeResponse, ToolName,
    WaitOutcome,
};
use futures::future::BoxFuture;
use serde::{Deserialize, Deserializer};

use super::messages::{self, ScriptStatus};
use super::naming::WAIT_TOOL_NAME;
use super::options::{CodeModeOptions, DEFAULT_WAIT_YIELD_TIME_MS};
use super::output::{CodeModeOutput, Observation};
use super::spec::wait_tool_spec;
use crate::hooks::HookToolInput;
use crate::tool::{
    FunctionCallError, ToolExecutor, ToolInvocation, ToolOutput, ToolPayload, ToolSpec,
};

/// The arguments of `wait`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WaitArgs {
    /// The cell to observe.
    pub cell_id: String,
    /// How long to wait for more output before yielding.
    #[serde(default = "default_wait_yield", deserialize_with = "whole_number")]
    pub yield_time_ms: u64,
    /// Token budget of this call's output.
    #[serde(default, deserialize_with = "optional_whole_number")]
    pub max_tokens: Option<u64>,
    /// Stop the cell instead of waiting.
    #[serde(default)]
    pub terminate: bool,
}

fn default_wait_yield() -> u64 {
    DEFAULT_WAIT_YIELD_TIME_MS
}

/// The schema says `number`, so accept `1500.0` as well as `1500`; fractions are dropped.
fn whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let value = f64::deserialize(deserializer)?;
    if !value.is_finite() || value < 0.0 {
        return Err(serde::de::Error::custom(format!(
            "expected a non-negative number, got {value}"
        )));
    }
    // Saturating float-to-int conversion: values beyond u64 become u64::MAX.
    Ok(value as u64)
}

fn optional_whole_number<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    match Option::<f64>::deserialize(deserializer)? {
        None => Ok(None),
        Some(value) => {
            whole_number(serde::de::value::F64Deserializer::<D::Error>::new(value)).map(Some)
        }
    }
}

/// Parses `wait` arguments, with the exact model-visible errors.
pub fn parse_wait_args(payload: &ToolPayload) -> Result<WaitArgs, FunctionCallError> {
    let ToolPayload::Function { arguments } = payload else {
        return Err(FunctionCallError::RespondToModel(
            messages::WAIT_EXPECTS_JSON.to_owned(),
        ));
    };
    serde_json::from_str(arguments).map_err(|err| {
        FunctionCallError::RespondToModel(messages::failed_to_parse_arguments(&err.to_string()))
    })
}

/// What a wait outcome shows the model: a live response as is; every refusal as a failed
/// script whose error names the cell.
pub fn wait_observation(outcome: WaitOutcome) -> Observation {
    let failed = |text: String| Observation {
        status: ScriptStatus::Failed,
        content_items: Vec::new(),
        error_text: Some(text),
        abandoned_tool_calls: 0,
    };
    match outcome {
        WaitOutcome::Live(response) => response.into(),
        WaitOutcome::Missing(cell_id) => failed(messages::cell_not_found(&cell_id)),
        WaitOutcome::AlreadyClosed(cell_id) => failed(messages::cell_already_completed(&cell_id)),
        WaitOutcome::AlreadyObserved(cell_id) => {
            failed(messages::cell_has_active_observer(&cell_id))
        }
        WaitOutcome::AlreadyTerminating(cell_id) => {
            failed(messages::cell_already_terminating(&cell_id))
        }
    }
}

/// The `wait` tool of one session.
pub struct WaitTool {
    session: Arc<dyn CodeModeSession>,
    options: CodeModeOptions,
}

impl std::fmt::Debug for WaitTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitTool")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl WaitTool {
    /// A wait tool observing cells of `session`.
    pub fn new(session: Arc<dyn CodeModeSession>, options: CodeModeOptions) -> Self {
        Self { session, options }
    }

    async fn run(
        &self,
        invocation: ToolInvocation,
    ) -> Result<Box<dyn ToolOutput>, FunctionCallError> {
        let started = Instant::now();
        let args = parse_wait_args(&invocation.payload)?;
        let cell_id = CellId::from_raw(args.cell_id);
        let outcome = if args.terminate {
            self.session.terminate(cell_id.clone()).await
        } else {
            self.session.wait(cell_id.clone(), args.yield_time_ms).await
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            // The host died under this cell: report it as the cell's failure, in the same
            // shape as any other script error, so the model knows to start a new exec.
            Err(BridgeError::HostExited) => WaitOutcome::Live(RuntimeResponse::Result {
                cell_id,
                content_items: Vec::new(),
                error_text: Some(HOST_EXITED_CELL_LOST.to_owned()),
                abandoned_tool_calls: 0,
            }),
            Err(err) => return Err(FunctionCallError::RespondToModel(err.to_string())),
        };
        // Every wait has its own budget; the exec pragma's does not carry over (spec §3.6).
        let max_tokens = args.max_tokens.unwrap_or(self.options.max_output_tokens);
        Ok(Box::new(CodeModeOutput::render(
            wait_observation(outcome),
            started.elapsed(),
            max_tokens,
        )))
    }
}

impl ToolExecutor for WaitTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain(WAIT_TOOL_NAME)
    }

    fn spec(&self) -> ToolSpec {
        wait_tool_spec()
    }

    /// Ours: wait only observes a cell, so it may overlap other calls (DESIGN.md).
    fn supports_parallel_tool_calls(&self) -> bool {
        true
    }

    /// Every payload reaches the handler, which answers a wrong kind with
    /// `wait expects JSON arguments` instead of a fatal mismatch.
    fn matches_kind(&self, _payload: &ToolPayload) -> bool {
        true
    }

    /// wait is runtime control over an existing cell: hooks never see it (spec §2.1).
    fn hook_input(&self, _payload: &ToolPayload) -> Option<HookToolInput> {
        None
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
