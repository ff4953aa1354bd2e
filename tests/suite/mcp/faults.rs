//! Servers that die, hang or run too long: the script sees a result it can handle, the rest
//! of the session keeps working, and a dead server comes back on the next call.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use codemode_runtime::mcp::{McpProgressHook, McpServerConfig};
use codemode_tests::{ExecOutput, everything_server, mcp_session, mcp_session_with};
use serde_json::json;

use super::{exec_completed, json_text};

/// Children of this test process running `program` in `cwd` (a per-test directory, so tests
/// sharing the process under `cargo test` never see each other's servers).
fn child_pids(program: &str, cwd: &Path) -> Vec<u32> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may contain spaces and parentheses.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if ppid != Some(me) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let same_dir = std::fs::read_link(entry.path().join("cwd")).is_ok_and(|dir| dir == cwd);
        if same_dir && String::from_utf8_lossy(&cmdline).contains(program) {
            found.push(pid);
        }
    }
    found
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {pid}");
}

#[tokio::test]
async fn server_killed_mid_call_fails_the_call_and_restarts_on_the_next() {
    let marker = tempfile::tempdir().expect("tempdir");
    let marker_path = marker.path().canonicalize().expect("canonical");
    let mut config = everything_server();
    config.cwd = Some(marker_path.clone());
    // Progress from the server proves the call is in flight there before we kill it.
    let (progress_tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let hook: McpProgressHook = Arc::new(move |event| {
        let _ = progress_tx.send(event);
    });
    let session = mcp_session_with(vec![("everything", config)], |options| {
        options.mcp.progress_hook = Some(hook);
    })
    .await;
    let [pid] = child_pids("mcp-server-everything", &marker_path)[..] else {
        panic!(
            "expected one everything server child in {}",
            marker_path.display()
        )
    };

    let started = ExecOutput::of(
        &session
            .exec(
                r#"// @exec: {"yield_time_ms": 300}
text("started");
let outcome;
try {
  const r = await tools.mcp__everything__trigger_long_running_operation({ duration: 10, steps: 10 });
  outcome = { settled: "resolved", isError: r.isError, blocks: r.content.length, text: r.content[0].text };
} catch (e) {
  outcome = { settled: "rejected", type: typeof e, text: String(e) };
}
text(JSON.stringify(outcome));
text("after");"#,
            )
            .await,
    );
    let cell_id = started
        .cell_id()
        .unwrap_or_else(|| panic!("the long call yields: {:#}", started.item))
        .to_owned();
    assert_eq!(started.texts, ["started"]);
    tokio::time::timeout(Duration::from_secs(10), progress.recv())
        .await
        .expect("the long-running operation reports progress")
        .expect("progress channel open");

    kill(pid);
    let finished = ExecOutput::of(
        &session
            .wait(json!({"cell_id": cell_id, "yield_time_ms": 10_000}))
            .await,
    );
    finished.assert_completed();
    let [outcome, after] = finished.texts.as_slice() else {
        panic!("{:#}", finished.item)
    };
    assert_eq!(after, "after", "the script continues after the failed call");
    let outcome = json_text(outcome);
    // Transport failures become an error CallToolResult (spec runtime §9.3 step 4).
    assert_eq!(outcome["settled"], "resolved", "{outcome}");
    assert_eq!(outcome["isError"], true, "{outcome}");
    assert_eq!(outcome["blocks"], 1, "{outcome}");
    let text = outcome["text"].as_str().expect("text");
    assert!(
        text.starts_with(
            "tool call error: MCP server `everything` exited during the call to `trigger-long-running-operation`; it will be restarted on the next call"
        ),
        "{text}"
    );

    let again = exec_completed(
        &session,
        r#"text((await tools.mcp__everything__echo({ message: "back" })).content[0].text)"#,
    )
    .await;
    assert_eq!(again.texts, ["Echo: back"]);
    let restarted = child_pids("mcp-server-everything", &marker_path);
    assert!(
        restarted.len() == 1 && restarted[0] != pid,
        "a new server process: {restarted:?} (old {pid})"
    );
}

#[tokio::test]
async fn server_that_never_answers_is_reported_and_the_others_work() {
    let mut sleeper = McpServerConfig::new("sleep", ["1000"]);
    sleeper.startup_timeout_sec = 1.0;
    let session = mcp_session(vec![
        ("sleeper", sleeper),
        ("everything", everything_server()),
    ])
    .await;
    let failures = session.mcp_startup_failures();
    let [failure] = failures.as_slice() else {
        panic!("{failures:?}")
    };
    assert_eq!(
        failure,
        "MCP client for `sleeper` timed out after 1 seconds. Add or adjust `startup_timeout_sec` in the `[mcp_servers.sleeper]` config."
    );
    let output = exec_completed(
        &session,
        r#"text(Object.keys(tools).some((k) => k.startsWith("mcp__sleeper")));
text((await tools.mcp__everything__echo({ message: "alive" })).content[0].text);"#,
    )
    .await;
    assert_eq!(output.texts, ["false", "Echo: alive"]);
}

#[tokio::test]
async fn tool_timeout_fails_the_call_naming_server_and_tool() {
    let mut config = everything_server();
    config.tool_timeout_sec = 1.0;
    let session = mcp_session(vec![("everything", config)]).await;
    let output = exec_completed(
        &session,
        r#"let outcome;
try {
  const r = await tools.mcp__everything__trigger_long_running_operation({ duration: 5, steps: 5 });
  outcome = { settled: "resolved", isError: r.isError, text: r.content[0].text };
} catch (e) {
  outcome = { settled: "rejected", text: String(e) };
}
text(JSON.stringify(outcome));
text((await tools.mcp__everything__echo({ message: "still here" })).content[0].text);"#,
    )
    .await;
    let [outcome, echo] = output.texts.as_slice() else {
        panic!("{:#}", output.item)
    };
    assert_eq!(
        json_text(outcome),
        json!({
            "settled": "resolved",
            "isError": true,
            "text": "tool call error: timed out awaiting tools/call after 1s (MCP server `everything`, tool `trigger-long-running-operation`)",
        })
    );
    assert_eq!(
        echo, "Echo: still here",
        "the server keeps serving after a timed-out call"
    );
}
