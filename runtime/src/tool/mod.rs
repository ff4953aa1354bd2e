//! The model of a tool: its spec, exposure, invocation, output and the `ToolExecutor` trait
//! that binds a spec to its handler.
//!
//! Owned by the tool-runtime-core work; other areas implement `ToolExecutor`.

mod context;
mod error;
mod executor;
mod invocation;
mod output;
mod spec;

pub use codemode_bridge::ToolName;
pub use context::ToolContext;
pub use error::FunctionCallError;
pub use executor::{ToolExecutor, ToolExposure};
pub use invocation::{ToolCallSource, ToolInvocation, ToolPayload};
pub use output::{FunctionCallOutputContentItem, ResponseInputItem, TextToolOutput, ToolOutput};
pub use spec::{FreeformFormat, ToolSpec};
