use std::sync::Mutex;
use std::time::Duration;

use codemode_bridge::{ToolCallId, ToolName};
use serde_json::json;

use super::*;
use crate::hooks::ToolHooks;
use crate::registry::ToolRegistry;
use crate::router::{StepContext, StepContextOptions};
use crate::tool::{
    FreeformFormat, FunctionCallError, TextToolOutput, ToolContext, ToolExecutor, ToolInvocation,
    ToolOutput, ToolPayload,
};

/// A tool that records what it was called with and answers `<name>:<raw input>`, or fails
/// when its input contains `fail`.
struct RecordingTool {
    name: ToolName,
    freeform: bool,
    seen: Arc<Mutex<Vec<ToolInvocation>>>,
}

impl ToolExecutor for RecordingTool {
    fn tool_name(&self) -> ToolName {
        self.name.clone()
    }
    fn spec(&self) -> ToolSpec {
        if self.freeform {
            ToolSpec::Freeform {
                name: self.name.name.clone(),
                description: "freeform".to_owned(),
                format: FreeformFormat {
                    kind: "grammar".to_owned(),
                    syntax: "lark".to_owned(),
                    definition: "start: /.+/".to_owned(),
                },
            }
        } else {
            ToolSpec::function(
                self.name.name.clone(),
                "function",
                json!({ "type": "object" }),
            )
        }
    }
    fn supports_parallel_tool_calls(&self) -> bool {
        true
    }
    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        let raw = match &invocation.payload {
            ToolPayload::Function { arguments } | ToolPayload::ToolSearch { arguments } => {
                arguments.clone()
            }
            ToolPayload::Custom { input } => input.clone(),
        };
        self.seen.lock().unwrap().push(invocation);
        let name = self.name.name.clone();
        Box::pin(async move {
            if raw.contains("fail") {
                return Err(FunctionCallError::RespondToModel(format!(
                    "{name} failed on purpose"
                )));
            }
            Ok(Box::new(TextToolOutput::ok(format!("{name}:{raw}"))) as Box<dyn ToolOutput>)
        })
    }
}

#[derive(Default)]
struct RecordingSink(Mutex<Vec<ExecNotification>>);

impl NotificationSink for Arc<RecordingSink> {
    fn deliver(&self, notification: ExecNotification) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(notification);
        Box::pin(async {})
    }
}

struct Fixture {
    broker: CodeModeBroker,
    runtime: ToolCallRuntime,
    seen: Arc<Mutex<Vec<ToolInvocation>>>,
    sink: Arc<RecordingSink>,
}

fn fixture() -> Fixture {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut registry = ToolRegistry::new();
    for (name, freeform) in [("echo", false), ("apply_patch", true)] {
        let tool = RecordingTool {
            name: ToolName::plain(name),
            freeform,
            seen: Arc::clone(&seen),
        };
        registry.register_builtin(Arc::new(tool)).unwrap();
    }
    let step = StepContext::new(
        &registry,
        Arc::new(ToolContext::new(std::env::temp_dir())),
        StepContextOptions {
            hooks: Arc::new(ToolHooks::default()),
            lifecycle_observers: Vec::new(),
        },
    );
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    let sink = Arc::new(RecordingSink::default());
    let broker = CodeModeBroker::new(Arc::new(SessionStore::new()), Arc::new(Arc::clone(&sink)));
    Fixture {
        broker,
        runtime,
        seen,
        sink,
    }
}

fn nested(tool: &str, input: Option<Value>) -> NestedToolCall {
    NestedToolCall {
        cell_id: CellId::from_raw("cell1"),
        runtime_tool_call_id: ToolCallId::nth(3),
        tool_name: ToolName::plain(tool),
        js_name: tool.to_owned(),
        input,
    }
}

#[tokio::test]
async fn nested_function_call_goes_through_the_router_with_code_mode_source() {
    let f = fixture();
    f.broker.set_active_runtime(Some(f.runtime.clone()));
    let result = f
        .broker
        .invoke_tool(nested("echo", None), CancellationToken::new())
        .await;
    assert_eq!(result, Ok(Some(json!("echo:{}"))));
    let seen = f.seen.lock().unwrap();
    let invocation = &seen[0];
    let uuid = invocation
        .call_id
        .strip_prefix("exec-")
        .expect("call id is exec-<uuid>");
    assert_eq!(uuid::Uuid::parse_str(uuid).unwrap().get_version_num(), 4);
    assert_eq!(
        invocation.source,
        ToolCallSource::CodeMode {
            cell_id: CellId::from_raw("cell1"),
            runtime_tool_call_id: ToolCallId::nth(3)
        }
    );
    assert!(
        Arc::ptr_eq(&invocation.context, f.runtime.step().tool_context()),
        "nested calls get the active step's ToolContext (approver, sandbox, processes)"
    );
}

