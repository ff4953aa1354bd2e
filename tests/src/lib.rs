//! Shared helpers for the codemode integration suite: one process-wide V8 engine and a small
//! driver that runs a cell to its end, answering nested tool calls with a Rust closure.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs,
    unreachable_pub
)]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use codemode_bridge::{
    CellCommand, CellEngine, CellEvent, CellId, CellLimits, CellStart, ContentItem, StoredValues,
    ToolDefinition, ToolKind, ToolName,
};
use codemode_host::{V8Engine, V8EngineOptions};

/// The engine every test shares (V8 is initialised once per process).
pub fn engine() -> &'static V8Engine {
    static ENGINE: OnceLock<V8Engine> = OnceLock::new();
    ENGINE.get_or_init(|| V8Engine::new(V8EngineOptions::default()).expect("V8 engine starts"))
}

/// A function tool with the given JS name.
pub fn function_tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        tool_name: ToolName::plain(name),
        description: format!("test tool {name}"),
        kind: ToolKind::Function,
        input_schema: None,
        output_schema: None,
    }
}

/// How a test answers one nested call.
pub enum Answer {
    Value(Option<serde_json::Value>),
    Error(String),
    /// Never answer.
    Ignore,
}

/// Everything a cell reported.
#[derive(Debug, Default)]
pub struct CellRun {
    pub events: Vec<CellEvent>,
    pub texts: Vec<String>,
    pub items: Vec<ContentItem>,
    pub error_text: Option<String>,
    pub writes: StoredValues,
    pub abandoned: usize,
    pub terminated: bool,
    pub tool_calls: Vec<(String, Option<serde_json::Value>)>,
    pub notifications: Vec<String>,
}

impl CellRun {
    pub fn completed(&self) -> bool {
        self.error_text.is_none() && !self.terminated
    }
}

/// Options for [`run_cell_with`].
pub struct RunOptions {
    pub tools: Vec<ToolDefinition>,
    pub stored: StoredValues,
    pub limits: CellLimits,
    /// Sends Terminate after this long.
    pub terminate_after: Option<Duration>,
    /// Gives up (and fails the test) after this long.
    pub timeout: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            tools: Vec::new(),
            stored: StoredValues::new(),
            limits: CellLimits::default(),
            terminate_after: None,
            timeout: Duration::from_secs(20),
        }
    }
}

/// Runs `source` with no tools.
pub async fn run_cell(source: &str) -> CellRun {
    run_cell_with(source, RunOptions::default(), |_, _| Answer::Value(None)).await
}

/// Runs `source` to its end, answering each nested call with `answer(js_name, input)`.
pub async fn run_cell_with(
    source: &str,
    options: RunOptions,
    answer: impl Fn(&str, &Option<serde_json::Value>) -> Answer,
) -> CellRun {
    let start = CellStart {
        source: source.to_owned(),
        tools: options.tools,
        stored_values: options.stored,
        limits: options.limits,
    };
    let mut channels = engine()
        .start_cell(CellId::generate(), start)
        .expect("cell starts");
    let commands = channels.commands.clone();
    if let Some(after) = options.terminate_after {
        let commands = commands.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            commands.send(CellCommand::Terminate);
        });
    }
    let mut run = CellRun::default();
    let deadline = tokio::time::Instant::now() + options.timeout;
    loop {
        let event = tokio::time::timeout_at(deadline, channels.events.recv())
            .await
            .expect("cell finished before the test timeout");
        let Some(event) = event else { break };
        match &event {
            CellEvent::ContentItem { item } => {
                if let ContentItem::InputText { text } = item {
                    run.texts.push(text.clone());
                }
                run.items.push(item.clone());
            }
            CellEvent::ToolCall {
                id, js_name, input, ..
            } => {
                run.tool_calls.push((js_name.clone(), input.clone()));
                match answer(js_name, input) {
                    Answer::Value(value) => {
                        commands.send(CellCommand::ToolResponse {
                            id: id.clone(),
                            value,
                        });
                    }
                    Answer::Error(text) => {
                        commands.send(CellCommand::ToolError {
                            id: id.clone(),
                            text,
                        });
                    }
                    Answer::Ignore => {}
                }
            }
            CellEvent::Notify { text } => run.notifications.push(text.clone()),
            CellEvent::Result {
                error_text,
                stored_value_writes,
                abandoned_tool_calls,
                terminated,
            } => {
                run.error_text = error_text.clone();
                run.writes = stored_value_writes.clone();
                run.abandoned = abandoned_tool_calls.len();
                run.terminated = *terminated;
            }
            CellEvent::Started | CellEvent::YieldRequested => {}
        }
        run.events.push(event);
    }
    assert!(
        matches!(run.events.last(), Some(CellEvent::Result { .. })),
        "the last event of a cell is its Result: {:?}",
        run.events
    );
    run
}

