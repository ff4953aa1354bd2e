//! Prefix rules and the rule file.
//!
//! The rule file is TOML, one `[[rule]]` table per rule:
//!
//! ```toml
//! [[rule]]
//! pattern = ["git", ["push", "fetch"]]   # tokens in order; a list gives alternatives
//! decision = "prompt"                     # "allow" (default) | "prompt" | "forbidden"
//! justification = "talks to the remote"   # optional, never empty
//! match = ["git push origin main"]        # optional examples checked at load time
//! not_match = [["git", "status"]]         # (shell-quoted strings or token lists)
//! ```
//!
//! A list in the first position expands into one rule per program name. Every rule whose
//! prefix matches a command is collected; the strictest decision wins.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a rule says about matching commands; ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run without asking.
    Allow,
    /// Ask the user first.
    Prompt,
    /// Never run, never ask.
    Forbidden,
}

/// One prefix rule (after first-token expansion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixRule {
    /// The program name (`argv[0]`).
    pub program: String,
    /// Alternatives for each following token.
    pub rest: Vec<Vec<String>>,
    /// The decision.
    pub decision: Decision,
    /// Why, shown to the user and the model.
    pub justification: Option<String>,
}

impl PrefixRule {
    /// The matched prefix if `argv` starts with this rule's pattern.
    fn matches(&self, argv: &[String]) -> Option<Vec<String>> {
        let (program, args) = argv.split_first()?;
        if *program != self.program || args.len() < self.rest.len() {
            return None;
        }
        let all = self
            .rest
            .iter()
            .zip(args)
            .all(|(alternatives, arg)| alternatives.contains(arg));
        all.then(|| argv[..=self.rest.len()].to_vec())
    }
}

/// A rule that matched a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMatch {
    /// The tokens of the command the rule covered.
    pub matched_prefix: Vec<String>,
    /// The rule's decision.
    pub decision: Decision,
    /// The rule's justification.
    pub justification: Option<String>,
}

/// Why a rule file could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleFileError {
    /// The file could not be read.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The TOML is malformed or has unknown fields.
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A rule is invalid.
    #[error("{path}: rule {index}: {message}")]
    InvalidRule {
        /// The file.
        path: PathBuf,
        /// 1-based rule number.
        index: usize,
        /// What is wrong.
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRuleFile {
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawToken {
    One(String),
    Alternatives(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawExample {
    Shell(String),
    Tokens(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    pattern: Vec<RawToken>,
    #[serde(default)]
    decision: Option<Decision>,
    #[serde(default)]
    justification: Option<String>,
    #[serde(default, rename = "match")]
    matches: Vec<RawExample>,
    #[serde(default)]
    not_match: Vec<RawExample>,
}

/// A set of prefix rules, indexed by program name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    rules: BTreeMap<String, Vec<PrefixRule>>,
}

impl Policy {
    /// An empty policy (every command goes to the heuristics).
    pub fn empty() -> Self {
        Self::default()
    }

    /// Parses rule-file text; `path` is only used in error messages.
    pub fn parse(path: &Path, text: &str) -> Result<Self, RuleFileError> {
        let mut policy = Self::default();
        policy.merge_text(path, text)?;
        Ok(policy)
    }

    /// Loads several rule files in order; rules from all of them combine.
    pub fn load_files(paths: &[PathBuf]) -> Result<Self, RuleFileError> {
        let mut policy = Self::default();
        for path in paths {
            let text = std::fs::read_to_string(path).map_err(|e| RuleFileError::Read {
                path: path.clone(),
                message: e.to_string(),
            })?;
            policy.merge_text(path, &text)?;
        }
        Ok(policy)
    }

    fn merge_text(&mut self, path: &Path, text: &str) -> Result<(), RuleFileError> {
        let raw: RawRuleFile = toml::from_str(text).map_err(|e| RuleFileError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        for (i, rule) in raw.rule.into_iter().enumerate() {
            let invalid = |message: String| RuleFileError::InvalidRule {
                path: path.to_path_buf(),
                index: i + 1,
                message,
            };
            let mut tokens: Vec<Vec<String>> = rule
                .pattern
                .into_iter()
                .map(|t| match t {
                    RawToken::One(s) => vec![s],
                    RawToken::Alternatives(v) => v,
                })
                .collect();
            if tokens.is_empty() || tokens.iter().any(Vec::is_empty) {
                return Err(invalid(
                    "pattern must be a non-empty list of tokens".to_owned(),
                ));
            }
            if rule
                .justification
                .as_deref()
                .is_some_and(|j| j.trim().is_empty())
            {
                return Err(invalid("justification cannot be empty".to_owned()));
            }
            let decision = rule.decision.unwrap_or(Decision::Allow);
            let programs = tokens.remove(0);
            let expanded: Vec<PrefixRule> = programs
                .into_iter()
                .map(|program| PrefixRule {
                    program,
                    rest: tokens.clone(),
                    decision,
                    justification: rule.justification.clone(),
                })
                .collect();
            let check = |example: &RawExample, want: bool| -> Result<(), RuleFileError> {
                let argv = example_argv(example)
                    .ok_or_else(|| invalid("example is not a plain shell command".to_owned()))?;
                if expanded.iter().any(|r| r.matches(&argv).is_some()) != want {
                    let kind = if want { "match" } else { "not_match" };
                    return Err(invalid(format!(
                        "{kind} example {argv:?} is not honoured by the pattern"
                    )));
                }
                Ok(())
            };
            for example in &rule.matches {
                check(example, true)?;
            }
            for example in &rule.not_match {
                check(example, false)?;
            }
            for rule in expanded {
                self.rules
                    .entry(rule.program.clone())
                    .or_default()
                    .push(rule);
            }
        }
        Ok(())
    }

    /// Adds a rule for an exact token prefix; `false` if the same rule already exists.
    pub fn add_prefix_rule(&mut self, prefix: &[String], decision: Decision) -> bool {
        let Some((program, rest)) = prefix.split_first() else {
            return false;
        };
        let rule = PrefixRule {
            program: program.clone(),
            rest: rest.iter().map(|t| vec![t.clone()]).collect(),
            decision,
            justification: None,
        };
        let rules = self.rules.entry(program.clone()).or_default();
        if rules.contains(&rule) {
            return false;
        }
        rules.push(rule);
        true
    }

    /// Every rule matching `argv`.
    pub fn matches(&self, argv: &[String]) -> Vec<RuleMatch> {
        let Some(program) = argv.first() else {
            return Vec::new();
        };
        self.rules
            .get(program)
            .into_iter()
            .flatten()
            .filter_map(|rule| {
                rule.matches(argv).map(|matched_prefix| RuleMatch {
                    matched_prefix,
                    decision: rule.decision,
                    justification: rule.justification.clone(),
                })
            })
            .collect()
    }
}

/// Renders an allow rule for appending to a rule file.
pub(crate) fn render_allow_rule(prefix: &[String]) -> String {
    let tokens: Vec<String> = prefix
        .iter()
        .map(|t| serde_json::Value::String(t.clone()).to_string())
        .collect();
    format!(
        "\n[[rule]]\npattern = [{}]\ndecision = \"allow\"\n",
        tokens.join(", ")
    )
}

fn example_argv(example: &RawExample) -> Option<Vec<String>> {
    match example {
        RawExample::Tokens(tokens) => Some(tokens.clone()),
        RawExample::Shell(text) => {
            let commands = super::shell::parse_plain_commands(text)?;
            <[Vec<String>; 1]>::try_from(commands)
                .ok()
                .map(|[argv]| argv)
        }
    }
}
