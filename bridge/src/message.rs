//! The messages of the framed host protocol, v1 (spec §8.3, our additions in
//! `bridge/PROTOCOL.md`). Envelopes are tagged by `type` with camelCase fields and reject
//! unknown fields; operations are tagged by `method`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::{
    BridgeError, CellId, ExecuteRequest, NestedToolCall, RuntimeResponse, SessionId, StoredValues,
    WaitOutcome,
};

/// The only protocol version this crate speaks.
pub const PROTOCOL_VERSION: &str = "v1";

/// Capability: the client commits store writes on `store/commit` delegate requests and sends
/// each cell's stored-values snapshot in its execute request. Our host requires it.
pub const CAPABILITY_STORE_COMMIT: &str = "store/commit";

/// Identifies one request on a connection. Client operation ids and host delegate ids are
/// separate spaces; each side counts its own from 1 and never reuses an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Client → host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum ClientMessage {
    /// The first message of every connection.
    #[serde(rename = "connection/hello", rename_all = "camelCase")]
    Hello {
        /// Versions the client speaks, preferred first.
        supported_versions: Vec<String>,
        /// Capabilities the host must have.
        #[serde(default)]
        required_capabilities: Vec<String>,
        /// Capabilities the client can use if present.
        #[serde(default)]
        optional_capabilities: Vec<String>,
    },
    /// An operation on a session.
    #[serde(rename = "operation/request")]
    OperationRequest {
        /// Echoed in the response.
        id: RequestId,
        /// The operation.
        request: Operation,
    },
    /// The answer to a `delegate/request`.
    #[serde(rename = "delegate/response")]
    DelegateResponse {
        /// The delegate request's id.
        id: RequestId,
        /// Its result.
        result: WireResult<DelegateReply>,
    },
}

/// A session operation, tagged by `method`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", deny_unknown_fields)]
pub enum Operation {
    /// Opens a session with a client-chosen id (never reused on a connection).
    #[serde(rename = "session/open", rename_all = "camelCase")]
    Open {
        /// The new session.
        session_id: SessionId,
    },
    /// Starts a cell: answered by `execution/started`, then `execute/initialResponse`.
    #[serde(rename = "session/execute", rename_all = "camelCase")]
    Execute {
        /// The session.
        session_id: SessionId,
        /// The cell to start.
        request: ExecuteRequest,
    },
    /// Observes a cell.
    #[serde(rename = "session/wait", rename_all = "camelCase")]
    Wait {
        /// The session.
        session_id: SessionId,
        /// The cell.
        cell_id: CellId,
        /// How long to wait before yielding.
        yield_time_ms: u64,
    },
    /// Terminates a cell.
    #[serde(rename = "session/terminate", rename_all = "camelCase")]
    Terminate {
        /// The session.
        session_id: SessionId,
        /// The cell.
        cell_id: CellId,
    },
    /// Shuts a session down (terminating its cells).
    #[serde(rename = "session/shutdown", rename_all = "camelCase")]
    Shutdown {
        /// The session.
        session_id: SessionId,
    },
}

impl Operation {
    /// The session the operation is about.
    pub fn session_id(&self) -> &SessionId {
        match self {
            Self::Open { session_id }
            | Self::Execute { session_id, .. }
            | Self::Wait { session_id, .. }
            | Self::Terminate { session_id, .. }
            | Self::Shutdown { session_id } => session_id,
        }
    }
}

/// Host → client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum HostMessage {
    /// The handshake succeeded.
    #[serde(rename = "connection/ready", rename_all = "camelCase")]
    Ready {
        /// The version both sides speak.
        selected_version: String,
        /// The host's capabilities.
        capabilities: Vec<String>,
    },
    /// The handshake failed; the host closes the connection.
    #[serde(rename = "connection/rejected")]
    Rejected {
        /// Why.
        reason: RejectReason,
    },
    /// The result of an operation.
    #[serde(rename = "operation/response")]
    OperationResponse {
        /// The operation's id.
        id: RequestId,
        /// Its result.
        result: WireResult<OperationValue>,
    },
    /// The initial observation of a started cell; follows `execution/started` for the same id.
    #[serde(rename = "execute/initialResponse")]
    ExecuteInitialResponse {
        /// The execute operation's id.
        id: RequestId,
        /// The response.
        result: RuntimeResponse,
    },
    /// A cell needs the runtime (tool, notification, store commit).
    #[serde(rename = "delegate/request", rename_all = "camelCase")]
    DelegateRequest {
        /// Answer with `delegate/response` carrying this id.
        id: RequestId,
        /// The session of the cell.
        session_id: SessionId,
        /// What is needed.
        request: DelegateCall,
    },
    /// The host no longer needs the answer to a delegate request (the cell stopped caring).
    #[serde(rename = "delegate/cancel")]
    DelegateCancel {
        /// The delegate request's id.
        id: RequestId,
    },
    /// A cell closed; its id answers `AlreadyClosed` from now on.
    #[serde(rename = "cell/closed", rename_all = "camelCase")]
    CellClosed {
        /// The session.
        session_id: SessionId,
        /// The cell.
        cell_id: CellId,
    },
}

/// Why a handshake was rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RejectReason {
    /// The first message was not a valid hello (or the hello was inconsistent).
    InvalidHello {
        /// What was wrong.
        message: String,
    },
    /// No version in common.
    NoCompatibleVersion {
        /// Versions the host speaks.
        supported_versions: Vec<String>,
    },
    /// The host lacks a capability the client requires.
    MissingRequiredCapability {
        /// The capability.
        capability: String,
    },
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidHello { message } => f.write_str(message),
            Self::NoCompatibleVersion { supported_versions } => {
                write!(
                    f,
                    "no compatible protocol version; the host supports {}",
                    supported_versions.join(", ")
                )
            }
            Self::MissingRequiredCapability { capability } => {
                write!(f, "the host lacks required capability {capability}")
            }
        }
    }
}

