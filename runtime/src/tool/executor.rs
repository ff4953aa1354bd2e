//! The trait that binds a tool's spec to its handler.

use futures::future::BoxFuture;

use super::{FunctionCallError, ToolInvocation, ToolName, ToolOutput, ToolPayload, ToolSpec};

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
}

/// One tool: its name, spec, exposure, parallel safety and handler, in one object.
pub trait ToolExecutor: Send + Sync {
    /// The registry name.
    fn tool_name(&self) -> ToolName;

    /// The model-visible spec.
    fn spec(&self) -> ToolSpec;

    /// Where the tool is visible.
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    /// Whether calls may overlap with other parallel-safe calls of the same step.
    fn supports_parallel_tool_calls(&self) -> bool {
        false
    }

    /// Whether the tool accepts this kind of payload; a mismatch is a fatal runtime error.
    fn matches_kind(&self, payload: &ToolPayload) -> bool {
        match self.spec() {
            ToolSpec::Freeform { .. } => matches!(payload, ToolPayload::Custom { .. }),
            _ => matches!(payload, ToolPayload::Function { .. } | ToolPayload::ToolSearch { .. }),
        }
    }

    /// Runs the call.
    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>>;
}
