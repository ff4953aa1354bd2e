//! One running MCP server process and its initialized rmcp session.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::ServiceExt;
use rmcp::model::Tool;
use rmcp::service::{ClientInitializeError, Peer, RoleClient, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::{Child, Command};

use super::client_handler::McpClientHandler;
use super::recorder::{JsonRpcRecorder, RecordingTransport};
use super::stderr_tail::StderrTail;
use super::{McpError, McpServerConfig};

/// Variables a stdio server inherits from us even though its environment is otherwise
/// cleared, so that `node`/`python` resolve and behave (the same set Codex passes).
const INHERITED_ENV_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
];

/// A live server: the child process and the session speaking to it.
pub(crate) struct McpConnection {
    service: RunningService<RoleClient, McpClientHandler>,
    /// Kept so that dropping the connection kills the process (`kill_on_drop`).
    child: Mutex<Child>,
    pid: Option<u32>,
    stderr: StderrTail,
}

/// What `connect` needs besides the config.
pub(crate) struct ConnectParams<'a> {
    pub(crate) server: &'a Arc<str>,
    pub(crate) config: &'a McpServerConfig,
    pub(crate) handler: McpClientHandler,
    pub(crate) recorder: Option<Arc<JsonRpcRecorder>>,
    /// Receives stderr; created by the caller so that it survives a startup timeout.
    pub(crate) stderr: StderrTail,
}

impl McpConnection {
    /// Spawns the server, runs `initialize` and lists its tools. Not bounded in time: the
    /// caller applies `startup_timeout_sec`, and dropping the future kills the child.
    pub(crate) async fn connect(params: ConnectParams<'_>) -> Result<(Self, Vec<Tool>), McpError> {
        let ConnectParams {
            server,
            config,
            handler,
            recorder,
            stderr,
        } = params;
        let mut command = Command::new(&config.command);
        command
            .args(&config.args)
            .env_clear()
            .envs(
                INHERITED_ENV_VARS
                    .iter()
                    .filter_map(|key| Some((*key, std::env::var_os(key)?))),
            )
            .envs(
                config
                    .env_vars
                    .iter()
                    .filter_map(|key| Some((key, std::env::var_os(key)?))),
            )
            .envs(&config.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &config.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|source| McpError::Spawn {
            server: server.to_string(),
            command: config.command.clone(),
            source,
        })?;
        let pid = child.id();
        if let Some(err) = child.stderr.take() {
            stderr.capture(server.clone(), err);
        }
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(McpError::Spawn {
                server: server.to_string(),
                command: config.command.clone(),
                source: std::io::Error::other("the child has no stdin/stdout pipe"),
            });
        };
        let transport = RecordingTransport::new(
            AsyncRwTransport::new_client(stdout, stdin),
            server.clone(),
            recorder,
        );
        let service = match handler.serve(transport).await {
            Ok(service) => service,
            Err(error) => {
                return Err(McpError::Initialize {
                    server: server.to_string(),
                    reason: initialize_reason(&error),
                    stderr_tail: stderr.settled_text().await,
                });
            }
        };
        let tools = match service.peer().list_all_tools().await {
            Ok(tools) => tools,
            Err(error) => {
                return Err(McpError::ListTools {
                    server: server.to_string(),
                    reason: error.to_string(),
                    stderr_tail: stderr.settled_text().await,
                });
            }
        };
        tracing::info!(server = %server, pid, tools = tools.len(), "MCP server started");
        Ok((
            Self {
                service,
                child: Mutex::new(child),
                pid,
                stderr,
            },
            tools,
        ))
    }

    /// The session handle requests go through.
    pub(crate) fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    /// The OS process id of the server.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The last lines the server wrote to stderr, once a dying server has finished writing.
    pub(crate) async fn settled_stderr_tail(&self) -> String {
        self.stderr.settled_text().await
    }

    /// Whether the process exited or the session loop ended; such a connection is replaced on
    /// next use.
    pub(crate) fn is_dead(&self) -> bool {
        if self.service.peer().is_transport_closed() || self.service.is_closed() {
            return true;
        }
        let mut child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        !matches!(child.try_wait(), Ok(None))
    }
}

/// A short reason for a failed handshake; rmcp's transport errors embed the full generic type
/// name of the transport, which helps nobody.
fn initialize_reason(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{context}: {}", error.error)
        }
        ClientInitializeError::ConnectionClosed(context) => {
            format!("the server closed the connection ({context})")
        }
        other => other.to_string(),
    }
}
