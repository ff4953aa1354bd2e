//! Built-in tools that prove the dispatch path end to end: `update_plan` and `view_image`.
//! Side-effecting built-ins (exec_command, apply_patch, …) live with the orchestrator.

mod update_plan;
pub(crate) mod view_image;

pub use update_plan::{PlanItem, PlanListener, StepStatus, UpdatePlanArgs, UpdatePlanTool};
pub use view_image::{ReadPermission, ViewImageOutput, ViewImageTool};

use crate::tool::{FunctionCallError, ToolPayload, messages};

/// The raw JSON arguments of a function payload parsed as `T`, or the model-visible parse
/// error.
pub(crate) fn parse_function_arguments<T: serde::de::DeserializeOwned>(
    payload: &ToolPayload,
) -> Result<T, FunctionCallError> {
    let arguments = match payload {
        ToolPayload::Function { arguments } | ToolPayload::ToolSearch { arguments } => arguments,
        ToolPayload::Custom { input } => input,
    };
    serde_json::from_str(arguments).map_err(|error| {
        FunctionCallError::RespondToModel(messages::failed_to_parse_arguments(&error.to_string()))
    })
}

#[cfg(test)]
mod tests;
