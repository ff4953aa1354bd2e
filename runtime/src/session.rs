//! `Session`: one agent session assembled from every area: the tool context (sandbox,
//! approvals, exec policy, processes), the registry (built-ins, MCP servers, `tool_search`,
//! `exec`/`wait`), hooks, the code-mode store and broker, and where cells run (a
//! `code-mode-host` child process or an in-process engine). Embedders and the `codemode`
//! command drive code mode through it.
//!
//! # States
//! Started → (steps, each freezing the tool plan) → shut down. Code-mode cells outlive a
//! step: they keep running in the background and their nested calls go through the most
//! recent step's plan.
//!
//! # Guarantees
//! - Every call, direct or nested in a cell, goes through the same registry, hooks, exec
//!   policy, approvals and sandbox.
//! - Store values live here, not in the host: a host crash never loses committed values.
//!
//! # Termination
//! `shutdown` terminates every cell and waits; dropping the session kills MCP servers and
//! `exec_command` processes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use codemode_bridge::{
    CellEngine, CodeModeSession, HostPool, HostPoolOptions, LocalSession, LocalSessionOptions,
    ToolDefinition,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::apply_patch::ApplyPatchTool;
use crate::approval::{Approver, AskForApproval, FixedApprover, ReviewDecision};
use crate::builtins::{UpdatePlanTool, ViewImageTool};
use crate::code_mode::{
    CodeModeBroker, CodeModeOptions, EXEC_TOOL_NAME, ExecNotification, ExecTool, NotificationSink,
    SessionStore, WAIT_TOOL_NAME, WaitTool,
};
use crate::exec_policy::ExecPolicyManager;
use crate::hooks::ToolHooks;
use crate::mcp::{McpConnectionManager, McpError, McpManagerOptions};
use crate::parallel::ToolCallRuntime;
use crate::registry::{RegistryError, ToolRegistry};
use crate::router::{StepContext, StepContextOptions, ToolCall, ToolCallResult};
use crate::sandbox::SandboxPolicy;
use crate::tool::{ResponseInputItem, ToolCallSource, ToolContext, ToolExecutor};
use crate::tool_search::ToolSearchExecutor;
use crate::unified_exec::{ExecCommandOptions, ExecCommandTool, WriteStdinTool};

/// The host binary's file name.
pub const HOST_PROGRAM_NAME: &str = "code-mode-host";
/// Environment variable naming the host binary.
pub const HOST_PATH_ENV: &str = "CODEMODE_HOST_PATH";

/// Where cells run.
#[derive(Clone)]
pub enum CellBackend {
    /// In a `code-mode-host` child process, started lazily and restarted after a crash.
    HostProcess {
        /// The host binary.
        program: PathBuf,
    },
    /// In this process, on the given engine (the embedder links V8).
    InProcess(Arc<dyn CellEngine>),
}

impl std::fmt::Debug for CellBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::HostProcess { program } => f
                .debug_struct("HostProcess")
                .field("program", program)
                .finish(),
            Self::InProcess(_) => f.write_str("InProcess"),
        }
    }
}

/// Finds the host binary: the configured path, then `$CODEMODE_HOST_PATH`, then next to the
/// current executable, then `PATH`. `None` when none exists (callers may fall back to
/// in-process cells).
pub fn find_host_program(configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = configured {
        return path.is_file().then(|| path.to_path_buf());
    }
    if let Some(path) = std::env::var_os(HOST_PATH_ENV).map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(HOST_PROGRAM_NAME)));
    if let Some(path) = beside.filter(|path| path.is_file()) {
        return Some(path);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(HOST_PROGRAM_NAME))
            .find(|path| path.is_file())
    })
}

/// Everything a session is made of. `SessionOptions::new` gives the embedded defaults:
/// workspace-write sandbox on `cwd`, network off, approval policy `never` (an embedded session
/// has no one to ask: nothing escalates out of the sandbox and nothing prompts), no MCP
/// servers.
pub struct SessionOptions {
    /// Working directory of tools.
    pub cwd: PathBuf,
    /// What sandboxed commands may touch.
    pub sandbox: SandboxPolicy,
    /// When to ask for approval.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests.
    pub approver: Arc<dyn Approver>,
    /// Exec policy rules.
    pub exec_policy: Arc<ExecPolicyManager>,
    /// Pre/PostToolUse hooks.
    pub hooks: ToolHooks,
    /// Code-mode limits and exposure.
    pub code_mode: CodeModeOptions,
    /// MCP servers.
    pub mcp: McpManagerOptions,
    /// Where cells run.
    pub backend: CellBackend,
    /// Embedder-provided tools (dynamic tools), registered after the built-ins; a name that
    /// clashes with an earlier tool is skipped with a warning.
    pub extra_tools: Vec<Arc<dyn ToolExecutor>>,
}

