//! The `exec_command` and `write_stdin` tools (spec §4.2, §4.3).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::args::{ExecArgs, parse_exec_args, parse_write_args};
use super::output::ExecCommandToolOutput;
use super::process::{ExitInfo, ManagedProcess};
use super::specs::{exec_command_spec, write_stdin_spec};
use super::store::{ProcessStore, WARNING_PROCESSES};
use crate::apply_patch::{
    ApplyPatchInvocation, IMPLICIT_PATCH_ERROR, classify_invocation, run_patch,
};
use crate::approval::{ApprovalPurpose, ApprovalRequest, AskForApproval};
use crate::exec_policy::{ExecPolicyContext, render_command};
use crate::hooks::{BASH_HOOK_TOOL_NAME, HookToolInput};
use crate::orchestrator::{self, AttemptError, OrchestratorError, SandboxedAction};
use crate::sandbox::{SandboxPermissions, SandboxType, is_likely_sandbox_denied, prepare_command};
use crate::tool::{
    FunctionCallError, ToolContext, ToolExecutor, ToolInvocation, ToolName, ToolOutput,
    ToolPayload, ToolSpec, messages,
};

/// Configuration of `exec_command`.
#[derive(Debug, Clone)]
pub struct ExecCommandOptions {
    /// The shell used when the call names none (default: `$SHELL`, else `/bin/bash`).
    pub default_shell: PathBuf,
    /// Whether `login: true` is allowed (and the default).
    pub allow_login_shell: bool,
}

impl Default for ExecCommandOptions {
    fn default() -> Self {
        let default_shell = std::env::var_os("SHELL")
            .filter(|s| !s.is_empty())
            .map_or_else(|| PathBuf::from("/bin/bash"), PathBuf::from);
        Self {
            default_shell,
            allow_login_shell: true,
        }
    }
}

/// The fixed environment of exec processes (no colours, no pagers, UTF-8).
const ENV_OVERRIDES: [(&str, &str); 10] = [
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("LANG", "C.UTF-8"),
    ("LC_CTYPE", "C.UTF-8"),
    ("LC_ALL", "C.UTF-8"),
    ("COLORTERM", ""),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GH_PAGER", "cat"),
    ("CODEX_CI", "1"),
];

fn respond(text: impl Into<String>) -> FunctionCallError {
    FunctionCallError::RespondToModel(text.into())
}

fn arguments_of(payload: &ToolPayload) -> &str {
    match payload {
        ToolPayload::Function { arguments } | ToolPayload::ToolSearch { arguments } => arguments,
        ToolPayload::Custom { input } => input,
    }
}

/// `exec_command`: runs a shell command, returning its output and exit code, or a session id
/// while it still runs.
#[derive(Debug, Clone, Default)]
pub struct ExecCommandTool {
    options: ExecCommandOptions,
}

impl ExecCommandTool {
    /// The tool with `options`.
    pub fn new(options: ExecCommandOptions) -> Self {
        Self { options }
    }

    fn argv(&self, args: &ExecArgs) -> Result<Vec<String>, FunctionCallError> {
        if args.login && !self.options.allow_login_shell {
            return Err(respond(
                "login shells are disabled in this session; rerun with login=false",
            ));
        }
        let shell = args
            .shell
            .clone()
            .unwrap_or_else(|| self.options.default_shell.to_string_lossy().into_owned());
        let flag = if args.login && self.options.allow_login_shell {
            "-lc"
        } else {
            "-c"
        };
        Ok(vec![shell, flag.to_owned(), args.cmd.clone()])
    }

