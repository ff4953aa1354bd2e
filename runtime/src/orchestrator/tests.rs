//! The orchestrator end to end, through the real exec_command and apply_patch tools, real
//! processes and real bwrap.

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::apply_patch::ApplyPatchTool;
use crate::approval::{ApprovalRequest, GranularApproval, ScriptedApprover};
use crate::exec_policy::{ExecPolicyManager, Policy};
use crate::sandbox::SandboxPolicy;
use crate::tool::{FunctionCallError, ToolExecutor, ToolPayload};
use crate::unified_exec::tests::{exec, invocation, isolated_policy, test_context};

fn context(
    dir: &Path,
    policy: AskForApproval,
    answers: Vec<ReviewDecision>,
) -> (Arc<ToolContext>, Arc<ScriptedApprover>) {
    let approver = Arc::new(ScriptedApprover::new(answers, ReviewDecision::Denied));
    let mut ctx = test_context(dir, isolated_policy());
    ctx.approval_policy = policy;
    ctx.approver = approver.clone();
    (Arc::new(ctx), approver)
}

fn purposes(approver: &ScriptedApprover) -> Vec<(ApprovalPurpose, Option<String>)> {
    approver
        .requests()
        .into_iter()
        .map(|r| match r {
            ApprovalRequest::Command {
                purpose, reason, ..
            } => (purpose, reason),
            ApprovalRequest::Patch {
                purpose, reason, ..
            } => (purpose, reason),
            other => panic!("unexpected request {other:?}"),
        })
        .collect()
}

/// Appends a line to `count` (inside the workspace) on every attempt, then writes `target`.
fn counting_write(ws: &Path, target: &Path) -> String {
    format!(
        "echo attempt >> {}/count; echo data > {}",
        ws.display(),
        target.display()
    )
}

