//! The set of hooks of a session and how their answers combine.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{
    CommandHook, HookDecision, HookError, HookEvent, HookInput, HookResponse, HooksConfig,
    PostToolUseOutcome, PreToolUseOutcome,
};
use crate::tool::messages;

/// One hook implementation (a command, a closure, or anything an embedder writes).
pub trait ToolHook: Send + Sync {
    /// Answers one hook request.
    fn run<'a>(&'a self, input: &'a HookInput) -> BoxFuture<'a, Result<HookResponse, HookError>>;
}

impl ToolHook for CommandHook {
    fn run<'a>(&'a self, input: &'a HookInput) -> BoxFuture<'a, Result<HookResponse, HookError>> {
        Box::pin(CommandHook::run(self, input))
    }
}

/// A hook backed by a synchronous Rust closure.
pub struct ClosureHook<F>(pub F);

impl<F> ToolHook for ClosureHook<F>
where
    F: Fn(&HookInput) -> HookResponse + Send + Sync,
{
    fn run<'a>(&'a self, input: &'a HookInput) -> BoxFuture<'a, Result<HookResponse, HookError>> {
        let answer = (self.0)(input);
        Box::pin(async move { Ok(answer) })
    }
}

/// Which hook tool names a hook runs for: all, or an exact `|`-separated list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookMatcher {
    names: Option<Vec<String>>,
}

impl HookMatcher {
    /// Parses `*`, empty (all) or `a|b|c`.
    pub fn parse(raw: &str) -> Self {
        let raw = raw.trim();
        if raw.is_empty() || raw == "*" {
            return Self::default();
        }
        Self {
            names: Some(raw.split('|').map(|name| name.trim().to_owned()).collect()),
        }
    }

    /// Whether `tool_name` is matched.
    pub fn matches(&self, tool_name: &str) -> bool {
        self.names
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == tool_name))
    }
}

#[derive(Clone)]
struct HookEntry {
    event: HookEvent,
    matcher: HookMatcher,
    hook: Arc<dyn ToolHook>,
}

/// All hooks of a session, in registration order.
#[derive(Clone, Default)]
pub struct ToolHooks {
    entries: Vec<HookEntry>,
}

impl std::fmt::Debug for ToolHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolHooks")
            .field("hooks", &self.entries.len())
            .finish()
    }
}

impl ToolHooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Command hooks from configuration.
    pub fn from_config(config: &HooksConfig) -> Self {
        let mut hooks = Self::new();
        let events = [
            (HookEvent::PreToolUse, &config.pre_tool_use),
            (HookEvent::PostToolUse, &config.post_tool_use),
        ];
        for (event, commands) in events {
            for command in commands {
                let matcher = HookMatcher::parse(command.matcher.as_deref().unwrap_or(""));
                hooks.add(event, matcher, Arc::new(CommandHook::from(command)));
            }
        }
        hooks
    }

    /// Adds a hook for `event` and the tools `matcher` selects.
    pub fn add(&mut self, event: HookEvent, matcher: HookMatcher, hook: Arc<dyn ToolHook>) {
        self.entries.push(HookEntry {
            event,
            matcher,
            hook,
        });
    }

    /// Adds a PreToolUse closure for the tools `matcher` selects.
    pub fn with_pre_tool_use<F>(mut self, matcher: &str, f: F) -> Self
    where
        F: Fn(&HookInput) -> HookResponse + Send + Sync + 'static,
    {
        self.add(
            HookEvent::PreToolUse,
            HookMatcher::parse(matcher),
            Arc::new(ClosureHook(f)),
        );
        self
    }

    /// Adds a PostToolUse closure for the tools `matcher` selects.
    pub fn with_post_tool_use<F>(mut self, matcher: &str, f: F) -> Self
    where
        F: Fn(&HookInput) -> HookResponse + Send + Sync + 'static,
    {
        self.add(
            HookEvent::PostToolUse,
            HookMatcher::parse(matcher),
            Arc::new(ClosureHook(f)),
        );
        self
    }

    /// Adds a command hook for `event`.
    pub fn with_command(mut self, event: HookEvent, matcher: &str, hook: CommandHook) -> Self {
        self.add(event, HookMatcher::parse(matcher), Arc::new(hook));
        self
    }

    /// Whether any hook is registered for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.entries.iter().any(|entry| entry.event == event)
    }

    async fn answers_for<'a>(
        &'a self,
        event: HookEvent,
        input: &'a HookInput,
    ) -> Vec<HookResponse> {
        let mut answers = Vec::new();
        for entry in self
            .entries
            .iter()
            .filter(|e| e.event == event && e.matcher.matches(&input.tool_name))
        {
            match entry.hook.run(input).await {
                Ok(answer) => {
                    let blocks = answer.decision == Some(HookDecision::Block);
                    answers.push(answer);
                    if blocks {
                        break;
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, tool = %input.tool_name, "ignoring failed hook")
                }
            }
        }
        answers
    }

    /// Runs the PreToolUse hooks in order. Each sees the input as rewritten by the ones before
    /// it; the first block with a non-empty reason stops the call.
    pub async fn run_pre_tool_use(&self, input: &HookInput) -> PreToolUseOutcome {
        let mut current = input.clone();
        let mut updated_input = None;
        let mut additional_contexts = Vec::new();
        for entry in self
            .entries
            .iter()
            .filter(|e| e.event == HookEvent::PreToolUse)
        {
            if !entry.matcher.matches(&current.tool_name) {
                continue;
            }
            let answer = match entry.hook.run(&current).await {
                Ok(answer) => answer,
                Err(error) => {
                    tracing::warn!(%error, tool = %current.tool_name, "ignoring failed PreToolUse hook");
                    continue;
                }
            };
            additional_contexts.extend(answer.additional_context.filter(|c| !c.is_empty()));
            if answer.decision == Some(HookDecision::Block) {
                match answer.reason.filter(|reason| !reason.trim().is_empty()) {
                    Some(reason) => {
                        return PreToolUseOutcome::Blocked {
                            reason,
                            additional_contexts,
                        };
                    }
                    // A block without a reason is treated as continue (spec runtime §2.3).
                    None => continue,
                }
            }
            if let Some(input) = answer.updated_input {
                current.tool_input = input.clone();
                updated_input = Some(input);
            }
        }
        PreToolUseOutcome::Continue {
            updated_input,
            additional_contexts,
        }
    }

    /// Runs the PostToolUse hooks in order; the first block stops the chain.
    pub async fn run_post_tool_use(&self, input: &HookInput) -> PostToolUseOutcome {
        let mut outcome = PostToolUseOutcome::default();
        for answer in self.answers_for(HookEvent::PostToolUse, input).await {
            outcome
                .additional_contexts
                .extend(answer.additional_context.filter(|c| !c.is_empty()));
            if answer.decision == Some(HookDecision::Block) {
                let message = answer
                    .reason
                    .filter(|reason| !reason.trim().is_empty())
                    .unwrap_or_else(|| messages::POST_TOOL_USE_BLOCKED.to_owned());
                outcome.block = Some(message);
            } else if let Some(text) = answer.updated_output {
                outcome.updated_output = Some(text);
            }
        }
        outcome
    }
}
