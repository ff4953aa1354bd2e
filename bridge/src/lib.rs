//! The wire between the tool runtime and the `code-mode-host` process: cell and call ids,
//! content items, tool definitions, the events a cell emits and the commands it accepts.
//!
//! Central types: [`CellId`], [`ToolCallId`], [`ContentItem`], [`ToolDefinition`],
//! [`CellStart`], [`CellEvent`], [`CellCommand`].
//!
//! Not here: V8 (codemode-host) or tool execution and policy (codemode-runtime).
//! Depends on serde, serde_json, thiserror and tokio only.
#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used)]

mod cell;
mod content;
mod engine;
mod error;
mod ids;
mod tool_definition;

pub use cell::{CellCommand, CellEvent, CellLimits, CellStart, StoredValues};
pub use content::{ContentItem, ImageDetail};
pub use engine::{CellChannels, CellCommandSender, CellCommandSink, CellEngine};
pub use error::BridgeError;
pub use ids::{CellId, SessionId, ToolCallId};
pub use tool_definition::{DEFAULT_FUNCTION_NAMESPACE, ToolDefinition, ToolKind, ToolName};
