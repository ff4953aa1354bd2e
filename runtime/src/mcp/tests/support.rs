//! Shared helpers: locating the pinned npm servers and calling tools through executors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::approval::AskForApproval;
use crate::mcp::{McpConnectionManager, McpManagerOptions, McpServerConfig};
use crate::tool::{
    ToolCallSource, ToolContext, ToolExecutor, ToolInvocation, ToolOutput, ToolPayload,
};

/// `tests/mcp-servers`, where `package.json` pins the servers.
pub(super) fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp-servers")
}

/// Path of an installed server binary; fails (never skips) when `npm ci` was not run.
pub(super) fn bin(name: &str) -> String {
    let path = servers_dir().join("node_modules/.bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run `npm ci --prefix tests/mcp-servers` from the repository root",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

pub(super) fn everything() -> McpServerConfig {
    McpServerConfig::new(bin("mcp-server-everything"), ["stdio"])
}

pub(super) fn filesystem(allowed: &Path) -> McpServerConfig {
    McpServerConfig::new(
        bin("mcp-server-filesystem"),
        [allowed.to_string_lossy().into_owned()],
    )
}

pub(super) fn memory(file: &Path) -> McpServerConfig {
    let mut config = McpServerConfig::new(bin("mcp-server-memory"), Vec::<String>::new());
    config.env.insert(
        "MEMORY_FILE_PATH".to_owned(),
        file.to_string_lossy().into_owned(),
    );
    config
}

pub(super) fn options(servers: Vec<(&str, McpServerConfig)>) -> McpManagerOptions {
    McpManagerOptions {
        servers: servers
            .into_iter()
            .map(|(name, config)| (name.to_owned(), config))
            .collect(),
        ..McpManagerOptions::default()
    }
}

pub(super) async fn start(servers: Vec<(&str, McpServerConfig)>) -> McpConnectionManager {
    let manager = McpConnectionManager::start(options(servers))
        .await
        .expect("valid config");
    let failures: Vec<String> = manager
        .startup_failures()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        failures.is_empty(),
        "servers failed to start: {failures:#?}"
    );
    manager
}

/// `mcp__server__tool`: namespace and name joined without a separator (spec runtime §1.2).
pub(super) fn flat(name: &crate::tool::ToolName) -> String {
    format!(
        "{}{}",
        name.namespace.as_deref().unwrap_or_default(),
        name.name
    )
}

/// The executor whose flattened name (`mcp__server__tool`) is `flat`.
pub(super) fn executor(manager: &McpConnectionManager, wanted: &str) -> Arc<dyn ToolExecutor> {
    let executors = manager.executors();
    let names: Vec<String> = executors
        .iter()
        .map(|executor| flat(&executor.tool_name()))
        .collect();
    executors
        .into_iter()
        .find(|executor| flat(&executor.tool_name()) == wanted)
        .unwrap_or_else(|| panic!("no tool {wanted}; have {names:?}"))
}

/// A context whose policy never asks: these protocol tests are not about approvals
/// (`approval_tests` covers those).
pub(super) fn trusted_context() -> Arc<ToolContext> {
    let mut context = ToolContext::new(std::env::temp_dir());
    context.approval_policy = AskForApproval::Never;
    Arc::new(context)
}

pub(super) fn invocation(
    executor: &dyn ToolExecutor,
    arguments: &str,
    cancellation: CancellationToken,
) -> ToolInvocation {
    invocation_in(executor, arguments, cancellation, trusted_context())
}

pub(super) fn invocation_in(
    executor: &dyn ToolExecutor,
    arguments: &str,
    cancellation: CancellationToken,
    context: Arc<ToolContext>,
) -> ToolInvocation {
    ToolInvocation {
        call_id: format!("call-{}", uuid::Uuid::new_v4()),
        tool_name: executor.tool_name(),
        payload: ToolPayload::Function {
            arguments: arguments.to_owned(),
        },
        source: ToolCallSource::Direct,
        cancellation,
        context,
    }
}

/// Calls `flat` with `arguments` and expects a handler output (not a `FunctionCallError`).
pub(super) async fn call(
    manager: &McpConnectionManager,
    flat: &str,
    arguments: &str,
) -> Box<dyn ToolOutput> {
    let executor = executor(manager, flat);
    executor
        .handle(invocation(
            executor.as_ref(),
            arguments,
            CancellationToken::new(),
        ))
        .await
        .unwrap_or_else(|error| panic!("{flat} failed: {error}"))
}

/// The text of the first content block of a code-mode result.
pub(super) fn first_text(result: &serde_json::Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
