//! Shared helpers for the codemode integration suite: one process-wide V8 engine and a small
//! driver that runs a cell to its end, answering nested tool calls with a Rust closure.
#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs, unreachable_pub)]

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
    let mut channels = engine().start_cell(CellId::generate(), start).expect("cell starts");
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
            CellEvent::ToolCall { id, js_name, input, .. } => {
                run.tool_calls.push((js_name.clone(), input.clone()));
                match answer(js_name, input) {
                    Answer::Value(value) => {
                        commands.send(CellCommand::ToolResponse { id: id.clone(), value });
                    }
                    Answer::Error(text) => {
                        commands.send(CellCommand::ToolError { id: id.clone(), text });
                    }
                    Answer::Ignore => {}
                }
            }
            CellEvent::Notify { text } => run.notifications.push(text.clone()),
            CellEvent::Result { error_text, stored_value_writes, abandoned_tool_calls, terminated } => {
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
