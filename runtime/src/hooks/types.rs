//! The data hooks receive and answer with.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::ToolCallSource;

/// What hooks see of one call: its hook-facing name and input (spec runtime §2.3).
#[derive(Debug, Clone, PartialEq)]
pub struct HookToolInput {
    /// The canonical hook name (`Bash` for shell tools, `mcp__server__tool`, the flat name).
    pub tool_name: String,
    /// The input as hooks see it.
    pub tool_input: Value,
    /// For shell-like and patch tools, the command text; a block then reads
    /// `Command blocked by PreToolUse hook: <reason>. Command: <command>`.
    pub command: Option<String>,
}

/// The hook name of shell tools (`exec_command`, `shell_command`).
pub const BASH_HOOK_TOOL_NAME: &str = "Bash";

impl HookToolInput {
    /// A command-like tool as hooks see it: `tool_input` is `{"command": <command>}` and a block
    /// names the command.
    pub fn command(tool_name: impl Into<String>, command: impl Into<String>) -> Self {
        let command = command.into();
        Self {
            tool_name: tool_name.into(),
            tool_input: serde_json::json!({ "command": command }),
            command: Some(command),
        }
    }

    /// The `command` string of a hook's rewritten input for a command-like tool.
    pub fn updated_command(input: &Value) -> Option<&str> {
        input.get("command").and_then(Value::as_str)
    }
}

/// Which hook point runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    /// Before the handler runs.
    PreToolUse,
    /// After a successful handler run.
    PostToolUse,
}

/// The JSON a hook receives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookInput {
    /// `PreToolUse` or `PostToolUse`.
    pub hook_event_name: HookEvent,
    /// The hook-facing tool name.
    pub tool_name: String,
    /// The hook-facing input.
    pub tool_input: Value,
    /// The call id.
    pub tool_use_id: String,
    /// The session working directory.
    pub cwd: PathBuf,
    /// Direct or from a code-mode cell.
    pub source: ToolCallSource,
    /// PostToolUse only: the tool's response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
}

/// The decision field of a hook answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookDecision {
    /// Proceed.
    #[serde(alias = "approve", alias = "allow")]
    Continue,
    /// Stop the call (PreToolUse) or withhold its result (PostToolUse).
    #[serde(alias = "deny")]
    Block,
}

/// A hook's answer; every field optional, the empty answer continues unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookResponse {
    /// `block` or `continue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<HookDecision>,
    /// Why it blocked; shown to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// PreToolUse: the replacement input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// PostToolUse: the replacement model-visible output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_output: Option<String>,
    /// Extra context for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

impl HookResponse {
    /// An answer that blocks with `reason`.
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            decision: Some(HookDecision::Block),
            reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// An answer that rewrites the input.
    pub fn update_input(input: Value) -> Self {
        Self {
            updated_input: Some(input),
            ..Self::default()
        }
    }

    /// An answer that replaces the model-visible output.
    pub fn update_output(text: impl Into<String>) -> Self {
        Self {
            updated_output: Some(text.into()),
            ..Self::default()
        }
    }

    /// An answer that only adds context.
    pub fn context(text: impl Into<String>) -> Self {
        Self {
            additional_context: Some(text.into()),
            ..Self::default()
        }
    }
}

/// The combined result of all PreToolUse hooks of a call.
#[derive(Debug, Clone, PartialEq)]
pub enum PreToolUseOutcome {
    /// Run the call, with a rewritten input when set.
    Continue {
        /// The last rewrite, if any.
        updated_input: Option<Value>,
        /// Contexts for the model.
        additional_contexts: Vec<String>,
    },
    /// Do not run the call.
    Blocked {
        /// The first blocking reason.
        reason: String,
        /// Contexts for the model.
        additional_contexts: Vec<String>,
    },
}

/// The combined result of all PostToolUse hooks of a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseOutcome {
    /// `Some(message)` withholds the result; the message may be the default text.
    pub block: Option<String>,
    /// The last replacement of the model-visible output.
    pub updated_output: Option<String>,
    /// Contexts for the model.
    pub additional_contexts: Vec<String>,
}

/// Why a hook gave no usable answer (logged; the hook is then ignored).
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The command could not be started or talked to.
    #[error("hook command {command:?} failed to run: {source}")]
    Spawn {
        /// The argv.
        command: Vec<String>,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The command ran longer than its timeout.
    #[error("hook command {command:?} timed out after {timeout_ms} ms")]
    Timeout {
        /// The argv.
        command: Vec<String>,
        /// The limit.
        timeout_ms: u64,
    },
    /// The command exited with a status other than 0 or 2.
    #[error("hook command {command:?} exited with {status}: {stderr}")]
    Failed {
        /// The argv.
        command: Vec<String>,
        /// The exit status.
        status: String,
        /// Its stderr.
        stderr: String,
    },
    /// Stdout was not a hook answer.
    #[error("hook command {command:?} printed invalid JSON: {error}")]
    InvalidAnswer {
        /// The argv.
        command: Vec<String>,
        /// The parse error.
        error: String,
    },
}
