//! Dispatch of one call within a step: lookup → kind check → PreToolUse hooks → start →
//! handler → PostToolUse hooks → finish → apply the hook outcome (spec runtime §2.2).

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::hooks::{HookEvent, HookInput, HookToolInput, PreToolUseOutcome};
use crate::tool::{
    FunctionCallError, HookReplacedToolOutput, ResponseInputItem, ToolCallSource, ToolExecutor,
    ToolInvocation, ToolOutput, ToolPayload, failure_response, messages,
};

use super::lifecycle::CallLifecycle;
use super::{StepContext, ToolCall, ToolFinishOutcome};

/// The outcome of one call: the output or the error, plus hook contexts for the model.
#[derive(Debug)]
pub struct ToolCallResult {
    /// The call as the model (or the cell) made it.
    pub call: ToolCall,
    /// The output, or why there is none. `RespondToModel` is shown to the model as a failed
    /// output; `Fatal` ends the turn.
    pub output: Result<Box<dyn ToolOutput>, FunctionCallError>,
    /// Contexts hooks added; the caller records them as developer messages.
    pub additional_contexts: Vec<String>,
}

impl ToolCallResult {
    /// The Responses API item answering the call (failures mapped per spec runtime §2.2);
    /// `Err` only for a fatal error, which has no model-visible item.
    pub fn response_item(&self) -> Result<ResponseInputItem, FunctionCallError> {
        match &self.output {
            Ok(output) => Ok(output.to_response_item(&self.call.call_id, &self.call.payload)),
            Err(FunctionCallError::RespondToModel(message)) => Ok(failure_response(
                &self.call.call_id,
                &self.call.payload,
                message,
            )),
            Err(fatal @ FunctionCallError::Fatal(_)) => Err(fatal.clone()),
        }
    }

    /// What a code-mode `tools.x()` promise settles with: the output's JSON, or the text the
    /// promise is rejected with.
    pub fn code_mode_result(&self) -> Result<Value, String> {
        match &self.output {
            Ok(output) => Ok(output.code_mode_result()),
            Err(error) => Err(error.to_string()),
        }
    }

    /// Whether the call failed fatally (the turn must end).
    pub fn is_fatal(&self) -> bool {
        matches!(self.output, Err(FunctionCallError::Fatal(_)))
    }
}

fn hook_input(
    tool: &HookToolInput,
    call: &ToolCall,
    source: &ToolCallSource,
    step: &StepContext,
    event: HookEvent,
) -> HookInput {
    HookInput {
        hook_event_name: event,
        tool_name: tool.tool_name.clone(),
        tool_input: tool.tool_input.clone(),
        tool_use_id: call.call_id.clone(),
        cwd: step.plan.tool_context.cwd.clone(),
        source: source.clone(),
        tool_response: None,
    }
}

fn pre_tool_use_block_message(tool: &HookToolInput, reason: &str) -> String {
    match &tool.command {
        Some(command) => messages::pre_tool_use_blocked_command(reason, command),
        None => messages::pre_tool_use_blocked_tool(reason, &tool.tool_name),
    }
}

impl StepContext {
    /// Runs one call to its terminal outcome with this step's registry and hooks. The caller
    /// (the parallel runtime) holds the step's parallelism lock.
    pub(crate) async fn dispatch(
        &self,
        call: &ToolCall,
        source: ToolCallSource,
        cancellation: CancellationToken,
        lifecycle: &CallLifecycle,
    ) -> (Result<Box<dyn ToolOutput>, FunctionCallError>, Vec<String>) {
        let mut contexts = Vec::new();
        let Some(executor) = self.plan.registry.get(&call.tool_name) else {
            let message = match call.payload {
                ToolPayload::Custom { .. } => {
                    messages::unsupported_custom_tool_call(&call.tool_name)
                }
                _ => messages::unsupported_call(&call.tool_name),
            };
            return (Err(FunctionCallError::RespondToModel(message)), contexts);
        };
        if !executor.matches_kind(&call.payload) {
            return (
                Err(FunctionCallError::Fatal(messages::incompatible_payload(
                    &call.tool_name,
                ))),
                contexts,
            );
        }
        lifecycle.admit();
        let result = self
            .run_admitted(
                executor,
                call,
                source,
                cancellation,
                lifecycle,
                &mut contexts,
            )
            .await;
        (result, contexts)
    }

    async fn run_admitted(
        &self,
        executor: Arc<dyn ToolExecutor>,
        call: &ToolCall,
        source: ToolCallSource,
        cancellation: CancellationToken,
        lifecycle: &CallLifecycle,
        contexts: &mut Vec<String>,
    ) -> Result<Box<dyn ToolOutput>, FunctionCallError> {
        let hooks = &self.plan.hooks;
        let mut payload = call.payload.clone();
        if hooks.has(HookEvent::PreToolUse)
            && let Some(tool) = executor.hook_input(&payload)
        {
            let input = hook_input(&tool, call, &source, self, HookEvent::PreToolUse);
            match hooks.run_pre_tool_use(&input).await {
                PreToolUseOutcome::Blocked {
                    reason,
                    additional_contexts,
                } => {
                    contexts.extend(additional_contexts);
                    lifecycle.finish(ToolFinishOutcome::Blocked);
                    return Err(FunctionCallError::RespondToModel(
                        pre_tool_use_block_message(&tool, &reason),
                    ));
                }
                PreToolUseOutcome::Continue {
                    updated_input,
                    additional_contexts,
                } => {
                    contexts.extend(additional_contexts);
                    if let Some(updated) = updated_input {
                        payload = match executor.with_updated_hook_input(&payload, updated) {
                            Ok(payload) => payload,
                            Err(error) => {
                                lifecycle.finish(ToolFinishOutcome::Failed {
                                    handler_executed: false,
                                });
                                return Err(error);
                            }
                        };
                    }
                }
            }
        }

        lifecycle.start();
        let invocation = ToolInvocation {
            call_id: call.call_id.clone(),
            tool_name: call.tool_name.clone(),
            payload: payload.clone(),
            source: source.clone(),
            cancellation,
            context: Arc::clone(&self.plan.tool_context),
        };
        let output = match executor.handle(invocation).await {
            Ok(output) => output,
            Err(error) => {
                lifecycle.finish(ToolFinishOutcome::Failed {
                    handler_executed: true,
                });
                return Err(error);
            }
        };

        let post = if output.success() != Some(false)
            && hooks.has(HookEvent::PostToolUse)
            && let Some(tool) = executor.hook_input(&payload)
            && let Some(response) = output.hook_response()
        {
            let mut input = hook_input(&tool, call, &source, self, HookEvent::PostToolUse);
            input.tool_response = Some(response);
            Some(hooks.run_post_tool_use(&input).await)
        } else {
            None
        };
        lifecycle.finish(ToolFinishOutcome::Completed {
            success: output.success(),
        });

        let Some(post) = post else {
            return Ok(output);
        };
        contexts.extend(post.additional_contexts);
        // The side effect already happened; a block only withholds the result.
        if let Some(message) = post.block {
            return Err(FunctionCallError::RespondToModel(message));
        }
        match post.updated_output {
            Some(text) => Ok(Box::new(HookReplacedToolOutput {
                text,
                original: output,
            })),
            None => Ok(output),
        }
    }
}
