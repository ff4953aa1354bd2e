//! The freeform `apply_patch` tool: parse, verify, decide approval per path (spec §8.5), then
//! apply through the orchestrator, where the "sandboxed" attempt refuses writes the sandbox
//! policy does not allow and the escalated retry writes anyway.

use std::path::{Path, PathBuf};
use std::time::Instant;

use futures::future::BoxFuture;

use super::grammar::{APPLY_PATCH_DESCRIPTION, APPLY_PATCH_LARK_GRAMMAR};
use super::parser::parse_patch;
use super::verified::{VerifiedPatch, resolve_path, verify_patch};
use crate::approval::{ApprovalPurpose, ApprovalRequest, AskForApproval};
use crate::exec_policy::ExecApprovalRequirement;
use crate::hooks::HookToolInput;
use crate::orchestrator::{self, AttemptError, OrchestratorError, SandboxedAction};
use crate::sandbox::{SandboxPermissions, SandboxType};
use crate::tool::{
    FreeformFormat, FunctionCallError, ResponseInputItem, ToolContext, ToolExecutor,
    ToolInvocation, ToolName, ToolOutput, ToolPayload, ToolSpec, messages,
};

/// What applying a patch produced (exit code 0 on success, 1 on a write failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchRunResult {
    /// 0 or 1.
    pub exit_code: i32,
    /// The summary or the error text.
    pub output: String,
}

/// Parses, verifies, approves and applies `patch_text` relative to `cwd`. Verification and
/// policy failures are `RespondToModel` errors; write failures are a result with exit code 1.
pub async fn run_patch(
    ctx: &ToolContext,
    patch_text: &str,
    cwd: &Path,
) -> Result<PatchRunResult, FunctionCallError> {
    let verification_failed = |e: String| {
        FunctionCallError::RespondToModel(format!("apply_patch verification failed: {e}"))
    };
    let patch = parse_patch(patch_text).map_err(|e| verification_failed(e.to_string()))?;
    // Never read (for verification) what the sandbox hides.
    for hunk in &patch.hunks {
        let path = crate::sandbox::resolve_existing_prefix(&resolve_path(cwd, hunk.path()));
        if !ctx.sandbox_policy.can_read(&path) {
            return Err(verification_failed(format!(
                "access to {} is denied by the sandbox policy",
                path.display()
            )));
        }
    }
    let verified = verify_patch(&patch, cwd).map_err(|e| verification_failed(e.to_string()))?;
    let requirement = assess_patch_safety(ctx, &verified, cwd);
    let mut action = PatchAction {
        ctx,
        verified,
        cwd: cwd.to_path_buf(),
        patch: patch_text.to_owned(),
    };
    match orchestrator::run(
        ctx,
        &mut action,
        requirement,
        SandboxPermissions::UseDefault,
    )
    .await
    {
        Ok(result) | Err(OrchestratorError::Denied(result)) => Ok(result),
        Err(OrchestratorError::Rejected(reason)) => {
            if reason == "empty patch" {
                return Err(FunctionCallError::RespondToModel(
                    "patch rejected: empty patch".into(),
                ));
            }
            Err(FunctionCallError::RespondToModel(reason))
        }
        Err(OrchestratorError::Failed(error)) => Err(FunctionCallError::RespondToModel(error)),
    }
}

/// Spec §8.5: auto-approve writes inside the writable roots, ask otherwise (or reject when
/// nobody may be asked).
fn assess_patch_safety(
    ctx: &ToolContext,
    patch: &VerifiedPatch,
    cwd: &Path,
) -> ExecApprovalRequirement {
    let policy = ctx.approval_policy;
    if policy == AskForApproval::Untrusted {
        return ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_amendment: None,
        };
    }
    let all_writable = patch
        .touched_paths()
        .iter()
        .all(|p| ctx.sandbox_policy.can_write(p, cwd));
    if all_writable {
        return ExecApprovalRequirement::Skip {
            bypass_sandbox: !ctx.sandbox_policy.is_fs_restricted(),
            proposed_amendment: None,
        };
    }
    let no_prompts = match policy {
        AskForApproval::Never => true,
        AskForApproval::Granular(g) => !g.sandbox_approval,
        _ => false,
    };
    if no_prompts {
        return ExecApprovalRequirement::Forbidden {
            reason: "writing outside of the project; rejected by user approval settings".to_owned(),
        };
    }
    ExecApprovalRequirement::NeedsApproval {
        reason: None,
        proposed_amendment: None,
    }
}

struct PatchAction<'a> {
    ctx: &'a ToolContext,
    verified: VerifiedPatch,
    cwd: PathBuf,
    patch: String,
}

