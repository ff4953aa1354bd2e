//! When the user is asked: `untrusted`, `on-request` (default), `granular`, `never`.

use serde::{Deserialize, Serialize};

/// The approval policy of a session (serialized kebab-case; `on-failure` is accepted as an
/// alias of `on-request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    /// Ask for everything except known-safe read-only commands.
    Untrusted,
    /// The model decides to escalate; sandboxed commands run without asking.
    #[default]
    #[serde(alias = "on-failure")]
    OnRequest,
    /// Like on-request, but each prompt category can be switched off (auto-rejected).
    Granular(GranularApproval),
    /// Never ask; failures go straight back to the model.
    Never,
}

/// Which prompt categories a granular policy shows (`false` auto-rejects that category).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GranularApproval {
    /// Prompts caused by the sandbox (escalation, heuristics).
    pub sandbox_approval: bool,
    /// Prompts caused by a `prompt` exec-policy rule.
    pub rules: bool,
    /// Prompts for MCP tool calls.
    #[serde(default = "default_true")]
    pub mcp_tools: bool,
}

fn default_true() -> bool {
    true
}

impl Default for GranularApproval {
    fn default() -> Self {
        Self {
            sandbox_approval: true,
            rules: true,
            mcp_tools: true,
        }
    }
}

impl AskForApproval {
    /// The kebab-case name used in model-visible messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnRequest => "on-request",
            Self::Granular(_) => "granular",
            Self::Never => "never",
        }
    }

    /// Whether a sandbox-denied command may be retried without the sandbox after asking.
    pub fn wants_no_sandbox_approval(self) -> bool {
        match self {
            Self::Untrusted => true,
            Self::OnRequest | Self::Never => false,
            Self::Granular(g) => g.sandbox_approval,
        }
    }
}
