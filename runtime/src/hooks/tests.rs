//! Hook tests: every PreToolUse / PostToolUse outcome through the real dispatch path, with
//! Rust closures and with real external commands.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::parallel::ToolCallRuntime;
use crate::router::test_support::{Behaviour, TestTool, registry_of, step_with};
use crate::router::{ToolCall, ToolCallResult};
use crate::tool::{ResponseInputItem, ToolCallSource, ToolName, ToolPayload};
use codemode_bridge::{CellId, ToolCallId};

async fn run_with(
    tool: &TestTool,
    hooks: ToolHooks,
    call: ToolCall,
    source: ToolCallSource,
) -> ToolCallResult {
    let (step, _) = step_with(&registry_of(&[tool]), hooks);
    ToolCallRuntime::new(step, CancellationToken::new())
        .handle_tool_call(call, source)
        .await
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall::function(ToolName::plain(name), "call-1", arguments)
}

fn model_output(result: &ToolCallResult) -> serde_json::Value {
    match result.response_item().unwrap() {
        ResponseInputItem::FunctionCallOutput { output, .. }
        | ResponseInputItem::CustomToolCallOutput { output, .. } => output,
        other => panic!("unexpected item {other:?}"),
    }
}

#[tokio::test]
async fn pre_tool_use_block_of_a_command_tool_names_the_command() {
    let tool = TestTool::plain("exec_command").shell_like();
    let hooks = ToolHooks::new().with_pre_tool_use("Bash", |_| HookResponse::block("no deletes"));
    let result = run_with(
        &tool,
        hooks,
        call("exec_command", "rm -rf /tmp/x"),
        ToolCallSource::Direct,
    )
    .await;
    assert_eq!(
        model_output(&result),
        json!("Command blocked by PreToolUse hook: no deletes. Command: rm -rf /tmp/x")
    );
    assert_eq!(tool.call_count(), 0);
}

#[tokio::test]
async fn pre_tool_use_block_without_reason_continues() {
    let tool = TestTool::plain("echo");
    let hooks = ToolHooks::new().with_pre_tool_use("*", |_| HookResponse {
        decision: Some(HookDecision::Block),
        ..HookResponse::default()
    });
    let result = run_with(&tool, hooks, call("echo", "{}"), ToolCallSource::Direct).await;
    assert_eq!(result.code_mode_result(), Ok(json!("echo:{}")));
}

#[tokio::test]
async fn pre_tool_use_rewrites_the_input_the_handler_sees() {
    let tool = TestTool::plain("echo");
    let hooks = ToolHooks::new()
        .with_pre_tool_use("echo", |input| {
            assert_eq!(input.tool_input, json!({"n": 1}));
            HookResponse::update_input(json!({"n": 2}))
        })
        .with_pre_tool_use("echo", |input| {
            // A later hook sees the earlier rewrite.
            assert_eq!(input.tool_input, json!({"n": 2}));
            HookResponse::context("checked")
        });
    let result = run_with(
        &tool,
        hooks,
        call("echo", "{\"n\":1}"),
        ToolCallSource::Direct,
    )
    .await;
    assert_eq!(result.code_mode_result(), Ok(json!("echo:{\"n\":2}")));
    assert_eq!(result.additional_contexts, vec!["checked"]);
    let seen = tool.seen.lock().unwrap();
    assert_eq!(
        seen[0].payload,
        ToolPayload::Function {
            arguments: "{\"n\":2}".to_owned()
        }
    );
}

#[tokio::test]
async fn matcher_limits_hooks_to_named_tools() {
    let tool = TestTool::plain("echo");
    let hooks =
        ToolHooks::new().with_pre_tool_use("other|third", |_| HookResponse::block("wrong tool"));
    let result = run_with(&tool, hooks, call("echo", "{}"), ToolCallSource::Direct).await;
    assert!(result.output.is_ok());
}

