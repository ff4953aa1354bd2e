//! From a command to an approval requirement: rules per split command, heuristics for the
//! unmatched ones, the strictest decision, and the approval policy (spec §5.3, §5.4).

use std::path::PathBuf;
use std::sync::RwLock;

use super::rules::{Decision, Policy, RuleFileError, render_allow_rule};
use super::safety::{is_dangerous_command, is_known_safe_command};
use super::shell::commands_for_policy;
use crate::approval::AskForApproval;
use crate::sandbox::SandboxPermissions;

/// What must happen before a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecApprovalRequirement {
    /// Run without asking; `bypass_sandbox` only when every command matched an allow rule.
    Skip {
        /// Run the first attempt unsandboxed.
        bypass_sandbox: bool,
        /// A prefix the user could allow for good (offered if a retry prompt comes up).
        proposed_amendment: Option<Vec<String>>,
    },
    /// Ask first.
    NeedsApproval {
        /// Why (shown in the prompt), when a rule caused it.
        reason: Option<String>,
        /// A prefix the user could allow for good.
        proposed_amendment: Option<Vec<String>>,
    },
    /// Never run, never ask.
    Forbidden {
        /// Model-visible reason.
        reason: String,
    },
}

/// The facts a decision depends on besides the command.
#[derive(Debug, Clone, Copy)]
pub struct ExecPolicyContext<'a> {
    /// The session's approval policy.
    pub approval_policy: AskForApproval,
    /// Whether the file system is sandboxed (anything but danger-full-access).
    pub fs_restricted: bool,
    /// The per-call override the model asked for.
    pub sandbox_permissions: SandboxPermissions,
    /// The reusable prefix the model proposed (`prefix_rule`).
    pub prefix_rule: Option<&'a [String]>,
}

/// Why a proposed prefix rule was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmendmentError {
    /// The prefix is empty.
    #[error("prefix rule must not be empty")]
    Empty,
    /// The prefix would allow arbitrary code (`bash`, `python3 -c`, `sudo`, ...).
    #[error("prefix rule {0:?} is too broad: it would allow running arbitrary code")]
    TooBroad(Vec<String>),
}

/// Prefixes too broad to allow: each entry is a program and the flags that make it run code.
const BANNED_PREFIXES: &[(&[&str], &[&str])] = &[
    (&["python", "python3", "py", "pypy", "pypy3"], &["-c", "-"]),
    (&["bash", "sh", "zsh", "dash", "fish"], &["-c", "-lc"]),
    (&["pwsh", "powershell"], &["-Command", "-c"]),
    (&["node", "deno", "bun"], &["-e", "--eval"]),
    (&["perl", "ruby", "lua"], &["-e"]),
    (&["php"], &["-r"]),
    (
        &[
            "git",
            "env",
            "sudo",
            "doas",
            "osascript",
            "xargs",
            "nohup",
            "exec",
            "eval",
        ],
        &[],
    ),
];

