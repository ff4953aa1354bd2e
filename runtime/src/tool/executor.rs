//! The trait that binds a tool's spec to its handler.

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    FunctionCallError, ToolInvocation, ToolName, ToolOutput, ToolPayload, ToolSpec, messages,
};
use crate::hooks::HookToolInput;

/// Where a tool is visible (spec runtime §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolExposure {
    /// Shown to the model and nested in code mode.
    #[default]
    Direct,
    /// Found through `tool_search`; nested in code mode (callable, in `ALL_TOOLS`).
    Deferred,
    /// Shown to the model, never nested in code mode.
    DirectModelOnly,
    /// Dispatch-only.
    Hidden,
}

impl ToolExposure {
    /// Whether the tool becomes a `tools.*` function in code mode.
    pub fn is_available_in_code_mode(self) -> bool {
        matches!(self, Self::Direct | Self::Deferred)
    }

    /// Whether the tool is in the model's initial tool list.
    pub fn is_model_visible(self) -> bool {
        matches!(self, Self::Direct | Self::DirectModelOnly)
    }
}

/// One tool: its name, spec, exposure, parallel safety and handler, in one object.
pub trait ToolExecutor: Send + Sync {
    /// The registry name.
    fn tool_name(&self) -> ToolName;

    /// The model-visible spec. A namespaced tool returns its member `Function` spec (or a
    /// one-member `Namespace` spec to set the namespace description); the step plan groups
    /// members of one namespace into one `namespace` entry.
    fn spec(&self) -> ToolSpec;

    /// Where the tool is visible.
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    /// Whether calls may overlap with other parallel-safe calls of the same step.
    fn supports_parallel_tool_calls(&self) -> bool {
        false
    }

    /// Whether, on cancellation, the runtime waits for the handler to finish its own teardown
    /// (process-owning tools) instead of aborting its task.
    fn waits_for_runtime_cancellation(&self) -> bool {
        false
    }

    /// Whether the tool accepts this kind of payload; a mismatch is a fatal runtime error.
    fn matches_kind(&self, payload: &ToolPayload) -> bool {
        match self.spec() {
            ToolSpec::Freeform { .. } => matches!(payload, ToolPayload::Custom { .. }),
            _ => matches!(
                payload,
                ToolPayload::Function { .. } | ToolPayload::ToolSearch { .. }
            ),
        }
    }

    /// What hooks see of a call; `None` exposes no hook payload (the call is not hookable).
    /// Default: the flat tool name and the parsed arguments (blank → `{}`, invalid JSON → the
    /// raw string); custom input as a string.
    fn hook_input(&self, payload: &ToolPayload) -> Option<HookToolInput> {
        let tool_input = match payload {
            ToolPayload::Function { arguments } => parse_hook_arguments(arguments),
            ToolPayload::Custom { input } => Value::String(input.clone()),
            ToolPayload::ToolSearch { .. } => return None,
        };
        Some(HookToolInput {
            tool_name: self.tool_name().to_string(),
            tool_input,
            command: None,
        })
    }

    /// The payload after a PreToolUse hook rewrote the input to `input`. Default: function
    /// arguments are the whole new object re-serialized; custom input must be a string.
    fn with_updated_hook_input(
        &self,
        payload: &ToolPayload,
        input: Value,
    ) -> Result<ToolPayload, FunctionCallError> {
        match payload {
            ToolPayload::Function { .. } => Ok(ToolPayload::Function {
                arguments: input.to_string(),
            }),
            ToolPayload::ToolSearch { .. } => Ok(ToolPayload::ToolSearch {
                arguments: input.to_string(),
            }),
            ToolPayload::Custom { .. } => match input {
                Value::String(input) => Ok(ToolPayload::Custom { input }),
                _ => Err(FunctionCallError::RespondToModel(
                    messages::hook_input_not_string(&self.tool_name()),
                )),
            },
        }
    }

    /// Runs the call.
    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>>;
}

/// Hook view of raw JSON arguments: blank → `{}`, invalid → the raw string.
pub fn parse_hook_arguments(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}
