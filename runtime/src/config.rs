//! `Config`: the `codemode.toml` file (TOML) and how it becomes [`SessionOptions`].
//!
//! Sections: `approval_policy`, `[sandbox]`, `[code_mode]`, `[mcp_servers.<name>]` (the same
//! keys as Codex's `config.toml`, so an existing block can be pasted) and `[hooks]`.
//!
//! # Guarantees
//! - Unknown keys and bad values are errors naming the key and the file (every table denies
//!   unknown fields; serde's message names the key and the TOML snippet shows the line).
//! - Relative paths (`sandbox.writable_roots`, `sandbox.deny_read`, `code_mode.host_path`, an
//!   MCP server's `cwd`, and an MCP `command` containing a `/`) are resolved against the
//!   folder of the config file, so a config works from any working directory.
//! - No config at all is the embedded default: built-in tools under the `workspace-write`
//!   sandbox on the working directory, network off.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use codemode_bridge::CellEngine;
use serde::Deserialize;

use crate::approval::AskForApproval;
use crate::code_mode::{CodeModeOptions, DEFAULT_EXEC_YIELD_TIME_MS, DEFAULT_MAX_OUTPUT_TOKENS};
use crate::hooks::{CommandHookConfig, HooksConfig, ToolHooks};
use crate::mcp::McpServerConfig;
use crate::sandbox::{SandboxMode, SandboxPolicy};
use crate::session::{CellBackend, SessionOptions, find_host_program};

/// The config file looked up in the working directory.
pub const CONFIG_FILE_NAME: &str = "codemode.toml";
/// The user config file, under the home folder.
pub const USER_CONFIG_PATH: &str = ".config/codemode/config.toml";

/// Why a config could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML for the schema (unknown key, wrong type, bad value).
    #[error("invalid config file {}: {message}", path.display())]
    Invalid {
        /// The file (`<defaults>` for the embedded default).
        path: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
}

/// The whole config file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// When to ask for approval; absent means the caller's default (`on-request` for
    /// `codemode exec`, `never` for `codemode serve`).
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    /// `[sandbox]`.
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// `[code_mode]`.
    #[serde(default)]
    pub code_mode: CodeModeConfig,
    /// `[mcp_servers.<name>]`.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `[hooks]`.
    #[serde(default)]
    pub hooks: HooksSection,
    /// The file this config came from (`None` for the embedded default).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// The file-system mode of `[sandbox] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeName {
    /// Read everything, write nothing.
    ReadOnly,
    /// Write the working directory, `writable_roots` and temp folders (the default).
    #[default]
    WorkspaceWrite,
    /// No restriction.
    DangerFullAccess,
}

/// `[sandbox]`: what commands run by tools may touch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// `read-only`, `workspace-write` (default) or `danger-full-access`.
    #[serde(default)]
    pub mode: SandboxModeName,
    /// Network access; default off (on for `danger-full-access`).
    #[serde(default)]
    pub network: Option<bool>,
    /// Extra writable folders (`workspace-write` only).
    #[serde(default)]
    pub writable_roots: Vec<PathBuf>,
    /// Paths sandboxed commands may not read.
    #[serde(default)]
    pub deny_read: Vec<PathBuf>,
}

/// Where cells run (`[code_mode] host`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostKind {
    /// In a `code-mode-host` child process (the default); falls back to in-process when no
    /// host binary is found.
    #[default]
    Process,
    /// In this process.
    InProcess,
}

/// `[code_mode]`: limits and exposure of `exec`/`wait`, and where cells run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CodeModeConfig {
    /// Yield time of an exec whose pragma gives none.
    pub default_exec_yield_time_ms: u64,
    /// Token budget of one exec or wait result.
    pub max_output_tokens: u64,
    /// V8 heap limit per cell.
    pub heap_limit_mib: u64,
    /// Cap on concurrently running nested calls of one cell.
    pub max_concurrent_tool_calls: usize,
    /// Namespaces whose tools are never nested.
    pub excluded_tool_namespaces: BTreeSet<String>,
    /// Namespaces whose tools stay callable by the model only.
    pub direct_only_tool_namespaces: BTreeSet<String>,
    /// `process` (default) or `in-process`.
    pub host: HostKind,
    /// The `code-mode-host` binary (default: `$CODEMODE_HOST_PATH`, next to the current
    /// executable, then `PATH`).
    pub host_path: Option<PathBuf>,
}