    async fn run(
        &self,
        invocation: &ToolInvocation,
    ) -> Result<ExecCommandToolOutput, FunctionCallError> {
        let started = Instant::now();
        let ctx = &invocation.context;
        let args = parse_exec_args(arguments_of(&invocation.payload)).map_err(respond)?;
        let cwd = match &args.workdir {
            Some(dir) => crate::apply_patch::resolve_path(&ctx.cwd, std::path::Path::new(dir)),
            None => ctx.cwd.clone(),
        };
        let argv = self.argv(&args)?;
        if args.sandbox_permissions.requests_override()
            && ctx.approval_policy != AskForApproval::OnRequest
        {
            let p = ctx.approval_policy.name();
            return Err(respond(format!(
                "approval policy is {p}; reject command — you cannot ask for escalated permissions if the approval policy is {p}"
            )));
        }
        match classify_invocation(&argv) {
            ApplyPatchInvocation::Patch { patch, workdir } => {
                let patch_cwd = match workdir {
                    Some(dir) => crate::apply_patch::resolve_path(&cwd, &dir),
                    None => cwd.clone(),
                };
                let result = run_patch(ctx, &patch, &patch_cwd).await?;
                return Ok(ExecCommandToolOutput::new(
                    started.elapsed(),
                    Some(result.exit_code),
                    None,
                    result.output,
                    args.max_output_tokens,
                ));
            }
            ApplyPatchInvocation::ImplicitPatch => return Err(respond(IMPLICIT_PATCH_ERROR)),
            ApplyPatchInvocation::NotApplyPatch => {}
        }

        let requirement = ctx.exec_policy.requirement(
            &argv,
            &ExecPolicyContext {
                approval_policy: ctx.approval_policy,
                fs_restricted: ctx.sandbox_policy.is_fs_restricted(),
                sandbox_permissions: args.sandbox_permissions,
                prefix_rule: args.prefix_rule.as_deref(),
            },
        );
        let store = Arc::clone(&ctx.processes);
        let id = store.allocate_id();
        let mut env: Vec<(String, String)> = ENV_OVERRIDES
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        if !ctx.sandbox_policy.network_access {
            env.push(("CODEX_SANDBOX_NETWORK_DISABLED".to_owned(), "1".to_owned()));
        }
        let mut action = ExecAction {
            ctx,
            store: &store,
            id,
            argv: argv.clone(),
            cwd,
            env,
            tty: args.tty,
            deadline_after: Duration::from_millis(args.yield_time_ms),
            justification: args.justification.clone(),
            sandbox_permissions: args.sandbox_permissions,
            cancel: invocation.cancellation.clone(),
        };
        let outcome =
            orchestrator::run(ctx, &mut action, requirement, args.sandbox_permissions).await;
        let attempt = match outcome {
            Ok(attempt) | Err(OrchestratorError::Denied(attempt)) => attempt,
            Err(OrchestratorError::Rejected(reason)) => {
                store.release_id(id);
                return Err(respond(reason));
            }
            Err(OrchestratorError::Failed(error)) => {
                store.release_id(id);
                return Err(respond(format!(
                    "exec_command failed for `{}`: {error}",
                    render_command(&argv)
                )));
            }
        };
        let mut raw = attempt.output;
        let open = store.len();
        if attempt.exit.is_none() && open >= WARNING_PROCESSES {
            raw.push_str(&format!(
                "\nWarning: {open} exec sessions are open; the maximum number of unified exec processes you can keep open is {WARNING_PROCESSES}. Finish or reuse sessions."
            ));
        }
        Ok(ExecCommandToolOutput::new(
            started.elapsed(),
            attempt.exit.map(|e| e.code),
            attempt.exit.is_none().then_some(id),
            raw,
            args.max_output_tokens,
        ))
    }
}

/// One attempt's result.
#[derive(Debug)]
struct ExecAttempt {
    output: String,
    exit: Option<ExitInfo>,
}

struct ExecAction<'a> {
    ctx: &'a ToolContext,
    store: &'a ProcessStore,
    id: i32,
    argv: Vec<String>,
    cwd: PathBuf,
    env: Vec<(String, String)>,
    tty: bool,
    deadline_after: Duration,
    justification: Option<String>,
    sandbox_permissions: SandboxPermissions,
    cancel: CancellationToken,
}

impl SandboxedAction for ExecAction<'_> {
    type Output = ExecAttempt;

    fn approval_request(
        &self,
        purpose: ApprovalPurpose,
        reason: Option<String>,
    ) -> ApprovalRequest {
        ApprovalRequest::Command {
            approval_id: ApprovalRequest::new_id(),
            purpose,
            command: self.argv.clone(),
            cwd: self.cwd.clone(),
            reason: reason.or_else(|| self.justification.clone()),
            proposed_amendment: None,
        }
    }

    fn approval_keys(&self) -> Vec<serde_json::Value> {
        vec![serde_json::json!({
            "command": self.argv,
            "cwd": self.cwd,
            "tty": self.tty,
            "sandbox_permissions": self.sandbox_permissions,
        })]
    }

    async fn attempt(
        &mut self,
        sandbox: SandboxType,
    ) -> Result<ExecAttempt, AttemptError<ExecAttempt>> {
        let deadline = Instant::now() + self.deadline_after;
        let prepared = prepare_command(
            &self.ctx.sandbox_policy,
            sandbox,
            &self.cwd,
            &self.argv,
            !self.tty,
        )
        .map_err(|e| AttemptError::Failed(e.to_string()))?;
        let process = ManagedProcess::spawn(&prepared, &self.cwd, &self.env, self.tty)
            .map_err(|e| AttemptError::Failed(e.to_string()))?;
        drop(prepared);
        let process = Arc::new(process);
        // Stored before waiting, so an interrupted call leaves a reachable session.
        self.store.insert(self.id, Arc::clone(&process));
        let output = process.collect(deadline, &self.cancel).await;
        let Some(exit) = process.exit() else {
            return Ok(ExecAttempt { output, exit: None });
        };
        self.store.remove(self.id);
        let attempt = ExecAttempt {
            output,
            exit: Some(exit),
        };
        if is_likely_sandbox_denied(
            process.sandbox(),
            Some(exit.code),
            exit.signal,
            &attempt.output,
        ) {
            return Err(AttemptError::Denied(attempt));
        }
        Ok(attempt)
    }
}

