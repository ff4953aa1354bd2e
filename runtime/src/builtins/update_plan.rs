//! `update_plan`: the model records its plan; the runtime only reports it to listeners.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::parse_function_arguments;
use crate::tool::{
    FunctionCallError, ResponseInputItem, ToolExecutor, ToolInvocation, ToolName, ToolOutput,
    ToolPayload, ToolSpec, messages,
};

const DESCRIPTION: &str = "Updates the task plan.
Provide an optional explanation and a list of plan items, each with a step and status.
At most one step can be in_progress at a time.
";

/// The status of one plan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One plan step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanItem {
    /// What the step is.
    pub step: String,
    /// Where it stands.
    pub status: StepStatus,
}

/// The arguments of `update_plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdatePlanArgs {
    /// Why the plan changed.
    #[serde(default)]
    pub explanation: Option<String>,
    /// The whole plan.
    pub plan: Vec<PlanItem>,
}

/// Receives every plan update (UI, transcript).
pub type PlanListener = Arc<dyn Fn(&UpdatePlanArgs) + Send + Sync>;

/// The `update_plan` tool.
#[derive(Clone, Default)]
pub struct UpdatePlanTool {
    listener: Option<PlanListener>,
}

impl UpdatePlanTool {
    /// The tool without a listener.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool reporting updates to `listener`.
    pub fn with_listener(listener: PlanListener) -> Self {
        Self {
            listener: Some(listener),
        }
    }
}

/// `Plan updated`; code mode gets `{}` (spec code-mode §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PlanUpdatedOutput;

impl ToolOutput for PlanUpdatedOutput {
    fn success(&self) -> Option<bool> {
        Some(true)
    }

    fn model_text(&self) -> String {
        messages::PLAN_UPDATED.to_owned()
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        ResponseInputItem::for_payload(call_id, payload, Value::String(self.model_text()))
    }

    fn code_mode_result(&self) -> Value {
        json!({})
    }
}

impl ToolExecutor for UpdatePlanTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain("update_plan")
    }

    fn spec(&self) -> ToolSpec {
        let item = json!({
            "type": "object",
            "properties": {
                "step": {"type": "string"},
                "status": {"type": "string", "description": "One of: pending, in_progress, completed"}
            },
            "required": ["step", "status"],
            "additionalProperties": false
        });
        let parameters = json!({
            "type": "object",
            "properties": {
                "explanation": {"type": "string"},
                "plan": {"type": "array", "description": "The list of steps", "items": item}
            },
            "required": ["plan"],
            "additionalProperties": false
        });
        ToolSpec::function("update_plan", DESCRIPTION, parameters)
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let args: UpdatePlanArgs = parse_function_arguments(&invocation.payload)?;
            if let Some(listener) = &self.listener {
                listener(&args);
            }
            Ok(Box::new(PlanUpdatedOutput) as Box<dyn ToolOutput>)
        })
    }
}