impl Default for CodeModeConfig {
    fn default() -> Self {
        let defaults = CodeModeOptions::default();
        Self {
            default_exec_yield_time_ms: DEFAULT_EXEC_YIELD_TIME_MS,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            heap_limit_mib: defaults.heap_limit_mib,
            max_concurrent_tool_calls: defaults.max_concurrent_tool_calls,
            excluded_tool_namespaces: BTreeSet::new(),
            direct_only_tool_namespaces: BTreeSet::new(),
            host: HostKind::Process,
            host_path: None,
        }
    }
}

/// `[hooks]`: `[[hooks.PreToolUse]]` and `[[hooks.PostToolUse]]` command hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksSection {
    /// Commands run before a call.
    #[serde(default, rename = "PreToolUse", alias = "pre_tool_use")]
    pub pre_tool_use: Vec<HookCommand>,
    /// Commands run after a successful call.
    #[serde(default, rename = "PostToolUse", alias = "post_tool_use")]
    pub post_tool_use: Vec<HookCommand>,
}

/// One hook command (contract in `crate::hooks`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookCommand {
    /// Hook tool names, `|`-separated; absent or `*` matches all.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The argv (no shell).
    pub command: Vec<String>,
    /// Time limit in milliseconds (default 60 000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl HooksSection {
    /// The hooks as the hooks module configures them.
    pub fn to_hooks_config(&self) -> HooksConfig {
        let convert = |commands: &[HookCommand]| {
            commands
                .iter()
                .map(|hook| CommandHookConfig {
                    matcher: hook.matcher.clone(),
                    command: hook.command.clone(),
                    timeout_ms: hook.timeout_ms,
                })
                .collect()
        };
        HooksConfig {
            pre_tool_use: convert(&self.pre_tool_use),
            post_tool_use: convert(&self.post_tool_use),
        }
    }
}

impl Config {
    /// Parses `text` as the contents of `path`, validates it and resolves relative paths
    /// against the folder of `path`.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let mut config: Self = toml::from_str(text).map_err(|error| invalid(error.to_string()))?;
        config.path = Some(path.to_path_buf());
        config.validate().map_err(invalid)?;
        let base = std::path::absolute(path)
            .ok()
            .and_then(|file| file.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        config.resolve_paths(&base);
        Ok(config)
    }