/// Refuses prefixes that would let anything run (`["bash"]`, `["python3", "-c"]`, `["git"]`).
pub fn validate_prefix_rule(prefix: &[String]) -> Result<(), AmendmentError> {
    let Some(program) = prefix.first() else {
        return Err(AmendmentError::Empty);
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    for (programs, flags) in BANNED_PREFIXES {
        if !programs.contains(&base) {
            continue;
        }
        let too_broad =
            prefix.len() == 1 || (prefix.len() == 2 && flags.contains(&prefix[1].as_str()));
        if too_broad {
            return Err(AmendmentError::TooBroad(prefix.to_vec()));
        }
    }
    Ok(())
}

/// One command's outcome: its decision and whether a rule (not a heuristic) produced it.
#[derive(Debug, Clone)]
struct SegmentEvaluation {
    command: Vec<String>,
    decision: Decision,
    by_rule: bool,
    justification: Option<String>,
    matched_prefix: Option<Vec<String>>,
}

/// Exec policy: the loaded rules plus an optional file that approved prefixes are appended to.
#[derive(Debug, Default)]
pub struct ExecPolicyManager {
    policy: RwLock<Policy>,
    amendments_file: Option<PathBuf>,
}

impl ExecPolicyManager {
    /// A manager over `policy`; amendments go to `amendments_file` if set.
    pub fn new(policy: Policy, amendments_file: Option<PathBuf>) -> Self {
        Self {
            policy: RwLock::new(policy),
            amendments_file,
        }
    }

    /// Loads `files` (missing ones skipped); amendments are appended to `amendments_file`.
    pub fn load(
        files: &[PathBuf],
        amendments_file: Option<PathBuf>,
    ) -> Result<Self, RuleFileError> {
        let existing: Vec<PathBuf> = files.iter().filter(|p| p.exists()).cloned().collect();
        Ok(Self::new(Policy::load_files(&existing)?, amendments_file))
    }

    /// Adds an allow rule for `prefix` (after refusing too-broad ones) and persists it.
    pub fn add_allow_prefix(&self, prefix: &[String]) -> Result<(), AmendmentError> {
        validate_prefix_rule(prefix)?;
        let added = self
            .policy
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add_prefix_rule(prefix, Decision::Allow);
        if added && let Some(path) = &self.amendments_file {
            use std::io::Write;
            let result = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(render_allow_rule(prefix).as_bytes()));
            if let Err(error) = result {
                tracing::warn!(path = %path.display(), %error, "could not persist exec policy amendment");
            }
        }
        Ok(())
    }

    /// The approval requirement for running `argv`.
    pub fn requirement(
        &self,
        argv: &[String],
        ctx: &ExecPolicyContext<'_>,
    ) -> ExecApprovalRequirement {
        let policy = self
            .policy
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (commands, complex) = commands_for_policy(argv);
        let evaluations: Vec<SegmentEvaluation> = commands
            .into_iter()
            .map(|command| {
                let matches = policy.matches(&command);
                match matches
                    .iter()
                    .max_by_key(|m| (m.decision, m.matched_prefix.len()))
                {
                    Some(strictest) => SegmentEvaluation {
                        decision: strictest.decision,
                        by_rule: true,
                        justification: strictest.justification.clone(),
                        matched_prefix: Some(strictest.matched_prefix.clone()),
                        command,
                    },
                    None => SegmentEvaluation {
                        decision: heuristic_decision(&command, argv, complex, ctx),
                        by_rule: false,
                        justification: None,
                        matched_prefix: None,
                        command,
                    },
                }
            })
            .collect();
        drop(policy);
        decide(argv, &evaluations, complex, ctx)
    }
}

/// Spec §5.3: the decision for a command no rule matched.
fn heuristic_decision(
    command: &[String],
    original: &[String],
    complex: bool,
    ctx: &ExecPolicyContext<'_>,
) -> Decision {
    let policy = ctx.approval_policy;
    if !complex && policy == AskForApproval::Untrusted && is_known_safe_command(command) {
        return Decision::Allow;
    }
    if is_dangerous_command(command) || is_dangerous_command(original) {
        return if policy == AskForApproval::Never {
            Decision::Forbidden
        } else {
            Decision::Prompt
        };
    }
    match policy {
        AskForApproval::Never => Decision::Allow,
        AskForApproval::Untrusted => Decision::Prompt,
        AskForApproval::OnRequest | AskForApproval::Granular(_) => {
            if ctx.fs_restricted && ctx.sandbox_permissions.requests_override() {
                Decision::Prompt
            } else {
                Decision::Allow
            }
        }
    }
}

