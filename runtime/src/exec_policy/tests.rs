use std::path::Path;

use super::*;
use crate::approval::{AskForApproval, GranularApproval};
use crate::sandbox::SandboxPermissions;

fn argv(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn bash(script: &str) -> Vec<String> {
    argv(&["bash", "-lc", script])
}

fn ctx(policy: AskForApproval) -> ExecPolicyContext<'static> {
    ExecPolicyContext {
        approval_policy: policy,
        fs_restricted: true,
        sandbox_permissions: SandboxPermissions::UseDefault,
        prefix_rule: None,
    }
}

const RULES: &str = r#"
[[rule]]
pattern = ["git", ["push", "fetch"]]
decision = "prompt"
justification = "talks to the remote"
match = ["git push origin main", ["git", "fetch"]]
not_match = ["git status"]

[[rule]]
pattern = ["git", "status"]

[[rule]]
pattern = [["cargo", "make"], "build"]

[[rule]]
pattern = ["git", "push", "--force"]
decision = "forbidden"

[[rule]]
pattern = ["shred"]
decision = "forbidden"
"#;

fn manager() -> ExecPolicyManager {
    ExecPolicyManager::new(Policy::parse(Path::new("test.toml"), RULES).unwrap(), None)
}

#[test]
fn splits_plain_scripts_into_commands() {
    assert_eq!(
        parse_plain_commands("ls -la && grep -g\"*.py\" foo | wc -l; echo 'a b'").unwrap(),
        vec![
            argv(&["ls", "-la"]),
            argv(&["grep", "-g*.py", "foo"]),
            argv(&["wc", "-l"]),
            argv(&["echo", "a b"])
        ]
    );
    assert_eq!(
        parse_plain_commands("a\nb || c").unwrap(),
        vec![argv(&["a"]), argv(&["b"]), argv(&["c"])]
    );
}

#[test]
fn rejects_everything_outside_the_plain_subset() {
    for script in [
        "(ls)",
        "ls > out.txt",
        "cat < in",
        "sleep 1 &",
        "echo $HOME",
        "echo $(whoami)",
        "echo `id`",
        "echo \"$HOME\"",
        "FOO=1 ls",
        "ls &&",
        "&& ls",
        "ls ;; pwd",
        "ls | | wc",
        "if true; then ls; fi",
        "ls # comment",
        "echo {a,b}",
        "echo a\\ b",
    ] {
        assert_eq!(parse_plain_commands(script), None, "{script}");
    }
}

#[test]
fn opaque_scripts_are_one_command_and_heredocs_are_complex() {
    let (commands, complex) = commands_for_policy(&bash("echo $(rm -rf /)"));
    assert_eq!(commands, vec![bash("echo $(rm -rf /)")]);
    assert!(!complex);
    let (commands, complex) = commands_for_policy(&bash("python3 - <<'EOF'\nprint(1)\nEOF"));
    assert_eq!(commands, vec![argv(&["python3", "-"])]);
    assert!(complex);
    let (commands, _) = commands_for_policy(&bash("  "));
    assert_eq!(commands, vec![bash("  ")]);
}

#[test]
fn known_safe_commands() {
    for safe in [
        argv(&["ls", "-la"]),
        argv(&["cat", "a.txt"]),
        argv(&["rg", "foo"]),
        argv(&["sed", "-n", "1,5p", "f"]),
        argv(&["find", ".", "-name", "*.rs"]),
        bash("ls && cat a | wc -l"),
    ] {
        assert!(is_known_safe_command(&safe), "{safe:?}");
    }
    for unsafe_cmd in [
        argv(&["git", "status"]),
        argv(&["cargo", "check"]),
        argv(&["find", ".", "-delete"]),
        argv(&["rg", "--pre", "x", "foo"]),
        argv(&["base64", "-o", "out"]),
        argv(&["sed", "-i", "s/a/b/", "f"]),
        bash("ls && rm a"),
        bash("ls > x"),
    ] {
        assert!(!is_known_safe_command(&unsafe_cmd), "{unsafe_cmd:?}");
    }
}

