//! Approvals: the approval policy, typed approval requests and decisions, the `Approver` trait
//! (terminal, hook command, fixed policy), the session cache of "approved for session", and
//! the check the MCP client calls before a tool call.

mod approver;
mod cache;
mod mcp;
mod policy;
mod request;

pub use approver::{Approver, FixedApprover, HookApprover, ScriptedApprover, TerminalApprover};
pub use cache::ApprovalStore;
pub use mcp::{MCP_CANCELLED, MCP_REJECTED, McpToolAnnotations, request_mcp_tool_approval};
pub use policy::{AskForApproval, GranularApproval};
pub use request::{ApprovalPurpose, ApprovalRequest, ReviewDecision};

#[cfg(test)]
mod tests;
