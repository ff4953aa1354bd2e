//! Router tests: call building, lookup, kind check, lifecycle, step plans.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::test_support::{Behaviour, TestTool, registry_of, step_with};
use super::*;
use crate::hooks::{HookResponse, ToolHooks};
use crate::parallel::ToolCallRuntime;
use crate::tool::{
    FunctionCallError, ResponseInputItem, ToolCallSource, ToolExposure, ToolName, ToolPayload,
    ToolSpec,
};

async fn run(step: &StepContext, call: ToolCall) -> ToolCallResult {
    ToolCallRuntime::new(step.clone(), CancellationToken::new())
        .handle_tool_call(call, ToolCallSource::Direct)
        .await
}

fn text_of(item: &ResponseInputItem) -> Value {
    match item {
        ResponseInputItem::FunctionCallOutput { output, .. }
        | ResponseInputItem::CustomToolCallOutput { output, .. } => output.clone(),
        ResponseInputItem::ToolSearchOutput { tools, .. } => Value::Array(tools.clone()),
    }
}

#[test]
fn build_tool_call_uses_namespace_for_registry_name() {
    let item = json!({"type": "function_call", "name": "echo", "namespace": "mcp__srv__", "arguments": "{\"a\":1}", "call_id": "c1"});
    let call = build_tool_call(&item).unwrap().unwrap();
    assert_eq!(call.tool_name, ToolName::namespaced("mcp__srv__", "echo"));
    assert_eq!(call.call_id, "c1");
    assert_eq!(
        call.payload,
        ToolPayload::Function {
            arguments: "{\"a\":1}".to_owned()
        }
    );
}

#[test]
fn build_tool_call_maps_custom_calls_to_custom_payloads() {
    let item = json!({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "c2"});
    let call = build_tool_call(&item).unwrap().unwrap();
    assert_eq!(call.tool_name, ToolName::plain("apply_patch"));
    assert_eq!(
        call.payload,
        ToolPayload::Custom {
            input: "*** Begin Patch".to_owned()
        }
    );
}

#[test]
fn build_tool_call_accepts_client_tool_search_with_object_or_string_arguments() {
    let item = json!({"type": "tool_search_call", "call_id": "s1", "execution": "client", "arguments": {"query": "calendar", "limit": 3}});
    let call = build_tool_call(&item).unwrap().unwrap();
    assert_eq!(call.tool_name, ToolName::plain("tool_search"));
    let ToolPayload::ToolSearch { arguments } = &call.payload else {
        panic!("not a tool search: {call:?}")
    };
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"query": "calendar", "limit": 3})
    );

    let item = json!({"type": "tool_search_call", "call_id": "s2", "execution": "client", "arguments": "{\"query\":\"x\"}"});
    let call = build_tool_call(&item).unwrap().unwrap();
    assert_eq!(
        call.payload,
        ToolPayload::ToolSearch {
            arguments: "{\"query\":\"x\"}".to_owned()
        }
    );
}

#[test]
fn build_tool_call_rejects_bad_tool_search_arguments_to_the_model() {
    let item = json!({"type": "tool_search_call", "call_id": "s1", "execution": "client", "arguments": {"limit": 3}});
    let error = build_tool_call(&item).unwrap_err();
    assert_eq!(
        error,
        FunctionCallError::RespondToModel(
            "failed to parse tool_search arguments: missing field `query`".to_owned()
        )
    );
}

#[test]
fn build_tool_call_ignores_server_tool_search_and_other_items() {
    let server = json!({"type": "tool_search_call", "call_id": "s1", "execution": "server", "arguments": {"query": "x"}});
    assert_eq!(build_tool_call(&server).unwrap(), None);
    let no_id =
        json!({"type": "tool_search_call", "execution": "client", "arguments": {"query": "x"}});
    assert_eq!(build_tool_call(&no_id).unwrap(), None);
    let message = json!({"type": "message", "role": "assistant", "content": []});
    assert_eq!(build_tool_call(&message).unwrap(), None);
    assert_eq!(
        build_tool_call(&json!({"type": "reasoning"})).unwrap(),
        None
    );
    assert_eq!(build_tool_call(&json!("not an object")).unwrap(), None);
}

