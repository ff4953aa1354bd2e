//! What hooks see of the real side-effect tools (spec runtime §2.3), through the real router:
//! `exec_command` is `Bash` with `{"command"}`, `apply_patch` is `apply_patch` with
//! `{"command": <patch>}`, `write_stdin` is not hookable.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{HookEvent, HookInput, HookResponse, ToolHooks};
use crate::apply_patch::ApplyPatchTool;
use crate::parallel::ToolCallRuntime;
use crate::registry::ToolRegistry;
use crate::router::{StepContext, StepContextOptions, ToolCall, ToolCallResult};
use crate::tool::{ResponseInputItem, ToolCallSource, ToolExecutor, ToolName};
use crate::unified_exec::tests::{isolated_policy, test_context};
use crate::unified_exec::{ExecCommandTool, WriteStdinTool};

/// Every hook request seen, in order.
type Seen = Arc<Mutex<Vec<HookInput>>>;

/// Hooks that record every request and answer with `answer` (PreToolUse only).
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

fn runtime(cwd: &Path, hooks: ToolHooks) -> ToolCallRuntime {
    let mut registry = ToolRegistry::new();
    let tools: [Arc<dyn ToolExecutor>; 3] = [
        Arc::new(ExecCommandTool::default()),
        Arc::new(WriteStdinTool::new()),
        Arc::new(ApplyPatchTool::new()),
    ];
    for tool in tools {
        registry.register_builtin(tool).unwrap();
    }
    let options = StepContextOptions {
        hooks: Arc::new(hooks),
        lifecycle_observers: Vec::new(),
    };
    let context = Arc::new(test_context(cwd, isolated_policy()));
    ToolCallRuntime::new(
        StepContext::new(&registry, context, options),
        CancellationToken::new(),
    )
}

async fn run(runtime: &ToolCallRuntime, call: ToolCall) -> ToolCallResult {
    runtime.handle_tool_call(call, ToolCallSource::Direct).await
}

fn exec(arguments: Value) -> ToolCall {
    ToolCall::function(
        ToolName::plain("exec_command"),
        "call-exec",
        arguments.to_string(),
    )
}

fn model_text(result: &ToolCallResult) -> String {
    match result.response_item().unwrap() {
        ResponseInputItem::FunctionCallOutput { output, .. }
        | ResponseInputItem::CustomToolCallOutput { output, .. } => {
            output.as_str().unwrap_or_default().to_owned()
        }
        other => panic!("unexpected item {other:?}"),
    }
}