#[tokio::test]
async fn each_nested_call_gets_a_fresh_call_id() {
    let f = fixture();
    f.broker.set_active_runtime(Some(f.runtime.clone()));
    let (a, b) = tokio::join!(
        f.broker.invoke_tool(
            nested("echo", Some(json!({"n": 1}))),
            CancellationToken::new()
        ),
        f.broker.invoke_tool(
            nested("echo", Some(json!({"n": 2}))),
            CancellationToken::new()
        ),
    );
    assert_eq!(
        (a, b),
        (
            Ok(Some(json!("echo:{\"n\":1}"))),
            Ok(Some(json!("echo:{\"n\":2}")))
        )
    );
    let seen = f.seen.lock().unwrap();
    assert_ne!(seen[0].call_id, seen[1].call_id);
}

#[tokio::test]
async fn freeform_tools_get_the_string_and_refuse_objects() {
    let f = fixture();
    f.broker.set_active_runtime(Some(f.runtime.clone()));
    let ok = f
        .broker
        .invoke_tool(
            nested("apply_patch", Some(json!("*** Begin Patch"))),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(ok, Ok(Some(json!("apply_patch:*** Begin Patch"))));
    let bad = f
        .broker
        .invoke_tool(
            nested("apply_patch", Some(json!({"patch": 1}))),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(
        bad,
        Err("tool `apply_patch` expects a string input".to_owned())
    );
    let bad = f
        .broker
        .invoke_tool(
            nested("echo", Some(json!([1, 2]))),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(
        bad,
        Err("tool `echo` expects a JSON object for arguments".to_owned())
    );
    assert_eq!(
        f.seen.lock().unwrap().len(),
        1,
        "refused calls never reach a tool"
    );
}

#[tokio::test]
async fn tool_failures_reject_with_their_text() {
    let f = fixture();
    f.broker.set_active_runtime(Some(f.runtime.clone()));
    let result = f
        .broker
        .invoke_tool(
            nested("echo", Some(json!({"x": "fail"}))),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(result, Err("echo failed on purpose".to_owned()));
}

#[tokio::test]
async fn exec_and_wait_cannot_be_nested() {
    let f = fixture();
    f.broker.set_active_runtime(Some(f.runtime.clone()));
    for tool in ["exec", "wait"] {
        let result = f
            .broker
            .invoke_tool(
                nested(tool, Some(json!("text(1)"))),
                CancellationToken::new(),
            )
            .await;
        assert_eq!(result, Err("exec cannot invoke itself".to_owned()));
    }
}

#[tokio::test]
async fn calls_wait_for_an_active_step_and_can_be_cancelled_meanwhile() {
    let f = fixture();
    let pending = f
        .broker
        .invoke_tool(nested("echo", None), CancellationToken::new());
    let handle = tokio::spawn(pending);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !handle.is_finished(),
        "a call between turns must wait, not fail"
    );
    f.broker.set_active_runtime(Some(f.runtime.clone()));
    assert_eq!(handle.await.unwrap(), Ok(Some(json!("echo:{}"))));

    f.broker.set_active_runtime(None);
    let cancel = CancellationToken::new();
    let pending = tokio::spawn(f.broker.invoke_tool(nested("echo", None), cancel.clone()));
    cancel.cancel();
    assert_eq!(
        pending.await.unwrap(),
        Err("code mode nested tool call cancelled".to_owned())
    );
}

#[tokio::test]
async fn notify_reaches_the_sink_as_an_exec_output_item() {
    let f = fixture();
    f.broker
        .notify(
            CellId::from_raw("c"),
            "call-2".to_owned(),
            "this is important".to_owned(),
        )
        .await;
    let delivered = f.sink.0.lock().unwrap().clone();
    assert_eq!(delivered.len(), 1);
    assert_eq!(
        delivered[0].response_item(),
        json!({ "type": "custom_tool_call_output", "call_id": "call-2", "name": "exec", "output": "this is important" })
    );
}

#[tokio::test]
async fn commit_store_merges_into_the_session_store() {
    let f = fixture();
    let writes = StoredValues::from([("k".to_owned(), json!({"v": 1}))]);
    f.broker.commit_store(CellId::from_raw("c"), writes).await;
    assert_eq!(f.broker.store().get("k"), Some(json!({"v": 1})));
}