#[test]
fn build_tool_call_reports_malformed_call_items_without_panicking() {
    let item = json!({"type": "function_call", "name": "echo", "arguments": "{}"});
    let error = build_tool_call(&item).unwrap_err();
    assert!(
        matches!(&error, FunctionCallError::Fatal(m) if m.contains("function_call") && m.contains("call_id")),
        "{error:?}"
    );
}

#[tokio::test]
async fn unknown_function_tool_is_a_failed_model_visible_output() {
    let (step, observer) = step_with(&registry_of(&[]), ToolHooks::new());
    let result = run(
        &step,
        ToolCall::function(ToolName::plain("nope"), "c1", "{}"),
    )
    .await;
    assert_eq!(
        result.code_mode_result(),
        Err("unsupported call: nope".to_owned())
    );
    assert_eq!(
        result.response_item().unwrap(),
        ResponseInputItem::FunctionCallOutput {
            call_id: "c1".to_owned(),
            output: json!("unsupported call: nope")
        }
    );
    assert!(
        observer.events().is_empty(),
        "no lifecycle for unknown tools: {:?}",
        observer.events()
    );

    let namespaced = run(
        &step,
        ToolCall::function(ToolName::namespaced("mcp__srv__", "nope"), "c2", "{}"),
    )
    .await;
    assert_eq!(
        namespaced.code_mode_result(),
        Err("unsupported call: mcp__srv__nope".to_owned())
    );
}

#[tokio::test]
async fn unknown_custom_tool_answers_with_a_custom_output() {
    let (step, _) = step_with(&registry_of(&[]), ToolHooks::new());
    let result = run(&step, ToolCall::custom(ToolName::plain("nope"), "c1", "x")).await;
    assert_eq!(
        result.response_item().unwrap(),
        ResponseInputItem::CustomToolCallOutput {
            call_id: "c1".to_owned(),
            output: json!("unsupported custom tool call: nope")
        }
    );
}

#[tokio::test]
async fn incompatible_payload_is_fatal_and_never_a_model_output() {
    let function = TestTool::plain("fn_tool");
    let freeform = TestTool::plain("ff_tool").freeform();
    let (step, observer) = step_with(&registry_of(&[&function, &freeform]), ToolHooks::new());

    let result = run(
        &step,
        ToolCall::custom(ToolName::plain("fn_tool"), "c1", "x"),
    )
    .await;
    assert!(result.is_fatal());
    let fatal =
        FunctionCallError::Fatal("tool fn_tool invoked with incompatible payload".to_owned());
    assert_eq!(result.response_item(), Err(fatal));

    let result = run(
        &step,
        ToolCall::function(ToolName::plain("ff_tool"), "c2", "{}"),
    )
    .await;
    assert!(result.is_fatal());
    assert_eq!(
        function.call_count() + freeform.call_count(),
        0,
        "handlers must not run"
    );
    assert!(observer.events().is_empty());
}

#[tokio::test]
async fn default_namespace_spellings_reach_the_same_tool() {
    let tool = TestTool::plain("echo");
    let (step, _) = step_with(&registry_of(&[&tool]), ToolHooks::new());
    for (i, name) in [
        ToolName::plain("echo"),
        ToolName::namespaced("", "echo"),
        ToolName::namespaced("functions", "echo"),
    ]
    .into_iter()
    .enumerate()
    {
        let result = run(&step, ToolCall::function(name, format!("c{i}"), "{}")).await;
        assert_eq!(result.code_mode_result(), Ok(json!("echo:{}")));
    }
    assert_eq!(tool.call_count(), 3);
}