    /// Reads and parses one file.
    pub fn load_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_toml(&text, path)
    }

    /// The config to use: `explicit` if given (it must exist), else `<cwd>/codemode.toml`,
    /// else `<home>/.config/codemode/config.toml`, else the embedded default.
    pub fn discover(
        explicit: Option<&Path>,
        cwd: &Path,
        home: Option<&Path>,
    ) -> Result<Self, ConfigError> {
        if let Some(path) = explicit {
            return Self::load_file(path);
        }
        let candidates = std::iter::once(cwd.join(CONFIG_FILE_NAME))
            .chain(home.map(|home| home.join(USER_CONFIG_PATH)));
        for candidate in candidates {
            if candidate.is_file() {
                return Self::load_file(&candidate);
            }
        }
        Ok(Self::default())
    }

    /// The sandbox policy of `[sandbox]`.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        let sandbox = &self.sandbox;
        let mut policy = match sandbox.mode {
            SandboxModeName::ReadOnly => SandboxPolicy::read_only(),
            SandboxModeName::WorkspaceWrite => SandboxPolicy::workspace_write(),
            SandboxModeName::DangerFullAccess => SandboxPolicy::danger_full_access(),
        };
        if let SandboxMode::WorkspaceWrite { writable_roots, .. } = &mut policy.mode {
            writable_roots.clone_from(&sandbox.writable_roots);
        }
        if let Some(network) = sandbox.network {
            policy.network_access = network;
        }
        policy.deny_read.clone_from(&sandbox.deny_read);
        policy
    }

    /// The code-mode options of `[code_mode]`.
    pub fn code_mode_options(&self) -> CodeModeOptions {
        let section = &self.code_mode;
        CodeModeOptions {
            default_exec_yield_time_ms: section.default_exec_yield_time_ms,
            max_output_tokens: section.max_output_tokens,
            heap_limit_mib: section.heap_limit_mib,
            max_concurrent_tool_calls: section.max_concurrent_tool_calls,
            excluded_tool_namespaces: section.excluded_tool_namespaces.clone(),
            direct_only_tool_namespaces: section.direct_only_tool_namespaces.clone(),
            ..CodeModeOptions::default()
        }
    }

    /// Where cells run: the host process when `host = "process"` and a host binary is found,
    /// else in-process on the engine `engine` builds. The string is a warning for the user
    /// when `process` was asked for but no host binary exists.
    pub fn cell_backend<E>(
        &self,
        engine: impl FnOnce() -> Result<Arc<dyn CellEngine>, E>,
    ) -> Result<(CellBackend, Option<String>), E> {
        let warning = match self.code_mode.host {
            HostKind::InProcess => None,
            HostKind::Process => match find_host_program(self.code_mode.host_path.as_deref()) {
                Some(program) => return Ok((CellBackend::HostProcess { program }, None)),
                None => Some(match &self.code_mode.host_path {
                    Some(path) => format!(
                        "code_mode.host_path {} does not exist; running cells in-process",
                        path.display()
                    ),
                    None => "no code-mode-host binary found (CODEMODE_HOST_PATH, next to \
                                 this executable, PATH); running cells in-process"
                        .to_owned(),
                }),
            },
        };
        Ok((CellBackend::InProcess(engine()?), warning))
    }

    /// Session options for tools working in `cwd` with cells on `backend`;
    /// `default_approval` applies when the config sets no `approval_policy`. The approver is
    /// left at the embedded default (deny); the caller picks who answers.
    pub fn session_options(
        &self,
        cwd: PathBuf,
        backend: CellBackend,
        default_approval: AskForApproval,
    ) -> SessionOptions {
        let mut options = SessionOptions::new(cwd, backend);
        options.sandbox = self.sandbox_policy();
        options.approval_policy = self.approval_policy.unwrap_or(default_approval);
        options.hooks = ToolHooks::from_config(&self.hooks.to_hooks_config());
        options.code_mode = self.code_mode_options();
        options.mcp.servers = self.mcp_servers.clone();
        options
    }

    /// Checks what serde cannot; the message names the key.
    fn validate(&self) -> Result<(), String> {
        let code_mode = &self.code_mode;
        for (key, value) in [
            ("code_mode.max_output_tokens", code_mode.max_output_tokens),
            ("code_mode.heap_limit_mib", code_mode.heap_limit_mib),
            (
                "code_mode.max_concurrent_tool_calls",
                u64::try_from(code_mode.max_concurrent_tool_calls).unwrap_or(u64::MAX),
            ),
        ] {
            if value == 0 {
                return Err(format!("`{key}` must be at least 1"));
            }
        }
        if self.sandbox.mode != SandboxModeName::WorkspaceWrite
            && !self.sandbox.writable_roots.is_empty()
        {
            return Err(
                "`sandbox.writable_roots` only applies to mode = \"workspace-write\"".to_owned(),
            );
        }
        for (event, hooks) in [
            ("PreToolUse", &self.hooks.pre_tool_use),
            ("PostToolUse", &self.hooks.post_tool_use),
        ] {
            if hooks.iter().any(|hook| hook.command.is_empty()) {
                return Err(format!("`hooks.{event}.command` must not be empty"));
            }
        }
        for (name, server) in &self.mcp_servers {
            server.validate(name).map_err(|error| error.to_string())?;
        }
        Ok(())
    }

    fn resolve_paths(&mut self, base: &Path) {
        let absolute = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        };
        self.sandbox.writable_roots.iter_mut().for_each(absolute);
        self.sandbox.deny_read.iter_mut().for_each(absolute);
        self.code_mode.host_path.iter_mut().for_each(absolute);
        for server in self.mcp_servers.values_mut() {
            server.cwd.iter_mut().for_each(absolute);
            // A bare name is looked up in PATH like Codex does; a relative path with a
            // slash would otherwise depend on the working directory.
            if server.command.contains('/') && Path::new(&server.command).is_relative() {
                server.command = base.join(&server.command).to_string_lossy().into_owned();
            }
        }
    }
}

#[cfg(test)]
mod tests;
