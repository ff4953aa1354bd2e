//! MCP calls ask for approval through the session's approver and cache before anything reaches
//! the server (spec runtime §9.3), against real server-everything tools.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::support::{everything, executor, invocation_in, options};
use crate::approval::{
    ApprovalRequest, Approver, AskForApproval, FixedApprover, MCP_CANCELLED, MCP_REJECTED,
    ReviewDecision, ScriptedApprover,
};
use crate::mcp::McpConnectionManager;
use crate::tool::{ToolContext, ToolOutput};

/// `openWorldHint: true`, not read-only: needs approval. A `data:` URL keeps it offline.
const GZIP: &str = "mcp__everything__gzip-file-as-resource";
const GZIP_ARGS: &str =
    r#"{"name":"a.gz","data":"data:text/plain;base64,aGVsbG8=","outputType":"resource"}"#;
/// `readOnlyHint: true`: never asks.
const ECHO: &str = "mcp__everything__echo";

fn context(approver: Arc<dyn Approver>, policy: AskForApproval) -> Arc<ToolContext> {
    let mut context = ToolContext::new(std::env::temp_dir());
    context.approver = approver;
    context.approval_policy = policy;
    Arc::new(context)
}

/// server-everything, recording every JSON-RPC message to `record`.
async fn start_recorded(record: &Path) -> McpConnectionManager {
    let mut options = options(vec![("everything", everything())]);
    options.record_path = Some(record.to_owned());
    let manager = McpConnectionManager::start(options).await.unwrap();
    assert!(manager.startup_failures().is_empty());
    manager
}

async fn call(
    manager: &McpConnectionManager,
    flat: &str,
    arguments: &str,
    context: &Arc<ToolContext>,
) -> Box<dyn ToolOutput> {
    let executor = executor(manager, flat);
    let invocation = invocation_in(
        executor.as_ref(),
        arguments,
        CancellationToken::new(),
        Arc::clone(context),
    );
    executor
        .handle(invocation)
        .await
        .unwrap_or_else(|error| panic!("{flat} failed: {error}"))
}

/// The tool names of every `tools/call` request sent to a server.
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
async fn a_denied_call_is_an_error_result_and_never_reaches_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mcp.ndjson");
    let manager = start_recorded(&record).await;
    let approver = Arc::new(FixedApprover::new(ReviewDecision::Denied));
    let ctx = context(approver.clone(), AskForApproval::OnRequest);

    let output = call(&manager, GZIP, GZIP_ARGS, &ctx).await;
    assert_eq!(output.success(), Some(false));
    assert_eq!(output.model_text(), MCP_REJECTED);
    assert_eq!(MCP_REJECTED, "user rejected MCP tool call");
    assert_eq!(
        output.code_mode_result(),
        json!({"content": [{"type": "text", "text": "user rejected MCP tool call"}], "isError": true})
    );
    assert_eq!(tools_called(&record), Vec::<String>::new());

    let requests = approver.requests();
    let [
        ApprovalRequest::McpCall {
            server,
            tool,
            arguments,
            ..
        },
    ] = requests.as_slice()
    else {
        panic!("expected one MCP approval request, got {requests:?}")
    };
    assert_eq!(server, "everything");
    assert_eq!(tool, "gzip-file-as-resource");
    assert_eq!(arguments["name"], "a.gz");
}

#[tokio::test]
async fn an_aborted_call_says_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mcp.ndjson");
    let manager = start_recorded(&record).await;
    let ctx = context(
        Arc::new(FixedApprover::new(ReviewDecision::Abort)),
        AskForApproval::OnRequest,
    );
    let output = call(&manager, GZIP, GZIP_ARGS, &ctx).await;
    assert_eq!(output.model_text(), "user cancelled MCP tool call");
    assert_eq!(output.model_text(), MCP_CANCELLED);
    assert!(tools_called(&record).is_empty());
}

#[tokio::test]
async fn approved_for_session_is_asked_once() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mcp.ndjson");
    let manager = start_recorded(&record).await;
    let approver = Arc::new(ScriptedApprover::new(
        vec![ReviewDecision::ApprovedForSession],
        ReviewDecision::Denied,
    ));
    let ctx = context(approver.clone(), AskForApproval::OnRequest);

    for _ in 0..2 {
        let output = call(&manager, GZIP, GZIP_ARGS, &ctx).await;
        assert_eq!(output.success(), Some(true), "{}", output.model_text());
        assert_eq!(
            output.code_mode_result()["content"][0]["resource"]["mimeType"],
            "application/gzip",
            "{}",
            output.code_mode_result()
        );
    }
    assert_eq!(
        approver.requests().len(),
        1,
        "the second call was not asked"
    );
    assert_eq!(
        tools_called(&record),
        vec!["gzip-file-as-resource", "gzip-file-as-resource"]
    );
}

#[tokio::test]
async fn read_only_tools_and_the_never_policy_do_not_ask() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mcp.ndjson");
    let manager = start_recorded(&record).await;
    let approver = Arc::new(FixedApprover::new(ReviewDecision::Denied));

    let asking = context(approver.clone(), AskForApproval::Untrusted);
    let output = call(&manager, ECHO, r#"{"message":"hi"}"#, &asking).await;
    assert_eq!(output.model_text(), "Echo: hi");

    let never = context(approver.clone(), AskForApproval::Never);
    let output = call(&manager, GZIP, GZIP_ARGS, &never).await;
    assert_eq!(output.success(), Some(true), "{}", output.model_text());

    assert!(approver.requests().is_empty(), "{:?}", approver.requests());
    assert_eq!(tools_called(&record), vec!["echo", "gzip-file-as-resource"]);
}

#[tokio::test]
async fn executors_expose_the_one_approval_rule() {
    let dir = tempfile::tempdir().unwrap();
    let manager = start_recorded(&dir.path().join("mcp.ndjson")).await;
    let gzip = manager
        .mcp_executors()
        .into_iter()
        .find(|e| e.raw_tool_name() == "gzip-file-as-resource")
        .unwrap();
    assert!(gzip.needs_approval());
    assert_eq!(gzip.approval_annotations().open_world_hint, Some(true));
    let echo = manager
        .mcp_executors()
        .into_iter()
        .find(|e| e.raw_tool_name() == "echo")
        .unwrap();
    assert!(!echo.needs_approval());
}
