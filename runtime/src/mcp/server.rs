//! `McpServer`: one configured server across restarts: its (re)connection, its filtered and
//! named tool list, and the `tools/call` path with timeout, cancellation and crash handling.
//!
//! # States
//! No connection (never started, or the last one died) → connecting (the connection lock is
//! held, so concurrent calls wait for one start) → connected. A dead connection is noticed
//! on the next use and replaced.
//!
//! # Guarantees
//! A call never waits longer than `tool_timeout_sec` for the server once connected, and a
//! timed-out or cancelled call is cancelled at the server (`notifications/cancelled`).
//!
//! # Termination
//! The child is killed when its connection is dropped: on replacement after a crash, or when
//! the manager and every executor holding the server are gone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool};
use tokio_util::sync::CancellationToken;

use super::client_handler::{McpClientHandler, McpProgressHook};
use super::connection::{ConnectParams, McpConnection};
use super::naming::assign_tool_names;
use super::recorder::JsonRpcRecorder;
use super::stderr_tail::StderrTail;
use super::{McpCallError, McpError, McpServerConfig};

/// One exposed tool of a server: the callable name and the raw MCP tool.
#[derive(Debug, Clone)]
pub(crate) struct McpTool {
    pub(crate) callable_name: String,
    pub(crate) tool: Tool,
}

/// What every server of a manager shares.
#[derive(Clone, Default)]
pub(crate) struct ServerShared {
    pub(crate) recorder: Option<Arc<JsonRpcRecorder>>,
    pub(crate) progress_hook: Option<McpProgressHook>,
}

pub(crate) struct McpServer {
    name: Arc<str>,
    config: McpServerConfig,
    namespace: String,
    shared: ServerShared,
    connection: tokio::sync::Mutex<Option<Arc<McpConnection>>>,
    tools: RwLock<Arc<[McpTool]>>,
    tools_generation: AtomicU64,
    this: Weak<McpServer>,
}