impl SandboxedAction for PatchAction<'_> {
    type Output = PatchRunResult;

    fn approval_request(
        &self,
        purpose: ApprovalPurpose,
        reason: Option<String>,
    ) -> ApprovalRequest {
        ApprovalRequest::Patch {
            approval_id: ApprovalRequest::new_id(),
            purpose,
            patch: self.patch.clone(),
            paths: self.verified.touched_paths(),
            reason,
        }
    }

    fn approval_keys(&self) -> Vec<serde_json::Value> {
        self.verified
            .touched_paths()
            .iter()
            .map(|p| serde_json::json!({"environment_id": self.ctx.environment_id, "path": p}))
            .collect()
    }

    fn wants_no_sandbox_approval(&self, policy: AskForApproval) -> bool {
        policy == AskForApproval::OnRequest || policy.wants_no_sandbox_approval()
    }

    async fn attempt(
        &mut self,
        sandbox: SandboxType,
    ) -> Result<PatchRunResult, AttemptError<PatchRunResult>> {
        if sandbox != SandboxType::None {
            let blocked = self
                .verified
                .touched_paths()
                .into_iter()
                .find(|p| !self.ctx.sandbox_policy.can_write(p, &self.cwd));
            if let Some(path) = blocked {
                return Err(AttemptError::Denied(PatchRunResult {
                    exit_code: 1,
                    output: format!(
                        "Failed to write file {}: Read-only file system (os error 30)\n",
                        path.display()
                    ),
                }));
            }
        }
        Ok(match self.verified.apply() {
            Ok(summary) => PatchRunResult {
                exit_code: 0,
                output: summary,
            },
            Err(error) => PatchRunResult {
                exit_code: 1,
                output: format!("{error}\n"),
            },
        })
    }
}

/// The output of the freeform tool: exec-style text, `{}` for code mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyPatchToolOutput {
    /// The result.
    pub result: PatchRunResult,
    /// Time spent.
    pub wall_time_seconds: f64,
}

impl ToolOutput for ApplyPatchToolOutput {
    fn success(&self) -> Option<bool> {
        Some(self.result.exit_code == 0)
    }

    fn model_text(&self) -> String {
        format!(
            "Exit code: {}\nWall time: {:.1} seconds\nOutput:\n{}",
            self.result.exit_code, self.wall_time_seconds, self.result.output
        )
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        let output = serde_json::Value::String(self.model_text());
        match payload {
            ToolPayload::Custom { .. } => ResponseInputItem::CustomToolCallOutput {
                call_id: call_id.to_owned(),
                output,
            },
            _ => ResponseInputItem::FunctionCallOutput {
                call_id: call_id.to_owned(),
                output,
            },
        }
    }

    fn code_mode_result(&self) -> serde_json::Value {
        serde_json::json!({})
    }
}

/// The patch of a call: the freeform input, or `input` of the JSON form `{"input": "<patch>"}`.
fn patch_text(payload: &ToolPayload) -> Result<String, FunctionCallError> {
    match payload {
        ToolPayload::Custom { input } => Ok(input.clone()),
        ToolPayload::Function { arguments } | ToolPayload::ToolSearch { arguments } => {
            #[derive(serde::Deserialize)]
            struct Args {
                input: String,
            }
            serde_json::from_str::<Args>(arguments)
                .map(|args| args.input)
                .map_err(|e| {
                    FunctionCallError::RespondToModel(messages::failed_to_parse_arguments(
                        &e.to_string(),
                    ))
                })
        }
    }
}

/// The freeform `apply_patch` tool.
#[derive(Debug, Default, Clone)]
pub struct ApplyPatchTool;

impl ApplyPatchTool {
    /// The tool.
    pub fn new() -> Self {
        Self
    }
}

impl ToolExecutor for ApplyPatchTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain("apply_patch")
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec::Freeform {
            name: "apply_patch".to_owned(),
            description: APPLY_PATCH_DESCRIPTION.to_owned(),
            format: FreeformFormat {
                kind: "grammar".to_owned(),
                syntax: "lark".to_owned(),
                definition: APPLY_PATCH_LARK_GRAMMAR.to_owned(),
            },
        }
    }

    fn matches_kind(&self, payload: &ToolPayload) -> bool {
        matches!(
            payload,
            ToolPayload::Custom { .. } | ToolPayload::Function { .. }
        )
    }

    /// Hooks see `apply_patch` with `{"command": <patch>}` (spec runtime §2.3).
    fn hook_input(&self, payload: &ToolPayload) -> Option<HookToolInput> {
        let patch = patch_text(payload).ok()?;
        Some(HookToolInput::command(self.tool_name().to_string(), patch))
    }

    /// A rewrite replaces the patch and keeps the call's form (freeform or JSON).
    fn with_updated_hook_input(
        &self,
        payload: &ToolPayload,
        input: serde_json::Value,
    ) -> Result<ToolPayload, FunctionCallError> {
        let patch = HookToolInput::updated_command(&input)
            .ok_or_else(|| {
                FunctionCallError::RespondToModel(messages::hook_input_without_command(
                    &self.tool_name(),
                ))
            })?
            .to_owned();
        Ok(match payload {
            ToolPayload::Custom { .. } => ToolPayload::Custom { input: patch },
            ToolPayload::Function { .. } | ToolPayload::ToolSearch { .. } => {
                ToolPayload::Function {
                    arguments: serde_json::json!({ "input": patch }).to_string(),
                }
            }
        })
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let started = Instant::now();
            let patch = patch_text(&invocation.payload)?;
            let ctx = &invocation.context;
            let result = run_patch(ctx, &patch, &ctx.cwd).await?;
            Ok(Box::new(ApplyPatchToolOutput {
                result,
                wall_time_seconds: started.elapsed().as_secs_f64(),
            }) as Box<dyn ToolOutput>)
        })
    }
}
