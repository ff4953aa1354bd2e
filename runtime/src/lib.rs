//! The codemode tool runtime: the model of a tool, the registry and router every call goes
//! through (direct or nested in code mode), hooks, exec policy, approvals, the Linux sandbox,
//! built-in tools, the MCP client, and the `exec`/`wait` handlers.
//!
//! Central types: `tool::ToolExecutor`, `tool::ToolSpec`, `tool::ToolInvocation`.
//!
//! Not here: V8 (codemode-host never linked here) or the wire format (codemode-bridge).
//! May depend on codemode-bridge, tokio, rmcp, serde; never on v8.

pub mod tool;

// Tool runtime core (issue 3).
pub mod builtins;
pub mod hooks;
pub mod parallel;
pub mod registry;
pub mod router;
pub mod truncate;

// Side effects under control (issue 4).
pub mod apply_patch;
pub mod approval;
pub mod exec_policy;
pub mod orchestrator;
pub mod sandbox;
pub mod unified_exec;

// MCP, tool search, TypeScript declarations (issue 6).
pub mod declarations;
pub mod mcp;
pub mod tool_search;

// exec / wait (issue 5).
pub mod code_mode;

// One agent session assembled from all of the above.
pub mod session;

// The codemode.toml file (issue 7).
pub mod config;