impl SessionOptions {
    /// Embedded defaults for `cwd` with cells on `backend`.
    pub fn new(cwd: PathBuf, backend: CellBackend) -> Self {
        let context = ToolContext::new(cwd.clone());
        Self {
            cwd,
            sandbox: context.sandbox_policy,
            approval_policy: AskForApproval::Never,
            approver: Arc::new(FixedApprover::new(ReviewDecision::Denied)),
            exec_policy: context.exec_policy,
            hooks: ToolHooks::default(),
            code_mode: CodeModeOptions::default(),
            mcp: McpManagerOptions {
                servers: Default::default(),
                deferral: Default::default(),
                record_path: None,
                progress_hook: None,
            },
            backend,
            extra_tools: Vec::new(),
        }
    }
}

/// Why a session could not start.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The MCP configuration was invalid.
    #[error(transparent)]
    Mcp(#[from] McpError),
    /// Two built-in tools had the same name.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// Notifications from `notify()`, as they arrive.
struct ChannelSink(mpsc::UnboundedSender<ExecNotification>);

impl NotificationSink for ChannelSink {
    fn deliver(&self, notification: ExecNotification) -> BoxFuture<'static, ()> {
        let _ = self.0.send(notification);
        Box::pin(async {})
    }
}

/// One agent session.
pub struct Session {
    context: Arc<ToolContext>,
    registry: ToolRegistry,
    hooks: Arc<ToolHooks>,
    exec: Arc<ExecTool>,
    broker: Arc<CodeModeBroker>,
    cells: Arc<dyn CodeModeSession>,
    mcp: Option<McpConnectionManager>,
    notifications: Mutex<Option<mpsc::UnboundedReceiver<ExecNotification>>>,
    cancellation: CancellationToken,
    next_call: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("cwd", &self.context.cwd)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Starts MCP servers (failures are recorded, not fatal), registers every tool and
    /// prepares code mode.
    pub async fn start(options: SessionOptions) -> Result<Self, SessionError> {
        let mut context = ToolContext::new(options.cwd);
        context.sandbox_policy = options.sandbox;
        context.approval_policy = options.approval_policy;
        context.approver = options.approver;
        context.exec_policy = options.exec_policy;
        let context = Arc::new(context);

        let mcp = if options.mcp.servers.is_empty() {
            None
        } else {
            Some(McpConnectionManager::start(options.mcp).await?)
        };
        for failure in mcp.iter().flat_map(|manager| manager.startup_failures()) {
            tracing::warn!("{failure}");
        }

        let (sender, receiver) = mpsc::unbounded_channel();
        let store = Arc::new(SessionStore::new());
        let broker = Arc::new(CodeModeBroker::new(store, Arc::new(ChannelSink(sender))));
        let delegate: Arc<dyn codemode_bridge::SessionDelegate> = broker.clone();
        let cells: Arc<dyn CodeModeSession> = match options.backend {
            CellBackend::HostProcess { program } => Arc::new(
                HostPool::new(HostPoolOptions {
                    program,
                    args: Vec::new(),
                })
                .session(delegate),
            ),
            CellBackend::InProcess(engine) => Arc::new(LocalSession::new(
                engine,
                delegate,
                LocalSessionOptions::default(),
            )),
        };
        let exec = Arc::new(ExecTool::new(
            cells.clone(),
            broker.clone(),
            options.code_mode.clone(),
        ));
        let wait = Arc::new(WaitTool::new(cells.clone(), options.code_mode));

        let mut registry = ToolRegistry::new();
        registry.register_builtin(exec.clone())?;
        registry.register_builtin(wait)?;
        let builtins: Vec<Arc<dyn ToolExecutor>> = vec![
            Arc::new(ExecCommandTool::new(ExecCommandOptions::default())),
            Arc::new(WriteStdinTool::new()),
            Arc::new(ApplyPatchTool::new()),
            Arc::new(ViewImageTool::new()),
            Arc::new(UpdatePlanTool::new()),
        ];
        for tool in builtins {
            registry.register_builtin(tool)?;
        }
        let external = mcp
            .as_ref()
            .map(McpConnectionManager::executors)
            .unwrap_or_default();
        if external
            .iter()
            .any(|tool| tool.exposure() == crate::tool::ToolExposure::Deferred)
        {
            registry.register_builtin(Arc::new(ToolSearchExecutor::new(&external)))?;
        }
        for tool in external {
            registry.register_external(tool);
        }
        for tool in options.extra_tools {
            registry.register_external(tool);
        }
        exec.refresh_catalog(&registry);

        Ok(Self {
            context,
            registry,
            hooks: Arc::new(options.hooks),
            exec,
            broker,
            cells,
            mcp,
            notifications: Mutex::new(Some(receiver)),
            cancellation: CancellationToken::new(),
            next_call: std::sync::atomic::AtomicU64::new(1),
        })
    }