impl McpServer {
    pub(crate) fn new(
        name: &str,
        config: McpServerConfig,
        namespace: String,
        shared: ServerShared,
    ) -> Arc<Self> {
        Arc::new_cyclic(|this| Self {
            name: Arc::from(name),
            config,
            namespace,
            shared,
            connection: tokio::sync::Mutex::new(None),
            tools: RwLock::new(Arc::from(Vec::new())),
            tools_generation: AtomicU64::new(0),
            this: this.clone(),
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }

    pub(crate) fn config(&self) -> &McpServerConfig {
        &self.config
    }

    /// The exposed tools as last listed.
    pub(crate) fn tools(&self) -> Arc<[McpTool]> {
        self.tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Bumped every time the tool list is replaced.
    pub(crate) fn tools_generation(&self) -> u64 {
        self.tools_generation.load(Ordering::SeqCst)
    }

    /// The process id of the live connection, if any.
    pub(crate) async fn pid(&self) -> Option<u32> {
        self.connection
            .lock()
            .await
            .as_ref()
            .and_then(|connection| connection.pid())
    }

    /// A live connection, starting (or restarting) the server within `startup_timeout_sec`.
    pub(crate) async fn connection(&self) -> Result<Arc<McpConnection>, McpError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            if !connection.is_dead() {
                return Ok(connection.clone());
            }
            tracing::warn!(server = %self.name, "MCP server is gone; restarting it");
            *slot = None;
        }
        let stderr = StderrTail::default();
        let params = ConnectParams {
            server: &self.name,
            config: &self.config,
            handler: self.client_handler(),
            recorder: self.shared.recorder.clone(),
            stderr: stderr.clone(),
        };
        let timeout = self.config.startup_timeout();
        let (connection, tools) =
            match tokio::time::timeout(timeout, McpConnection::connect(params)).await {
                Ok(result) => result?,
                Err(_) => {
                    return Err(McpError::StartupTimeout {
                        server: self.name.to_string(),
                        timeout,
                        stderr_tail: stderr.text(),
                    });
                }
            };
        self.set_tools(tools);
        let connection = Arc::new(connection);
        *slot = Some(connection.clone());
        Ok(connection)
    }

    fn client_handler(&self) -> McpClientHandler {
        let this = self.this.clone();
        let on_tools_changed = Arc::new(move || {
            let Some(server) = this.upgrade() else { return };
            // The notification handler runs inside the session; list on a task of our own.
            tokio::spawn(async move {
                if let Err(error) = server.refresh_tools().await {
                    tracing::warn!(server = %server.name, %error, "could not refresh MCP tools");
                }
            });
        });
        McpClientHandler::new(
            self.name.clone(),
            on_tools_changed,
            self.shared.progress_hook.clone(),
        )
    }

    /// Lists the tools again (after `notifications/tools/list_changed`).
    pub(crate) async fn refresh_tools(&self) -> Result<(), McpError> {
        let connection = self.connection().await?;
        let tools = match connection.peer().list_all_tools().await {
            Ok(tools) => tools,
            Err(error) => {
                return Err(McpError::ListTools {
                    server: self.name.to_string(),
                    reason: error.to_string(),
                    stderr_tail: connection.settled_stderr_tail().await,
                });
            }
        };
        self.set_tools(tools);
        Ok(())
    }

    fn set_tools(&self, tools: Vec<Tool>) {
        let allowed: Vec<&Tool> = tools
            .iter()
            .filter(|tool| self.config.allows_tool(&tool.name))
            .collect();
        let names = assign_tool_names(
            &self.name,
            &self.namespace,
            allowed.iter().map(|tool| &*tool.name),
        );
        let named: Vec<McpTool> = names
            .into_iter()
            .filter_map(|(callable_name, raw)| {
                let tool = allowed.iter().find(|tool| tool.name == raw)?;
                Some(McpTool {
                    callable_name,
                    tool: (*tool).clone(),
                })
            })
            .collect();
        *self
            .tools
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::from(named);
        self.tools_generation.fetch_add(1, Ordering::SeqCst);
    }

    async fn forget(&self, dead: &Arc<McpConnection>) {
        let mut slot = self.connection.lock().await;
        if slot
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, dead))
        {
            *slot = None;
        }
    }

    /// Calls `tool` (raw name) with a timeout, honouring `cancellation`.
    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        cancellation: &CancellationToken,
    ) -> Result<CallToolResult, McpCallError> {
        let connection = tokio::select! {
            biased;
            () = cancellation.cancelled() => return Err(self.cancelled(tool)),
            connection = self.connection() => connection?,
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let peer = connection.peer();
        let timeout = self.config.tool_timeout();
        // Dropping the call future (timeout or cancellation) sends `notifications/cancelled`.
        let result = tokio::select! {
            biased;
            () = cancellation.cancelled() => return Err(self.cancelled(tool)),
            result = tokio::time::timeout(timeout, peer.call_tool(params)) => result,
        };
        match result {
            Err(_) => Err(McpCallError::Timeout {
                server: self.name.to_string(),
                tool: tool.to_owned(),
                timeout,
            }),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => {
                if matches!(
                    error,
                    ServiceError::TransportClosed | ServiceError::TransportSend(_)
                ) || connection.is_dead()
                {
                    self.forget(&connection).await;
                    return Err(McpCallError::ServerExited {
                        server: self.name.to_string(),
                        tool: tool.to_owned(),
                        stderr_tail: connection.settled_stderr_tail().await,
                    });
                }
                Err(McpCallError::Protocol {
                    server: self.name.to_string(),
                    tool: tool.to_owned(),
                    reason: error.to_string(),
                })
            }
        }
    }

    fn cancelled(&self, tool: &str) -> McpCallError {
        McpCallError::Cancelled {
            server: self.name.to_string(),
            tool: tool.to_owned(),
        }
    }
}