/// The arguments object of an `exec_command` call and its `cmd`, when both are well formed.
fn exec_arguments(payload: &ToolPayload) -> Option<(serde_json::Map<String, Value>, String)> {
    let ToolPayload::Function { arguments } = payload else {
        return None;
    };
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(arguments) else {
        return None;
    };
    let cmd = object.get("cmd")?.as_str()?.to_owned();
    Some((object, cmd))
}

impl ToolExecutor for ExecCommandTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain("exec_command")
    }

    fn spec(&self) -> ToolSpec {
        exec_command_spec(self.options.allow_login_shell)
    }

    fn supports_parallel_tool_calls(&self) -> bool {
        true
    }

    /// Hooks see `Bash` with `{"command": <cmd>}` (spec runtime §2.3). Arguments without a
    /// `cmd` string expose nothing: the handler refuses them before anything runs.
    fn hook_input(&self, payload: &ToolPayload) -> Option<HookToolInput> {
        let (_, cmd) = exec_arguments(payload)?;
        Some(HookToolInput::command(BASH_HOOK_TOOL_NAME, cmd))
    }

    /// A rewrite replaces only `cmd`; every other argument is kept as the model wrote it.
    fn with_updated_hook_input(
        &self,
        payload: &ToolPayload,
        input: Value,
    ) -> Result<ToolPayload, FunctionCallError> {
        let without_command = || respond(messages::hook_input_without_command(&self.tool_name()));
        let command = HookToolInput::updated_command(&input).ok_or_else(without_command)?;
        let (mut object, _) = exec_arguments(payload).ok_or_else(without_command)?;
        object.insert("cmd".to_owned(), Value::String(command.to_owned()));
        Ok(ToolPayload::Function {
            arguments: Value::Object(object).to_string(),
        })
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let output = self.run(&invocation).await?;
            Ok(Box::new(output) as Box<dyn ToolOutput>)
        })
    }
}

/// `write_stdin`: writes to (or polls) a running exec session.
#[derive(Debug, Clone, Default)]
pub struct WriteStdinTool;

/// Told to the model when it writes to a session without a terminal.
pub const STDIN_CLOSED: &str = "stdin is closed for this session; rerun exec_command with tty=true";

impl WriteStdinTool {
    /// The tool.
    pub fn new() -> Self {
        Self
    }

    async fn run(
        &self,
        invocation: &ToolInvocation,
    ) -> Result<ExecCommandToolOutput, FunctionCallError> {
        let started = Instant::now();
        let args = parse_write_args(arguments_of(&invocation.payload)).map_err(respond)?;
        let store = &invocation.context.processes;
        let failed = |e: &str| respond(format!("write_stdin failed: {e}"));
        let Some(process) = store.get(args.session_id) else {
            return Err(failed(&format!("Unknown process id {}", args.session_id)));
        };
        if !args.chars.is_empty() && !process.is_tty() {
            return Err(failed(STDIN_CLOSED));
        }
        let _interaction = process.interaction.lock().await;
        if !args.chars.is_empty() {
            // A failed write means the process is gone: fall through and report its exit.
            if process.write_stdin(args.chars.as_bytes()).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let deadline = started + Duration::from_millis(args.yield_time_ms);
        let output = process.collect(deadline, &invocation.cancellation).await;
        let exit = process.exit();
        if exit.is_some() {
            store.remove(args.session_id);
        }
        Ok(ExecCommandToolOutput::new(
            started.elapsed(),
            exit.map(|e| e.code),
            exit.is_none().then_some(args.session_id),
            output,
            args.max_output_tokens,
        ))
    }
}

impl ToolExecutor for WriteStdinTool {
    fn tool_name(&self) -> ToolName {
        ToolName::plain("write_stdin")
    }

    fn spec(&self) -> ToolSpec {
        write_stdin_spec()
    }

    /// Writing to a session is not hookable (spec runtime §2.3); the command was, when started.
    fn hook_input(&self, _payload: &ToolPayload) -> Option<HookToolInput> {
        None
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let output = self.run(&invocation).await?;
            Ok(Box::new(output) as Box<dyn ToolOutput>)
        })
    }
}
