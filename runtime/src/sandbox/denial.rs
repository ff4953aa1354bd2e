//! Guessing whether a failed command was stopped by the sandbox (spec §7.5), which decides
//! whether an escalated retry is offered.

use super::bwrap::SandboxType;

const DENIAL_KEYWORDS: [&str; 7] = [
    "operation not permitted",
    "permission denied",
    "read-only file system",
    "seccomp",
    "sandbox",
    "landlock",
    "failed to write file",
];

/// Whether a command that ran in `sandbox` and ended with `exit_code` (or `signal`) was likely
/// denied by the sandbox, judged by its output.
pub fn is_likely_sandbox_denied(
    sandbox: SandboxType,
    exit_code: Option<i32>,
    signal: Option<i32>,
    output: &str,
) -> bool {
    if sandbox == SandboxType::None || exit_code == Some(0) {
        return false;
    }
    let lower = output.to_lowercase();
    if DENIAL_KEYWORDS.iter().any(|k| lower.contains(k)) {
        return true;
    }
    if matches!(exit_code, Some(2 | 126 | 127)) {
        return false;
    }
    signal == Some(libc::SIGSYS)
}