/// Shared so tests can hold the engine in an `Arc<dyn CellEngine>`.
pub fn engine_arc() -> Arc<dyn CellEngine> {
    Arc::new(engine().clone())
}

// ---- Sessions (the whole engine) ------------------------------------------------------

use codemode_runtime::router::ToolCallResult;
use codemode_runtime::session::{CellBackend, Session, SessionOptions};

/// The `code-mode-host` binary of this build (`target/<profile>/code-mode-host`), built on
/// first use if missing.
pub fn host_program() -> std::path::PathBuf {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/suite-<hash>
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("target profile dir");
        let host = profile_dir.join("code-mode-host");
        if !host.is_file() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let status = std::process::Command::new(cargo)
                .args(["build", "-p", "codemode-host", "--bin", "code-mode-host"])
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building code-mode-host failed");
        }
        assert!(
            host.is_file(),
            "code-mode-host not found at {}",
            host.display()
        );
        host
    })
    .clone()
}

/// Where a test session runs its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    InProcess,
    HostProcess,
}

impl Backend {
    pub fn cell_backend(self) -> CellBackend {
        match self {
            Backend::InProcess => CellBackend::InProcess(engine_arc()),
            Backend::HostProcess => CellBackend::HostProcess {
                program: host_program(),
            },
        }
    }
}

/// A session rooted in a fresh temp dir (kept alive by the returned guard).
pub async fn session(backend: Backend) -> (Session, tempfile::TempDir) {
    session_with(backend, |_| {}).await
}

/// Like [`session`], letting the test adjust the options first.
pub async fn session_with(
    backend: Backend,
    adjust: impl FnOnce(&mut SessionOptions),
) -> (Session, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cwd = dir.path().canonicalize().expect("canonical temp dir");
    let mut options = SessionOptions::new(cwd, backend.cell_backend());
    adjust(&mut options);
    let session = Session::start(options).await.expect("session starts");
    (session, dir)
}

/// The model-visible output of an exec/wait result, decoded.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The first line of the header (`Script completed`, `Script running with cell ID …`).
    pub status: String,
    /// The header item, whole.
    pub header: String,
    /// The items after the header: text, or `image:<url>|<detail>` for images.
    pub items: Vec<String>,
    /// The success flag the model sees (`None` when absent).
    pub success: Option<bool>,
    /// The raw response item.
    pub raw: serde_json::Value,
}

impl Reply {
    pub fn cell_id(&self) -> String {
        self.status
            .strip_prefix("Script running with cell ID ")
            .unwrap_or_else(|| panic!("not a running cell: {}", self.status))
            .to_owned()
    }
}

