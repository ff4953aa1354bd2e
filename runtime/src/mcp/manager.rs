//! `McpConnectionManager`: starts the configured servers, reports the ones that failed, and
//! hands out one `ToolExecutor` per exposed tool.
//!
//! # States
//! Built by `start`, which waits for every enabled server to start or fail (each within its
//! own `startup_timeout_sec`, concurrently). Failed servers are reported once
//! (`startup_failures`) and contribute no tools; the rest keep working.
//!
//! # Termination
//! Dropping the manager (and every executor, which holds its server) kills the children.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::join_all;

use super::client_handler::McpProgressHook;
use super::executor::McpToolExecutor;
use super::naming::NamespaceAllocator;
use super::recorder::{JsonRpcRecorder, RECORD_ENV_VAR};
use super::server::{McpServer, ServerShared};
use super::{McpError, McpServerConfig};
use crate::tool::{ToolExecutor, ToolExposure, ToolName};

/// When MCP tools are Deferred (found through `tool_search`) rather than Direct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McpToolDeferral {
    /// Always Direct.
    #[default]
    Never,
    /// Always Deferred.
    Always,
    /// Deferred when all servers together expose more than this many tools.
    WhenMoreThan(usize),
}

/// Everything `McpConnectionManager::start` needs.
#[derive(Clone, Default)]
pub struct McpManagerOptions {
    /// Servers by name (the `[mcp_servers.<name>]` tables).
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Direct or Deferred exposure.
    pub deferral: McpToolDeferral,
    /// NDJSON file recording every JSON-RPC message; defaults to `$CODEMODE_MCP_RECORD`.
    pub record_path: Option<PathBuf>,
    /// Called for every progress notification.
    pub progress_hook: Option<McpProgressHook>,
}

impl std::fmt::Debug for McpManagerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManagerOptions")
            .field("servers", &self.servers)
            .field("deferral", &self.deferral)
            .field("record_path", &self.record_path)
            .field("progress_hook", &self.progress_hook.is_some())
            .finish()
    }
}

/// The running MCP servers of a session.
pub struct McpConnectionManager {
    servers: Vec<Arc<McpServer>>,
    deferral: McpToolDeferral,
    startup_failures: Vec<McpError>,
    recorder: Option<Arc<JsonRpcRecorder>>,
}

impl McpConnectionManager {
    /// Validates the configs and starts every enabled server concurrently.
    ///
    /// Errors only for a bad config or an unopenable record file; a server that fails to
    /// start is logged once, listed in `startup_failures`, and left out.
    pub async fn start(options: McpManagerOptions) -> Result<Self, McpError> {
        for (name, config) in &options.servers {
            config.validate(name)?;
        }
        let record_path = options
            .record_path
            .clone()
            .or_else(|| std::env::var_os(RECORD_ENV_VAR).map(PathBuf::from));
        let recorder = match record_path {
            Some(path) => Some(Arc::new(
                JsonRpcRecorder::open(&path).map_err(|source| McpError::Record { path, source })?,
            )),
            None => None,
        };
        let shared = ServerShared {
            recorder: recorder.clone(),
            progress_hook: options.progress_hook.clone(),
        };
        let mut namespaces = NamespaceAllocator::default();
        let candidates: Vec<Arc<McpServer>> = options
            .servers
            .iter()
            .filter(|(_, config)| config.enabled)
            .map(|(name, config)| {
                McpServer::new(
                    name,
                    config.clone(),
                    namespaces.allocate(name),
                    shared.clone(),
                )
            })
            .collect();
        let results = join_all(candidates.iter().map(|server| server.connection())).await;
        let mut servers = Vec::new();
        let mut startup_failures = Vec::new();
        for (server, result) in candidates.into_iter().zip(results) {
            match result {
                Ok(_) => servers.push(server),
                Err(error) => {
                    tracing::warn!(server = server.name(), "{error}");
                    startup_failures.push(error);
                }
            }
        }
        Ok(Self {
            servers,
            deferral: options.deferral,
            startup_failures,
            recorder,
        })
    }

    /// Servers that failed to start, one error each (naming the server, with its stderr tail).
    pub fn startup_failures(&self) -> &[McpError] {
        &self.startup_failures
    }

    /// Names of the servers that started.
    pub fn server_names(&self) -> Vec<&str> {
        self.servers.iter().map(|server| server.name()).collect()
    }

    /// The record file, when recording.
    pub fn record_path(&self) -> Option<&std::path::Path> {
        self.recorder.as_deref().map(JsonRpcRecorder::path)
    }

    fn exposure(&self) -> ToolExposure {
        let total: usize = self.servers.iter().map(|server| server.tools().len()).sum();
        match self.deferral {
            McpToolDeferral::Never => ToolExposure::Direct,
            McpToolDeferral::Always => ToolExposure::Deferred,
            McpToolDeferral::WhenMoreThan(limit) if total > limit => ToolExposure::Deferred,
            McpToolDeferral::WhenMoreThan(_) => ToolExposure::Direct,
        }
    }

    /// One executor per exposed tool, servers in name order, tools in listing order.
    pub fn mcp_executors(&self) -> Vec<Arc<McpToolExecutor>> {
        let exposure = self.exposure();
        self.servers
            .iter()
            .flat_map(|server| {
                server
                    .tools()
                    .iter()
                    .map(|tool| {
                        Arc::new(McpToolExecutor::new(server.clone(), tool.clone(), exposure))
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// `mcp_executors` as registry entries.
    pub fn executors(&self) -> Vec<Arc<dyn ToolExecutor>> {
        self.mcp_executors()
            .into_iter()
            .map(|executor| executor as Arc<dyn ToolExecutor>)
            .collect()
    }

    /// The executor registered under `name`, for MCP-specific facts (annotations, approval).
    pub fn executor(&self, name: &ToolName) -> Option<Arc<McpToolExecutor>> {
        self.mcp_executors()
            .into_iter()
            .find(|executor| &executor.tool_name() == name)
    }

    /// Changes every time any server's tool list is replaced (restart or `list_changed`);
    /// rebuild the executors when it moves.
    pub fn tools_generation(&self) -> u64 {
        self.servers
            .iter()
            .map(|server| server.tools_generation())
            .sum()
    }

    /// Lists `server`'s tools again now.
    pub async fn refresh_tools(&self, server: &str) -> Result<(), McpError> {
        match self
            .servers
            .iter()
            .find(|candidate| candidate.name() == server)
        {
            Some(found) => found.refresh_tools().await,
            None => Ok(()),
        }
    }

    /// The OS process id of `server`'s live process (diagnostics and fault tests).
    pub async fn server_pid(&self, server: &str) -> Option<u32> {
        let found = self
            .servers
            .iter()
            .find(|candidate| candidate.name() == server)?;
        found.pid().await
    }
}
