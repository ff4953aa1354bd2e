//! Real processes (and real bwrap for the default policy) behind exec_command / write_stdin.

use std::path::Path;
use std::sync::Arc;

use codemode_bridge::ToolName;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::sandbox::SandboxPolicy;
use crate::tool::{
    FunctionCallError, ToolCallSource, ToolContext, ToolExecutor, ToolInvocation, ToolPayload,
};

pub(crate) fn test_context(cwd: &Path, policy: SandboxPolicy) -> ToolContext {
    let mut ctx = ToolContext::new(cwd.to_path_buf());
    ctx.sandbox_policy = policy;
    ctx.processes = Arc::new(ProcessStore::with_deterministic_ids());
    ctx
}

pub(crate) fn isolated_policy() -> SandboxPolicy {
    SandboxPolicy {
        mode: crate::sandbox::SandboxMode::WorkspaceWrite {
            writable_roots: Vec::new(),
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        },
        network_access: false,
        deny_read: Vec::new(),
    }
}

pub(crate) fn invocation(
    ctx: &Arc<ToolContext>,
    tool: &str,
    args: serde_json::Value,
) -> ToolInvocation {
    ToolInvocation {
        call_id: "call-1".to_owned(),
        tool_name: ToolName::plain(tool),
        payload: ToolPayload::Function {
            arguments: args.to_string(),
        },
        source: ToolCallSource::Direct,
        cancellation: CancellationToken::new(),
        context: Arc::clone(ctx),
    }
}

pub(crate) async fn exec(
    ctx: &Arc<ToolContext>,
    args: serde_json::Value,
) -> Result<serde_json::Value, FunctionCallError> {
    let out = ExecCommandTool::default()
        .handle(invocation(ctx, "exec_command", args))
        .await?;
    Ok(out.code_mode_result())
}

async fn write(
    ctx: &Arc<ToolContext>,
    args: serde_json::Value,
) -> Result<serde_json::Value, FunctionCallError> {
    let out = WriteStdinTool::new()
        .handle(invocation(ctx, "write_stdin", args))
        .await?;
    Ok(out.code_mode_result())
}

