//! The bridge's boundary error.

use crate::CellId;

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
    /// An operation named a cell this side does not know.
    #[error("no running cell with id {0}")]
    UnknownCell(CellId),
    /// The engine could not create a cell (thread, isolate or snapshot failure).
    #[error("failed to start exec cell: {0}")]
    CellStartFailed(String),
    /// An image detail string was not one of the four known values.
    #[error("image detail must be one of: auto, low, high, original")]
    InvalidImageDetail(String),
}