fn decide(
    argv: &[String],
    evaluations: &[SegmentEvaluation],
    complex: bool,
    ctx: &ExecPolicyContext<'_>,
) -> ExecApprovalRequirement {
    let display = render_command(argv);
    let overall = evaluations
        .iter()
        .map(|e| e.decision)
        .max()
        .unwrap_or(Decision::Allow);
    let amendment = proposed_amendment(evaluations, overall, complex, ctx);
    match overall {
        Decision::Forbidden => {
            let strictest = evaluations
                .iter()
                .filter(|e| e.decision == Decision::Forbidden)
                .max_by_key(|e| (e.by_rule, e.justification.is_some()));
            let reason = match strictest {
                Some(SegmentEvaluation {
                    justification: Some(j),
                    ..
                }) => {
                    format!("`{display}` rejected: {j}")
                }
                Some(SegmentEvaluation {
                    by_rule: true,
                    matched_prefix: Some(prefix),
                    ..
                }) => {
                    format!(
                        "`{display}` rejected: policy forbids commands starting with `{}`",
                        render_command(prefix)
                    )
                }
                _ => format!("`{display}` rejected: blocked by policy"),
            };
            ExecApprovalRequirement::Forbidden { reason }
        }
        Decision::Prompt => {
            let rule_prompt = evaluations
                .iter()
                .find(|e| e.by_rule && e.decision == Decision::Prompt);
            match ctx.approval_policy {
                AskForApproval::Never => {
                    return ExecApprovalRequirement::Forbidden {
                        reason: "approval required by policy, but AskForApproval is set to Never"
                            .to_owned(),
                    };
                }
                AskForApproval::Granular(g) if rule_prompt.is_some() && !g.rules => {
                    return ExecApprovalRequirement::Forbidden {
                        reason: "approval required by policy rule, but AskForApproval::Granular.rules is false"
                            .to_owned(),
                    };
                }
                AskForApproval::Granular(g) if rule_prompt.is_none() && !g.sandbox_approval => {
                    return ExecApprovalRequirement::Forbidden {
                        reason: "approval required by policy, but AskForApproval::Granular.sandbox_approval is false"
                            .to_owned(),
                    };
                }
                _ => {}
            }
            let reason = rule_prompt.map(|e| match &e.justification {
                Some(j) => format!("`{display}` requires approval: {j}"),
                None => format!("`{display}` requires approval by policy"),
            });
            ExecApprovalRequirement::NeedsApproval {
                reason,
                proposed_amendment: amendment,
            }
        }
        Decision::Allow => ExecApprovalRequirement::Skip {
            bypass_sandbox: evaluations
                .iter()
                .all(|e| e.by_rule && e.decision == Decision::Allow),
            proposed_amendment: amendment,
        },
    }
}

fn proposed_amendment(
    evaluations: &[SegmentEvaluation],
    overall: Decision,
    complex: bool,
    ctx: &ExecPolicyContext<'_>,
) -> Option<Vec<String>> {
    if complex || overall == Decision::Forbidden {
        return None;
    }
    let any_rule = evaluations.iter().any(|e| e.by_rule);
    if let Some(prefix) = ctx.prefix_rule {
        let covers_every_prompt = evaluations
            .iter()
            .all(|e| e.decision == Decision::Allow || e.command.starts_with(prefix));
        if validate_prefix_rule(prefix).is_ok() && !any_rule && covers_every_prompt {
            return Some(prefix.to_vec());
        }
    }
    match overall {
        Decision::Prompt
            if !evaluations
                .iter()
                .any(|e| e.by_rule && e.decision == Decision::Prompt) =>
        {
            evaluations
                .iter()
                .find(|e| !e.by_rule && e.decision == Decision::Prompt)
                .map(|e| e.command.clone())
        }
        Decision::Allow if !any_rule => evaluations.first().map(|e| e.command.clone()),
        _ => None,
    }
}

/// The command as a user would type it (the script itself for `bash -lc`).
pub fn render_command(argv: &[String]) -> String {
    if let Some(script) = super::shell::shell_script(argv) {
        return script.to_owned();
    }
    argv.iter()
        .map(|a| quote_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
