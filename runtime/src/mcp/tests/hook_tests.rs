//! What hooks see of MCP calls (spec runtime §2.3), through the real router and a real
//! server-everything: `mcp__<server>__<tool>` with the parsed arguments.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::{everything, options, trusted_context};
use crate::hooks::{HookEvent, HookInput, HookResponse, ToolHooks};
use crate::mcp::McpConnectionManager;
use crate::parallel::ToolCallRuntime;
use crate::registry::ToolRegistry;
use crate::router::{StepContext, StepContextOptions, ToolCall, ToolCallResult};
use crate::tool::{ResponseInputItem, ToolCallSource, ToolName};

type Seen = Arc<Mutex<Vec<HookInput>>>;

async fn start_recorded(record: &Path) -> McpConnectionManager {
    let mut options = options(vec![("everything", everything())]);
    options.record_path = Some(record.to_owned());
    let manager = McpConnectionManager::start(options).await.unwrap();
    assert!(manager.startup_failures().is_empty());
    manager
}

/// Hooks recording every request; PreToolUse answers with `answer`.
fn recording_hooks(
    answer: impl Fn(&HookInput) -> HookResponse + Send + Sync + 'static,
) -> (ToolHooks, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let (pre, post) = (Arc::clone(&seen), Arc::clone(&seen));
    let hooks = ToolHooks::new()
        .with_pre_tool_use("*", move |input| {
            pre.lock().unwrap().push(input.clone());
            answer(input)
        })
        .with_post_tool_use("*", move |input| {
            post.lock().unwrap().push(input.clone());
            HookResponse::default()
        });
    (hooks, seen)
}

async fn run(manager: &McpConnectionManager, hooks: ToolHooks, call: ToolCall) -> ToolCallResult {
    let mut registry = ToolRegistry::new();
    for executor in manager.executors() {
        assert!(registry.register_external(executor));
    }
    let options = StepContextOptions {
        hooks: Arc::new(hooks),
        lifecycle_observers: Vec::new(),
    };
    let step = StepContext::new(&registry, trusted_context(), options);
    ToolCallRuntime::new(step, CancellationToken::new())
        .handle_tool_call(call, ToolCallSource::Direct)
        .await
}

fn call(tool: &str, arguments: &str) -> ToolCall {
    ToolCall::function(
        ToolName::namespaced("mcp__everything__", tool),
        "call-1",
        arguments,
    )
}

fn model_text(result: &ToolCallResult) -> String {
    match result.response_item().unwrap() {
        ResponseInputItem::FunctionCallOutput { output, .. } => output.as_str().unwrap().to_owned(),
        other => panic!("unexpected item {other:?}"),
    }
}

fn tools_called(record: &Path) -> Vec<String> {
    std::fs::read_to_string(record)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|r| r["direction"] == "send" && r["message"]["method"] == "tools/call")
        .map(|r| r["message"]["params"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn hooks_see_the_flat_name_parsed_arguments_and_the_mcp_result() {
    let dir = tempfile::tempdir().unwrap();
    let manager = start_recorded(&dir.path().join("mcp.ndjson")).await;
    let (hooks, seen) = recording_hooks(|_| HookResponse::default());
    let result = run(&manager, hooks, call("echo", r#"{"message":"hi"}"#)).await;
    assert_eq!(model_text(&result), "Echo: hi");

    let seen = seen.lock().unwrap();
    let names: Vec<(HookEvent, &str)> = seen
        .iter()
        .map(|i| (i.hook_event_name, i.tool_name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            (HookEvent::PreToolUse, "mcp__everything__echo"),
            (HookEvent::PostToolUse, "mcp__everything__echo")
        ]
    );
    assert_eq!(seen[0].tool_input, json!({"message": "hi"}));
    assert_eq!(
        seen[1].tool_response,
        Some(json!({"content": [{"type": "text", "text": "Echo: hi"}]}))
    );
}

#[tokio::test]
async fn empty_arguments_are_an_object_and_invalid_ones_the_raw_string() {
    let dir = tempfile::tempdir().unwrap();
    let manager = start_recorded(&dir.path().join("mcp.ndjson")).await;
    let (hooks, seen) = recording_hooks(|_| HookResponse::default());
    run(&manager, hooks.clone(), call("get-tiny-image", "")).await;
    let invalid = run(&manager, hooks, call("echo", "{not json")).await;
    assert!(
        model_text(&invalid).starts_with("err: "),
        "{}",
        model_text(&invalid)
    );

    let pre: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|i| i.hook_event_name == HookEvent::PreToolUse)
        .map(|i| i.tool_input.clone())
        .collect();
    assert_eq!(pre, vec![json!({}), json!("{not json")]);
}

#[tokio::test]
async fn a_rewrite_is_reserialized_and_a_block_names_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mcp.ndjson");
    let manager = start_recorded(&record).await;

    let hooks = ToolHooks::new().with_pre_tool_use("mcp__everything__echo", |_| {
        HookResponse::update_input(json!({"message": "rewritten"}))
    });
    let result = run(&manager, hooks, call("echo", r#"{"message":"hi"}"#)).await;
    assert_eq!(model_text(&result), "Echo: rewritten");

    let hooks = ToolHooks::new().with_pre_tool_use("mcp__everything__echo", |_| {
        HookResponse::block("not today")
    });
    let result = run(&manager, hooks, call("echo", r#"{"message":"blocked"}"#)).await;
    assert_eq!(
        model_text(&result),
        "Tool call blocked by PreToolUse hook: not today. Tool: mcp__everything__echo"
    );
    assert_eq!(
        tools_called(&record),
        vec!["echo"],
        "the blocked call never ran"
    );
}