/// Decodes the output item of an exec or wait call.
pub fn reply(result: &ToolCallResult) -> Reply {
    let item = result.response_item().expect("no fatal error");
    let raw = serde_json::to_value(&item).expect("item serializes");
    let success = result
        .output
        .as_ref()
        .ok()
        .and_then(|output| output.success())
        .or(Some(false));
    let output = &raw["output"];
    let mut texts: Vec<String> = match output {
        serde_json::Value::String(text) => vec![text.clone()],
        serde_json::Value::Array(items) => items
            .iter()
            .map(|item| match item["type"].as_str() {
                Some("input_text") => item["text"].as_str().unwrap_or_default().to_owned(),
                Some("input_image") => format!(
                    "image:{}|{}",
                    item["image_url"].as_str().unwrap_or_default(),
                    item["detail"].as_str().unwrap_or_default()
                ),
                _ => item.to_string(),
            })
            .collect(),
        other => vec![other.to_string()],
    };
    let header = if texts.is_empty() {
        String::new()
    } else {
        texts.remove(0)
    };
    let status = header.lines().next().unwrap_or_default().to_owned();
    Reply {
        status,
        header,
        items: texts,
        success,
        raw,
    }
}

/// `session.exec(source)`, decoded.
pub async fn exec(session: &Session, source: &str) -> Reply {
    reply(&session.exec(source).await)
}

/// `session.wait(args)`, decoded.
pub async fn wait(session: &Session, args: serde_json::Value) -> Reply {
    reply(&session.wait(args).await)
}

// ---------------------------------------------------------------------------------------------
// Real npm MCP servers and whole-engine sessions (the `mcp` suite). Appended section: the
// helpers above drive bare cells; these drive `Session` (registry, MCP client, code mode).
// ---------------------------------------------------------------------------------------------

/// `tests/mcp-servers`, where `npm ci` installs the pinned servers and `tsc`.
pub fn mcp_servers_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-servers")
}

/// An installed binary of `tests/mcp-servers/node_modules/.bin`; panics with the command to
/// run when the packages are missing.
pub fn mcp_server_bin(name: &str) -> std::path::PathBuf {
    let bin = mcp_servers_dir().join("node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `npm ci --prefix tests/mcp-servers` first",
        bin.display()
    );
    bin
}

/// `mcp-server-everything stdio`.
pub fn everything_server() -> codemode_runtime::mcp::McpServerConfig {
    let bin = mcp_server_bin("mcp-server-everything");
    codemode_runtime::mcp::McpServerConfig::new(bin.to_string_lossy(), ["stdio"])
}

/// `mcp-server-filesystem <dirs…>`.
pub fn filesystem_server(dirs: &[&std::path::Path]) -> codemode_runtime::mcp::McpServerConfig {
    let bin = mcp_server_bin("mcp-server-filesystem");
    codemode_runtime::mcp::McpServerConfig::new(
        bin.to_string_lossy(),
        dirs.iter().map(|dir| dir.to_string_lossy().into_owned()),
    )
}

/// `mcp-server-memory` keeping its graph in `file`.
pub fn memory_server(file: &std::path::Path) -> codemode_runtime::mcp::McpServerConfig {
    let bin = mcp_server_bin("mcp-server-memory");
    let mut config =
        codemode_runtime::mcp::McpServerConfig::new(bin.to_string_lossy(), Vec::<String>::new());
    config.env.insert(
        "MEMORY_FILE_PATH".to_owned(),
        file.to_string_lossy().into_owned(),
    );
    config
}

/// A session with cells on the shared in-process engine and the given MCP servers.
pub async fn mcp_session(
    servers: Vec<(&str, codemode_runtime::mcp::McpServerConfig)>,
) -> codemode_runtime::session::Session {
    mcp_session_with(servers, |_| {}).await
}

/// [`mcp_session`] with the options adjusted by `configure` before the session starts.
pub async fn mcp_session_with(
    servers: Vec<(&str, codemode_runtime::mcp::McpServerConfig)>,
    configure: impl FnOnce(&mut codemode_runtime::session::SessionOptions),
) -> codemode_runtime::session::Session {
    use codemode_runtime::session::{CellBackend, Session, SessionOptions};
    let mut options =
        SessionOptions::new(std::env::temp_dir(), CellBackend::InProcess(engine_arc()));
    options.mcp.servers = servers
        .into_iter()
        .map(|(name, config)| (name.to_owned(), config))
        .collect();
    configure(&mut options);
    Session::start(options).await.expect("session starts")
}

