//! Typed approval requests and the user's answers.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Whether this is the first question or the "retry without sandbox?" one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPurpose {
    /// Before the first attempt.
    Initial,
    /// After the sandbox denied the first attempt.
    SandboxRetry,
}

/// What the user is asked to approve. Each request has a fresh `approval_id` so a stale
/// answer can never resolve a newer question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalRequest {
    /// Run a command.
    Command {
        /// Unique id of this question.
        approval_id: String,
        /// Why the question comes up.
        purpose: ApprovalPurpose,
        /// The argv.
        command: Vec<String>,
        /// Where it runs.
        cwd: PathBuf,
        /// Why approval is needed (rule justification, retry reason, model justification).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// A prefix the user may allow for good.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proposed_amendment: Option<Vec<String>>,
    },
    /// Apply a patch.
    Patch {
        /// Unique id of this question.
        approval_id: String,
        /// Why the question comes up.
        purpose: ApprovalPurpose,
        /// The patch text.
        patch: String,
        /// Every path written or removed (move destinations included).
        paths: Vec<PathBuf>,
        /// Why approval is needed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Call an MCP tool.
    McpCall {
        /// Unique id of this question.
        approval_id: String,
        /// The server name.
        server: String,
        /// The tool name on the server.
        tool: String,
        /// The arguments.
        arguments: serde_json::Value,
    },
    /// Reach a network host.
    Network {
        /// Unique id of this question.
        approval_id: String,
        /// The host.
        host: String,
    },
}

impl ApprovalRequest {
    /// A fresh approval id.
    pub fn new_id() -> String {
        uuid::Uuid::new_v4().to_string()
    }

    /// A one-line summary for prompts and logs.
    pub fn summary(&self) -> String {
        match self {
            Self::Command {
                command,
                cwd,
                reason,
                ..
            } => {
                let mut s = format!(
                    "run `{}` in {}",
                    crate::exec_policy::render_command(command),
                    cwd.display()
                );
                if let Some(reason) = reason {
                    s.push_str(&format!(" ({reason})"));
                }
                s
            }
            Self::Patch { paths, reason, .. } => {
                let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                let mut s = format!("apply a patch to {}", list.join(", "));
                if let Some(reason) = reason {
                    s.push_str(&format!(" ({reason})"));
                }
                s
            }
            Self::McpCall {
                server,
                tool,
                arguments,
                ..
            } => {
                format!("call MCP tool {server}.{tool} with {arguments}")
            }
            Self::Network { host, .. } => format!("connect to {host}"),
        }
    }
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Yes, this once.
    Approved,
    /// Yes, and allow commands starting with this prefix from now on.
    ApprovedExecpolicyAmendment {
        /// The prefix to allow.
        prefix: Vec<String>,
    },
    /// Yes, and do not ask again this session for the same keys.
    ApprovedForSession,
    /// No.
    Denied,
    /// No, and stop the turn.
    Abort,
    /// Nobody answered in time.
    TimedOut,
}

impl ReviewDecision {
    /// Whether the action may proceed.
    pub fn is_approved(&self) -> bool {
        matches!(
            self,
            Self::Approved | Self::ApprovedExecpolicyAmendment { .. } | Self::ApprovedForSession
        )
    }
}
