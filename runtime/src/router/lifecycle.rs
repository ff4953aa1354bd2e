//! Tool lifecycle notifications: one start, and exactly one terminal outcome per call, even
//! when cancellation races the handler (spec runtime §2.4).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::tool::{ToolCallSource, ToolName};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFinishOutcome {
    /// The handler returned an output.
    Completed {
        /// The output's success flag.
        success: Option<bool>,
    },
    /// The call failed.
    Failed {
        /// Whether the handler ran (false: a hook rewrite failed before it).
        handler_executed: bool,
    },
    /// A PreToolUse hook blocked it.
    Blocked,
    /// It was cancelled before it finished.
    Aborted,
}

/// Which call a notification is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLifecycleEvent {
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool_name: ToolName,
    /// Who called.
    pub source: ToolCallSource,
}

/// Receives lifecycle notifications (UI, telemetry, extensions).
pub trait ToolLifecycleObserver: Send + Sync {
    /// The handler is about to run.
    fn on_tool_start(&self, event: &ToolLifecycleEvent);
    /// The call reached its terminal outcome; called once per call.
    fn on_tool_finish(&self, event: &ToolLifecycleEvent, outcome: ToolFinishOutcome);
}

/// The terminal-outcome claim of one call, shared by the dispatch task and the cancellation
/// race: whoever claims first reports, the other stays silent.
pub(crate) struct CallLifecycle {
    event: ToolLifecycleEvent,
    observers: Arc<[Arc<dyn ToolLifecycleObserver>]>,
    claimed: AtomicBool,
    /// Set once the call passed lookup and the kind check, i.e. it became a real tool call.
    admitted: AtomicBool,
}

impl CallLifecycle {
    pub(crate) fn new(
        event: ToolLifecycleEvent,
        observers: Arc<[Arc<dyn ToolLifecycleObserver>]>,
    ) -> Self {
        Self {
            event,
            observers,
            claimed: AtomicBool::new(false),
            admitted: AtomicBool::new(false),
        }
    }

    pub(crate) fn admit(&self) {
        self.admitted.store(true, Ordering::SeqCst);
    }

    pub(crate) fn start(&self) {
        for observer in self.observers.iter() {
            observer.on_tool_start(&self.event);
        }
    }

    /// Claims the terminal outcome; true for the first caller only.
    pub(crate) fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::SeqCst)
    }

    pub(crate) fn is_claimed(&self) -> bool {
        self.claimed.load(Ordering::SeqCst)
    }

    /// Reports `outcome` unless another path already did.
    pub(crate) fn finish(&self, outcome: ToolFinishOutcome) {
        if self.claim() {
            self.notify_finish(outcome);
        }
    }

    /// Reports `outcome` after a successful [`claim`](Self::claim); silent for calls that
    /// never got past lookup.
    pub(crate) fn notify_finish(&self, outcome: ToolFinishOutcome) {
        if !self.admitted.load(Ordering::SeqCst) {
            return;
        }
        for observer in self.observers.iter() {
            observer.on_tool_finish(&self.event, outcome);
        }
    }
}
