//! Arguments of `exec_command` / `write_stdin`, with defaults and clamps (spec §4.1).

use serde::Deserialize;

use crate::sandbox::SandboxPermissions;

/// Shortest wait for output.
pub const MIN_YIELD_TIME_MS: u64 = 250;
/// Shortest wait of an empty `write_stdin` poll.
pub const MIN_EMPTY_YIELD_TIME_MS: u64 = 5_000;
/// Longest wait of exec_command and non-empty writes.
pub const MAX_YIELD_TIME_MS: u64 = 30_000;
/// Longest wait of an empty poll.
pub const MAX_BACKGROUND_TIMEOUT_MS: u64 = 300_000;
/// Default output budget in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 10_000;
const DEFAULT_EXEC_YIELD_TIME_MS: u64 = 10_000;
const DEFAULT_WRITE_YIELD_TIME_MS: u64 = 250;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExecArgs {
    cmd: String,
    #[serde(default)]
    workdir: Option<String>,
    #[serde(default)]
    tty: Option<bool>,
    #[serde(default)]
    yield_time_ms: Option<serde_json::Number>,
    #[serde(default)]
    max_output_tokens: Option<serde_json::Number>,
    #[serde(default)]
    shell: Option<String>,
    #[serde(default)]
    login: Option<bool>,
    #[serde(default)]
    sandbox_permissions: Option<SandboxPermissions>,
    #[serde(default)]
    justification: Option<String>,
    #[serde(default)]
    prefix_rule: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWriteArgs {
    session_id: serde_json::Number,
    #[serde(default)]
    chars: Option<String>,
    #[serde(default)]
    yield_time_ms: Option<serde_json::Number>,
    #[serde(default)]
    max_output_tokens: Option<serde_json::Number>,
}

/// Validated `exec_command` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExecArgs {
    pub(crate) cmd: String,
    pub(crate) workdir: Option<String>,
    pub(crate) tty: bool,
    pub(crate) yield_time_ms: u64,
    /// `None` when the call omitted it (code mode then gets the raw output).
    pub(crate) max_output_tokens: Option<usize>,
    pub(crate) shell: Option<String>,
    pub(crate) login: bool,
    pub(crate) sandbox_permissions: SandboxPermissions,
    pub(crate) justification: Option<String>,
    pub(crate) prefix_rule: Option<Vec<String>>,
}

/// Validated `write_stdin` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WriteArgs {
    pub(crate) session_id: i32,
    pub(crate) chars: String,
    pub(crate) yield_time_ms: u64,
    pub(crate) max_output_tokens: Option<usize>,
}

/// A non-negative integer (integral floats like `1000.0` accepted).
fn integer(field: &str, value: &serde_json::Number) -> Result<u64, String> {
    if let Some(n) = value.as_u64() {
        return Ok(n);
    }
    match value.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Ok(f as u64),
        _ => Err(format!(
            "{field} must be a non-negative integer, got {value}"
        )),
    }
}

fn parse_error(e: impl std::fmt::Display) -> String {
    format!("failed to parse function arguments: {e}")
}

/// Parses and clamps `exec_command` arguments.
pub(crate) fn parse_exec_args(arguments: &str) -> Result<ExecArgs, String> {
    let raw: RawExecArgs = serde_json::from_str(arguments).map_err(parse_error)?;
    let yield_time_ms = match &raw.yield_time_ms {
        Some(n) => integer("yield_time_ms", n).map_err(parse_error)?,
        None => DEFAULT_EXEC_YIELD_TIME_MS,
    }
    .clamp(MIN_YIELD_TIME_MS, MAX_YIELD_TIME_MS);
    let max_output_tokens = raw
        .max_output_tokens
        .as_ref()
        .map(|n| integer("max_output_tokens", n).map(|v| v as usize))
        .transpose()
        .map_err(parse_error)?;
    Ok(ExecArgs {
        cmd: raw.cmd,
        workdir: raw.workdir.filter(|w| !w.is_empty()),
        tty: raw.tty.unwrap_or(false),
        yield_time_ms,
        max_output_tokens,
        shell: raw.shell.filter(|s| !s.is_empty()),
        login: raw.login.unwrap_or(true),
        sandbox_permissions: raw.sandbox_permissions.unwrap_or_default(),
        justification: raw.justification,
        prefix_rule: raw.prefix_rule,
    })
}

/// Parses and clamps `write_stdin` arguments (empty polls wait at least 5 s).
pub(crate) fn parse_write_args(arguments: &str) -> Result<WriteArgs, String> {
    let raw: RawWriteArgs = serde_json::from_str(arguments).map_err(parse_error)?;
    let session_id = integer("session_id", &raw.session_id)
        .ok()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| {
            parse_error(format!(
                "session_id must be a 32-bit integer, got {}",
                raw.session_id
            ))
        })?;
    let chars = raw.chars.unwrap_or_default();
    let requested = match &raw.yield_time_ms {
        Some(n) => integer("yield_time_ms", n).map_err(parse_error)?,
        None => DEFAULT_WRITE_YIELD_TIME_MS,
    };
    let yield_time_ms = if chars.is_empty() {
        requested.clamp(MIN_EMPTY_YIELD_TIME_MS, MAX_BACKGROUND_TIMEOUT_MS)
    } else {
        requested.clamp(MIN_YIELD_TIME_MS, MAX_YIELD_TIME_MS)
    };
    let max_output_tokens = raw
        .max_output_tokens
        .as_ref()
        .map(|n| integer("max_output_tokens", n).map(|v| v as usize))
        .transpose()
        .map_err(parse_error)?;
    Ok(WriteArgs {
        session_id,
        chars,
        yield_time_ms,
        max_output_tokens,
    })
}
