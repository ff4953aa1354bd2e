//! External-command hooks: JSON on stdin, JSON on stdout (contract in the module docs).

use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::{HookError, HookInput, HookResponse};

/// Default limit for one hook command run.
const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// Exit status that blocks with stderr as the reason.
const BLOCK_EXIT_CODE: i32 = 2;

/// Hook commands by event, as read from configuration (TOML or JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HooksConfig {
    /// Commands run before a call.
    #[serde(default, rename = "PreToolUse", alias = "pre_tool_use")]
    pub pre_tool_use: Vec<CommandHookConfig>,
    /// Commands run after a successful call.
    #[serde(default, rename = "PostToolUse", alias = "post_tool_use")]
    pub post_tool_use: Vec<CommandHookConfig>,
}

/// One configured hook command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandHookConfig {
    /// Hook tool names this runs for, `|`-separated; absent, empty or `*` matches all.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The argv (no shell; use `["sh", "-c", "…"]` for one).
    pub command: Vec<String>,
    /// Time limit in milliseconds (default 60 000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// A hook that runs an external command.
#[derive(Debug, Clone)]
pub struct CommandHook {
    argv: Vec<String>,
    timeout: Duration,
}

impl CommandHook {
    /// A hook running `argv` with the default timeout.
    pub fn new(argv: Vec<String>) -> Self {
        Self {
            argv,
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
        }
    }

    /// The same hook with another time limit.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs the command once for `input`.
    pub async fn run(&self, input: &HookInput) -> Result<HookResponse, HookError> {
        let spawn_error = |source| HookError::Spawn {
            command: self.argv.clone(),
            source,
        };
        let Some((program, args)) = self.argv.split_first() else {
            return Err(spawn_error(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "empty hook command",
            )));
        };
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_error)?;
        let request = serde_json::to_vec(input).expect("a HookInput always serializes");
        let stdin = child.stdin.take();
        let write = async move {
            if let Some(mut stdin) = stdin {
                // A hook that ignores its stdin closes the pipe early; that is not an error.
                let _ = stdin.write_all(&request).await;
            }
        };
        let run = async { tokio::join!(write, child.wait_with_output()).1 };
        let output = match tokio::time::timeout(self.timeout, run).await {
            Ok(output) => output.map_err(spawn_error)?,
            Err(_) => {
                return Err(HookError::Timeout {
                    command: self.argv.clone(),
                    timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                });
            }
        };
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        match output.status.code() {
            Some(0) => {
                let stdout = String::from_utf8_lossy(&output.stdout);
                if stdout.trim().is_empty() {
                    return Ok(HookResponse::default());
                }
                serde_json::from_str(stdout.trim()).map_err(|error| HookError::InvalidAnswer {
                    command: self.argv.clone(),
                    error: error.to_string(),
                })
            }
            Some(BLOCK_EXIT_CODE) => Ok(HookResponse::block(stderr)),
            _ => Err(HookError::Failed {
                command: self.argv.clone(),
                status: output.status.to_string(),
                stderr,
            }),
        }
    }
}

impl From<&CommandHookConfig> for CommandHook {
    fn from(config: &CommandHookConfig) -> Self {
        let hook = Self::new(config.command.clone());
        match config.timeout_ms {
            Some(ms) => hook.with_timeout(Duration::from_millis(ms)),
            None => hook,
        }
    }
}
