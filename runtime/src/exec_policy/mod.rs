//! Exec policy: prefix rules from a TOML rule file (allow / prompt / forbidden, strictest
//! wins), splitting `bash -lc` scripts into plain commands, known-safe and dangerous command
//! heuristics, and the approval requirement of a command under an approval policy.

mod requirement;
mod rules;
mod safety;
mod shell;

pub use requirement::{
    AmendmentError, ExecApprovalRequirement, ExecPolicyContext, ExecPolicyManager, render_command,
    validate_prefix_rule,
};
pub use rules::{Decision, Policy, PrefixRule, RuleFileError, RuleMatch};
pub use safety::{is_dangerous_command, is_known_safe_command};
pub use shell::{commands_for_policy, parse_plain_commands};

#[cfg(test)]
mod tests;
