//! The approval check the MCP client calls before a tool call.

use serde::{Deserialize, Serialize};

use super::policy::AskForApproval;
use super::request::{ApprovalRequest, ReviewDecision};
use crate::tool::ToolContext;

/// The MCP tool annotations that decide whether a call needs approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolAnnotations {
    /// `readOnlyHint`.
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`.
    pub destructive_hint: Option<bool>,
    /// `openWorldHint`.
    pub open_world_hint: Option<bool>,
}

impl McpToolAnnotations {
    /// Destructive tools always ask; read-only ones never; otherwise ask unless the tool says
    /// it is neither destructive nor open-world (missing hints count as `true`).
    pub fn requires_approval(&self) -> bool {
        if self.destructive_hint == Some(true) {
            return true;
        }
        if self.read_only_hint == Some(true) {
            return false;
        }
        !(self.destructive_hint == Some(false) && self.open_world_hint == Some(false))
    }
}

/// Model-visible text when the user declines an MCP call.
pub const MCP_REJECTED: &str = "user rejected MCP tool call";
/// Model-visible text when the user aborts an MCP call.
pub const MCP_CANCELLED: &str = "user cancelled MCP tool call";

/// Asks (through the session approver and cache) whether `server`'s `tool` may run with
/// `arguments`. `Err` carries the model-visible refusal.
pub async fn request_mcp_tool_approval(
    ctx: &ToolContext,
    server: &str,
    tool: &str,
    arguments: &serde_json::Value,
    annotations: McpToolAnnotations,
) -> Result<(), String> {
    if !annotations.requires_approval() {
        return Ok(());
    }
    match ctx.approval_policy {
        // Nobody can be asked: the call runs, as every other unsandboxed decision under never.
        AskForApproval::Never => return Ok(()),
        AskForApproval::Granular(g) if !g.mcp_tools => return Err(MCP_REJECTED.to_owned()),
        _ => {}
    }
    let keys = [serde_json::json!({"kind": "mcp_tool", "server": server, "tool": tool})];
    let request = ApprovalRequest::McpCall {
        approval_id: ApprovalRequest::new_id(),
        server: server.to_owned(),
        tool: tool.to_owned(),
        arguments: arguments.clone(),
    };
    let decision = ctx
        .approvals
        .with_cached_approval(&keys, || ctx.approver.request_approval(request))
        .await;
    match decision {
        d if d.is_approved() => Ok(()),
        ReviewDecision::Abort => Err(MCP_CANCELLED.to_owned()),
        _ => Err(MCP_REJECTED.to_owned()),
    }
}
