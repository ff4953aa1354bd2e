//! The bridge's boundary error.

use crate::{CellId, SessionId};

/// Everything that can go wrong on the wire between runtime and host.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// A frame announced a length above the protocol maximum.
    #[error("frame of {len} bytes exceeds the {max}-byte limit")]
    FrameTooLarge {
        /// The announced length.
        len: usize,
        /// The limit in force.
        max: usize,
    },
    /// The stream ended inside a frame.
    #[error("connection closed inside a frame: expected {expected} bytes, got {got}")]
    TruncatedFrame {
        /// Bytes the frame (or its length prefix) announced.
        expected: usize,
        /// Bytes that arrived before end of file.
        got: usize,
    },
    /// Reading or writing the transport failed.
    #[error("code-mode transport I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// A frame did not hold a valid protocol message.
    #[error("invalid code-mode protocol message: {0}")]
    InvalidMessage(#[from] serde_json::Error),
    /// A well-formed message arrived where the protocol does not allow it.
    #[error("unexpected code-mode protocol message: expected {expected}, got {got}")]
    UnexpectedMessage {
        /// What the protocol expected at this point.
        expected: &'static str,
        /// A short description of what arrived.
        got: String,
    },
    /// The handshake failed (the peer rejected it or sent something else).
    #[error("code-mode handshake failed: {0}")]
    HandshakeFailed(String),
    /// An operation named a cell this side does not know.
    #[error("no running cell with id {0}")]
    UnknownCell(CellId),
    /// The engine could not create a cell (thread, isolate or snapshot failure).
    #[error("failed to start exec cell: {0}")]
    CellStartFailed(String),
    /// An image detail string was not one of the four known values.
    #[error("image detail must be one of: auto, low, high, original")]
    InvalidImageDetail(String),
    /// The session is shutting down and admits no new cells.
    #[error("code mode session is shutting down")]
    ShuttingDown,
    /// The host already runs its maximum number of active cells.
    #[error("code-mode host has too many active cells")]
    TooManyCells,
    /// The host process (or connection) went away while an operation was in flight.
    #[error("code-mode host exited unexpectedly")]
    HostExited,
    /// The host is shutting down (its connection is closing).
    #[error("code-mode host is shutting down")]
    HostShuttingDown,
    /// A client-chosen session id was used twice on one connection.
    #[error("code-mode session ID `{0}` was reused")]
    SessionReused(SessionId),
    /// An operation named a session the host does not know.
    #[error("unknown code-mode session {0}")]
    UnknownSession(SessionId),
    /// The host could not be started.
    #[error("failed to start code-mode host `{program}`: {source}")]
    HostSpawnFailed {
        /// The program that was run.
        program: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The host answered an operation with an error this side has no variant for.
    #[error("code-mode host error: {message}")]
    Remote {
        /// The host's message.
        message: String,
    },
}
