//! How MCP configuration, startup and calls fail. The `Display` texts are model- or
//! user-visible and pinned by tests.

use std::path::PathBuf;
use std::time::Duration;

/// A configuration or startup failure of the MCP client.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The `[mcp_servers]` TOML did not parse (serde names the unknown or mistyped key).
    #[error("invalid mcp_servers config: {0}")]
    ConfigSyntax(String),
    /// A key parsed but has an unusable value.
    #[error("invalid config for MCP server `{server}`: `{key}` {reason}")]
    InvalidConfig {
        /// The server.
        server: String,
        /// The offending key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Spawn + `initialize` + `tools/list` did not finish within `startup_timeout_sec`.
    #[error(
        "MCP client for `{server}` timed out after {} seconds. Add or adjust `startup_timeout_sec` in the `[mcp_servers.{server}]` config.{}",
        seconds(*timeout),
        stderr_suffix(stderr_tail)
    )]
    StartupTimeout {
        /// The server.
        server: String,
        /// The budget that ran out.
        timeout: Duration,
        /// The last lines the server wrote to stderr.
        stderr_tail: String,
    },
    /// The command could not be spawned.
    #[error("MCP client for `{server}` failed to start `{command}`: {source}")]
    Spawn {
        /// The server.
        server: String,
        /// The program.
        command: String,
        /// Why the OS refused.
        source: std::io::Error,
    },
    /// The child started but the `initialize` handshake failed.
    #[error(
        "MCP client for `{server}` failed to initialize: {reason}{}",
        stderr_suffix(stderr_tail)
    )]
    Initialize {
        /// The server.
        server: String,
        /// The rmcp error text.
        reason: String,
        /// The last lines the server wrote to stderr.
        stderr_tail: String,
    },
    /// `tools/list` failed after a successful handshake.
    #[error(
        "MCP client for `{server}` failed to list tools: {reason}{}",
        stderr_suffix(stderr_tail)
    )]
    ListTools {
        /// The server.
        server: String,
        /// The rmcp error text.
        reason: String,
        /// The last lines the server wrote to stderr.
        stderr_tail: String,
    },
    /// The JSON-RPC record file could not be opened.
    #[error("cannot open the MCP record file {}: {source}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl McpError {
    /// The server the error is about, when it is about one.
    pub fn server(&self) -> Option<&str> {
        match self {
            Self::InvalidConfig { server, .. }
            | Self::StartupTimeout { server, .. }
            | Self::Spawn { server, .. }
            | Self::Initialize { server, .. }
            | Self::ListTools { server, .. } => Some(server),
            Self::ConfigSyntax(_) | Self::Record { .. } => None,
        }
    }
}

/// Why one `tools/call` produced no result from the server.
#[derive(Debug, thiserror::Error)]
pub enum McpCallError {
    /// `tool_timeout_sec` ran out; the request was cancelled at the server.
    #[error(
        "timed out awaiting tools/call after {timeout:?} (MCP server `{server}`, tool `{tool}`)"
    )]
    Timeout {
        /// The server.
        server: String,
        /// The raw tool name.
        tool: String,
        /// The budget that ran out.
        timeout: Duration,
    },
    /// The server process died while the call was in flight.
    #[error(
        "MCP server `{server}` exited during the call to `{tool}`; it will be restarted on the next call{}",
        stderr_suffix(stderr_tail)
    )]
    ServerExited {
        /// The server.
        server: String,
        /// The raw tool name.
        tool: String,
        /// The last lines the server wrote to stderr.
        stderr_tail: String,
    },
    /// The server could not be (re)started for this call.
    #[error(transparent)]
    Unavailable(#[from] McpError),
    /// The server answered with a JSON-RPC error or an unusable response.
    #[error("MCP server `{server}` failed the call to `{tool}`: {reason}")]
    Protocol {
        /// The server.
        server: String,
        /// The raw tool name.
        tool: String,
        /// The rmcp error text.
        reason: String,
    },
    /// The invocation's cancellation token fired; the request was cancelled at the server.
    #[error("MCP tool call `{tool}` on server `{server}` was cancelled")]
    Cancelled {
        /// The server.
        server: String,
        /// The raw tool name.
        tool: String,
    },
}

fn seconds(duration: Duration) -> String {
    format!("{}", duration.as_secs_f64())
}

fn stderr_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("\nstderr:\n{tail}")
    }
}
