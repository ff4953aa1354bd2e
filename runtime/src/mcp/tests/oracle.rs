//! Every JSON-RPC message we send (and receive) validates against the `mcp` Python package's
//! pydantic models (anchors §5). CI installs it (`pip install mcp`); a machine without it
//! skips this test with a printed reason.

use std::process::Command;

use super::support::{call, everything, options, servers_dir};
use crate::mcp::McpConnectionManager;

fn python_has_mcp() -> Result<(), String> {
    match Command::new("python3")
        .args(["-c", "import mcp.types, pydantic"])
        .output()
    {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
        Err(error) => Err(format!("python3 not runnable: {error}")),
    }
}

#[tokio::test]
async fn recorded_messages_validate_against_the_python_sdk_models() {
    if let Err(reason) = python_has_mcp() {
        println!("skipping: python3 lacks the `mcp` package ({reason}); run `pip install mcp`");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("mcp.ndjson");
    let mut config = everything();
    config.tool_timeout_sec = 1.0;
    let mut options = options(vec![("everything", config)]);
    options.record_path = Some(record.clone());
    let manager = McpConnectionManager::start(options).await.unwrap();
    assert_eq!(manager.record_path(), Some(record.as_path()));
    call(&manager, "mcp__everything__echo", r#"{"message":"x"}"#).await;
    call(
        &manager,
        "mcp__everything__get-structured-content",
        r#"{"location":"New York"}"#,
    )
    .await;
    call(&manager, "mcp__everything__get-tiny-image", "").await;
    // Times out after 1 s: we send notifications/cancelled.
    call(
        &manager,
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration":3,"steps":3}"#,
    )
    .await;
    manager.refresh_tools("everything").await.unwrap();

    let text = std::fs::read_to_string(&record).unwrap();
    let sent: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|record| record["direction"] == "send")
        .map(|record| record["message"].clone())
        .collect();
    let methods: Vec<&str> = sent
        .iter()
        .filter_map(|message| message["method"].as_str())
        .collect();
    for expected in [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "notifications/cancelled",
    ] {
        assert!(
            methods.contains(&expected),
            "{expected} not sent: {methods:?}"
        );
    }
    let initialize = sent
        .iter()
        .find(|message| message["method"] == "initialize")
        .unwrap();
    assert_eq!(initialize["params"]["protocolVersion"], "2025-11-25");

    let output = Command::new("python3")
        .arg(servers_dir().join("validate_jsonrpc.py"))
        .arg(&record)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "oracle rejected a message:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("validated: {stdout}");
}
