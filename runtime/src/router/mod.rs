//! The router: which output items are calls, the per-step tool plan, and the dispatch of one
//! call through lookup, hooks, lifecycle and handler.

mod dispatch;
mod lifecycle;
mod step_context;
mod tool_call;

pub use dispatch::ToolCallResult;
pub(crate) use lifecycle::CallLifecycle;
pub use lifecycle::{ToolFinishOutcome, ToolLifecycleEvent, ToolLifecycleObserver};
pub use step_context::{StepContext, StepContextOptions};
pub use tool_call::{ToolCall, build_tool_call};

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
