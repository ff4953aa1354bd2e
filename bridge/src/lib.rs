//! The wire between the tool runtime and the `code-mode-host` process: cell and call ids,
//! content items, tool definitions, the events a cell emits and the commands it accepts, the
//! cell actor and session runtime written against the [`CellEngine`] seam, and the framed
//! JSON protocol (codec, messages, host server, host client) that carries sessions across a
//! process boundary.
//!
//! Central types: [`CodeModeSession`] (what the runtime calls; [`LocalSession`] in process,
//! [`RemoteSession`] / [`PooledSession`] over a host), [`SessionDelegate`] (what the runtime
//! implements), [`CellId`], [`ContentItem`], [`CellStart`], [`CellEvent`], [`CellCommand`].
//!
//! Not here: V8 (codemode-host) or tool execution, policy and message rendering
//! (codemode-runtime). Depends on serde, serde_json, thiserror, tokio, tokio-util, futures
//! and tracing only.
#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used)]

mod cell;
mod cell_actor;
mod cell_admission;
mod code_mode_session;
mod codec;
mod content;
mod engine;
mod error;
mod host_client;
mod host_pool;
mod host_server;
mod ids;
mod message;
mod session;
mod tool_definition;

#[cfg(test)]
mod scripted_engine;

pub use cell::{CellCommand, CellEvent, CellLimits, CellStart, StoredValues};
pub use cell_admission::{CellAdmission, DEFAULT_MAX_ACTIVE_CELLS};
pub use code_mode_session::{
    CodeModeSession, DEFAULT_MAX_CONCURRENT_TOOL_CALLS, ExecuteRequest, HOST_EXITED_CELL_LOST,
    NestedToolCall, RUNTIME_ENDED_UNEXPECTEDLY, RuntimeResponse, SessionDelegate, WaitOutcome,
};
pub use codec::{FrameReader, FrameWriter, MAX_FRAME_BYTES};
pub use content::{ContentItem, ImageDetail};
pub use engine::{CellChannels, CellCommandSender, CellCommandSink, CellEngine};
pub use error::BridgeError;
pub use host_client::{HostClient, RemoteSession};
pub use host_pool::{HostPool, HostPoolOptions, PooledSession};
pub use host_server::{HostServerOptions, serve, serve_with};
pub use ids::{CellId, SessionId, ToolCallId};
pub use message::{
    CAPABILITY_STORE_COMMIT, ClientMessage, DelegateCall, DelegateReply, ErrorCode, HostMessage,
    Operation, OperationValue, PROTOCOL_VERSION, RejectReason, RequestId, WireResult,
};
pub use session::{DEFAULT_TOMBSTONE_TTL, LaunchedCell, LocalSession, LocalSessionOptions};
pub use tool_definition::{ToolDefinition, ToolKind, ToolName};