#[test]
fn forced_rm_is_dangerous_anywhere_literal() {
    for dangerous in [
        argv(&["rm", "-rf", "/"]),
        argv(&["rm", "-f", "x"]),
        argv(&["rm", "--force", "x"]),
        argv(&["sudo", "rm", "-fr", "x"]),
        bash("ls && rm -rf build"),
        bash("echo $(rm -rf /tmp/x)"),
        bash("if true; then rm -f a; fi"),
    ] {
        assert!(is_dangerous_command(&dangerous), "{dangerous:?}");
    }
    for fine in [
        argv(&["rm", "x"]),
        argv(&["rm", "--", "-f"]),
        bash("echo 'rm -rf /'"),
        bash("$cmd -rf /"),
    ] {
        assert!(!is_dangerous_command(&fine), "{fine:?}");
    }
}

#[test]
fn strictest_rule_wins_and_reasons_are_exact() {
    let m = manager();
    let c = ctx(AskForApproval::OnRequest);
    assert_eq!(
        m.requirement(&argv(&["git", "push", "--force"]), &c),
        ExecApprovalRequirement::Forbidden {
            reason: "`git push --force` rejected: policy forbids commands starting with `git push --force`".into()
        }
    );
    assert_eq!(
        m.requirement(&argv(&["git", "push", "origin"]), &c),
        ExecApprovalRequirement::NeedsApproval {
            reason: Some("`git push origin` requires approval: talks to the remote".into()),
            proposed_amendment: None
        }
    );
    assert_eq!(
        m.requirement(&bash("git status && shred x"), &c),
        ExecApprovalRequirement::Forbidden {
            reason:
                "`git status && shred x` rejected: policy forbids commands starting with `shred`"
                    .into()
        }
    );
}

#[test]
fn bypass_only_when_every_segment_is_explicitly_allowed() {
    let m = manager();
    let c = ctx(AskForApproval::OnRequest);
    assert!(matches!(
        m.requirement(&bash("git status && cargo build"), &c),
        ExecApprovalRequirement::Skip {
            bypass_sandbox: true,
            ..
        }
    ));
    assert!(matches!(
        m.requirement(&bash("git status && ls"), &c),
        ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            ..
        }
    ));
    assert!(matches!(
        m.requirement(&argv(&["make", "build", "-j4"]), &c),
        ExecApprovalRequirement::Skip {
            bypass_sandbox: true,
            ..
        }
    ));
}

#[test]
fn heuristics_per_approval_policy() {
    let m = ExecPolicyManager::default();
    let cargo = argv(&["cargo", "build"]);
    let ls = argv(&["ls"]);
    let rm = argv(&["rm", "-rf", "x"]);
    // untrusted: known-safe runs, everything else asks (with an amendment).
    assert!(matches!(
        m.requirement(&ls, &ctx(AskForApproval::Untrusted)),
        ExecApprovalRequirement::Skip { .. }
    ));
    assert_eq!(
        m.requirement(&cargo, &ctx(AskForApproval::Untrusted)),
        ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_amendment: Some(cargo.clone())
        }
    );
    // on-request: sandboxed commands run; escalation requests ask.
    assert!(matches!(
        m.requirement(&cargo, &ctx(AskForApproval::OnRequest)),
        ExecApprovalRequirement::Skip {
            bypass_sandbox: false,
            ..
        }
    ));
    let mut escalated = ctx(AskForApproval::OnRequest);
    escalated.sandbox_permissions = SandboxPermissions::RequireEscalated;
    assert!(matches!(
        m.requirement(&cargo, &escalated),
        ExecApprovalRequirement::NeedsApproval { .. }
    ));
    // dangerous commands ask, or are forbidden under never.
    assert!(matches!(
        m.requirement(&rm, &ctx(AskForApproval::OnRequest)),
        ExecApprovalRequirement::NeedsApproval { .. }
    ));
    assert_eq!(
        m.requirement(&rm, &ctx(AskForApproval::Never)),
        ExecApprovalRequirement::Forbidden {
            reason: "`rm -rf x` rejected: blocked by policy".into()
        }
    );
    assert!(matches!(
        m.requirement(&cargo, &ctx(AskForApproval::Never)),
        ExecApprovalRequirement::Skip { .. }
    ));
    // granular with sandbox prompts off auto-rejects them.
    let granular = AskForApproval::Granular(GranularApproval {
        sandbox_approval: false,
        ..Default::default()
    });
    assert_eq!(
        m.requirement(&rm, &ctx(granular)),
        ExecApprovalRequirement::Forbidden {
            reason: "approval required by policy, but AskForApproval::Granular.sandbox_approval is false".into()
        }
    );
}

