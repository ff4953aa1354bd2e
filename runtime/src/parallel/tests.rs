//! Parallel runtime tests: real timing of the read/write gate, call-ordered results and
//! cancellation.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::hooks::ToolHooks;
use crate::router::test_support::{TestTool, registry_of, step_with};
use crate::tool::{ResponseInputItem, ToolName, ToolPayload};
use codemode_bridge::{CellId, ToolCallId};

fn call(name: &str, id: &str) -> ToolCall {
    ToolCall::function(ToolName::plain(name), id, "{}")
}

async fn run_two(tool: &TestTool) -> Duration {
    let (step, _) = step_with(&registry_of(&[tool]), ToolHooks::new());
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    let started = Instant::now();
    let mut calls = InFlightToolCalls::new();
    calls.push(&runtime, call(&tool.name.name, "a"));
    calls.push(&runtime, call(&tool.name.name, "b"));
    let results = calls.drain().await;
    assert!(results.iter().all(|r| r.output.is_ok()));
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_safe_tools_overlap() {
    let elapsed = run_two(&TestTool::plain("reader").parallel().delay_ms(300)).await;
    assert!(
        elapsed < Duration::from_millis(500),
        "two 300 ms parallel calls took {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exclusive_tools_run_one_at_a_time() {
    let elapsed = run_two(&TestTool::plain("writer").delay_ms(300)).await;
    assert!(
        elapsed >= Duration::from_millis(600),
        "two 300 ms exclusive calls took {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_tool_excludes_parallel_ones() {
    let reader = TestTool::plain("reader").parallel().delay_ms(300);
    let writer = TestTool::plain("writer").delay_ms(300);
    let (step, _) = step_with(&registry_of(&[&reader, &writer]), ToolHooks::new());
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    let started = Instant::now();
    let mut calls = InFlightToolCalls::new();
    calls.push(&runtime, call("writer", "w"));
    calls.push(&runtime, call("reader", "r"));
    calls.drain().await;
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_come_back_in_call_order_whatever_finishes_first() {
    let slow = TestTool::plain("slow").parallel().delay_ms(300);
    let fast = TestTool::plain("fast").parallel().delay_ms(10);
    let (step, observer) = step_with(&registry_of(&[&slow, &fast]), ToolHooks::new());
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    let mut calls = InFlightToolCalls::new();
    calls.push(&runtime, call("slow", "first"));
    calls.push(&runtime, call("fast", "second"));
    calls.push(&runtime, call("fast", "third"));
    let ids: Vec<String> = calls
        .drain()
        .await
        .iter()
        .map(|r| r.response_item().unwrap().call_id().to_owned())
        .collect();
    assert_eq!(ids, vec!["first", "second", "third"]);
    let finishes: Vec<String> = observer
        .events()
        .into_iter()
        .filter(|e| e.starts_with("finish:"))
        .collect();
    assert!(
        finishes[0].starts_with("finish:second") || finishes[0].starts_with("finish:third"),
        "{finishes:?}"
    );
    assert!(
        finishes[2].starts_with("finish:first"),
        "the slow call really finished last: {finishes:?}"
    );
}

#[tokio::test]
async fn cancellation_yields_aborted_output_and_one_aborted_lifecycle() {
    let tool = TestTool::plain("sleepy").delay_ms(5_000);
    let (step, observer) = step_with(&registry_of(&[&tool]), ToolHooks::new());
    let turn = CancellationToken::new();
    let runtime = ToolCallRuntime::new(step, turn.clone());
    let canceller = {
        let turn = turn.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            turn.cancel();
        })
    };
    let started = Instant::now();
    let result = runtime
        .handle_tool_call(call("sleepy", "c1"), ToolCallSource::Direct)
        .await;
    canceller.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        result.response_item().unwrap(),
        ResponseInputItem::FunctionCallOutput {
            call_id: "c1".to_owned(),
            output: json!("aborted by user after 0.1s")
        }
    );
    assert_eq!(
        result.code_mode_result(),
        Ok(json!({"status": "aborted", "message": "aborted by user after 0.1s"}))
    );
    assert_eq!(observer.finishes("c1"), vec!["finish:c1:Aborted"]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        observer.finishes("c1").len(),
        1,
        "exactly one terminal event"
    );
}

#[tokio::test]
async fn cancellation_after_handler_finishes_preserves_completed_lifecycle() {
    let tool = TestTool::plain("quick").delay_ms(5);
    let (step, observer) = step_with(&registry_of(&[&tool]), ToolHooks::new());
    let turn = CancellationToken::new();
    let runtime = ToolCallRuntime::new(step, turn.clone());
    let pending = runtime.start_tool_call(call("quick", "c1"), ToolCallSource::Direct, None);
    tokio::time::sleep(Duration::from_millis(200)).await;
    turn.cancel();
    let result = pending.wait().await;
    assert_eq!(result.code_mode_result(), Ok(json!("quick:{}")));
    assert_eq!(
        observer.finishes("c1"),
        vec!["finish:c1:Completed { success: Some(true) }"]
    );
}

#[tokio::test]
async fn cancellation_waiting_for_runtime_cleanup_emits_only_aborted_lifecycle() {
    let tool = TestTool::plain("proc").delay_ms(5_000).waits_for_cleanup();
    let (step, observer) = step_with(&registry_of(&[&tool]), ToolHooks::new());
    let turn = CancellationToken::new();
    let runtime = ToolCallRuntime::new(step, turn.clone());
    let pending = runtime.start_tool_call(call("proc", "c1"), ToolCallSource::Direct, None);
    tokio::time::sleep(Duration::from_millis(100)).await;
    turn.cancel();
    let cancelled_at = Instant::now();
    let result = pending.wait().await;
    assert!(
        cancelled_at.elapsed() >= Duration::from_millis(50),
        "waited for the handler's teardown"
    );
    let text = result.output.as_ref().unwrap().model_text();
    assert!(text.starts_with("aborted by user after "), "{text}");
    assert_eq!(observer.finishes("c1"), vec!["finish:c1:Aborted"]);
}

#[tokio::test]
async fn a_cell_token_cancels_a_nested_call_and_the_handler_sees_it() {
    let tool = TestTool::plain("proc").delay_ms(5_000).waits_for_cleanup();
    let (step, _) = step_with(&registry_of(&[&tool]), ToolHooks::new());
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    let cell = CancellationToken::new();
    let source = ToolCallSource::CodeMode {
        cell_id: CellId::from_raw("c"),
        runtime_tool_call_id: ToolCallId::nth(1),
    };
    let pending = runtime.start_tool_call(call("proc", "exec-1"), source, Some(cell.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    cell.cancel();
    let result = pending.wait().await;
    assert!(
        result
            .output
            .unwrap()
            .model_text()
            .starts_with("aborted by user after ")
    );
    assert!(
        tool.seen.lock().unwrap()[0].cancellation.is_cancelled(),
        "the handler's token was cancelled"
    );
}

#[tokio::test]
async fn cancelled_tool_search_answers_an_empty_search_output() {
    let tool = TestTool::plain("tool_search").parallel().delay_ms(5_000);
    let (step, _) = step_with(&registry_of(&[&tool]), ToolHooks::new());
    let turn = CancellationToken::new();
    let runtime = ToolCallRuntime::new(step, turn.clone());
    let search = ToolCall {
        tool_name: ToolName::plain("tool_search"),
        call_id: "s1".to_owned(),
        payload: ToolPayload::ToolSearch {
            arguments: "{\"query\":\"x\"}".to_owned(),
        },
    };
    let pending = runtime.start_tool_call(search, ToolCallSource::Direct, None);
    turn.cancel();
    let result = pending.wait().await;
    assert_eq!(
        result.response_item().unwrap(),
        ResponseInputItem::tool_search_output("s1", vec![])
    );
}

#[tokio::test]
async fn code_mode_calls_get_the_item_and_the_json_from_one_entry_point() {
    let plan = crate::builtins::UpdatePlanTool::new();
    let mut registry = crate::registry::ToolRegistry::new();
    registry
        .register_builtin(std::sync::Arc::new(plan))
        .unwrap();
    let (step, observer) = step_with(&registry, ToolHooks::new());
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    let source = ToolCallSource::CodeMode {
        cell_id: CellId::from_raw("cell"),
        runtime_tool_call_id: ToolCallId::nth(3),
    };
    let nested = ToolCall::function(
        ToolName::plain("update_plan"),
        "exec-42",
        json!({"plan": [{"step": "a", "status": "pending"}]}).to_string(),
    );
    let result = runtime.handle_tool_call(nested, source).await;
    assert_eq!(
        result.response_item().unwrap(),
        ResponseInputItem::FunctionCallOutput {
            call_id: "exec-42".to_owned(),
            output: json!("Plan updated")
        }
    );
    assert_eq!(result.code_mode_result(), Ok(json!({})));
    assert_eq!(
        observer.events(),
        vec![
            "start:exec-42",
            "finish:exec-42:Completed { success: Some(true) }"
        ]
    );
}

#[tokio::test]
async fn dropping_a_pending_call_aborts_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("never.txt");
    let tool = TestTool::plain("write").delay_ms(300).behaviour(
        crate::router::test_support::Behaviour::WriteFile(path.clone()),
    );
    let (step, _) = step_with(&registry_of(&[&tool]), ToolHooks::new());
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    let pending = runtime.start_tool_call(call("write", "c"), ToolCallSource::Direct, None);
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(pending);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !path.exists(),
        "the aborted handler never reached its side effect"
    );
}

/// An exclusive tool that, like `exec`, dispatches a nested call while it runs.
struct NestingTool {
    nested: std::sync::OnceLock<ToolCallRuntime>,
}

impl crate::tool::ToolExecutor for NestingTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain("outer")
    }

    fn spec(&self) -> crate::tool::ToolSpec {
        crate::tool::ToolSpec::function("outer", "Calls inner.", json!({"type": "object"}))
    }

    fn handle(
        &self,
        _: crate::tool::ToolInvocation,
    ) -> futures::future::BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let runtime = self.nested.get().expect("runtime set before the call");
            let source = ToolCallSource::CodeMode {
                cell_id: CellId::from_raw("cell"),
                runtime_tool_call_id: ToolCallId::nth(1),
            };
            let inner = runtime
                .handle_tool_call(call("inner", "exec-1"), source)
                .await;
            let value = inner
                .code_mode_result()
                .map_err(FunctionCallError::RespondToModel)?;
            Ok(Box::new(crate::tool::TextToolOutput::ok(format!(
                "outer got {value}"
            ))) as Box<dyn ToolOutput>)
        })
    }
}

#[tokio::test]
async fn nested_calls_through_a_nested_runtime_do_not_deadlock_on_the_host_call() {
    let outer = std::sync::Arc::new(NestingTool {
        nested: std::sync::OnceLock::new(),
    });
    let inner = TestTool::plain("inner");
    let mut registry = registry_of(&[&inner]);
    registry.register_builtin(outer.clone()).unwrap();
    let (step, _) = step_with(&registry, ToolHooks::new());
    let runtime = ToolCallRuntime::new(step, CancellationToken::new());
    outer.nested.set(runtime.for_nested_calls()).unwrap();
    let result = tokio::time::timeout(
        Duration::from_secs(5),
        runtime.handle_tool_call(call("outer", "c1"), ToolCallSource::Direct),
    )
    .await
    .expect("the nested exclusive call must not wait for the host call's gate");
    assert_eq!(
        result.code_mode_result(),
        Ok(json!("outer got \"inner:{}\""))
    );
}