#[tokio::test]
async fn hooks_see_the_code_mode_source_of_nested_calls() {
    let tool = TestTool::plain("echo");
    let sources = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&sources);
    let recorded_post = Arc::clone(&sources);
    let hooks = ToolHooks::new()
        .with_pre_tool_use("*", move |input| {
            recorded
                .lock()
                .unwrap()
                .push(serde_json::to_value(input).unwrap());
            HookResponse::default()
        })
        .with_post_tool_use("*", move |input| {
            recorded_post
                .lock()
                .unwrap()
                .push(serde_json::to_value(input).unwrap());
            HookResponse::default()
        });
    let source = ToolCallSource::CodeMode {
        cell_id: CellId::from_raw("cell1"),
        runtime_tool_call_id: ToolCallId::nth(1),
    };
    let nested = ToolCall::function(ToolName::plain("echo"), "exec-1", "{\"a\":true}");
    let result = run_with(&tool, hooks, nested, source).await;
    assert!(result.output.is_ok());
    let sources = sources.lock().unwrap();
    assert_eq!(sources[0]["hook_event_name"], "PreToolUse");
    assert_eq!(
        sources[0]["source"],
        json!({"type": "code_mode", "cell_id": "cell1", "runtime_tool_call_id": "tool-1"})
    );
    assert_eq!(sources[0]["tool_input"], json!({"a": true}));
    assert_eq!(sources[0]["tool_use_id"], "exec-1");
    assert_eq!(sources[1]["hook_event_name"], "PostToolUse");
    assert_eq!(sources[1]["tool_response"], json!("echo:{\"a\":true}"));
}

#[tokio::test]
async fn post_tool_use_feedback_replaces_model_output_but_not_code_mode_result() {
    let tool = TestTool::plain("echo");
    let hooks =
        ToolHooks::new().with_post_tool_use("*", |_| HookResponse::update_output("[redacted]"));
    let result = run_with(&tool, hooks, call("echo", "secret"), ToolCallSource::Direct).await;
    assert_eq!(model_output(&result), json!("[redacted]"));
    assert_eq!(result.code_mode_result(), Ok(json!("echo:secret")));
    assert_eq!(result.output.as_ref().unwrap().success(), None);
}

#[tokio::test]
async fn post_tool_use_block_hides_the_result_after_the_side_effect_happened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("written.txt");
    let tool = TestTool::plain("write").behaviour(Behaviour::WriteFile(path.clone()));
    let hooks = ToolHooks::new().with_post_tool_use("write", |input| {
        assert_eq!(input.tool_response, Some(json!("wrote")));
        HookResponse::block("output withheld by policy")
    });
    let result = run_with(
        &tool,
        hooks,
        call("write", "payload"),
        ToolCallSource::Direct,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "payload",
        "the side effect is not rolled back"
    );
    assert_eq!(model_output(&result), json!("output withheld by policy"));
    assert_eq!(
        result.code_mode_result(),
        Err("output withheld by policy".to_owned())
    );
}

#[tokio::test]
async fn post_tool_use_block_without_reason_uses_the_default_text() {
    let tool = TestTool::plain("echo");
    let hooks = ToolHooks::new().with_post_tool_use("*", |_| HookResponse {
        decision: Some(HookDecision::Block),
        ..HookResponse::default()
    });
    let result = run_with(&tool, hooks, call("echo", "{}"), ToolCallSource::Direct).await;
    assert_eq!(
        model_output(&result),
        json!("PostToolUse hook blocked the tool result")
    );
}

#[tokio::test]
async fn post_tool_use_does_not_run_for_failed_calls() {
    let tool = TestTool::plain("bad").behaviour(Behaviour::Fail("boom".to_owned()));
    let ran = Arc::new(Mutex::new(false));
    let flag = Arc::clone(&ran);
    let hooks = ToolHooks::new().with_post_tool_use("*", move |_| {
        *flag.lock().unwrap() = true;
        HookResponse::block("should not run")
    });
    let result = run_with(&tool, hooks, call("bad", "{}"), ToolCallSource::Direct).await;
    assert_eq!(model_output(&result), json!("boom"));
    assert!(!*ran.lock().unwrap());
}

#[tokio::test]
async fn freeform_rewrite_with_a_non_string_fails_before_the_handler() {
    let tool = TestTool::plain("patch").freeform();
    let hooks = ToolHooks::new().with_pre_tool_use("*", |_| {
        HookResponse::update_input(json!({"not": "a string"}))
    });
    let result = run_with(
        &tool,
        hooks,
        ToolCall::custom(ToolName::plain("patch"), "c", "x"),
        ToolCallSource::Direct,
    )
    .await;
    assert_eq!(
        result.code_mode_result(),
        Err("PreToolUse hook rewrote the input of patch with a non-string value".to_owned())
    );
    assert_eq!(tool.call_count(), 0);
}