fn events(seen: &Seen) -> Vec<(HookEvent, String, Value)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|i| (i.hook_event_name, i.tool_name.clone(), i.tool_input.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_command_is_bash_with_the_command_and_post_sees_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let (hooks, seen) = recording_hooks(|_| HookResponse::default());
    let runtime = runtime(dir.path(), hooks);
    let result = run(
        &runtime,
        exec(json!({"cmd": "echo hi", "yield_time_ms": 10000, "login": false})),
    )
    .await;
    assert_eq!(result.code_mode_result().unwrap()["output"], "hi\n");
    let command = json!({"command": "echo hi"});
    assert_eq!(
        events(&seen),
        vec![
            (HookEvent::PreToolUse, "Bash".to_owned(), command.clone()),
            (HookEvent::PostToolUse, "Bash".to_owned(), command),
        ]
    );
    assert_eq!(seen.lock().unwrap()[1].tool_response, Some(json!("hi\n")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_command_rewrite_replaces_only_cmd() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (hooks, _) = recording_hooks(|input| {
        let command = input.tool_input["command"].as_str().unwrap();
        HookResponse::update_input(json!({ "command": format!("{command}; echo rewritten") }))
    });
    let runtime = runtime(dir.path(), hooks);
    // The other arguments survive the rewrite: the command runs in `sub`, without a login
    // shell (whose profile could print).
    let result = run(
        &runtime,
        exec(json!({"cmd": "pwd", "workdir": "sub", "yield_time_ms": 10000, "login": false})),
    )
    .await;
    let output = result.code_mode_result().unwrap()["output"]
        .as_str()
        .unwrap()
        .to_owned();
    let sub = sub.canonicalize().unwrap();
    assert_eq!(output, format!("{}\nrewritten\n", sub.display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_command_block_names_the_command_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let hooks = ToolHooks::new().with_pre_tool_use("Bash", |_| HookResponse::block("no deletes"));
    let runtime = runtime(dir.path(), hooks);
    let result = run(&runtime, exec(json!({"cmd": "rm victim"}))).await;
    assert_eq!(
        model_text(&result),
        "Command blocked by PreToolUse hook: no deletes. Command: rm victim"
    );
    assert!(victim.exists());

    // A rewrite without a `command` string fails the call before anything runs.
    let hooks = ToolHooks::new().with_pre_tool_use("Bash", |_| {
        HookResponse::update_input(json!({"cmd": "rm victim"}))
    });
    let runtime = self::runtime(dir.path(), hooks);
    let result = run(&runtime, exec(json!({"cmd": "true"}))).await;
    assert_eq!(
        model_text(&result),
        "PreToolUse hook rewrote the input of exec_command without a string `command`"
    );
    assert!(victim.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_stdin_is_not_hookable_and_running_commands_get_no_post_hook() {
    let dir = tempfile::tempdir().unwrap();
    // Blocks every hookable call but `Bash`: write_stdin must never be asked.
    let (hooks, seen) = recording_hooks(|input| {
        if input.tool_name == "Bash" {
            HookResponse::default()
        } else {
            HookResponse::block("not allowed")
        }
    });
    let runtime = runtime(dir.path(), hooks);
    let started = run(
        &runtime,
        exec(json!({"cmd": "cat", "tty": true, "yield_time_ms": 500})),
    )
    .await;
    let session_id = started.code_mode_result().unwrap()["session_id"].clone();
    assert!(session_id.is_number(), "{:?}", started.code_mode_result());

    let write = |chars: &str| {
        ToolCall::function(
            ToolName::plain("write_stdin"),
            "call-write",
            json!({"session_id": session_id, "chars": chars, "yield_time_ms": 2000}).to_string(),
        )
    };
    let echoed = run(&runtime, write("ping\n")).await;
    assert!(
        echoed.code_mode_result().unwrap()["output"]
            .as_str()
            .unwrap()
            .contains("ping"),
        "{:?}",
        echoed.code_mode_result()
    );
    // Ctrl-D ends `cat`; the exit comes back through write_stdin, still without hooks.
    let ended = run(&runtime, write("\u{4}")).await;
    assert_eq!(ended.code_mode_result().unwrap()["exit_code"], 0);

    assert_eq!(
        events(&seen),
        vec![(
            HookEvent::PreToolUse,
            "Bash".to_owned(),
            json!({"command": "cat"})
        )],
        "only the start was hookable; a still-running command has no PostToolUse"
    );
}

const ADD_A: &str = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch";
const ADD_B: &str = "*** Begin Patch\n*** Add File: b.txt\n+rewritten\n*** End Patch";

fn patch(input: &str) -> ToolCall {
    ToolCall::custom(ToolName::plain("apply_patch"), "call-patch", input)
}

#[tokio::test]
async fn apply_patch_is_hooked_with_the_patch_as_command() {
    let dir = tempfile::tempdir().unwrap();
    let (hooks, seen) = recording_hooks(|_| HookResponse::default());
    let runtime = runtime(dir.path(), hooks);
    let result = run(&runtime, patch(ADD_A)).await;
    assert!(
        model_text(&result).contains("Success."),
        "{}",
        model_text(&result)
    );
    let command = json!({ "command": ADD_A });
    assert_eq!(
        events(&seen),
        vec![
            (
                HookEvent::PreToolUse,
                "apply_patch".to_owned(),
                command.clone()
            ),
            (HookEvent::PostToolUse, "apply_patch".to_owned(), command),
        ]
    );
}

#[tokio::test]
async fn apply_patch_block_names_the_patch_and_rewrite_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let hooks =
        ToolHooks::new().with_pre_tool_use("apply_patch", |_| HookResponse::block("frozen"));
    let result = run(&runtime(dir.path(), hooks), patch(ADD_A)).await;
    assert_eq!(
        model_text(&result),
        format!("Command blocked by PreToolUse hook: frozen. Command: {ADD_A}")
    );
    assert!(!dir.path().join("a.txt").exists());

    let hooks = ToolHooks::new().with_pre_tool_use("apply_patch", |_| {
        HookResponse::update_input(json!({ "command": ADD_B }))
    });
    let runtime = runtime(dir.path(), hooks);
    run(&runtime, patch(ADD_A)).await;
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "rewritten\n"
    );
    // The JSON form keeps its shape after a rewrite.
    std::fs::remove_file(dir.path().join("b.txt")).unwrap();
    let json_form = ToolCall::function(
        ToolName::plain("apply_patch"),
        "call-json",
        json!({ "input": ADD_A }).to_string(),
    );
    let result = run(&runtime, json_form).await;
    assert!(
        model_text(&result).contains("Success."),
        "{}",
        model_text(&result)
    );
    assert!(dir.path().join("b.txt").exists());
}