#[test]
fn prompt_rule_under_never_and_granular_rules_off() {
    let m = manager();
    let push = argv(&["git", "push"]);
    assert!(matches!(
        m.requirement(&push, &ctx(AskForApproval::Never)),
        ExecApprovalRequirement::Forbidden { .. }
    ));
    let granular = AskForApproval::Granular(GranularApproval {
        rules: false,
        ..Default::default()
    });
    assert_eq!(
        m.requirement(&push, &ctx(granular)),
        ExecApprovalRequirement::Forbidden {
            reason: "approval required by policy rule, but AskForApproval::Granular.rules is false"
                .into()
        }
    );
}

#[test]
fn model_prefix_rule_becomes_amendment_unless_too_broad() {
    let m = ExecPolicyManager::default();
    let prefix = argv(&["cargo", "test"]);
    let mut c = ctx(AskForApproval::Untrusted);
    c.prefix_rule = Some(&prefix);
    assert_eq!(
        m.requirement(&argv(&["cargo", "test", "-p", "x"]), &c),
        ExecApprovalRequirement::NeedsApproval {
            reason: None,
            proposed_amendment: Some(prefix.clone())
        }
    );
    for broad in [
        argv(&["bash"]),
        argv(&["python3"]),
        argv(&["python3", "-c"]),
        argv(&["/bin/sh", "-lc"]),
        argv(&["git"]),
        argv(&["sudo"]),
    ] {
        assert!(
            matches!(
                validate_prefix_rule(&broad),
                Err(AmendmentError::TooBroad(_))
            ),
            "{broad:?}"
        );
    }
    assert_eq!(validate_prefix_rule(&[]), Err(AmendmentError::Empty));
    assert!(validate_prefix_rule(&argv(&["git", "pull"])).is_ok());
    assert!(m.add_allow_prefix(&argv(&["python3"])).is_err());
}

#[test]
fn amendments_apply_and_persist() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    let m = ExecPolicyManager::load(std::slice::from_ref(&file), Some(file.clone())).unwrap();
    let c = ctx(AskForApproval::Untrusted);
    let cmd = argv(&["cargo", "build", "--release"]);
    assert!(matches!(
        m.requirement(&cmd, &c),
        ExecApprovalRequirement::NeedsApproval { .. }
    ));
    m.add_allow_prefix(&argv(&["cargo", "build"])).unwrap();
    m.add_allow_prefix(&argv(&["cargo", "build"])).unwrap();
    assert!(matches!(
        m.requirement(&cmd, &c),
        ExecApprovalRequirement::Skip {
            bypass_sandbox: true,
            ..
        }
    ));
    let reloaded = ExecPolicyManager::load(std::slice::from_ref(&file), None).unwrap();
    assert!(matches!(
        reloaded.requirement(&cmd, &c),
        ExecApprovalRequirement::Skip { .. }
    ));
    assert_eq!(
        std::fs::read_to_string(&file)
            .unwrap()
            .matches("[[rule]]")
            .count(),
        1
    );
}

#[test]
fn rule_file_errors_are_reported() {
    let p = Path::new("r.toml");
    let err = Policy::parse(p, "[[rule]]\npattern = []\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "r.toml: rule 1: pattern must be a non-empty list of tokens"
    );
    let err = Policy::parse(p, "[[rule]]\npattern = [\"a\"]\njustification = \" \"\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "r.toml: rule 1: justification cannot be empty"
    );
    let err = Policy::parse(
        p,
        "[[rule]]\npattern = [\"git\", \"push\"]\nmatch = [\"git pull\"]\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("match example"), "{err}");
    assert!(matches!(
        Policy::parse(p, "[[rule]]\npatern = [\"a\"]\n"),
        Err(RuleFileError::Syntax { .. })
    ));
}
