//! The MCP client: stdio MCP servers (`[mcp_servers.<name>]`) started as child processes,
//! their tools exposed as `mcp__<server>__<tool>` executors (spec runtime §9, code-mode §5).
//!
//! Entry point: [`McpConnectionManager::start`] with [`McpManagerOptions`], then
//! [`McpConnectionManager::executors`] for the registry.

mod approval_rule;
mod client_handler;
mod config;
mod connection;
mod error;
mod executor;
mod manager;
mod naming;
mod output;
mod recorder;
mod server;
mod stderr_tail;

pub use client_handler::{McpProgress, McpProgressHook};
pub use config::{
    DEFAULT_STARTUP_TIMEOUT_SEC, DEFAULT_TOOL_TIMEOUT_SEC, McpServerConfig, parse_mcp_servers,
};
pub use error::{McpCallError, McpError};
pub use executor::McpToolExecutor;
pub use manager::{McpConnectionManager, McpManagerOptions, McpToolDeferral};
pub use naming::{MAX_TOOL_NAME_LEN, fnv1a64, sanitize_name};
pub use output::McpToolOutput;
pub use recorder::{JsonRpcRecorder, RECORD_ENV_VAR};

#[cfg(test)]
mod tests;
