//! What a tool handler may know about the session and step it runs in.

use std::path::PathBuf;
use std::sync::Arc;

use crate::approval::{ApprovalStore, Approver, AskForApproval, FixedApprover, ReviewDecision};
use crate::exec_policy::ExecPolicyManager;
use crate::sandbox::SandboxPolicy;
use crate::unified_exec::ProcessStore;

/// Per-session facts handed to every handler: working directory, sandbox and approval policy,
/// approver and approval cache, exec policy, and the exec process store.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The working directory commands and relative paths resolve against.
    pub cwd: PathBuf,
    /// The environment id used in approval keys (`local` by default).
    pub environment_id: String,
    /// What sandboxed commands may touch.
    pub sandbox_policy: SandboxPolicy,
    /// When the user is asked.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests.
    pub approver: Arc<dyn Approver>,
    /// "Approved for session" memory.
    pub approvals: Arc<ApprovalStore>,
    /// Exec policy rules.
    pub exec_policy: Arc<ExecPolicyManager>,
    /// Live `exec_command` sessions; dropping the last handle kills them.
    pub processes: Arc<ProcessStore>,
}

impl ToolContext {
    /// A context rooted at `cwd`: workspace-write on `cwd`, network off, approval on-request,
    /// no rules, and a non-interactive approver that denies every request.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            environment_id: "local".to_owned(),
            sandbox_policy: SandboxPolicy::workspace_write(),
            approval_policy: AskForApproval::OnRequest,
            approver: Arc::new(FixedApprover::new(ReviewDecision::Denied)),
            approvals: Arc::new(ApprovalStore::new()),
            exec_policy: Arc::new(ExecPolicyManager::default()),
            processes: Arc::new(ProcessStore::new()),
        }
    }
}
