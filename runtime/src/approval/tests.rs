use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::tool::ToolContext;

#[tokio::test]
async fn cache_needs_every_key_and_stores_each_key() {
    let store = ApprovalStore::new();
    let a = serde_json::json!({"path": "/a"});
    let b = serde_json::json!({"path": "/b"});
    let asked = store
        .with_cached_approval(&[a.clone(), b.clone()], || async {
            ReviewDecision::ApprovedForSession
        })
        .await;
    assert_eq!(asked, ReviewDecision::ApprovedForSession);
    assert!(
        store.all_approved(std::slice::from_ref(&a)),
        "a subset is covered"
    );
    let c = serde_json::json!({"path": "/c"});
    assert!(!store.all_approved(&[a.clone(), c.clone()]));
    assert!(!store.all_approved(&[]), "no keys always asks");
    // A one-time approval is not remembered.
    store
        .with_cached_approval(std::slice::from_ref(&c), || async {
            ReviewDecision::Approved
        })
        .await;
    assert!(!store.all_approved(&[c]));
}

#[test]
fn policies_serialize_kebab_case() {
    assert_eq!(
        serde_json::to_string(&AskForApproval::OnRequest).unwrap(),
        "\"on-request\""
    );
    let parsed: AskForApproval = serde_json::from_str("\"on-failure\"").unwrap();
    assert_eq!(parsed, AskForApproval::OnRequest);
    let granular: AskForApproval =
        serde_json::from_str(r#"{"granular":{"sandbox_approval":false,"rules":true}}"#).unwrap();
    assert_eq!(
        granular,
        AskForApproval::Granular(GranularApproval {
            sandbox_approval: false,
            rules: true,
            mcp_tools: true
        })
    );
    assert_eq!(AskForApproval::default(), AskForApproval::OnRequest);
}

fn mcp_context(approver: Arc<dyn Approver>, policy: AskForApproval) -> ToolContext {
    let mut ctx = ToolContext::new(PathBuf::from("/"));
    ctx.approver = approver;
    ctx.approval_policy = policy;
    ctx
}

#[tokio::test]
async fn mcp_calls_follow_annotations_and_the_session_cache() {
    let approver = Arc::new(ScriptedApprover::new(
        vec![ReviewDecision::ApprovedForSession],
        ReviewDecision::Denied,
    ));
    let ctx = mcp_context(approver.clone(), AskForApproval::OnRequest);
    let args = serde_json::json!({"q": 1});
    let read_only = McpToolAnnotations {
        read_only_hint: Some(true),
        ..Default::default()
    };
    request_mcp_tool_approval(&ctx, "fs", "read", &args, read_only)
        .await
        .unwrap();
    assert!(
        approver.requests().is_empty(),
        "read-only tools skip approval"
    );
    let destructive = McpToolAnnotations {
        destructive_hint: Some(true),
        read_only_hint: Some(true),
        ..Default::default()
    };
    request_mcp_tool_approval(&ctx, "fs", "delete", &args, destructive)
        .await
        .unwrap();
    request_mcp_tool_approval(&ctx, "fs", "delete", &args, destructive)
        .await
        .unwrap();
    assert_eq!(approver.requests().len(), 1, "approved for session");
    let err =
        request_mcp_tool_approval(&ctx, "fs", "write", &args, McpToolAnnotations::default()).await;
    assert_eq!(err, Err(MCP_REJECTED.to_owned()));
    let closed = McpToolAnnotations {
        destructive_hint: Some(false),
        open_world_hint: Some(false),
        ..Default::default()
    };
    assert!(!closed.requires_approval());
}

#[tokio::test]
async fn mcp_abort_and_never_policy() {
    let abort = Arc::new(FixedApprover::new(ReviewDecision::Abort));
    let ctx = mcp_context(abort.clone(), AskForApproval::OnRequest);
    let err = request_mcp_tool_approval(
        &ctx,
        "s",
        "t",
        &serde_json::Value::Null,
        McpToolAnnotations::default(),
    )
    .await;
    assert_eq!(err, Err(MCP_CANCELLED.to_owned()));
    let ctx = mcp_context(abort.clone(), AskForApproval::Never);
    request_mcp_tool_approval(
        &ctx,
        "s",
        "t",
        &serde_json::Value::Null,
        McpToolAnnotations::default(),
    )
    .await
    .unwrap();
    assert_eq!(abort.requests().len(), 1);
}

#[tokio::test]
async fn hook_approver_reads_the_decision_from_the_hook() {
    let request = ApprovalRequest::Network {
        approval_id: ApprovalRequest::new_id(),
        host: "example.com".into(),
    };
    let hook = |script: &str| {
        HookApprover::new(
            PathBuf::from("sh"),
            vec!["-c".into(), script.into()],
            Duration::from_secs(5),
        )
    };
    // The hook sees the request JSON on stdin.
    let grep = hook("grep -q '\"host\":\"example.com\"' && echo approved_for_session");
    assert_eq!(
        grep.request_approval(request.clone()).await,
        ReviewDecision::ApprovedForSession
    );
    assert_eq!(
        hook("cat >/dev/null; echo '\"approved\"'")
            .request_approval(request.clone())
            .await,
        ReviewDecision::Approved
    );
    assert_eq!(
        hook("cat >/dev/null; echo maybe")
            .request_approval(request.clone())
            .await,
        ReviewDecision::Denied
    );
    assert_eq!(
        hook("exit 1").request_approval(request.clone()).await,
        ReviewDecision::Denied
    );
    let slow = HookApprover::new(
        PathBuf::from("sleep"),
        vec!["5".into()],
        Duration::from_millis(100),
    );
    assert_eq!(slow.request_approval(request).await, ReviewDecision::Denied);
}

#[test]
fn requests_serialize_with_a_type_tag() {
    let request = ApprovalRequest::Patch {
        approval_id: "id".into(),
        purpose: ApprovalPurpose::Initial,
        patch: "p".into(),
        paths: vec![PathBuf::from("/w/a")],
        reason: None,
    };
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        serde_json::json!({"type": "patch", "approval_id": "id", "purpose": "initial", "patch": "p", "paths": ["/w/a"]})
    );
    assert_eq!(request.summary(), "apply a patch to /w/a");
}