#[tokio::test]
async fn deferred_and_hidden_tools_are_dispatchable() {
    let deferred = TestTool::plain("later").exposure(ToolExposure::Deferred);
    let hidden = TestTool::plain("secret").exposure(ToolExposure::Hidden);
    let (step, _) = step_with(&registry_of(&[&deferred, &hidden]), ToolHooks::new());
    assert_eq!(
        run(
            &step,
            ToolCall::function(ToolName::plain("later"), "a", "1")
        )
        .await
        .code_mode_result(),
        Ok(json!("later:1"))
    );
    assert_eq!(
        run(
            &step,
            ToolCall::function(ToolName::plain("secret"), "b", "2")
        )
        .await
        .code_mode_result(),
        Ok(json!("secret:2"))
    );
}

#[tokio::test]
async fn dispatch_notifies_lifecycle_once_per_call() {
    let ok = TestTool::plain("ok");
    let failing = TestTool::plain("bad").behaviour(Behaviour::Fail("boom".to_owned()));
    let (step, observer) = step_with(&registry_of(&[&ok, &failing]), ToolHooks::new());

    let result = run(&step, ToolCall::function(ToolName::plain("ok"), "c1", "{}")).await;
    assert!(result.output.is_ok());
    let result = run(
        &step,
        ToolCall::function(ToolName::plain("bad"), "c2", "{}"),
    )
    .await;
    assert_eq!(result.code_mode_result(), Err("boom".to_owned()));
    assert_eq!(
        result.response_item().unwrap(),
        ResponseInputItem::FunctionCallOutput {
            call_id: "c2".to_owned(),
            output: json!("boom")
        }
    );
    assert_eq!(
        observer.events(),
        vec![
            "start:c1",
            "finish:c1:Completed { success: Some(true) }",
            "start:c2",
            "finish:c2:Failed { handler_executed: true }",
        ]
    );
}

#[tokio::test]
async fn a_call_runs_with_the_plan_of_the_step_that_showed_it() {
    let v1 = TestTool::plain("tool").label("v1");
    let mut registry = registry_of(&[&v1]);
    let (step1, _) = step_with(&registry, ToolHooks::new());

    // The session registry changes: the tool is replaced and another one appears.
    registry.remove(&ToolName::plain("tool")).unwrap();
    registry
        .register_builtin(TestTool::plain("tool").label("v2").arc())
        .unwrap();
    registry
        .register_builtin(TestTool::plain("added").arc())
        .unwrap();
    let (step2, _) = step_with(&registry, ToolHooks::new());

    // A call shown by step 1 runs after step 2's plan exists, and still gets v1.
    let old = run(
        &step1,
        ToolCall::function(ToolName::plain("tool"), "c1", "x"),
    )
    .await;
    assert_eq!(old.code_mode_result(), Ok(json!("v1:x")));
    let new = run(
        &step2,
        ToolCall::function(ToolName::plain("tool"), "c2", "x"),
    )
    .await;
    assert_eq!(new.code_mode_result(), Ok(json!("v2:x")));

    let names = |step: &StepContext| {
        step.model_visible_specs()
            .iter()
            .map(|s| s.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&step1), vec!["tool"]);
    assert_eq!(names(&step2), vec!["tool", "added"]);
    let missing = run(
        &step1,
        ToolCall::function(ToolName::plain("added"), "c3", "{}"),
    )
    .await;
    assert_eq!(
        missing.code_mode_result(),
        Err("unsupported call: added".to_owned())
    );
}