fn write_script(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn command_hook_blocks_with_json_and_sees_the_request_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stdin.json");
    let script = write_script(
        dir.path(),
        "pre.sh",
        &format!(
            "cat > '{}'\necho '{{\"decision\":\"block\",\"reason\":\"denied by script\"}}'\n",
            log.display()
        ),
    );
    let tool = TestTool::plain("echo");
    let hooks = ToolHooks::new().with_command(
        HookEvent::PreToolUse,
        "*",
        CommandHook::new(vec!["sh".into(), script]),
    );
    let result = run_with(
        &tool,
        hooks,
        call("echo", "{\"x\":1}"),
        ToolCallSource::Direct,
    )
    .await;
    assert_eq!(
        model_output(&result),
        json!("Tool call blocked by PreToolUse hook: denied by script. Tool: echo")
    );
    let request: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(request["hook_event_name"], "PreToolUse");
    assert_eq!(request["tool_name"], "echo");
    assert_eq!(request["tool_input"], json!({"x": 1}));
    assert_eq!(request["source"], json!({"type": "direct"}));
    assert_eq!(tool.call_count(), 0);
}

#[tokio::test]
async fn command_hook_exit_code_two_blocks_with_stderr() {
    let tool = TestTool::plain("echo");
    let argv = vec![
        "sh".into(),
        "-c".into(),
        "echo 'stop right there' >&2; exit 2".into(),
    ];
    let hooks = ToolHooks::new().with_command(HookEvent::PreToolUse, "", CommandHook::new(argv));
    let result = run_with(&tool, hooks, call("echo", "{}"), ToolCallSource::Direct).await;
    assert_eq!(
        model_output(&result),
        json!("Tool call blocked by PreToolUse hook: stop right there. Tool: echo")
    );
}

#[tokio::test]
async fn python_command_hook_rewrites_input_and_post_hook_replaces_output() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("skipping: python3 is unavailable");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pre = write_script(
        dir.path(),
        "pre.py",
        "import json, sys\nreq = json.load(sys.stdin)\nargs = req['tool_input']\nargs['n'] = args['n'] * 10\nprint(json.dumps({'updated_input': args, 'additional_context': 'scaled'}))\n",
    );
    let post = write_script(
        dir.path(),
        "post.py",
        "import json, sys\nreq = json.load(sys.stdin)\nprint(json.dumps({'updated_output': 'seen ' + req['tool_response']}))\n",
    );
    let config: HooksConfig = toml::from_str(&format!(
        "[[PreToolUse]]\nmatcher = \"echo\"\ncommand = [\"python3\", \"{pre}\"]\n\n[[PostToolUse]]\ncommand = [\"python3\", \"{post}\"]\ntimeout_ms = 10000\n"
    ))
    .unwrap();
    let tool = TestTool::plain("echo");
    let result = run_with(
        &tool,
        ToolHooks::from_config(&config),
        call("echo", "{\"n\":4}"),
        ToolCallSource::Direct,
    )
    .await;
    assert_eq!(model_output(&result), json!("seen echo:{\"n\":40}"));
    assert_eq!(result.code_mode_result(), Ok(json!("echo:{\"n\":40}")));
    assert_eq!(result.additional_contexts, vec!["scaled"]);
}

#[tokio::test]
async fn failing_or_slow_command_hooks_are_ignored() {
    let tool = TestTool::plain("echo");
    let hooks = ToolHooks::new()
        .with_command(
            HookEvent::PreToolUse,
            "*",
            CommandHook::new(vec!["sh".into(), "-c".into(), "exit 1".into()]),
        )
        .with_command(
            HookEvent::PreToolUse,
            "*",
            CommandHook::new(vec!["sh".into(), "-c".into(), "echo not-json".into()]),
        )
        .with_command(
            HookEvent::PreToolUse,
            "*",
            CommandHook::new(vec!["sh".into(), "-c".into(), "sleep 5".into()])
                .with_timeout(Duration::from_millis(200)),
        )
        .with_command(
            HookEvent::PreToolUse,
            "*",
            CommandHook::new(vec!["/nonexistent/hook".into()]),
        );
    let started = std::time::Instant::now();
    let result = run_with(&tool, hooks, call("echo", "{}"), ToolCallSource::Direct).await;
    assert_eq!(result.code_mode_result(), Ok(json!("echo:{}")));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timed-out hook was killed"
    );
}

#[test]
fn hook_matcher_parses_alternatives() {
    assert!(HookMatcher::parse("*").matches("anything"));
    assert!(HookMatcher::parse("").matches("anything"));
    let matcher = HookMatcher::parse("Bash | apply_patch");
    assert!(matcher.matches("Bash") && matcher.matches("apply_patch"));
    assert!(!matcher.matches("Bas"));
}
