//! Servers that crash, hang, time out or never start.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::support::{call, everything, executor, first_text, invocation, options};
use crate::mcp::{McpConnectionManager, McpError, McpServerConfig};
use crate::tool::FunctionCallError;

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn server_killed_mid_call_fails_that_call_and_restarts_on_next_use() {
    let manager = McpConnectionManager::start(options(vec![("everything", everything())]))
        .await
        .unwrap();
    let first_pid = manager.server_pid("everything").await.expect("running");
    let long = executor(&manager, "mcp__everything__trigger-long-running-operation");
    let pending = tokio::spawn({
        let long = long.clone();
        async move {
            let invocation = invocation(
                long.as_ref(),
                r#"{"duration":20,"steps":20}"#,
                CancellationToken::new(),
            );
            long.handle(invocation)
                .await
                .map(|output| output.code_mode_result())
        }
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    kill(first_pid);
    let result = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("call ended")
        .unwrap()
        .unwrap();
    assert_eq!(result["isError"], true);
    let text = first_text(&result);
    assert!(
        text.starts_with(
            "tool call error: MCP server `everything` exited during the call to `trigger-long-running-operation`; it will be restarted on the next call"
        ),
        "{text}"
    );

    let output = call(&manager, "mcp__everything__echo", r#"{"message":"back"}"#).await;
    assert_eq!(output.model_text(), "Echo: back");
    let second_pid = manager.server_pid("everything").await.expect("restarted");
    assert_ne!(first_pid, second_pid);
}

#[tokio::test]
async fn server_that_never_answers_times_out_at_startup_and_the_rest_work() {
    let mut silent = McpServerConfig::new("sleep", ["1000"]);
    silent.startup_timeout_sec = 1.0;
    let started = Instant::now();
    let manager = McpConnectionManager::start(options(vec![
        ("everything", everything()),
        ("silent", silent),
    ]))
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "startup waited {:?}",
        started.elapsed()
    );
    let failures = manager.startup_failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].server(), Some("silent"));
    assert_eq!(
        failures[0].to_string(),
        "MCP client for `silent` timed out after 1 seconds. Add or adjust `startup_timeout_sec` in the `[mcp_servers.silent]` config."
    );
    assert_eq!(manager.server_names(), vec!["everything"]);
    assert_eq!(
        call(&manager, "mcp__everything__echo", r#"{"message":"ok"}"#)
            .await
            .model_text(),
        "Echo: ok"
    );
}

#[tokio::test]
async fn startup_failures_carry_the_stderr_tail() {
    let crashing = McpServerConfig::new("sh", ["-c", "echo 'fatal: missing API key' >&2; exit 3"]);
    let missing = McpServerConfig::new("/nonexistent/mcp-server", Vec::<String>::new());
    let manager =
        McpConnectionManager::start(options(vec![("crashing", crashing), ("missing", missing)]))
            .await
            .unwrap();
    let failures = manager.startup_failures();
    assert_eq!(failures.len(), 2);
    let crashing = failures
        .iter()
        .find(|error| error.server() == Some("crashing"))
        .unwrap();
    assert!(
        matches!(crashing, McpError::Initialize { .. }),
        "{crashing:?}"
    );
    let text = crashing.to_string();
    assert!(
        text.starts_with("MCP client for `crashing` failed to initialize: "),
        "{text}"
    );
    // The stderr reader may lag the exit a little; the tail is read when the error is built.
    assert!(
        text.ends_with("\nstderr:\nfatal: missing API key"),
        "{text}"
    );
    let missing = failures
        .iter()
        .find(|error| error.server() == Some("missing"))
        .unwrap();
    assert!(
        missing
            .to_string()
            .starts_with("MCP client for `missing` failed to start `/nonexistent/mcp-server`: "),
        "{missing}"
    );
    assert!(manager.executors().is_empty());
}

#[tokio::test]
async fn tool_call_timeout_names_server_and_tool_and_the_server_keeps_working() {
    let mut config = everything();
    config.tool_timeout_sec = 1.0;
    let manager = McpConnectionManager::start(options(vec![("everything", config)]))
        .await
        .unwrap();
    let pid = manager.server_pid("everything").await;
    let started = Instant::now();
    let output = call(
        &manager,
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration":5,"steps":5}"#,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(output.success(), Some(false));
    assert_eq!(
        first_text(&output.code_mode_result()),
        "tool call error: timed out awaiting tools/call after 1s (MCP server `everything`, tool `trigger-long-running-operation`)"
    );
    assert_eq!(
        call(&manager, "mcp__everything__echo", r#"{"message":"still"}"#)
            .await
            .model_text(),
        "Echo: still"
    );
    assert_eq!(
        manager.server_pid("everything").await,
        pid,
        "a timeout does not restart the server"
    );
}

#[tokio::test]
async fn cancellation_ends_the_call_promptly() {
    let manager = McpConnectionManager::start(options(vec![("everything", everything())]))
        .await
        .unwrap();
    let long = executor(&manager, "mcp__everything__trigger-long-running-operation");
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let error = long
        .handle(invocation(
            long.as_ref(),
            r#"{"duration":10,"steps":10}"#,
            token,
        ))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        error,
        FunctionCallError::RespondToModel(
            "MCP tool call `trigger-long-running-operation` on server `everything` was cancelled"
                .to_owned()
        )
    );
    assert_eq!(
        call(&manager, "mcp__everything__echo", r#"{"message":"after"}"#)
            .await
            .model_text(),
        "Echo: after"
    );
}