/// The model-visible output of one `exec`/`wait` call, taken apart.
#[derive(Debug)]
pub struct ExecOutput {
    /// The item type (`custom_tool_call_output` for exec, `function_call_output` for wait).
    pub item_type: String,
    /// The first text item: `Script completed\nWall time …\nOutput:\n` and the like.
    pub header: String,
    /// The texts after the header, in order.
    pub texts: Vec<String>,
    /// The `image_url`s of `input_image` items, in order.
    pub images: Vec<String>,
    /// The whole item as JSON.
    pub item: serde_json::Value,
}

impl ExecOutput {
    /// Parses a call result; panics on a fatal error or an unexpected shape.
    pub fn of(result: &codemode_runtime::router::ToolCallResult) -> Self {
        let item = codemode_runtime::session::response_item_json(result);
        let item_type = item["type"].as_str().unwrap_or_default().to_owned();
        let parts = item["output"]
            .as_array()
            .unwrap_or_else(|| panic!("output is not a content-items array: {item}"));
        let mut texts = Vec::new();
        let mut images = Vec::new();
        for part in parts {
            match part["type"].as_str() {
                Some("input_text") => {
                    texts.push(part["text"].as_str().unwrap_or_default().to_owned())
                }
                Some("input_image") => {
                    images.push(part["image_url"].as_str().unwrap_or_default().to_owned())
                }
                _ => panic!("unexpected output item {part} in {item}"),
            }
        }
        assert!(!texts.is_empty(), "no header in {item}");
        let header = texts.remove(0);
        Self {
            item_type,
            header,
            texts,
            images,
            item,
        }
    }

    /// The status line: `Script completed`, `Script failed`, `Script running with cell ID …`.
    pub fn status(&self) -> &str {
        self.header.lines().next().unwrap_or_default()
    }

    /// The cell id of a yielded result.
    pub fn cell_id(&self) -> Option<&str> {
        self.status().strip_prefix("Script running with cell ID ")
    }

    /// Size of the model-visible output in bytes (the serialized item).
    pub fn bytes(&self) -> usize {
        self.item.to_string().len()
    }

    /// Asserts the script completed and the header has the documented shape.
    pub fn assert_completed(&self) {
        assert_eq!(self.status(), "Script completed", "{:#}", self.item);
        let mut lines = self.header.lines();
        lines.next();
        let wall = lines.next().unwrap_or_default();
        assert!(
            wall.starts_with("Wall time ") && wall.ends_with(" seconds"),
            "header {:?}",
            self.header
        );
        assert!(
            self.header.ends_with("\nOutput:\n"),
            "header {:?}",
            self.header
        );
    }
}

/// A fresh folder outside every default writable root of the workspace-write sandbox (the
/// cwd, `/tmp` and `$TMPDIR`), wherever the checkout lives. Removed on drop.
pub fn outside_workspace_dir() -> tempfile::TempDir {
    let tmpdir = std::env::var_os("TMPDIR").map(std::path::PathBuf::from);
    let under_tmp = |path: &std::path::Path| {
        path.starts_with("/tmp") || tmpdir.as_ref().is_some_and(|t| path.starts_with(t))
    };
    let candidates = [
        Some(std::path::PathBuf::from("/var/tmp")),
        std::env::var_os("HOME").map(std::path::PathBuf::from),
    ];
    for base in candidates.into_iter().flatten() {
        if base.is_dir()
            && !under_tmp(&base)
            && let Ok(dir) = tempfile::Builder::new()
                .prefix("codemode-outside-")
                .tempdir_in(&base)
        {
            return dir;
        }
    }
    panic!("no writable folder outside /tmp and $TMPDIR for the sandbox tests");
}