#[test]
fn model_visible_specs_follow_exposure_and_group_namespaces() {
    let plain = TestTool::plain("plain");
    let deferred = TestTool::plain("deferred").exposure(ToolExposure::Deferred);
    let hidden = TestTool::plain("hidden").exposure(ToolExposure::Hidden);
    let model_only = TestTool::plain("model_only").exposure(ToolExposure::DirectModelOnly);
    let a = TestTool::new(ToolName::namespaced("mcp__cal__", "create"));
    let b = TestTool::new(ToolName::namespaced("mcp__cal__", "delete"));
    let registry = registry_of(&[&a, &plain, &deferred, &hidden, &model_only, &b]);
    let (step, _) = step_with(&registry, ToolHooks::new());
    let json = step.tools_json();
    let names: Vec<&str> = json.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["mcp__cal__", "plain", "model_only"]);
    assert_eq!(json[0]["type"], "namespace");
    assert_eq!(json[0]["description"], "Tools in the mcp__cal__ namespace.");
    let members: Vec<&str> = json[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(members, vec!["create", "delete"]);

    let nested: Vec<String> = step
        .code_mode_executors()
        .map(|e| e.tool_name().to_string())
        .collect();
    assert_eq!(
        nested,
        vec!["mcp__cal__create", "plain", "deferred", "mcp__cal__delete"]
    );
}

#[test]
fn namespace_description_comes_from_a_namespace_spec() {
    struct Described;
    impl crate::tool::ToolExecutor for Described {
        fn tool_name(&self) -> ToolName {
            ToolName::namespaced("crm", "lookup")
        }
        fn spec(&self) -> ToolSpec {
            ToolSpec::Namespace {
                name: "crm".to_owned(),
                description: "Customer records.".to_owned(),
                tools: vec![ToolSpec::function(
                    "lookup",
                    "Find a customer.",
                    json!({"type": "object"}),
                )],
            }
        }
        fn handle(
            &self,
            _: crate::tool::ToolInvocation,
        ) -> futures::future::BoxFuture<
            '_,
            Result<Box<dyn crate::tool::ToolOutput>, FunctionCallError>,
        > {
            Box::pin(async { Err(FunctionCallError::Fatal("unused".to_owned())) })
        }
    }
    let mut registry = registry_of(&[&TestTool::new(ToolName::namespaced("crm", "first"))]);
    registry.register_external(Arc::new(Described));
    let (step, _) = step_with(&registry, ToolHooks::new());
    let json = step.tools_json();
    assert_eq!(json.len(), 1);
    assert_eq!(json[0]["description"], "Customer records.");
    assert_eq!(json[0]["tools"].as_array().unwrap().len(), 2);
}

#[test]
fn parallel_support_does_not_match_namespaced_local_tool_names() {
    let local = TestTool::plain("exec_command").parallel();
    let lookalike = TestTool::new(ToolName::namespaced("mcp__server__", "exec_command"));
    let hidden = TestTool::plain("hidden_parallel")
        .parallel()
        .exposure(ToolExposure::Hidden);
    let (step, _) = step_with(
        &registry_of(&[&local, &lookalike, &hidden]),
        ToolHooks::new(),
    );
    assert!(step.tool_supports_parallel(&ToolName::plain("exec_command")));
    assert!(!step.tool_supports_parallel(&ToolName::namespaced("mcp__server__", "exec_command")));
    assert!(
        !step.tool_supports_parallel(&ToolName::plain("hidden_parallel")),
        "Hidden tools are never parallel"
    );
    assert!(
        !step.tool_supports_parallel(&ToolName::plain("web_search")),
        "unknown tools are not parallel"
    );
}

#[tokio::test]
async fn pre_tool_use_block_finishes_as_blocked_without_start() {
    let tool = TestTool::plain("guarded");
    let hooks = ToolHooks::new().with_pre_tool_use("*", |_| HookResponse::block("not today"));
    let (step, observer) = step_with(&registry_of(&[&tool]), hooks);
    let result = run(
        &step,
        ToolCall::function(ToolName::plain("guarded"), "c1", "{}"),
    )
    .await;
    assert_eq!(
        result.code_mode_result(),
        Err("Tool call blocked by PreToolUse hook: not today. Tool: guarded".to_owned())
    );
    assert_eq!(
        text_of(&result.response_item().unwrap()),
        json!("Tool call blocked by PreToolUse hook: not today. Tool: guarded")
    );
    assert_eq!(tool.call_count(), 0);
    assert_eq!(observer.events(), vec!["finish:c1:Blocked"]);
}