/// `{"status":"ok","value":…}` or `{"status":"error","message":…}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase", deny_unknown_fields)]
pub enum WireResult<T> {
    /// Success.
    Ok {
        /// The value.
        value: T,
    },
    /// Failure.
    Error {
        /// Human-readable error.
        message: String,
        /// Machine-readable kind, when the error is one the client maps to a typed error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<ErrorCode>,
    },
}

impl<T> WireResult<T> {
    /// An error result describing `error`.
    pub fn from_error(error: &BridgeError) -> Self {
        Self::Error {
            message: error.to_string(),
            code: ErrorCode::of(error),
        }
    }
}

/// Error kinds the client turns back into typed [`BridgeError`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorCode {
    /// [`BridgeError::ShuttingDown`].
    ShuttingDown,
    /// [`BridgeError::TooManyCells`].
    TooManyCells,
    /// [`BridgeError::HostShuttingDown`].
    HostShuttingDown,
    /// [`BridgeError::SessionReused`].
    SessionReused,
    /// [`BridgeError::UnknownSession`].
    UnknownSession,
    /// [`BridgeError::CellStartFailed`].
    CellStartFailed,
}

impl ErrorCode {
    /// The code of `error`, if it has one.
    pub fn of(error: &BridgeError) -> Option<Self> {
        Some(match error {
            BridgeError::ShuttingDown => Self::ShuttingDown,
            BridgeError::TooManyCells => Self::TooManyCells,
            BridgeError::HostShuttingDown => Self::HostShuttingDown,
            BridgeError::SessionReused(_) => Self::SessionReused,
            BridgeError::UnknownSession(_) => Self::UnknownSession,
            BridgeError::CellStartFailed(_) => Self::CellStartFailed,
            _ => return None,
        })
    }

    /// Rebuilds the typed error of an operation on `session_id` that failed with `message`.
    pub fn into_error(code: Option<Self>, message: String, session_id: &SessionId) -> BridgeError {
        match code {
            Some(Self::ShuttingDown) => BridgeError::ShuttingDown,
            Some(Self::TooManyCells) => BridgeError::TooManyCells,
            Some(Self::HostShuttingDown) => BridgeError::HostShuttingDown,
            Some(Self::SessionReused) => BridgeError::SessionReused(session_id.clone()),
            Some(Self::UnknownSession) => BridgeError::UnknownSession(session_id.clone()),
            Some(Self::CellStartFailed) => {
                let detail = message
                    .strip_prefix("failed to start exec cell: ")
                    .unwrap_or(&message);
                BridgeError::CellStartFailed(detail.to_owned())
            }
            None => BridgeError::Remote { message },
        }
    }
}

/// The value of a successful operation, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum OperationValue {
    /// `session/open` succeeded.
    #[serde(rename = "session/ready", rename_all = "camelCase")]
    SessionReady {
        /// The session.
        session_id: SessionId,
    },
    /// `session/execute` started a cell; `execute/initialResponse` follows.
    #[serde(rename = "execution/started", rename_all = "camelCase")]
    ExecutionStarted {
        /// The new cell.
        cell_id: CellId,
    },
    /// `session/wait` or `session/terminate` finished.
    #[serde(rename = "wait/completed")]
    WaitCompleted {
        /// The outcome.
        outcome: WaitOutcome,
    },
    /// `session/shutdown` finished.
    #[serde(rename = "session/closed", rename_all = "camelCase")]
    SessionClosed {
        /// The session.
        session_id: SessionId,
    },
}

/// What the host asks of the client's delegate, tagged by `method`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", deny_unknown_fields)]
pub enum DelegateCall {
    /// Run a nested tool call.
    #[serde(rename = "tool/invoke")]
    ToolInvoke {
        /// The call.
        invocation: NestedToolCall,
    },
    /// Deliver a `notify(text)`.
    #[serde(rename = "notification/send", rename_all = "camelCase")]
    NotificationSend {
        /// The exec call that started the cell.
        call_id: String,
        /// The cell.
        cell_id: CellId,
        /// The text.
        text: String,
    },
    /// Commit a completed cell's store writes (our addition).
    #[serde(rename = "store/commit", rename_all = "camelCase")]
    StoreCommit {
        /// The cell.
        cell_id: CellId,
        /// Its write set.
        writes: StoredValues,
    },
}

/// The client's answer to a [`DelegateCall`], tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum DelegateReply {
    /// The tool succeeded; an absent `value` resolves `undefined`.
    #[serde(rename = "tool/result")]
    ToolResult {
        /// The JSON result.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "present"
        )]
        value: Option<serde_json::Value>,
    },
    /// The tool failed; the promise rejects with `message`.
    #[serde(rename = "tool/error")]
    ToolError {
        /// The rejection text.
        message: String,
    },
    /// The notification was delivered.
    #[serde(rename = "notification/delivered")]
    NotificationDelivered,
    /// The writes were committed.
    #[serde(rename = "store/committed")]
    StoreCommitted,
}

/// Deserializes a present field as `Some`, so a JSON `null` stays `Some(Null)` and only an
/// absent field is `None` (JS `null` and `undefined` differ).
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests;