    /// Freezes the tool plan for one model request and makes it the plan nested calls of
    /// running cells use.
    pub fn step(&self) -> ToolCallRuntime {
        let runtime = ToolCallRuntime::new(self.step_context(), self.cancellation.child_token());
        self.broker
            .set_active_runtime(Some(runtime.for_nested_calls()));
        runtime
    }

    /// The frozen plan for one model request, without making it the plan of running cells.
    fn step_context(&self) -> StepContext {
        StepContext::new(
            &self.registry,
            self.context.clone(),
            StepContextOptions {
                hooks: self.hooks.clone(),
                ..Default::default()
            },
        )
    }

    /// Runs one model output item (`function_call`, `custom_tool_call`, `tool_search_call`)
    /// in a fresh step; `None` when the item is not a tool call.
    pub async fn handle_item(
        &self,
        item: &Value,
    ) -> Result<Option<ToolCallResult>, crate::tool::FunctionCallError> {
        let Some(call) = crate::router::build_tool_call(item)? else {
            return Ok(None);
        };
        Ok(Some(
            self.step()
                .handle_tool_call(call, ToolCallSource::Direct)
                .await,
        ))
    }

    /// Calls `exec` with `source` (pragma allowed), as the model would.
    pub async fn exec(&self, source: &str) -> ToolCallResult {
        let call = ToolCall::custom(
            codemode_bridge::ToolName::plain(EXEC_TOOL_NAME),
            self.call_id(),
            source,
        );
        self.step()
            .handle_tool_call(call, ToolCallSource::Direct)
            .await
    }

    /// Calls `wait` with JSON arguments, as the model would.
    pub async fn wait(&self, arguments: Value) -> ToolCallResult {
        let call = ToolCall::function(
            codemode_bridge::ToolName::plain(WAIT_TOOL_NAME),
            self.call_id(),
            arguments.to_string(),
        );
        self.step()
            .handle_tool_call(call, ToolCallSource::Direct)
            .await
    }

    /// The nested tools a cell sees (`ALL_TOOLS`), in catalog order.
    pub fn nested_tools(&self) -> Vec<ToolDefinition> {
        self.exec.catalog().tools
    }

    /// The `tools` array of a Responses API request for this session's current plan.
    pub fn model_tools(&self) -> Value {
        // Listing tools must not swap the plan that background cells dispatch through.
        json!(self.step_context().tools_json())
    }

    /// The `notify()` messages; can be taken once.
    pub fn take_notifications(&self) -> Option<mpsc::UnboundedReceiver<ExecNotification>> {
        self.notifications
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// MCP servers that failed to start, with their stderr tail.
    pub fn mcp_startup_failures(&self) -> Vec<String> {
        self.mcp
            .iter()
            .flat_map(|manager| manager.startup_failures())
            .map(ToString::to_string)
            .collect()
    }

    /// The session's tool context.
    pub fn context(&self) -> &Arc<ToolContext> {
        &self.context
    }

    /// The committed store values.
    pub fn store(&self) -> &Arc<SessionStore> {
        self.broker.store()
    }

    /// Terminates every running cell and waits for them; cancels in-flight calls.
    pub async fn shutdown(&self) {
        self.cells.shutdown().await;
        self.cancellation.cancel();
        self.broker.set_active_runtime(None);
    }

    fn call_id(&self) -> String {
        let n = self
            .next_call
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("call-{n}")
    }
}

/// The model-visible item of a result, for printing; fatal errors become a text item.
pub fn response_item_json(result: &ToolCallResult) -> Value {
    match result.response_item() {
        Ok(item) => serde_json::to_value::<ResponseInputItem>(item).unwrap_or(Value::Null),
        Err(error) => json!({ "type": "error", "message": error.to_string() }),
    }
}