fn ctx_in(dir: &Path) -> Arc<ToolContext> {
    Arc::new(test_context(dir, isolated_policy()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_command_returns_output_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let out = ExecCommandTool::default()
        .handle(invocation(
            &ctx,
            "exec_command",
            serde_json::json!({"cmd": "echo hello; exit 3", "login": false}),
        ))
        .await
        .unwrap();
    let text = out.model_text();
    assert!(text.starts_with("Chunk ID: "), "{text}");
    assert!(
        text.contains("\nProcess exited with code 3\nOriginal token count: 2\nOutput:\nhello\n"),
        "{text}"
    );
    assert_eq!(out.success(), Some(true));
    let json = out.code_mode_result();
    assert_eq!(json["exit_code"], 3);
    assert_eq!(json["output"], "hello\n");
    assert!(json.get("session_id").is_none());
    assert!(ctx.processes.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_running_command_yields_a_session_and_polls_return_only_new_output() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let first = exec(
        &ctx,
        serde_json::json!({"cmd": "echo one; sleep 1; echo two; sleep 30", "yield_time_ms": 300, "login": false}),
    )
    .await
    .unwrap();
    assert_eq!(first["session_id"], 1000);
    assert_eq!(first["output"], "one\n");
    assert!(first.get("exit_code").is_none());
    let poll = write(
        &ctx,
        serde_json::json!({"session_id": 1000, "yield_time_ms": 1}),
    )
    .await
    .unwrap();
    assert_eq!(poll["output"], "two\n");
    assert_eq!(poll["session_id"], 1000);
    assert!(
        poll["wall_time_seconds"].as_f64().unwrap() >= 4.9,
        "empty polls wait at least 5 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_stdin_feeds_cat_on_a_tty_and_reports_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let start = exec(
        &ctx,
        serde_json::json!({"cmd": "cat", "tty": true, "yield_time_ms": 300, "login": false}),
    )
    .await
    .unwrap();
    let id = start["session_id"].as_i64().unwrap();
    let echoed = write(
        &ctx,
        serde_json::json!({"session_id": id, "chars": "hello\n"}),
    )
    .await
    .unwrap();
    assert!(
        echoed["output"].as_str().unwrap().contains("hello"),
        "{echoed}"
    );
    // Ctrl-D ends cat; the exit code is reported and the session is gone.
    let end = write(
        &ctx,
        serde_json::json!({"session_id": id, "chars": "\u{4}", "yield_time_ms": 2000}),
    )
    .await
    .unwrap();
    assert_eq!(end["exit_code"], 0, "{end}");
    assert!(ctx.processes.is_empty());
    let err = write(&ctx, serde_json::json!({"session_id": id, "chars": ""}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(format!("write_stdin failed: Unknown process id {id}"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_repl_on_a_tty() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let start = exec(&ctx, serde_json::json!({"cmd": "python3 -i -q", "tty": true, "yield_time_ms": 1500, "login": false}))
        .await
        .unwrap();
    let id = start["session_id"].as_i64().expect("python keeps running");
    let out = write(
        &ctx,
        serde_json::json!({"session_id": id, "chars": "print(6*7)\n", "yield_time_ms": 1500}),
    )
    .await
    .unwrap();
    assert!(out["output"].as_str().unwrap().contains("42"), "{out}");
    let end = write(
        &ctx,
        serde_json::json!({"session_id": id, "chars": "exit()\n", "yield_time_ms": 3000}),
    )
    .await
    .unwrap();
    assert_eq!(end["exit_code"], 0, "{end}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_to_a_pipe_session_says_stdin_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let start = exec(
        &ctx,
        serde_json::json!({"cmd": "sleep 20", "yield_time_ms": 250, "login": false}),
    )
    .await
    .unwrap();
    let id = start["session_id"].as_i64().unwrap();
    let err = write(&ctx, serde_json::json!({"session_id": id, "chars": "x"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(
            "write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true".into()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_truncated_for_the_model_but_raw_for_code_mode_without_a_budget() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let cmd = "seq 1 2000";
    let budgeted = ExecCommandTool::default()
        .handle(invocation(
            &ctx,
            "exec_command",
            serde_json::json!({"cmd": cmd, "max_output_tokens": 20, "login": false}),
        ))
        .await
        .unwrap();
    assert!(
        budgeted
            .model_text()
            .contains("Output:\nWarning: truncated output (original token count: ")
    );
    assert!(
        budgeted.code_mode_result()["output"]
            .as_str()
            .unwrap()
            .starts_with("Warning: truncated output")
    );
    let raw = exec(&ctx, serde_json::json!({"cmd": cmd, "login": false}))
        .await
        .unwrap();
    assert_eq!(raw["output"].as_str().unwrap().lines().count(), 2000);
    assert!(raw["original_token_count"].as_u64().unwrap() > 2000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_denial_is_returned_as_output_under_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let target = outside.path().join("x");
    let out = exec(
        &ctx,
        serde_json::json!({"cmd": format!("touch {}", target.display()), "login": false}),
    )
    .await
    .unwrap();
    assert_ne!(out["exit_code"], 0);
    assert!(
        out["output"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{out}"
    );
    assert!(!target.exists());
    let inside = exec(
        &ctx,
        serde_json::json!({"cmd": "touch inside", "login": false}),
    )
    .await
    .unwrap();
    assert_eq!(inside["exit_code"], 0);
    assert!(dir.path().join("inside").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heredoc_apply_patch_runs_as_a_patch() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    let cmd =
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\nEOF";
    let out = exec(&ctx, serde_json::json!({"cmd": cmd})).await.unwrap();
    assert_eq!(out["exit_code"], 0);
    assert_eq!(
        out["output"],
        "Success. Updated the following files:\nA hello.txt\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_errors_and_escalation_outside_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = test_context(dir.path(), isolated_policy());
    ctx.approval_policy = crate::approval::AskForApproval::Never;
    let ctx = Arc::new(ctx);
    let err = exec(
        &ctx,
        serde_json::json!({"cmd": "ls", "sandbox_permissions": "require_escalated"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(
            "approval policy is never; reject command — you cannot ask for escalated permissions if the approval policy is never".into()
        )
    );
    let err = exec(&ctx, serde_json::json!({"cmd": "ls", "yield_time_ms": 1.5}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, FunctionCallError::RespondToModel(m) if m.starts_with("failed to parse function arguments: yield_time_ms must be"))
    );
    assert!(
        exec(
            &ctx,
            serde_json::json!({"cmd": "true", "yield_time_ms": 1000.0, "login": false})
        )
        .await
        .is_ok()
    );
    let err = exec(&ctx, serde_json::json!({"command": "ls"}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, FunctionCallError::RespondToModel(m) if m.starts_with("failed to parse function arguments"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_session_kills_its_processes() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Arc::new(test_context(
        dir.path(),
        SandboxPolicy::danger_full_access(),
    ));
    let start = exec(&ctx, serde_json::json!({"cmd": "echo $$; exec sleep 1000", "yield_time_ms": 500, "login": false}))
        .await
        .unwrap();
    let pid: u32 = start["output"].as_str().unwrap().trim().parse().unwrap();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(ctx);
    let gone = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| stat.split_whitespace().nth(2) == Some("Z"))
            .unwrap_or(true)
    };
    for _ in 0..50 {
        if gone() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("process {pid} survived the session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_prunes_exited_lru_outside_the_protected_recent_set() {
    let dir = tempfile::tempdir().unwrap();
    let store = ProcessStore::with_deterministic_ids();
    let spawn = |cmd: &str| {
        let argv = vec!["sh".to_owned(), "-c".to_owned(), cmd.to_owned()];
        let prepared = crate::sandbox::prepare_command(
            &SandboxPolicy::danger_full_access(),
            crate::sandbox::SandboxType::None,
            dir.path(),
            &argv,
            true,
        )
        .unwrap();
        Arc::new(process::ManagedProcess::spawn(&prepared, dir.path(), &[], false).unwrap())
    };
    let mut ids = Vec::new();
    for i in 0..MAX_PROCESSES {
        let id = store.allocate_id();
        // The second-oldest entry exits right away; the rest keep running.
        let process = if i == 1 {
            spawn("true")
        } else {
            spawn("sleep 60")
        };
        store.insert(id, process);
        ids.push(id);
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let id = store.allocate_id();
    store.insert(id, spawn("sleep 60"));
    assert_eq!(store.len(), MAX_PROCESSES);
    assert!(
        store.get(ids[1]).is_none(),
        "the exited entry is evicted first"
    );
    assert!(store.get(ids[0]).is_some());
    // Without exited candidates the least recently used unprotected entry goes.
    let id = store.allocate_id();
    store.insert(id, spawn("sleep 60"));
    assert!(store.get(ids[2]).is_none());
    assert!(
        store.get(ids[0]).is_some(),
        "touched by get above, so recently used"
    );
    store.terminate_all();
    assert!(store.is_empty());
}
