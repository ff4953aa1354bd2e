//! PreToolUse / PostToolUse hooks: Rust closures for embedders and external commands that
//! speak a small JSON contract.
//!
//! # The command contract
//! A command hook gets one JSON object on stdin:
//!
//! ```json
//! {"hook_event_name":"PreToolUse","tool_name":"update_plan","tool_input":{…},
//!  "tool_use_id":"call_1","cwd":"/work","source":{"type":"direct"}}
//! ```
//!
//! `source` is `{"type":"code_mode","cell_id":…,"runtime_tool_call_id":"tool-1"}` for calls a
//! code-mode cell made, so nested calls are hookable the same way. PostToolUse adds
//! `"tool_response"` (the tool's output as the model would see it, or the tool's own JSON).
//!
//! It answers with one JSON object on stdout (empty stdout = continue unchanged):
//! - `{"decision":"block","reason":"…"}`: PreToolUse: the call does not run and the model sees
//!   the reason; PostToolUse: the result is withheld (the side effect already happened).
//!   A PreToolUse block without a reason is treated as continue (spec runtime §2.3).
//! - `{"updated_input":{…}}` (PreToolUse): the call runs with this input instead.
//! - `{"updated_output":"…"}` (PostToolUse): the model sees this text instead of the output;
//!   code mode still gets the tool's own JSON.
//! - `{"additional_context":"…"}`: extra context for the model, recorded as a developer
//!   message by the caller.
//!
//! Exit code 2 blocks with stderr as the reason. Any other failure (non-zero exit, invalid
//! JSON, timeout, spawn error) is logged and the hook is ignored (fail open), so a broken hook
//! script cannot wedge every tool call.

mod command;
mod tool_hooks;
mod types;

pub use command::{CommandHook, CommandHookConfig, HooksConfig};
pub use tool_hooks::{ClosureHook, HookMatcher, ToolHook, ToolHooks};
pub use types::{
    BASH_HOOK_TOOL_NAME, HookDecision, HookError, HookEvent, HookInput, HookResponse,
    HookToolInput, PostToolUseOutcome, PreToolUseOutcome,
};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tool_payload_tests;
