//! The orchestrator every side-effecting tool goes through: approval requirement → approval
//! (cached) → first attempt in the selected sandbox → if the sandbox denied it and policy
//! allows, one more question → **at most one** retry without the sandbox.
//!
//! # Guarantees
//! - A `Forbidden` requirement never asks and never runs.
//! - At most two attempts; the second runs unsandboxed and its result is final.
//! - No unsandboxed attempt at all when the sandbox policy has denied-read paths.
//! - The retry question has a fresh approval id and bypasses the session cache.

use std::future::Future;

use crate::approval::{ApprovalPurpose, ApprovalRequest, AskForApproval, ReviewDecision};
use crate::exec_policy::ExecApprovalRequirement;
use crate::sandbox::{SandboxPermissions, SandboxType, select_sandbox};
use crate::tool::ToolContext;

/// The fixed question asked before retrying without the sandbox.
pub const RETRY_WITHOUT_SANDBOX_REASON: &str = "command failed; retry without sandbox?";
/// The model-visible text when the user says no.
pub const REJECTED_BY_USER: &str = "rejected by user";

/// How one attempt failed.
#[derive(Debug)]
pub enum AttemptError<O> {
    /// The sandbox (likely) stopped it; carries the attempt's output.
    Denied(O),
    /// It could not run at all.
    Failed(String),
}

/// How the whole orchestration failed.
#[derive(Debug)]
pub enum OrchestratorError<O> {
    /// Forbidden by policy or declined; the text is model-visible.
    Rejected(String),
    /// The sandbox denied it and no retry was allowed; carries the denied output.
    Denied(O),
    /// It could not run.
    Failed(String),
}

/// A tool action that can run sandboxed or not.
pub trait SandboxedAction: Send {
    /// What an attempt produces.
    type Output: Send;

    /// The approval question for this action.
    fn approval_request(&self, purpose: ApprovalPurpose, reason: Option<String>)
    -> ApprovalRequest;

    /// The session-cache keys of this action (all must be approved to skip the question).
    fn approval_keys(&self) -> Vec<serde_json::Value>;

    /// Whether a sandbox denial may lead to the unsandboxed retry question under `policy`.
    fn wants_no_sandbox_approval(&self, policy: AskForApproval) -> bool {
        policy.wants_no_sandbox_approval()
    }

    /// Runs once in `sandbox`.
    fn attempt(
        &mut self,
        sandbox: SandboxType,
    ) -> impl Future<Output = Result<Self::Output, AttemptError<Self::Output>>> + Send;
}

/// Runs `action` under `requirement` with the session's policies.
pub async fn run<A: SandboxedAction>(
    ctx: &ToolContext,
    action: &mut A,
    requirement: ExecApprovalRequirement,
    permissions: SandboxPermissions,
) -> Result<A::Output, OrchestratorError<A::Output>> {
    let deny_read = !ctx.sandbox_policy.unsandboxed_execution_allowed();
    let mut already_approved = false;
    let mut bypass_by_rule = false;
    match requirement {
        ExecApprovalRequirement::Forbidden { reason } => {
            return Err(OrchestratorError::Rejected(reason));
        }
        ExecApprovalRequirement::Skip { bypass_sandbox, .. } => bypass_by_rule = bypass_sandbox,
        ExecApprovalRequirement::NeedsApproval {
            reason,
            proposed_amendment,
        } => {
            let mut request = action.approval_request(ApprovalPurpose::Initial, reason);
            if let ApprovalRequest::Command {
                proposed_amendment: slot,
                ..
            } = &mut request
            {
                *slot = proposed_amendment;
            }
            let keys = action.approval_keys();
            let decision = ctx
                .approvals
                .with_cached_approval(&keys, || ctx.approver.request_approval(request))
                .await;
            accept(ctx, decision)?;
            already_approved = true;
        }
    }

    let escalated = permissions == SandboxPermissions::RequireEscalated;
    let first = if !deny_read && (bypass_by_rule || escalated) {
        SandboxType::None
    } else {
        select_sandbox(&ctx.sandbox_policy)
    };
    let denied_output = match action.attempt(first).await {
        Ok(output) => return Ok(output),
        Err(AttemptError::Failed(error)) => return Err(OrchestratorError::Failed(error)),
        Err(AttemptError::Denied(output)) => output,
    };
    if first == SandboxType::None
        || !action.wants_no_sandbox_approval(ctx.approval_policy)
        || deny_read
    {
        return Err(OrchestratorError::Denied(denied_output));
    }
    let skip_retry_question = already_approved || ctx.approval_policy == AskForApproval::Never;
    if !skip_retry_question {
        let request = action.approval_request(
            ApprovalPurpose::SandboxRetry,
            Some(RETRY_WITHOUT_SANDBOX_REASON.to_owned()),
        );
        accept(ctx, ctx.approver.request_approval(request).await)?;
    }
    match action.attempt(SandboxType::None).await {
        Ok(output) | Err(AttemptError::Denied(output)) => Ok(output),
        Err(AttemptError::Failed(error)) => Err(OrchestratorError::Failed(error)),
    }
}

fn accept<O>(ctx: &ToolContext, decision: ReviewDecision) -> Result<(), OrchestratorError<O>> {
    match decision {
        ReviewDecision::ApprovedExecpolicyAmendment { prefix } => {
            if let Err(error) = ctx.exec_policy.add_allow_prefix(&prefix) {
                tracing::warn!(%error, "approved amendment not recorded");
            }
            Ok(())
        }
        ReviewDecision::Approved | ReviewDecision::ApprovedForSession => Ok(()),
        ReviewDecision::Denied | ReviewDecision::Abort | ReviewDecision::TimedOut => {
            Err(OrchestratorError::Rejected(REJECTED_BY_USER.to_owned()))
        }
    }
}

#[cfg(test)]
mod tests;
