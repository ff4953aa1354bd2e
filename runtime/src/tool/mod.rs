//! The model of a tool: its spec, exposure, invocation, output and the `ToolExecutor` trait
//! that binds a spec to its handler.
//!
//! Owned by the tool-runtime-core work; other areas implement `ToolExecutor`.

mod context;
mod error;
mod executor;
mod invocation;
pub mod messages;
mod output;
mod spec;

pub use codemode_bridge::{DEFAULT_FUNCTION_NAMESPACE, ToolName};
pub use context::ToolContext;
pub use error::FunctionCallError;
pub use executor::{ToolExecutor, ToolExposure, parse_hook_arguments};
pub use invocation::{ToolCallSource, ToolInvocation, ToolPayload};
pub use output::{
    AbortedToolOutput, ContentItemsToolOutput, FunctionCallOutputContentItem,
    HookReplacedToolOutput, ResponseInputItem, TextToolOutput, ToolOutput, ToolSearchToolOutput,
    failure_response,
};
pub use spec::{FreeformFormat, ToolSpec, tools_json};

#[cfg(test)]
mod tests;
