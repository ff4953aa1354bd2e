//! `McpServerConfig`: one `[mcp_servers.<name>]` table, compatible with Codex's `config.toml`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::McpError;

/// Startup (spawn + `initialize` + first `tools/list`) budget when the config sets none.
pub const DEFAULT_STARTUP_TIMEOUT_SEC: f64 = 10.0;
/// Per `tools/call` budget when the config sets none.
pub const DEFAULT_TOOL_TIMEOUT_SEC: f64 = 60.0;

/// One stdio MCP server: how to start it and which of its tools to expose.
///
/// Unknown keys are rejected so that a typo names the key instead of being ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program to run.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables (the child otherwise gets a minimal environment).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Names of variables copied from our own environment when set.
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// Working directory of the child (default: ours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Seconds allowed for spawn + `initialize` + `tools/list`.
    #[serde(default = "default_startup_timeout_sec")]
    pub startup_timeout_sec: f64,
    /// Seconds allowed for one `tools/call`.
    #[serde(default = "default_tool_timeout_sec")]
    pub tool_timeout_sec: f64,
    /// When set, only these raw tool names are exposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    /// Raw tool names never exposed (applied after `enabled_tools`).
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// A disabled server is not started.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Whether calls to this server's tools may overlap (otherwise only `readOnlyHint` tools may).
    #[serde(default)]
    pub supports_parallel_tool_calls: bool,
}

fn default_startup_timeout_sec() -> f64 {
    DEFAULT_STARTUP_TIMEOUT_SEC
}

fn default_tool_timeout_sec() -> f64 {
    DEFAULT_TOOL_TIMEOUT_SEC
}

fn default_true() -> bool {
    true
}

impl McpServerConfig {
    /// A config running `command args…` with every other field at its default.
    pub fn new(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            env_vars: Vec::new(),
            cwd: None,
            startup_timeout_sec: DEFAULT_STARTUP_TIMEOUT_SEC,
            tool_timeout_sec: DEFAULT_TOOL_TIMEOUT_SEC,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            enabled: true,
            supports_parallel_tool_calls: false,
        }
    }

    /// The startup budget as a duration.
    pub fn startup_timeout(&self) -> Duration {
        seconds(self.startup_timeout_sec, DEFAULT_STARTUP_TIMEOUT_SEC)
    }

    /// The per-call budget as a duration.
    pub fn tool_timeout(&self) -> Duration {
        seconds(self.tool_timeout_sec, DEFAULT_TOOL_TIMEOUT_SEC)
    }

    /// Whether the raw tool name passes `enabled_tools` / `disabled_tools`.
    pub fn allows_tool(&self, raw_name: &str) -> bool {
        let enabled = self
            .enabled_tools
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|name| name == raw_name));
        enabled && !self.disabled_tools.iter().any(|name| name == raw_name)
    }

    /// Checks what serde cannot: non-empty command, positive finite timeouts.
    pub fn validate(&self, server: &str) -> Result<(), McpError> {
        let invalid = |key: &str, reason: String| McpError::InvalidConfig {
            server: server.to_owned(),
            key: key.to_owned(),
            reason,
        };
        if server.is_empty() {
            return Err(invalid(
                "name",
                "the server name must not be empty".to_owned(),
            ));
        }
        if self.command.trim().is_empty() {
            return Err(invalid("command", "must not be empty".to_owned()));
        }
        for (key, value) in [
            ("startup_timeout_sec", self.startup_timeout_sec),
            ("tool_timeout_sec", self.tool_timeout_sec),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(invalid(
                    key,
                    format!("must be a positive number of seconds, got {value}"),
                ));
            }
        }
        Ok(())
    }
}

fn seconds(value: f64, fallback: f64) -> Duration {
    Duration::try_from_secs_f64(value).unwrap_or_else(|_| Duration::from_secs_f64(fallback))
}

/// Parses the body of an `[mcp_servers]` table (`[name]` sub-tables) from TOML text and
/// validates every server.
pub fn parse_mcp_servers(toml_text: &str) -> Result<BTreeMap<String, McpServerConfig>, McpError> {
    let servers: BTreeMap<String, McpServerConfig> =
        toml::from_str(toml_text).map_err(|error| McpError::ConfigSyntax(error.to_string()))?;
    for (name, config) in &servers {
        config.validate(name)?;
    }
    Ok(servers)
}
