//! Who answers approval requests: a fixed policy (tests, non-interactive runs), a scripted
//! queue (tests), the terminal, or a hook command.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use super::request::{ApprovalRequest, ReviewDecision};

/// Answers approval requests.
pub trait Approver: Send + Sync + std::fmt::Debug {
    /// Asks about `request` and returns the decision.
    fn request_approval(&self, request: ApprovalRequest) -> BoxFuture<'_, ReviewDecision>;
}

/// Always gives the same answer and records every request (non-interactive sessions, tests):
/// a scripted approver with an empty script.
#[derive(Debug)]
pub struct FixedApprover(ScriptedApprover);

impl FixedApprover {
    /// Answers every request with `decision`.
    pub fn new(decision: ReviewDecision) -> Self {
        Self(ScriptedApprover::new(Vec::new(), decision))
    }

    /// The requests seen so far.
    pub fn requests(&self) -> Vec<ApprovalRequest> {
        self.0.requests()
    }
}

impl Approver for FixedApprover {
    fn request_approval(&self, request: ApprovalRequest) -> BoxFuture<'_, ReviewDecision> {
        self.0.request_approval(request)
    }
}

/// Answers from a queue, then with a fallback; records every request (tests).
#[derive(Debug)]
pub struct ScriptedApprover {
    answers: Mutex<VecDeque<ReviewDecision>>,
    fallback: ReviewDecision,
    requests: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    /// Answers with `answers` in order, then `fallback`.
    pub fn new(answers: Vec<ReviewDecision>, fallback: ReviewDecision) -> Self {
        Self {
            answers: Mutex::new(answers.into()),
            fallback,
            requests: Mutex::new(Vec::new()),
        }
    }

    /// The requests seen so far.
    pub fn requests(&self) -> Vec<ApprovalRequest> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Approver for ScriptedApprover {
    fn request_approval(&self, request: ApprovalRequest) -> BoxFuture<'_, ReviewDecision> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(request);
        let decision = self
            .answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front()
            .unwrap_or_else(|| self.fallback.clone());
        Box::pin(async move { decision })
    }
}

/// Asks on the controlling terminal (`/dev/tty`): `y` once, `a` for the session, anything
/// else denies. Without a terminal every request is denied.
#[derive(Debug, Default)]
pub struct TerminalApprover {
    prompt_lock: tokio::sync::Mutex<()>,
}

impl TerminalApprover {
    /// A terminal approver.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Approver for TerminalApprover {
    fn request_approval(&self, request: ApprovalRequest) -> BoxFuture<'_, ReviewDecision> {
        Box::pin(async move {
            // One question at a time on the terminal.
            let _guard = self.prompt_lock.lock().await;
            let Ok(tty) = tokio::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")
                .await
            else {
                tracing::warn!("no terminal to ask for approval; denying");
                return ReviewDecision::Denied;
            };
            let (read, mut write) = tokio::io::split(tty);
            let question = format!(
                "Allow: {}? [y]es / [a]lways this session / [N]o: ",
                request.summary()
            );
            if write.write_all(question.as_bytes()).await.is_err() {
                return ReviewDecision::Denied;
            }
            let mut line = String::new();
            if tokio::io::BufReader::new(read)
                .read_line(&mut line)
                .await
                .is_err()
            {
                return ReviewDecision::Denied;
            }
            match line.trim().to_lowercase().as_str() {
                "y" | "yes" => ReviewDecision::Approved,
                "a" | "always" => ReviewDecision::ApprovedForSession,
                _ => ReviewDecision::Denied,
            }
        })
    }
}

/// Runs a hook command per request: the request JSON goes to its stdin, and its stdout must be
/// a `ReviewDecision` (JSON like `"approved"`, or the bare word). Failures and timeouts deny.
#[derive(Debug, Clone)]
pub struct HookApprover {
    program: PathBuf,
    args: Vec<String>,
    timeout: Duration,
}

impl HookApprover {
    /// Runs `program args...` for each request, waiting at most `timeout`.
    pub fn new(program: PathBuf, args: Vec<String>, timeout: Duration) -> Self {
        Self {
            program,
            args,
            timeout,
        }
    }

    async fn ask(&self, request: &ApprovalRequest) -> Result<ReviewDecision, String> {
        let input = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        let mut child = tokio::process::Command::new(&self.program)
            .args(&self.args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start approval hook {}: {e}", self.program.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&input).await.map_err(|e| e.to_string())?;
        }
        let output = tokio::time::timeout(self.timeout, child.wait_with_output())
            .await
            .map_err(|_| "approval hook timed out".to_owned())?
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(format!("approval hook exited with {}", output.status));
        }
        let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        serde_json::from_str(&text)
            .or_else(|_| serde_json::from_value(serde_json::Value::String(text.clone())))
            .map_err(|_| format!("approval hook answered {text:?}, not a decision"))
    }
}

impl Approver for HookApprover {
    fn request_approval(&self, request: ApprovalRequest) -> BoxFuture<'_, ReviewDecision> {
        Box::pin(async move {
            match self.ask(&request).await {
                Ok(decision) => decision,
                Err(error) => {
                    tracing::warn!(%error, "approval hook failed; denying");
                    ReviewDecision::Denied
                }
            }
        })
    }
}