fn attempts(ws: &Path) -> usize {
    std::fs::read_to_string(ws.join("count"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_approval_carries_over_to_one_unsandboxed_retry() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("out.txt");
    let (ctx, approver) = context(
        ws.path(),
        AskForApproval::Untrusted,
        vec![ReviewDecision::Approved],
    );
    let out = exec(
        &ctx,
        serde_json::json!({"cmd": counting_write(ws.path(), &target), "login": false}),
    )
    .await
    .unwrap();
    assert_eq!(out["exit_code"], 0, "{out}");
    assert!(target.exists(), "the retry ran without the sandbox");
    assert_eq!(attempts(ws.path()), 2);
    assert_eq!(purposes(&approver), vec![(ApprovalPurpose::Initial, None)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_question_has_fixed_reason_and_fresh_id_and_can_be_declined() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("out.txt");
    let granular = AskForApproval::Granular(GranularApproval::default());
    // Granular: the sandboxed run needs no approval; the retry asks, and "no" rejects.
    let (ctx, approver) = context(ws.path(), granular, vec![ReviewDecision::Denied]);
    let err = exec(
        &ctx,
        serde_json::json!({"cmd": counting_write(ws.path(), &target), "login": false}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(REJECTED_BY_USER.into())
    );
    assert_eq!(attempts(ws.path()), 1);
    assert_eq!(
        purposes(&approver),
        vec![(
            ApprovalPurpose::SandboxRetry,
            Some(RETRY_WITHOUT_SANDBOX_REASON.to_owned())
        )]
    );
    // Approving the retry runs it once more, unsandboxed.
    let (ctx, approver) = context(ws.path(), granular, vec![ReviewDecision::Approved]);
    exec(
        &ctx,
        serde_json::json!({"cmd": counting_write(ws.path(), &target), "login": false}),
    )
    .await
    .unwrap();
    assert!(target.exists());
    assert_eq!(attempts(ws.path()), 3);
    assert_eq!(approver.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_one_retry_even_if_the_retry_fails_too() {
    let ws = tempfile::tempdir().unwrap();
    let (ctx, approver) = context(
        ws.path(),
        AskForApproval::Untrusted,
        vec![ReviewDecision::Approved],
    );
    // /proc/version is unwritable with or without the sandbox.
    let cmd = format!(
        "echo attempt >> {}/count; echo x > /proc/version",
        ws.path().display()
    );
    let out = exec(&ctx, serde_json::json!({"cmd": cmd, "login": false}))
        .await
        .unwrap();
    assert_ne!(out["exit_code"], 0);
    assert_eq!(attempts(ws.path()), 2);
    assert_eq!(approver.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_request_and_never_return_the_denial_without_asking() {
    for policy in [AskForApproval::OnRequest, AskForApproval::Never] {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("out.txt");
        let (ctx, approver) = context(ws.path(), policy, vec![ReviewDecision::Approved]);
        let out = exec(
            &ctx,
            serde_json::json!({"cmd": counting_write(ws.path(), &target), "login": false}),
        )
        .await
        .unwrap();
        assert_ne!(out["exit_code"], 0);
        assert!(!target.exists());
        assert_eq!(attempts(ws.path()), 1);
        assert!(approver.requests().is_empty(), "{policy:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_escalated_asks_then_runs_unsandboxed_once() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("out.txt");
    let (ctx, approver) = context(
        ws.path(),
        AskForApproval::OnRequest,
        vec![ReviewDecision::Approved],
    );
    let args = serde_json::json!({
        "cmd": counting_write(ws.path(), &target),
        "login": false,
        "sandbox_permissions": "require_escalated",
        "justification": "write the report outside the workspace?"
    });
    exec(&ctx, args).await.unwrap();
    assert!(target.exists());
    assert_eq!(attempts(ws.path()), 1);
    assert_eq!(
        purposes(&approver),
        vec![(
            ApprovalPurpose::Initial,
            Some("write the report outside the workspace?".to_owned())
        )]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_read_policies_never_escalate() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "s").unwrap();
    let target = outside.path().join("out.txt");
    let approver = Arc::new(ScriptedApprover::new(vec![], ReviewDecision::Approved));
    let mut ctx = test_context(
        ws.path(),
        SandboxPolicy {
            deny_read: vec![secret],
            ..isolated_policy()
        },
    );
    ctx.approval_policy = AskForApproval::OnRequest;
    ctx.approver = approver.clone();
    let ctx = Arc::new(ctx);
    let args = serde_json::json!({
        "cmd": counting_write(ws.path(), &target),
        "login": false,
        "sandbox_permissions": "require_escalated"
    });
    let out = exec(&ctx, args).await.unwrap();
    assert_ne!(out["exit_code"], 0, "still sandboxed despite the approval");
    assert!(!target.exists());
    assert_eq!(attempts(ws.path()), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_rules_never_ask_and_never_run() {
    let ws = tempfile::tempdir().unwrap();
    let (ctx, approver) = context(
        ws.path(),
        AskForApproval::Untrusted,
        vec![ReviewDecision::Approved],
    );
    let mut ctx = (*ctx).clone();
    let rules = "[[rule]]\npattern = [\"touch\"]\ndecision = \"forbidden\"\njustification = \"no touching\"\n";
    ctx.exec_policy = Arc::new(ExecPolicyManager::new(
        Policy::parse(Path::new("r"), rules).unwrap(),
        None,
    ));
    let ctx = Arc::new(ctx);
    let err = exec(
        &ctx,
        serde_json::json!({"cmd": "touch made", "login": false}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel("`touch made` rejected: no touching".into())
    );
    assert!(!ws.path().join("made").exists());
    assert!(approver.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_for_session_is_cached_per_command() {
    let ws = tempfile::tempdir().unwrap();
    let (ctx, approver) = context(
        ws.path(),
        AskForApproval::Untrusted,
        vec![ReviewDecision::ApprovedForSession],
    );
    for _ in 0..2 {
        let out = exec(&ctx, serde_json::json!({"cmd": "touch a", "login": false}))
            .await
            .unwrap();
        assert_eq!(out["exit_code"], 0);
    }
    assert_eq!(
        approver.requests().len(),
        1,
        "second run hit the session cache"
    );
    let err = exec(&ctx, serde_json::json!({"cmd": "touch b", "login": false}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(REJECTED_BY_USER.into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_amendment_allows_the_prefix_from_then_on() {
    let ws = tempfile::tempdir().unwrap();
    let prefix = vec!["touch".to_owned()];
    let (ctx, approver) = context(
        ws.path(),
        AskForApproval::Untrusted,
        vec![ReviewDecision::ApprovedExecpolicyAmendment { prefix }],
    );
    exec(&ctx, serde_json::json!({"cmd": "touch a", "login": false}))
        .await
        .unwrap();
    let out = exec(&ctx, serde_json::json!({"cmd": "touch b", "login": false}))
        .await
        .unwrap();
    assert_eq!(out["exit_code"], 0);
    assert_eq!(approver.requests().len(), 1);
    match &approver.requests()[0] {
        ApprovalRequest::Command {
            proposed_amendment, ..
        } => {
            assert_eq!(
                proposed_amendment.as_deref(),
                Some(&["touch".to_owned(), "a".to_owned()][..])
            );
        }
        other => panic!("{other:?}"),
    }
}

async fn patch(ctx: &Arc<ToolContext>, text: &str) -> Result<String, FunctionCallError> {
    let mut inv = invocation(ctx, "apply_patch", serde_json::json!({}));
    inv.payload = ToolPayload::Custom {
        input: text.to_owned(),
    };
    let out = ApplyPatchTool::new().handle(inv).await?;
    assert_eq!(out.code_mode_result(), serde_json::json!({}));
    Ok(out.model_text())
}

#[tokio::test]
async fn apply_patch_inside_roots_runs_without_asking() {
    let ws = tempfile::tempdir().unwrap();
    let (ctx, approver) = context(ws.path(), AskForApproval::OnRequest, vec![]);
    let text = patch(
        &ctx,
        "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch",
    )
    .await
    .unwrap();
    assert!(text.starts_with("Exit code: 0\nWall time: "), "{text}");
    assert!(
        text.ends_with("Output:\nSuccess. Updated the following files:\nA a.txt\n"),
        "{text}"
    );
    assert!(approver.requests().is_empty());
}

#[tokio::test]
async fn apply_patch_outside_roots_asks_per_path_and_caches_for_the_session() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let (ctx, approver) = context(
        ws.path(),
        AskForApproval::OnRequest,
        vec![ReviewDecision::ApprovedForSession],
    );
    let path = outside.path().join("o.txt");
    let add = format!(
        "*** Begin Patch\n*** Add File: {}\n+1\n*** End Patch",
        path.display()
    );
    patch(&ctx, &add).await.unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "1\n");
    let update = format!(
        "*** Begin Patch\n*** Update File: {}\n-1\n+2\n*** End Patch",
        path.display()
    );
    patch(&ctx, &update).await.unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "2\n");
    assert_eq!(approver.requests().len(), 1, "same path: cached");
    // A move adds the destination as a key, so it asks again (and the fallback denies).
    let dest = outside.path().join("moved.txt");
    let mv = format!(
        "*** Begin Patch\n*** Update File: {}\n*** Move to: {}\n-2\n+3\n*** End Patch",
        path.display(),
        dest.display()
    );
    let err = patch(&ctx, &mv).await.unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(REJECTED_BY_USER.into())
    );
    assert_eq!(approver.requests().len(), 2);
    match &approver.requests()[1] {
        ApprovalRequest::Patch { paths, .. } => {
            assert_eq!(paths, &vec![path.clone(), dest.clone()])
        }
        other => panic!("{other:?}"),
    }
    assert!(!dest.exists());
}

#[tokio::test]
async fn apply_patch_outside_roots_is_rejected_when_nobody_may_be_asked() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let (ctx, approver) = context(ws.path(), AskForApproval::Never, vec![]);
    let add = format!(
        "*** Begin Patch\n*** Add File: {}/x\n+1\n*** End Patch",
        outside.path().display()
    );
    let err = patch(&ctx, &add).await.unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(
            "writing outside of the project; rejected by user approval settings".into()
        )
    );
    assert!(approver.requests().is_empty());
    let bad = patch(
        &ctx,
        "*** Begin Patch\n*** Update File: missing.txt\n-a\n+b\n*** End Patch",
    )
    .await
    .unwrap_err();
    assert!(
        matches!(bad, FunctionCallError::RespondToModel(m) if m.starts_with("apply_patch verification failed: Failed to read file to update"))
    );
}

#[tokio::test]
async fn apply_patch_protected_git_dir_needs_escalation() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    let (ctx, approver) = context(ws.path(), AskForApproval::OnRequest, vec![]);
    let err = patch(
        &ctx,
        "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+evil\n*** End Patch",
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        FunctionCallError::RespondToModel(REJECTED_BY_USER.into())
    );
    assert_eq!(approver.requests().len(), 1);
    assert!(!ws.path().join(".git/hooks/pre-commit").exists());
}

#[test]
fn tool_specs_are_pinned() {
    use crate::unified_exec::{ExecCommandOptions, ExecCommandTool, WriteStdinTool};
    let patch = serde_json::to_value(ApplyPatchTool::new().spec()).unwrap();
    assert_eq!(patch["type"], "custom");
    assert_eq!(patch["name"], "apply_patch");
    assert_eq!(patch["format"]["type"], "grammar");
    assert_eq!(patch["format"]["syntax"], "lark");
    assert!(
        patch["format"]["definition"]
            .as_str()
            .unwrap()
            .starts_with("start: begin_patch hunk+ end_patch\n")
    );
    let exec = ExecCommandTool::new(ExecCommandOptions::default());
    let spec = serde_json::to_value(exec.spec()).unwrap();
    assert_eq!(spec["type"], "function");
    assert_eq!(
        spec["description"],
        "Runs a command in a PTY, returning output or a session ID for ongoing interaction."
    );
    assert_eq!(spec["parameters"]["required"], serde_json::json!(["cmd"]));
    assert_eq!(spec["parameters"]["additionalProperties"], false);
    assert!(spec.get("output_schema").is_none(), "never serialized");
    assert!(exec.supports_parallel_tool_calls());
    let write = WriteStdinTool::new();
    assert!(!write.supports_parallel_tool_calls());
    assert_eq!(
        serde_json::to_value(write.spec()).unwrap()["parameters"]["required"],
        serde_json::json!(["session_id"])
    );
    assert!(!ApplyPatchTool::new().supports_parallel_tool_calls());
}

#[tokio::test]
async fn default_context_is_workspace_write_on_request_and_denies_prompts() {
    let ws = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(ws.path().to_path_buf());
    assert_eq!(ctx.sandbox_policy, SandboxPolicy::workspace_write());
    assert!(!ctx.sandbox_policy.network_access);
    assert_eq!(ctx.approval_policy, AskForApproval::OnRequest);
    let request = ApprovalRequest::Network {
        approval_id: ApprovalRequest::new_id(),
        host: "h".into(),
    };
    assert_eq!(
        ctx.approver.request_approval(request).await,
        ReviewDecision::Denied
    );
    assert!(
        ctx.sandbox_policy
            .can_write(&ws.path().join("f"), ws.path())
    );
}

#[tokio::test]
async fn apply_patch_never_reads_denied_paths() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("secret.txt"), "token\n").unwrap();
    let mut ctx = test_context(ws.path(), isolated_policy());
    ctx.sandbox_policy.deny_read = vec![ws.path().join("secret.txt")];
    let ctx = Arc::new(ctx);
    let err = patch(
        &ctx,
        "*** Begin Patch\n*** Update File: secret.txt\n-nope\n+x\n*** End Patch",
    )
    .await
    .unwrap_err();
    let FunctionCallError::RespondToModel(message) = err else {
        panic!()
    };
    assert!(
        message.ends_with("secret.txt is denied by the sandbox policy"),
        "{message}"
    );
    assert!(!message.contains("token"));
}
