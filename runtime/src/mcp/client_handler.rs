//! Our side of the MCP session: the `initialize` parameters and the server notifications we
//! act on (tool list changes, progress).

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};

/// One `notifications/progress` from a server, as handed to the progress hook.
#[derive(Debug, Clone, PartialEq)]
pub struct McpProgress {
    /// The configured server name.
    pub server: String,
    /// The progress token of the request (rmcp assigns one per request).
    pub progress_token: serde_json::Value,
    /// Progress so far.
    pub progress: f64,
    /// Total, when known.
    pub total: Option<f64>,
    /// Optional human-readable message.
    pub message: Option<String>,
}

/// Called for every progress notification (after it is logged).
pub type McpProgressHook = Arc<dyn Fn(McpProgress) + Send + Sync>;

/// The protocol version we ask for: the newest that still has an `initialize` handshake,
/// which the npm reference servers accept (anchors §4).
pub(crate) const CLIENT_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

pub(crate) struct McpClientHandler {
    server: Arc<str>,
    on_tools_changed: Arc<dyn Fn() + Send + Sync>,
    progress_hook: Option<McpProgressHook>,
}

impl McpClientHandler {
    pub(crate) fn new(
        server: Arc<str>,
        on_tools_changed: Arc<dyn Fn() + Send + Sync>,
        progress_hook: Option<McpProgressHook>,
    ) -> Self {
        Self {
            server,
            on_tools_changed,
            progress_hook,
        }
    }
}

impl ClientHandler for McpClientHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("codemode", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(CLIENT_PROTOCOL_VERSION)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "MCP server changed its tool list");
        (self.on_tools_changed)();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let progress_token = serde_json::to_value(&params.progress_token).unwrap_or_default();
        tracing::info!(
            server = %self.server,
            token = %progress_token,
            progress = params.progress,
            total = ?params.total,
            message = ?params.message,
            "MCP progress"
        );
        if let Some(hook) = &self.progress_hook {
            hook(McpProgress {
                server: self.server.to_string(),
                progress_token,
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }
}
